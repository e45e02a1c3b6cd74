//! **Pack**: turn a tool result into the observation the model reads, and the clip-aware
//! span record that proves what it read.
//!
//! Seed 004's order, each stage a function a reader can find: `stages.rs` runs `plan`,
//! `redact` (rendering included), `shape`, `truncate`, `store` (the envelope's
//! `next_offset` and hint, and the text kept for `get_more`), `span` and `assemble` over
//! one state struct that each stage reads and adds to.
//!
//! ```text
//! ToolResult ─ render ─ redact ─ shape ─ truncate ─ envelope ─ span
//!              (observed)  │        │        │          │         └ seed 000 record
//!                          │        │        │          └ role, tool_call_id, content,
//!                          │        │        │            truncated, redacted, omitted,
//!                          │        │        │            next_offset + get_more hint
//!                          │        │        └ pattern by tool kind, hard budget
//!                          │        └ drop noisy keys, HTML/traces → structured errors
//!                          └ secrets → typed placeholders, receipts
//! ```
//!
//! Nothing downstream of [`redact`](crate::redact) sees the raw result: the observed hash,
//! the preview, the page store and every cut are taken from redacted text.
//!
//! ## Outcomes are never cut
//!
//! Exit codes, timeouts, `ok: false`, error codes and receipt ids (the keys in
//! [`ShapeOptions::keep_keys`]) travel in the envelope's `outcome`, in the terminal header
//! the model reads above the output, and as kept keys of a JSON cut. After every cut the
//! packer checks that each outcome is still in the content; when the budget cannot hold
//! them, or the result does not fit and cannot be paged, the content is the short error
//! `result too large, narrow the query` (seed 004: "Do not return a silent prefix").
//!
//! ## The span record is complete by construction
//!
//! `observed_bytes` counts the bytes the tool returned, rendered as the model would have
//! seen them uncut (the terminal header included, JSON compact); `injected_bytes` and
//! `sha256_injected` are taken from the exact `content` string; `injected_tokens` from the
//! caller's counter or from the documented estimate ([`crate::truncate::estimate_tokens`]);
//! `clip_reason` names the policy that changed the bytes. So every record classifies as
//! `ok` or `clipped` under `toolslice check`, never `silent_clip`, `incomplete` or
//! `hash_mismatch`. `sha256_observed` is taken *after redaction* (seed 003: "a hash of a
//! secret can still be sensitive"), so it equals a hash of the raw output only when nothing
//! was redacted.

pub mod get_more;
pub mod mcp;
mod registry;
pub mod shape;
mod sniff;
mod stages;
mod store;
mod stream;
pub mod tenant;

use std::fmt;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::error::Coded;
use crate::hash::sha256;
use crate::redact::{Policy, Receipt, RedactError, Redactor};
use crate::span::{ClipReason, SpanRecord};
use crate::truncate::{Budget, EstimateTokens, Offsets, Segment, TokenCounter, Unit, Utf16Map};
use stages::{blank_envelope, pack_with, span_record, Observed, Shown};

pub use registry::{Kind, Registry, ToolSpec, DEFAULT_MAX_BYTES};
pub use shape::{ShapeOptions, ShapeReport};
pub use store::{
    get_more_in, keep, page, MemoryPageStore, Page, PageStore, PageStoreError, StoredPage,
    DEFAULT_STORE_BYTES, DEFAULT_STORE_ENTRIES,
};
pub use stream::{StreamPacker, DEFAULT_STREAM_CAP};
pub use tenant::{drop_foreign_rows, TenantPolicy};

/// The packer's name and version, written into `prompt_builder_version`.
pub const BUILDER: &str = concat!("toolslice-pack/", env!("CARGO_PKG_VERSION"));

/// The content of an observation too large to show and impossible to page.
pub const TOO_LARGE: &str = "result too large, narrow the query";

/// The largest tool result `pack` accepts, in bytes (a text, or a JSON value's compact
/// text). Packing holds a few copies of the result (redacted, shaped, the cut, the page
/// store's), and a wasm instance addresses 4 GiB at most: a larger result is refused with
/// the coded error `too_large` before anything is allocated for it.
pub const MAX_INPUT_BYTES: usize = 128 << 20;

/// The name of the paging tool the hint points at.
pub const GET_MORE: &str = "get_more";

