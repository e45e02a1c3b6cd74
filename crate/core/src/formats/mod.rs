//! **Formats**: read the traces people already have, and check them like seed-000 spans.
//!
//! Tracers record the tool result on the tool span and, separately, the messages the next
//! model call was sent; none records whether the second is a cut of the first. These readers
//! find out: each tool result is joined with what a later model call actually received
//! ([`join`]), both strings are measured in the module (UTF-8 bytes, SHA-256, cut and
//! redaction markers), and the result is a seed-000 [`SpanRecord`] per tool call that the
//! span classifier judges, so every format gets the same verdicts.
//!
//! | format          | input                                                               |
//! |-----------------|---------------------------------------------------------------------|
//! | `spans`         | seed-000 span JSONL (one clip-aware span record per line)            |
//! | `otlp`          | OTLP JSON traces, one document or the Collector file exporter's one request per line, with OpenTelemetry GenAI or OpenInference attributes |
//! | `langfuse`      | Langfuse observation exports, JSON or JSONL                           |
//! | `openai_agents` | OpenAI Agents SDK trace exports (`span_data`), JSON or JSONL          |
//! | `phoenix`       | Arize Phoenix REST span exports (`/spans` and `/spans/otlpv1`)        |
//!
//! The format is detected from the first non-blank lines ([`detect`]), or forced with
//! [`FormatOption`]. Line layouts stream: each line is read when it is complete, and only the
//! measures of each tool result and tool message are kept for the join at the end. A
//! single JSON document is buffered and read whole.
//!
//! What the rows say beyond the seed's fields: `join` (how the result was matched:
//! `tool_call_id`, `order`, `unmatched`), `notes` (why a side was not captured, which marker
//! declared a cut, a result that no later model call received), `injected_tokens_estimated`
//! (traces count tokens per model call, so the per-message count is bytes / 4), and warnings
//! for lengths equal to a common SDK attribute limit (4096, 12000, 32000: a likely silent cut
//! by the exporter).
//!
//! - Content that was not captured (an opt-in attribute absent, a value hidden as
//!   `__REDACTED__`) leaves the length missing: the row is `incomplete`, never `ok`.
//! - A result that no later captured model input carried is a silent clip of all of it
//!   (`injected_bytes = 0`); with no later model call at all, it is `incomplete`.
//! - A cut marker (`...[truncated 120 chars]`, `[... 4000 bytes omitted ...]`) in what the
//!   model received, and not in the result, declares the cut (`tool_result_char_limit`); a
//!   redaction marker (`[REDACTED]`, `__REDACTED__` inside the text) declares `redaction`.
//!
//! ```
//! use toolslice::check::{check_bytes, CheckOptions};
//!
//! let otlp = br#"{"resourceSpans":[{"scopeSpans":[{"spans":[
//!  {"traceId":"t","spanId":"a","name":"execute_tool ls","startTimeUnixNano":"1","endTimeUnixNano":"2",
//!   "attributes":[{"key":"gen_ai.operation.name","value":{"stringValue":"execute_tool"}},
//!                 {"key":"gen_ai.tool.call.id","value":{"stringValue":"call_1"}},
//!                 {"key":"gen_ai.tool.call.result","value":{"stringValue":"a.txt b.txt c.txt"}}]},
//!  {"traceId":"t","spanId":"b","name":"chat","startTimeUnixNano":"3","endTimeUnixNano":"4",
//!   "attributes":[{"key":"gen_ai.operation.name","value":{"stringValue":"chat"}},
//!                 {"key":"gen_ai.input.messages","value":{"stringValue":
//!    "[{\"role\":\"tool\",\"parts\":[{\"type\":\"tool_call_response\",\"id\":\"call_1\",\"response\":\"a.txt\"}]}]"}}]}
//! ]}]}]}"#;
//! let report = check_bytes(otlp, CheckOptions::default());
//! assert_eq!(report.format, "otlp");
//! assert_eq!(report.counts.silent_clip, 1);
//! assert_eq!(report.rows.row(0).observed_bytes, Some(17));
//! assert_eq!(report.rows.row(0).injected_bytes, Some(5));
//! ```

