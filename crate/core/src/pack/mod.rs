//! **Pack**: turn a tool result into the observation the model reads, and the clip-aware
//! span record that proves what it read.
//!
//! Seed 004's order, each stage a function a reader can find:
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
mod store;
mod stream;
pub mod tenant;

use std::fmt;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::error::Coded;
use crate::hash::sha256;
use crate::redact::{Policy, Receipt, RedactError, Redactor, RULES_VERSION};
use crate::span::{ClipReason, SpanRecord};
use crate::truncate::{
    self, estimate_tokens, Budget, EstimateTokens, Fetch, Offsets, Segment, TokenCounter, ToolKind,
    TruncateError, Unit, Utf16Map,
};

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

/// The tool's name, the call's id and the command as the model and the span see them:
/// redacted like the body (a token in a `curl -H "Authorization: ..."` command or in a
/// clone URL is as secret in the header as in the output). Receipts name the field
/// (`tool`, `tool_call_id`, `command`).
#[derive(Debug, Clone)]
pub(crate) struct Shown {
    pub tool: String,
    pub call_id: String,
    pub command: Option<String>,
}

impl Shown {
    pub(crate) fn new(
        tool: &str,
        call_id: &str,
        command: Option<&str>,
        redactor: &Redactor,
        receipts: &mut Vec<Receipt>,
    ) -> Shown {
        let mut field = |text: &str, path: &str| {
            redactor
                .redact_str(text, path, receipts)
                .unwrap_or_else(|| text.to_string())
        };
        Shown {
            tool: field(tool, "tool"),
            call_id: field(call_id, "tool_call_id"),
            command: command.map(|c| field(c, "command")),
        }
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

/// A JSON object or array parsed when its values fit in memory (see
/// `truncate::MAX_NODES`); `None` otherwise, or when it is not JSON.
fn parse_bounded(text: &str) -> Option<Value> {
    if crate::truncate::node_bound(text.as_bytes()) > crate::truncate::MAX_NODES {
        return None;
    }
    serde_json::from_str(text).ok()
}

/// The pack settings after the registry and the options are combined.
struct Plan {
    kind: Option<Kind>,
    budget: Budget,
    pageable: bool,
    /// Largest text the page store accepts (`None`: the caller's store, no bound).
    store_limit: Option<usize>,
}

fn plan(
    result: &ToolResult,
    opts: &PackOptions,
    registry: &Registry,
    store_limit: Option<usize>,
) -> Result<Plan, PackError> {
    let spec = registry.spec(&result.tool);
    let limit = opts.limit.unwrap_or(spec.max_bytes);
    if limit == 0 {
        return Err(PackError::InvalidOptions("limit must be at least 1".into()));
    }
    Ok(Plan {
        kind: opts.kind.or(spec.kind),
        budget: Budget::new(opts.unit, limit),
        pageable: opts.pageable.unwrap_or(spec.pageable),
        store_limit,
    })
}

fn tool_kind(kind: Kind) -> ToolKind {
    match kind {
        Kind::Terminal => ToolKind::Terminal,
        Kind::Search => ToolKind::Search,
        Kind::File => ToolKind::File,
        Kind::Json => ToolKind::Json,
        Kind::Text => ToolKind::Other,
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

/// [`pack`], or with `pre` the packing of an already redacted text (`result.body` is then
/// ignored).
pub(crate) fn pack_with(
    result: &ToolResult,
    pre: Option<Redacted>,
    opts: &PackOptions,
    registry: &Registry,
    counter: Option<&dyn TokenCounter>,
    store_limit: Option<usize>,
) -> Result<Packed, PackError> {
    let plan = plan(result, opts, registry, store_limit)?;
    let size = match (&pre, &result.body) {
        (Some(p), _) => p.text.len(),
        (None, Body::Text(t)) => t.len(),
        (None, Body::Json(v)) => serde_json::to_string(v).map_or(0, |s| s.len()),
        (None, Body::Binary { .. }) => 0,
    };
    if size > MAX_INPUT_BYTES {
        return Err(PackError::TooLarge {
            bytes: size as u64,
            max: MAX_INPUT_BYTES as u64,
        });
    }
    let redactor = Redactor::new(&opts.redact)?;
    let counter: &dyn TokenCounter = counter.unwrap_or(&EstimateTokens);
    let mut meta_receipts = Vec::new();
    let shown = Shown::new(
        &result.tool,
        &result.call_id,
        result.command.as_deref(),
        &redactor,
        &mut meta_receipts,
    );

    // 1. Render, redact, shape. `raw_len` is what the tool returned; `redacted_full` the
    //    same rendering after redaction (hashed as the observed slice).
    let mut shape_report = ShapeReport::default();
    const PRE: &Body = &Body::Text(String::new());
    let body = if pre.is_some() { PRE } else { &result.body };
    let (raw_len, redacted_full, text, receipts, outcome, kind, binary) = match body {
        Body::Binary { bytes, media_type } => {
            let text = format!(
                "[binary output omitted: {bytes} bytes{}]",
                media_type
                    .as_deref()
                    .map(|m| format!(" of {m}"))
                    .unwrap_or_default()
            );
            (
                *bytes as usize,
                text.clone(),
                text,
                Vec::new(),
                Map::new(),
                Some(Kind::Text),
                true,
            )
        }
        Body::Json(value) => {
            let raw_len = serde_json::to_string(value).map_or(0, |s| s.len());
            let mut v = value.clone();
            // Other tenants' rows go first: nothing below ever sees them.
            let mut receipts = match &opts.tenant {
                Some(t) => tenant::drop_foreign_rows(&mut v, t),
                None => Vec::new(),
            };
            receipts.extend(redactor.json(&mut v));
            let redacted_full = v.to_string();
            shape_report = shape::shape_json(&mut v, &opts.shape);
            let outcome = shape::outcomes(&v, &opts.shape.keep_keys);
            (
                raw_len,
                redacted_full,
                v.to_string(),
                receipts,
                outcome,
                Some(plan.kind.unwrap_or(Kind::Json)),
                false,
            )
        }
        Body::Text(raw) => {
            // Other tenants' rows go first: nothing below ever sees them. A text that is
            // JSON (most tool results arrive as text) is filtered as JSON.
            let tenant_filter = |t: &str| match &opts.tenant {
                Some(policy) => tenant::filter_text(t, policy),
                None => (None, Vec::new()),
            };
            let (red, raw_len) = match pre {
                Some(p) => {
                    let (filtered, dropped) = tenant_filter(&p.text);
                    let mut receipts = p.receipts;
                    receipts.splice(0..0, dropped);
                    let text = filtered.unwrap_or(p.text);
                    (crate::redact::Redacted { text, receipts }, p.raw_len)
                }
                None => {
                    let (filtered, dropped) = tenant_filter(raw);
                    let mut red = redactor.text(filtered.as_deref().unwrap_or(raw));
                    red.receipts.splice(0..0, dropped);
                    (red, raw.len())
                }
            };
            let (text, kind, outcome) = match shape::shape_text(&red.text, &opts.shape) {
                Some((t, r)) => {
                    shape_report = r;
                    let v: Value = serde_json::from_str(&t).unwrap_or(Value::Null);
                    (
                        t,
                        Some(Kind::Json),
                        shape::outcomes(&v, &opts.shape.keep_keys),
                    )
                }
                None => {
                    let object = red.text.trim_start().starts_with('{');
                    let outcome = match object.then(|| parse_bounded(&red.text)).flatten() {
                        Some(v @ Value::Object(_)) => shape::outcomes(&v, &opts.shape.keep_keys),
                        _ => Map::new(),
                    };
                    (red.text.clone(), plan.kind, outcome)
                }
            };
            (raw_len, red.text, text, red.receipts, outcome, kind, false)
        }
    };
    let mut receipts = receipts;
    receipts.extend(meta_receipts);
    let mut outcome = outcome;
    if let Some(code) = result.exit_code {
        outcome.insert("exit_code".into(), code.into());
    }
    if result.timed_out {
        outcome.insert("timed_out".into(), true.into());
    }

    // 2. The truncation options: a header above terminal output (exit code outside the
    //    cut), the fetch call when the rest can be paged.
    let header = truncate::header_by_default(
        kind.map(tool_kind),
        result.exit_code,
        result.timed_out,
        result.command.as_deref(),
    );
    let can_store = plan.pageable && plan.store_limit.is_none_or(|max| text.len() <= max);
    let mut topts = truncate::Options::new(truncate::Pattern::Auto, plan.budget);
    topts.tool = Some(shown.tool.clone());
    topts.kind = kind.map(tool_kind);
    topts.exit_code = result.exit_code;
    topts.timed_out = result.timed_out;
    topts.command = shown.command.clone();
    topts.header = header && !binary;
    topts.json.keep_keys = opts.shape.keep_keys.clone();
    if can_store {
        topts.fetch = Some(Fetch {
            id: shown.call_id.clone(),
            offset: 0,
            tool: GET_MORE.into(),
        });
    }
    let header_len = if topts.header {
        header_bytes(&topts)?
    } else {
        0
    };
    let observed_bytes = (header_len + raw_len) as u64;
    let observed_text = if header_len > 0 {
        format!("{}{redacted_full}", header_text(&topts)?)
    } else {
        redacted_full
    };

    let cut = truncate::truncate_with(&text, &topts, counter);
    let mut envelope = Envelope {
        role: "tool".into(),
        tool_call_id: shown.call_id.clone(),
        name: shown.tool.clone(),
        content: String::new(),
        truncated: false,
        redacted: !receipts.is_empty(),
        omitted: Omitted {
            keys: shape_report.dropped.len() as u64,
            shaped_bytes: shape_report.dropped.iter().map(|d| d.bytes).sum::<u64>()
                + shape_report.summarized_bytes,
            ..Omitted::default()
        },
        next_offset: None,
        hint: None,
        outcome,
        error: None,
    };
    let mut pattern = "none".to_string();
    let mut stored = None;
    let mut segments = Vec::new();
    let fits = match cut {
        Ok(t) => {
            let ok = (!t.truncated || can_store) && outcomes_survive(&t.text, &envelope.outcome);
            if ok {
                pattern = t.pattern.name().to_string();
                envelope.truncated = t.truncated;
                envelope.omitted.bytes = t.omitted_bytes as u64;
                envelope.omitted.lines = t.omitted_lines as u64;
                if t.truncated {
                    envelope.next_offset = t.next_offset;
                    envelope.hint = Some(match t.next_offset {
                        Some(n) => format!(
                            "Output truncated: {} bytes omitted. Call {GET_MORE}(id={}, offset={n}) for the next page.",
                            t.omitted_bytes, Value::String(shown.call_id.clone())
                        ),
                        None => format!("Output truncated: {} bytes omitted.", t.omitted_bytes),
                    });
                    stored = Some(Stored {
                        id: shown.call_id.clone(),
                        text: text.clone(),
                        page_bytes: opts
                            .page_bytes
                            .unwrap_or_else(|| registry.spec(&result.tool).page_bytes())
                            .max(1),
                    });
                }
                envelope.content = t.text;
                segments = t.segments;
            }
            ok
        }
        Err(TruncateError::BudgetTooSmall { .. }) => false,
        Err(TruncateError::TokenCounter(m)) => return Err(PackError::TokenCounter(m)),
        Err(e) => return Err(PackError::InvalidOptions(e.to_string())),
    };
    if !fits {
        too_large(
            &mut envelope,
            (text.len() as u64, text.lines().count() as u64),
            &plan,
            counter,
        )?;
        pattern = "too_large".into();
    }
    let cut = opts.segments.then(|| {
        // Receipt offsets are into the redacted text; they hold in `text` only when it is
        // that text (a text result shaping did not turn into JSON).
        let placeholders_hold = matches!(result.body, Body::Text(_)) && !shape_report.changed();
        Cut {
            redacted: (receipts.iter())
                .filter(|_| placeholders_hold)
                .filter_map(|r| {
                    let at = r.offset? as usize;
                    Some([at, at + r.replacement.len()])
                })
                .collect(),
            source: text,
            segments,
            offsets: Offsets::Utf8,
        }
    });

    // 3. The span record.
    let changed = envelope.content != observed_text;
    let reason = if binary {
        ClipReason::BinaryOmitted
    } else if envelope.truncated || shape_report.changed() {
        match plan.budget.unit() {
            Unit::Tokens => ClipReason::PromptTokenCap,
            _ => ClipReason::ToolResultCharLimit,
        }
    } else if envelope.redacted {
        ClipReason::Redaction
    } else if changed {
        // Cannot happen (every change above has a reason), but a record must never claim
        // `none` for bytes that differ.
        ClipReason::ToolResultCharLimit
    } else {
        ClipReason::None
    };
    let span = span_record(
        result,
        &shown,
        opts,
        &plan,
        observed_bytes,
        &observed_text,
        &envelope.content,
        reason,
        counter,
    )?;
    Ok(Packed {
        envelope,
        span,
        receipts,
        shape: shape_report,
        pattern,
        stored,
        cut,
    })
}

/// Every outcome is still readable in the content: the exit code and timeout in the
/// header, every JSON outcome key with its value (at the top, or under `error`), or, when
/// the content is not JSON, each outcome value's text.
fn outcomes_survive(content: &str, outcome: &Map<String, Value>) -> bool {
    let body = content
        .split_once("\nOutput:\n")
        .map_or(content, |(_, b)| b);
    let parsed = match parse_bounded(body) {
        Some(Value::Object(m)) => Some(m),
        _ => None,
    };
    outcome.iter().all(|(k, v)| match k.as_str() {
        "exit_code" if content.contains(&format!("Exit code: {v}\n")) => true,
        "timed_out" if content.contains("Timed out: yes\n") => true,
        _ => match &parsed {
            Some(m) => {
                let found = match k.split_once('.') {
                    Some((outer, inner)) => m.get(outer).and_then(|o| o.get(inner)),
                    None => m.get(k),
                };
                found == Some(v)
            }
            None => match v {
                Value::String(s) => content.contains(s.as_str()),
                Value::Null => true,
                other => content.contains(&other.to_string()),
            },
        },
    })
}

/// The short error in place of the result: outcomes first (they must survive), then the
/// reason. Fails only when not even `result too large` fits.
fn too_large(
    envelope: &mut Envelope,
    (bytes, lines): (u64, u64),
    plan: &Plan,
    counter: &dyn TokenCounter,
) -> Result<(), PackError> {
    let limit = plan.budget.limit();
    let measure = |s: &str| -> Result<usize, PackError> {
        match plan.budget.unit() {
            Unit::Bytes => Ok(s.len()),
            Unit::Chars => Ok(s.chars().count()),
            Unit::Utf16 => Ok(s.encode_utf16().count()),
            Unit::Tokens => counter.count(s).map_err(PackError::TokenCounter),
        }
    };
    let outcome = Value::Object(envelope.outcome.clone()).to_string();
    let candidates = [
        format!("{TOO_LARGE} ({bytes} bytes, limit {limit}). Outcome: {outcome}"),
        format!("{TOO_LARGE}. Outcome: {outcome}"),
    ];
    let mut chosen = None;
    for c in candidates {
        if measure(&c)? <= limit {
            chosen = Some(c);
            break;
        }
    }
    let content = match chosen {
        Some(c) => c,
        None if envelope.outcome.is_empty() && measure(TOO_LARGE)? <= limit => TOO_LARGE.into(),
        None => {
            let needed = measure(&format!("{TOO_LARGE}. Outcome: {outcome}"))?;
            return Err(PackError::BudgetTooSmall { limit, needed });
        }
    };
    envelope.content = content;
    envelope.truncated = true;
    envelope.omitted.bytes = bytes;
    envelope.omitted.lines = lines;
    envelope.next_offset = None;
    envelope.hint = Some(format!(
        "The result does not fit in {limit} {} and cannot be paged: narrow the query.",
        plan.budget.unit().name()
    ));
    envelope.error = Some("result_too_large".into());
    Ok(())
}

/// The terminal header the truncator writes, obtained by truncating nothing.
fn header_text(topts: &truncate::Options) -> Result<String, PackError> {
    let mut o = topts.clone();
    o.budget = Budget::new(Unit::Bytes, usize::MAX / 2);
    o.fetch = None;
    truncate::truncate("", &o)
        .map(|t| t.text)
        .map_err(|e| PackError::InvalidOptions(e.to_string()))
}

fn header_bytes(topts: &truncate::Options) -> Result<usize, PackError> {
    header_text(topts).map(|h| h.len())
}

fn hex(data: &[u8], short: bool) -> String {
    let d = sha256(data);
    if short {
        d.short_hex()
    } else {
        d.hex()
    }
}

/// The first 128 bytes of the content (fewer, to end on a character boundary).
pub fn preview(content: &str) -> String {
    let mut end = content.len().min(128);
    while !content.is_char_boundary(end) {
        end -= 1;
    }
    content[..end].to_string()
}

/// The span's id and parent: the caller's (redacted like every field of the record), or the
/// call's id.
pub(crate) fn span_ids(opts: &PackOptions, shown: &Shown) -> (String, Option<String>) {
    let field = |s: &str| match Redactor::new(&opts.redact) {
        Ok(r) => r.text(s).text,
        Err(_) => scrub(s),
    };
    (
        opts.span_id
            .as_deref()
            .map_or_else(|| shown.call_id.clone(), field),
        opts.parent_id.as_deref().map(field),
    )
}

fn builder_version(opts: &PackOptions, plan: &Plan) -> String {
    let mut v = format!(
        "{BUILDER}+{RULES_VERSION};{}={}",
        plan.budget.unit().name(),
        plan.budget.limit()
    );
    if let Some(extra) = &opts.builder_version {
        v.push(';');
        v.push_str(&scrub(extra));
    }
    v
}

#[allow(clippy::too_many_arguments)]
fn span_record(
    result: &ToolResult,
    shown: &Shown,
    opts: &PackOptions,
    plan: &Plan,
    observed_bytes: u64,
    observed_text: &str,
    content: &str,
    reason: ClipReason,
    counter: &dyn TokenCounter,
) -> Result<SpanRecord, PackError> {
    let tokens = match plan.budget.unit() {
        Unit::Tokens => counter.count(content).map_err(PackError::TokenCounter)?,
        _ => estimate_tokens(content),
    };
    let failed = result.exit_code.is_some_and(|c| c != 0)
        || result.timed_out
        || matches!(&result.body, Body::Json(Value::Object(m)) if m.get("ok") == Some(&Value::Bool(false)));
    let (span_id, parent_id) = span_ids(opts, shown);
    Ok(SpanRecord {
        span_id: Some(span_id),
        parent_id,
        name: Some(shown.tool.clone()),
        status: Some(if failed { "error" } else { "ok" }.into()),
        observed_bytes: Some(observed_bytes),
        injected_bytes: Some(content.len() as u64),
        injected_tokens: Some(tokens as u64),
        clip_reason: Some(reason.as_str().into()),
        sha256_observed: Some(hex(observed_text.as_bytes(), opts.short_hashes)),
        sha256_injected: Some(hex(content.as_bytes(), opts.short_hashes)),
        injected_preview: Some(preview(content)),
        prompt_builder_version: Some(builder_version(opts, plan)),
        model_context_limit_tokens: opts.model_context_limit_tokens,
    })
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
    let result = ToolResult::text(GET_MORE, call_id, rest);
    let plan = Plan {
        kind: Some(Kind::Text),
        budget: Budget::new(Unit::Bytes, page_bytes),
        pageable: true,
        store_limit: None,
    };
    let reason = if truncated || content != rest {
        ClipReason::ToolResultCharLimit
    } else {
        ClipReason::None
    };
    let span = span_record(
        &result,
        &shown,
        opts,
        &plan,
        rest.len() as u64,
        rest,
        &content,
        reason,
        &EstimateTokens,
    )?;
    let omitted = total - p.offset - p.text.len() as u64;
    Ok(Packed {
        envelope: Envelope {
            role: "tool".into(),
            tool_call_id: shown.call_id.clone(),
            name: GET_MORE.into(),
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
            outcome: Map::new(),
            error: None,
        },
        span,
        receipts,
        shape: ShapeReport::default(),
        pattern: if truncated { "page" } else { "none" }.into(),
        stored: None,
        cut: None,
    })
}