/// What a tool handler returned.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Body {
    /// Text output (stdout, a file, a page).
    Text(String),
    /// A structured result.
    Json(Value),
    /// A non-text payload: only its size and type are shown.
    Binary {
        bytes: u64,
        #[serde(default)]
        media_type: Option<String>,
    },
}

/// One finished tool call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolResult {
    /// The tool's name (looked up in the [`Registry`]).
    pub tool: String,
    /// The id of the call this result answers; echoed in the envelope.
    pub call_id: String,
    pub body: Body,
    /// A command's exit code: shown in a header above the output, never cut.
    #[serde(default)]
    pub exit_code: Option<i64>,
    #[serde(default)]
    pub timed_out: bool,
    /// The command that ran (shown in the terminal header).
    #[serde(default)]
    pub command: Option<String>,
}

impl ToolResult {
    pub fn text(tool: &str, call_id: &str, text: impl Into<String>) -> ToolResult {
        ToolResult {
            tool: tool.into(),
            call_id: call_id.into(),
            body: Body::Text(text.into()),
            exit_code: None,
            timed_out: false,
            command: None,
        }
    }

    pub fn json(tool: &str, call_id: &str, value: Value) -> ToolResult {
        ToolResult {
            body: Body::Json(value),
            ..ToolResult::text(tool, call_id, "")
        }
    }
}

/// How to pack. Every field has a default; the tool's [`ToolSpec`] fills what is unset.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct PackOptions {
    /// The budget of the content, overriding the tool's `max_bytes`.
    pub limit: Option<usize>,
    /// The budget's unit (`bytes` by default; `tokens` counts with the caller's counter,
    /// else the estimate).
    pub unit: Unit,
    /// The tool kind, overriding the registry.
    pub kind: Option<Kind>,
    pub redact: Policy,
    pub shape: ShapeOptions,
    /// Page size for `get_more`, overriding the tool's.
    pub page_bytes: Option<usize>,
    /// Whether `get_more` is on the allowlist, overriding the tool's.
    pub pageable: Option<bool>,
    /// The span's id (default: the call id) and parent.
    pub span_id: Option<String>,
    pub parent_id: Option<String>,
    /// Written into `prompt_builder_version` after the packer's own version.
    pub builder_version: Option<String>,
    pub model_context_limit_tokens: Option<u64>,
    /// Write the 16-hex short digests seed 000's emitter writes, instead of full SHA-256.
    pub short_hashes: bool,
    /// Also return [`Packed::cut`]: the text that was cut and the truncator's segments. Off
    /// by default: it copies the whole (redacted) result.
    pub segments: bool,
    /// The most redacted output a [`StreamPacker`] keeps for paging (default
    /// [`DEFAULT_STREAM_CAP`], never more than the page store holds); a longer stream gets
    /// the short error.
    pub stream_cap: Option<usize>,
    /// Drop other tenants' rows (with receipts) before anything else sees the result.
    pub tenant: Option<TenantPolicy>,
}

impl Default for PackOptions {
    fn default() -> Self {
        PackOptions {
            limit: None,
            unit: Unit::Bytes,
            kind: None,
            redact: Policy::default(),
            shape: ShapeOptions::default(),
            page_bytes: None,
            pageable: None,
            span_id: None,
            parent_id: None,
            builder_version: None,
            model_context_limit_tokens: None,
            short_hashes: false,
            segments: false,
            stream_cap: None,
            tenant: None,
        }
    }
}

/// What was left out of `content`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Omitted {
    /// Bytes of the (redacted, shaped) result not in the content.
    pub bytes: u64,
    /// Lines none of whose bytes are in the content.
    pub lines: u64,
    /// Noisy keys dropped by shaping.
    pub keys: u64,
    /// Bytes of those keys, and of HTML pages and stack traces summarised.
    pub shaped_bytes: u64,
}