/// A skip reason `{prefix}{kind}{suffix}`: a fixed text for each kind listed, rather than one
/// formatted per span (most spans of an agent's export are context, of a handful of kinds),
/// and formatted for any other kind. Each fixed text is the one the format string writes.
macro_rules! fixed_reason {
    ($kind:expr, $prefix:literal, $suffix:literal, $($known:literal)*) => {
        match $kind {
            $($known => std::borrow::Cow::Borrowed(concat!($prefix, $known, $suffix)),)*
            other => std::borrow::Cow::Owned(format!(concat!($prefix, "{}", $suffix), other)),
        }
    };
}

mod ai_sdk;
mod codec;
mod content;
mod convert;
mod detect;
mod fields;
mod genai;
mod join;
mod langfuse;
mod line_de;
mod memo;
mod message_list;
mod messages;
mod model;
mod openai_agents;
mod openinference;
mod otel;
mod otlp;
mod otlp_json;
pub(crate) mod otlp_json_wire;
mod part;
mod phoenix;
mod pyrepr;
mod reader;
mod relist;
pub(crate) use reader::json_error;
mod semconv;

pub(crate) mod otlp_proto;
/// What the OTLP pipeline ([`crate::pipeline`]) reads export requests with: the readers of
/// both encodings and the conventions, one span at a time.
pub(crate) mod pipeline_parts {
    pub(crate) use super::codec::{Damaged, Decoder, Encoder};
    #[cfg(test)]
    pub(crate) use super::content::Content;
    pub(crate) use super::join::{Inputs, MessageRef};
    pub(crate) use super::join_into;
    pub(crate) use super::line_de::from_str as fast_json;
    pub(crate) use super::model::{Captured, ModelCall, SpanRef, ToolCall, ToolMessage};
    pub(crate) use super::otel::OtelSpan;
    pub(crate) use super::otlp::{is_request, read_span};
    #[cfg(test)]
    pub(crate) use super::otlp_json::tests::{emit, fixtures, Op};
    pub(crate) use super::otlp_json_wire as json_wire;
    pub(crate) use super::otlp_proto as proto;
    pub(crate) use super::semconv::interpret;
    pub(crate) use super::End;
}

use std::fmt;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::error::Coded;
pub use crate::record::Layout;
use crate::record::Sink;
use model::{ModelCall, SpanRef, Times, ToolCall};

pub use convert::{convert_to_spans, Conversion};
pub use part::{PartError, PartReader};
pub(crate) use reader::Reader;
pub use reader::MAX_DOCUMENT;

/// A reader of one input format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Format {
    /// Seed-000 span JSONL.
    Spans,
    /// OTLP JSON traces (GenAI or OpenInference conventions).
    Otlp,
    /// Langfuse observation exports.
    Langfuse,
    /// OpenAI Agents SDK trace exports.
    OpenaiAgents,
    /// Arize Phoenix's REST span exports (its span objects, or OTLP span objects).
    Phoenix,
}

impl Format {
    pub const ALL: [Format; 5] = [
        Format::Spans,
        Format::Otlp,
        Format::Langfuse,
        Format::OpenaiAgents,
        Format::Phoenix,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Format::Spans => "spans",
            Format::Otlp => "otlp",
            Format::Langfuse => "langfuse",
            Format::OpenaiAgents => "openai_agents",
            Format::Phoenix => "phoenix",
        }
    }
}

impl fmt::Display for Format {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Which reader to use: detect it (`auto`), or force one.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FormatOption {
    #[default]
    Auto,
    Spans,
    Otlp,
    Langfuse,
    OpenaiAgents,
    Phoenix,
}

impl FormatOption {
    pub fn as_str(self) -> &'static str {
        match self.forced() {
            None => "auto",
            Some(f) => f.as_str(),
        }
    }

