//! The records every reader produces and every consumer takes: the layer between the
//! readers (`span`, `formats`) and what they feed (`check`'s report builder, the converter).
//!
//! A reader sends each input entry to a [`Sink`]: a span line, a joined tool call with its
//! [`Provenance`], a context span, a skipped record, an invalid line or a blank. Because
//! these types live here, a format reader can be read and tested without the report builder,
//! and the module graph runs one way: `span` and `record`, then `formats`, then `check`.

use serde::{Deserialize, Serialize};

use crate::span::{InvalidKind, SpanView};

/// How a tool result was matched with the input of a later model call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Join {
    /// The tool span's call id equals the id on a tool message of a later model call.
    ToolCallId,
    /// No usable ids: the k-th tool call before a model call was paired with the k-th tool
    /// message after that call's last assistant message (same tool name when both say one).
    Order,
    /// Nothing to pair with: see the row's notes for why.
    Unmatched,
}

impl Join {
    pub fn as_str(self) -> &'static str {
        match self {
            Join::ToolCallId => "tool_call_id",
            Join::Order => "order",
            Join::Unmatched => "unmatched",
        }
    }
}

/// What a trace-format reader knows about a record beyond the seed's fields; stored on the
/// row as is. The default (all empty) is what a seed-000 span line gets.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Provenance {
    pub join: Option<Join>,
    pub notes: Vec<String>,
    /// Warnings of the reader (a length equal to an SDK attribute limit ...), added to the
    /// classifier's.
    pub warnings: Vec<String>,
    pub injected_tokens_estimated: bool,
    /// The model received the tool's result as the same data in another serialisation: the
    /// row is `reformatted`, not `ok` (see [`crate::check::Status::Reformatted`]).
    pub reformatted: bool,
}

/// A line that could not be read as a span record.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Invalid {
    pub line: u64,
    /// A stable code: `not_utf8`, `binary`, `not_json`, `not_an_object`, `bad_field`,
    /// `unknown_format`, `too_large`.
    pub kind: InvalidKind,
    pub error: String,
}

/// A record that was read but is not a tool span (the seed drops these silently).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Skipped {
    pub line: u64,
    pub span_id: Option<String>,
    pub reason: String,
}

/// How a trace-format input was laid out and which conventions its spans followed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReadAs {
    /// `lines` (one JSON value per line, read as it streams in) or `document` (one JSON
    /// document, read whole).
    pub layout: Layout,
    /// The semantic conventions found on spans (`gen_ai`, `openinference`, `ai_sdk`), in that
    /// order.
    pub conventions: Vec<String>,
}

/// How a trace-format input is laid out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Layout {
    /// One JSON value per line, read as the lines stream in.
    Lines,
    /// One JSON document, read whole.
    Document,
}

impl Layout {
    pub fn as_str(self) -> &'static str {
        match self {
            Layout::Lines => "lines",
            Layout::Document => "document",
        }
    }
}

/// Where readers send what they read: the report builder (check) or the converter.
pub(crate) trait Sink {
    /// A seed-000 span record, as read from a span JSONL line.
    fn span(&mut self, line: u64, record: &mut SpanView<'_>);
    /// A tool call of a trace format, joined and measured. Lent, as `span`'s record: the
    /// sink takes or copies what it keeps.
    fn row(&mut self, line: u64, record: &mut SpanView<'_>, provenance: Provenance);
    /// A span that is not a tool call (kept for the parent rollup). Lent, not given: the
    /// sink copies what it keeps (most of it is only counted).
    fn context(
        &mut self,
        line: u64,
        span_id: Option<&str>,
        parent_id: Option<&str>,
        name: Option<&str>,
        reason: &str,
    );
    fn skipped(&mut self, line: u64, span_id: Option<String>, reason: String);
    fn invalid(&mut self, line: u64, kind: InvalidKind, error: String);
    fn blank(&mut self);
    fn set_format(&mut self, format: &str, read_as: Option<ReadAs>);
}