/// The observation the model reads: a tool message. Field names are snake_case on the
/// wire, like the rest of the seeds' records.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Envelope {
    /// Always `"tool"`: the content is tool data, never instructions.
    pub role: String,
    pub tool_call_id: String,
    pub name: String,
    /// Exactly what the model reads.
    pub content: String,
    pub truncated: bool,
    pub redacted: bool,
    pub omitted: Omitted,
    /// Where `get_more` continues, when the content was cut and the rest is stored.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_offset: Option<u64>,
    /// The follow-up call, in words, when cut.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hint: Option<String>,
    /// Outcome fields carried beside the content (exit code, `ok`, error codes, receipt
    /// ids). They are also in the content.
    pub outcome: Map<String, Value>,
    /// `result_too_large` when the content is the short error instead of the result.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// Everything one pack produced.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Packed {
    pub envelope: Envelope,
    /// The seed-000 clip-aware span record.
    pub span: SpanRecord,
    /// One receipt per redaction (no character of any secret).
    pub receipts: Vec<Receipt>,
    pub shape: ShapeReport,
    /// The cut applied (`none` when the content is the whole result).
    pub pattern: String,
    /// Where the rest went: the id and the full redacted text to store for `get_more`,
    /// when the content was cut and paging is on. The [`Packer`] stores it itself.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stored: Option<Stored>,
    /// How the content was made from the result, with the `segments` option: for a reader
    /// that shows both ends (the page's classroom packer), so it never has to redo the cut.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cut: Option<Cut>,
}

/// The result as the truncator received it and how the content maps onto it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Cut {
    /// The result after redaction and shaping: the text that was cut.
    pub source: String,
    /// The truncator's segments: `output` ranges of the content (header, kept text,
    /// markers, annotations), and for kept text the `source` range it was copied from.
    /// Empty when the content is the short "too large" error instead of the result.
    pub segments: Vec<Segment>,
    /// Where redaction placeholders sit in `source`, when `source` is the redacted text
    /// itself (a text result that shaping left alone). A JSON result's receipts name their
    /// field path instead.
    pub redacted: Vec<[usize; 2]>,
    /// The unit of every range: UTF-8 bytes, or UTF-16 units after
    /// [`Cut::into_utf16_offsets`].
    pub offsets: Offsets,
}

impl Cut {
    /// The same cut with every range in UTF-16 code units, so that JavaScript can slice
    /// `source` and the envelope's `content` (passed as `content`) with them.
    pub fn into_utf16_offsets(mut self, content: &str) -> Cut {
        if self.offsets == Offsets::Utf16 {
            return self;
        }
        let src_at = (self.segments.iter().filter_map(|s| s.source.as_ref()))
            .chain(&self.redacted)
            .flatten()
            .copied()
            .collect();
        let out_at = self.segments.iter().flat_map(|s| s.output).collect();
        let (src, out) = (
            Utf16Map::new(&self.source, src_at),
            Utf16Map::new(content, out_at),
        );
        for s in &mut self.segments {
            s.output = s.output.map(|b| out.get(b));
            if let Some(r) = &mut s.source {
                *r = r.map(|b| src.get(b));
            }
        }
        for r in &mut self.redacted {
            *r = r.map(|b| src.get(b));
        }
        self.offsets = Offsets::Utf16;
        self
    }
}

/// The text `get_more` pages through, and the page size to cut it at (the options'
/// `page_bytes`, else the tool's registered one), kept together by every page store.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Stored {
    pub id: String,
    pub text: String,
    pub page_bytes: usize,
}

/// Why a pack failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PackError {
    /// Not even the short "too large" error fits the budget.
    BudgetTooSmall {
        limit: usize,
        needed: usize,
    },
    InvalidPolicy(RedactError),
    InvalidOptions(String),
    /// The caller's token counter failed.
    TokenCounter(String),
    /// `get_more` for an id the store does not hold (never stored, or evicted).
    NotFound(String),
    /// The result is larger than [`MAX_INPUT_BYTES`].
    TooLarge {
        bytes: u64,
        max: u64,
    },
    /// A JSON body that is not JSON.
    InvalidJson(String),
    /// The page store failed or holds something that is not a stored page.
    Store(PageStoreError),
}

impl fmt::Display for PackError {
    /// Messages quote ids and a token counter's own message: they are redacted like
    /// everything else that leaves the packer.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&scrub(&self.unredacted()))
    }
}

impl PackError {
    fn unredacted(&self) -> String {
        use std::fmt::Write;
        let mut out = String::new();
        let f = &mut out;
        let _ = match self {
            PackError::BudgetTooSmall { limit, needed } => write!(
                f,
                "budget of {limit} is too small: even the short error needs {needed}"
            ),
            PackError::InvalidPolicy(e) => write!(f, "{e}"),
            PackError::InvalidOptions(m) => write!(f, "invalid pack options: {m}"),
            PackError::TokenCounter(m) => write!(f, "token counter failed: {m}"),
            PackError::NotFound(id) => write!(
                f,
                "no stored result for id {id:?} (never stored, or evicted from the page store)"
            ),
            PackError::TooLarge { bytes, max } => write!(
                f,
                "tool result of {bytes} bytes is larger than the {max} bytes pack accepts; stream it (StreamPacker) or narrow it"
            ),
            PackError::InvalidJson(m) => write!(f, "json: {m}"),
            PackError::Store(e) => write!(f, "{e}"),
        };
        out
    }
}