    /// The forced format, or `None` for `auto`.
    pub fn forced(self) -> Option<Format> {
        match self {
            FormatOption::Auto => None,
            FormatOption::Spans => Some(Format::Spans),
            FormatOption::Otlp => Some(Format::Otlp),
            FormatOption::Langfuse => Some(Format::Langfuse),
            FormatOption::OpenaiAgents => Some(Format::OpenaiAgents),
            FormatOption::Phoenix => Some(Format::Phoenix),
        }
    }

    /// Parses `auto`, `spans`, `otlp`, `langfuse`, `openai_agents` or `phoenix`.
    pub fn parse(text: &str) -> Result<FormatOption, UnknownFormat> {
        match text {
            "auto" => Ok(FormatOption::Auto),
            "spans" => Ok(FormatOption::Spans),
            "otlp" => Ok(FormatOption::Otlp),
            "langfuse" => Ok(FormatOption::Langfuse),
            "openai_agents" => Ok(FormatOption::OpenaiAgents),
            "phoenix" => Ok(FormatOption::Phoenix),
            other => Err(UnknownFormat(other.to_string())),
        }
    }
}

/// A format name that is not one of ours.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownFormat(pub String);

impl fmt::Display for UnknownFormat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "unknown format {:?} (expected one of: auto, {})",
            self.0,
            Format::ALL.map(Format::as_str).join(", ")
        )
    }
}

impl Coded for UnknownFormat {
    fn code(&self) -> &'static str {
        "unknown_format"
    }
}

/// Tool calls and model calls read so far, waiting for the join.
#[derive(Default)]
pub(crate) struct Collector {
    pub tools: Vec<ToolCall>,
    pub models: Vec<ModelCall>,
    conventions: Vec<&'static str>,
    seq: u64,
}

impl Collector {
    pub fn span_ref(
        &mut self,
        entry: u64,
        trace_id: Option<String>,
        span_id: Option<String>,
        parent_id: Option<String>,
        times: Times,
    ) -> SpanRef {
        self.seq += 1;
        SpanRef {
            entry,
            seq: self.seq,
            trace_id,
            span_id,
            parent_id,
            times,
        }
    }

    /// A context span (neither a tool call nor a model call): counted, so read order numbers
    /// stay those every span is given, though it gets no [`SpanRef`], and lent to the sink
    /// with the reason it is skipped (the sink copies what it keeps).
    pub fn context(
        &mut self,
        sink: &mut dyn Sink,
        entry: u64,
        span_id: Option<&str>,
        parent_id: Option<&str>,
        name: Option<&str>,
        reason: &str,
    ) {
        self.seq += 1;
        sink.context(entry, span_id, parent_id, name, reason);
    }

    pub fn saw(&mut self, convention: &'static str) {
        if !self.conventions.contains(&convention) {
            self.conventions.push(convention);
        }
    }

    /// Joins and hands every tool call to the sink, in read order; `end`: what becomes of the
    /// calls once joined.
    pub fn finish(self, sink: &mut dyn Sink, end: End) -> Vec<String> {
        join_into(self.tools, &self.models[..], sink, end);
        let conventions = ["gen_ai", "openinference", "ai_sdk"]
            .into_iter()
            .filter(|c| self.conventions.contains(c))
            .map(str::to_string)
            .collect();
        // Every model call's input, a block or more per tool message: freeing them was 15%
        // of the join of an Agents SDK export.
        end.release(self.models);
        conventions
    }
}

/// What a check does with its working state when it ends.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum End {
    /// Frees it: the memory goes back to the allocator for whatever runs next.
    Free,
    /// Leaves it taken, for a process that exits once the report is out (a compiler's
    /// `-disable-free`): freeing tens of thousands of small blocks one by one is time spent
    /// on memory nobody will use again.
    Leave,
}