impl std::error::Error for PackError {}

impl Coded for PackError {
    fn code(&self) -> &'static str {
        match self {
            PackError::BudgetTooSmall { .. } => "budget_too_small",
            PackError::InvalidPolicy(e) => e.code(),
            PackError::InvalidOptions(_) => "invalid_options",
            PackError::TokenCounter(_) => "token_counter_failed",
            PackError::NotFound(_) => "not_found",
            PackError::TooLarge { .. } => "too_large",
            PackError::InvalidJson(_) => "invalid_json",
            PackError::Store(e) => e.code(),
        }
    }
}

impl From<RedactError> for PackError {
    fn from(e: RedactError) -> Self {
        PackError::InvalidPolicy(e)
    }
}

/// An error message with any secret it quotes (an id, a counter's message) redacted.
fn scrub(message: &str) -> String {
    Redactor::default().text(message).text
}

/// A JSON tool result given as text: parsed into a value when it can be, else packed as
/// the JSON text it is. Nesting deeper than the parser's limit (128) or more values than a
/// tree can hold in memory are no reason to refuse a valid result: as text, the truncator's
/// JSON pattern still cuts it (summarising deep nesting) and redaction still reads it.
pub fn json_body(text: String) -> Result<Body, PackError> {
    if text.len() > MAX_INPUT_BYTES {
        return Err(PackError::TooLarge {
            bytes: text.len() as u64,
            max: MAX_INPUT_BYTES as u64,
        });
    }
    if crate::truncate::node_bound(text.as_bytes()) > crate::truncate::MAX_NODES {
        return Ok(Body::Text(text));
    }
    match serde_json::from_str::<Value>(&text) {
        Ok(v) => Ok(Body::Json(v)),
        Err(e) if e.to_string().starts_with("recursion limit exceeded") => Ok(Body::Text(text)),
        Err(e) => Err(PackError::InvalidJson(e.to_string())),
    }
}

/// Packs one tool result: see the module docs. `store_limit` is the largest text the page
/// store will accept (`None` for a caller-provided store without a bound); the text to
/// store comes back in [`Packed::stored`].
pub fn pack(
    result: &ToolResult,
    opts: &PackOptions,
    registry: &Registry,
    counter: Option<&dyn TokenCounter>,
    store_limit: Option<usize>,
) -> Result<Packed, PackError> {
    pack_with(result, None, opts, registry, counter, store_limit)
}

/// A text the caller already redacted (the streaming packer's), with the length it had
/// before and the receipts of that redaction.
pub(crate) struct Redacted {
    pub text: String,
    pub raw_len: usize,
    pub receipts: Vec<Receipt>,
}

/// The first 128 bytes of the content (fewer, to end on a character boundary).
pub fn preview(content: &str) -> String {
    let mut end = content.len().min(128);
    while !content.is_char_boundary(end) {
        end -= 1;
    }
    content[..end].to_string()
}

/// A packer with a tool registry and the in-module page store: `pack` stores what
/// `get_more` pages through.
#[derive(Debug, Clone, Default)]
pub struct Packer {
    pub registry: Registry,
    pub store: MemoryPageStore,
}

impl Packer {
    pub fn new(registry: Registry, store: MemoryPageStore) -> Packer {
        Packer { registry, store }
    }

    /// Packs a result and keeps its full redacted text (with its page size) for
    /// `get_more` when it was cut.
    pub fn pack(
        &mut self,
        result: &ToolResult,
        opts: &PackOptions,
        counter: Option<&dyn TokenCounter>,
    ) -> Result<Packed, PackError> {
        let packed = pack(
            result,
            opts,
            &self.registry,
            counter,
            Some(self.store.max_bytes),
        )?;
        self.keep(&packed)?;
        Ok(packed)
    }

    /// A streaming packer whose cut result this packer's store can keep (see
    /// [`Packer::keep`]).
    pub fn stream(
        &self,
        tool: &str,
        call_id: &str,
        command: Option<String>,
        opts: &PackOptions,
    ) -> Result<StreamPacker, PackError> {
        StreamPacker::new(
            tool,
            call_id,
            command,
            opts,
            &self.registry,
            Some(self.store.max_bytes),
        )
    }