impl End {
    /// Frees `value`, or with [`End::Leave`] leaves it allocated: the one place a check's
    /// memory is deliberately not given back (the workspace denies `mem::forget` elsewhere).
    #[allow(clippy::mem_forget)]
    pub(crate) fn release<T>(self, value: T) {
        match self {
            End::Free => drop(value),
            End::Leave => std::mem::forget(value),
        }
    }
}

/// Joins `tools` with `models` read through [`join::Inputs`] and hands each row to the sink,
/// for [`Collector::finish`] and the OTLP pipeline's state (whose model calls' inputs are
/// runs of a table of distinct tool messages, read as they are kept). The reading's memo
/// and kept inputs end with the check (reset, and with [`End::Leave`] not freed), as does
/// each tool call once its row is handed over.
pub(crate) fn join_into<I: join::Inputs + ?Sized>(
    tools: Vec<ToolCall>,
    models: &I,
    sink: &mut dyn Sink,
    end: End,
) {
    memo::forget(end);
    relist::forget(end);
    // Where each row's digests are written as hex while the sink has the row.
    let mut hex: join::HexPair = [[0; 64]; 2];
    for row in join::join(tools, models) {
        let (line, mut record, provenance, spent) = row.lend(&mut hex);
        sink.row(line, &mut record, provenance);
        // The tool call's ids, name and status, moved into the record, and the rest of it.
        end.release(record);
        end.release(spent);
    }
}

/// Numbers the entries of one read value: every entry of a line gets the line's number; the
/// entries of a document are numbered 1, 2, 3 ... in document order.
pub(crate) struct Entries {
    line: Option<u64>,
    last: u64,
}

impl Entries {
    pub fn line(line: u64) -> Entries {
        Entries {
            line: Some(line),
            last: 0,
        }
    }
    pub fn document() -> Entries {
        Entries {
            line: None,
            last: 0,
        }
    }
    pub fn next(&mut self) -> u64 {
        match self.line {
            Some(n) => n,
            None => {
                self.last += 1;
                self.last
            }
        }
    }
}

/// A short description of a JSON value for error messages: its kind, and an object's keys.
pub(crate) fn describe(value: &Value) -> String {
    match value {
        Value::Null => "null".into(),
        Value::Bool(_) => "a boolean".into(),
        Value::Number(_) => "a number".into(),
        Value::String(_) => "a string".into(),
        Value::Array(a) => format!("an array of {} items", a.len()),
        Value::Object(o) if o.is_empty() => "an empty object".into(),
        Value::Object(o) => {
            let keys: Vec<&str> = o.keys().take(6).map(String::as_str).collect();
            let more = if o.len() > 6 { ", ..." } else { "" };
            format!("an object with keys {}{more}", keys.join(", "))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A listed kind gets its fixed text, any other kind the formatted one: the same text.
    #[test]
    fn fixed_reasons_read_as_formatted() {
        let reason = |kind: &str| fixed_reason!(kind, "X ", " span", "a" "b_c");
        for kind in ["a", "b_c", "A", "", "b", "odd\u{7}"] {
            assert_eq!(reason(kind), format!("X {kind} span"));
            let fixed = matches!(reason(kind), std::borrow::Cow::Borrowed(_));
            assert_eq!(fixed, ["a", "b_c"].contains(&kind), "{kind:?}");
        }
    }

    #[test]
    fn format_options_parse() {
        for f in Format::ALL {
            assert_eq!(FormatOption::parse(f.as_str()).unwrap().forced(), Some(f));
        }
        assert_eq!(FormatOption::parse("auto").unwrap(), FormatOption::Auto);
        let err = FormatOption::parse("jaeger").unwrap_err();
        assert_eq!(err.code(), "unknown_format");
        assert!(err.to_string().contains("openai_agents"));
    }
}