    /// [`Packer::keep`] of a [`Packed::stored`] the caller hands over: the text moves into
    /// the store, where `keep` copies it (a large result's second copy).
    pub fn keep_stored(&mut self, stored: Stored) -> Result<(), PackError> {
        let page = StoredPage {
            text: std::borrow::Cow::Owned(stored.text),
            page_bytes: stored.page_bytes,
        };
        self.store
            .put(&stored.id, page)
            .map(|_| ())
            .map_err(PackError::Store)
    }

    /// Stores what a pack (or a finished stream) left to page through, with its page size.
    pub fn keep(&mut self, packed: &Packed) -> Result<(), PackError> {
        if let Some(s) = &packed.stored {
            // `pack` offered paging only for a text the store can hold, so this keeps it.
            keep(&mut self.store, s).map_err(PackError::Store)?;
        }
        Ok(())
    }

    /// The next page of a stored result, packed as the observation of a `get_more` call.
    pub fn get_more(
        &self,
        id: &str,
        offset: u64,
        call_id: &str,
        opts: &PackOptions,
    ) -> Result<Packed, PackError> {
        get_more_in(&self.store, id, offset, call_id, opts)
    }
}

/// A page of `text` (a stored full result) as the observation of a `get_more` call: at
/// most `page_bytes` bytes of content including the line that says where the next page
/// starts. The span's observed slice is the rest of the result from `offset`, so a page
/// that does not reach the end is a declared clip.
pub fn get_more_from(
    text: &str,
    id: &str,
    offset: u64,
    call_id: &str,
    page_bytes: usize,
    opts: &PackOptions,
) -> Result<Packed, PackError> {
    let total = text.len() as u64;
    let redactor = Redactor::new(&opts.redact)?;
    let mut receipts = Vec::new();
    let shown = Shown::new(GET_MORE, call_id, None, &redactor, &mut receipts);
    let id = redactor
        .redact_str(id, "id", &mut receipts)
        .unwrap_or_else(|| id.to_string());
    // Room for the trailer: "\n[get_more: bytes A-B of N; next: get_more(id=..., offset=B)]".
    let id_json = Value::String(id).to_string();
    let trailer_max = format!(
        "\n[{GET_MORE}: bytes {total}-{total} of {total}; next: {GET_MORE}(id={id_json}, offset={total})]"
    )
    .len();
    let room = page_bytes
        .checked_sub(trailer_max)
        .filter(|r| *r > 0)
        .ok_or(PackError::BudgetTooSmall {
            limit: page_bytes,
            needed: trailer_max + 1,
        })?;
    let p = page(text, offset, room);
    let mut content = p.text.clone();
    let hint = p.next_offset.map(|n| {
        content.push_str(&format!(
            "\n[{GET_MORE}: bytes {}-{n} of {total}; next: {GET_MORE}(id={id_json}, offset={n})]",
            p.offset
        ));
        format!("More remains. Call {GET_MORE}(id={id_json}, offset={n}) for the next page.")
    });
    let rest = &text[p.offset as usize..];
    let truncated = p.next_offset.is_some();
    let reason = if truncated || content != rest {
        ClipReason::ToolResultCharLimit
    } else {
        ClipReason::None
    };
    let observed = Observed {
        bytes: rest.len() as u64,
        sha256: sha256(rest.as_bytes()),
        failed: false,
    };
    let budget = Budget::new(Unit::Bytes, page_bytes);
    let span = span_record(
        &shown,
        opts,
        budget,
        observed,
        &content,
        reason,
        &EstimateTokens,
    )?;
    let omitted = total - p.offset - p.text.len() as u64;
    Ok(Packed {
        envelope: Envelope {
            content,
            truncated,
            redacted: !receipts.is_empty(),
            omitted: Omitted {
                bytes: omitted,
                lines: text[(p.offset as usize + p.text.len())..].lines().count() as u64,
                ..Omitted::default()
            },
            next_offset: p.next_offset,
            hint,
            ..blank_envelope(&shown, GET_MORE)
        },
        span,
        receipts,
        shape: ShapeReport::default(),
        pattern: if truncated { "page" } else { "none" }.into(),
        stored: None,
        cut: None,
    })
}
