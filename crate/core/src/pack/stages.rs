//! The packer's stages, one function each, over one [`Packing`] state:
//!
//! ```text
//! plan ─ redact ─ shape ─ truncate ─ store ─ span ─ assemble
//! ```
//!
//! [`pack_with`] only calls them in turn. Each stage reads what the stages before it left
//! in the state and writes its own part, so what a stage may depend on is the state's
//! fields, not a list of locals. The streaming packer and `get_more` are built from the
//! pieces they share with it (the redacted header fields, the terminal header, the outcome
//! flags, the short error, the span record), so every observation the packer writes says
//! the same things in the same way.

use serde_json::{Map, Value};

use super::{
    shape, tenant, Body, Cut, Envelope, Kind, Omitted, PackError, PackOptions, Packed, Redacted,
    Registry, ShapeReport, Stored, ToolResult, BUILDER, GET_MORE, MAX_INPUT_BYTES, TOO_LARGE,
};
use crate::hash::{sha256, Digest, Sha256};
use crate::redact::{Receipt, Redactor, RULES_VERSION};
use crate::span::{ClipReason, SpanRecord};
use crate::truncate::{
    self, estimate_tokens, Budget, EstimateTokens, Fetch, Offsets, Segment, TokenCounter, ToolKind,
    TruncateError, Truncation, Unit,
};

/// [`super::pack`], or with `pre` the packing of an already redacted text (`result.body` is
/// then ignored).
pub(crate) fn pack_with(
    result: &ToolResult,
    pre: Option<Redacted>,
    opts: &PackOptions,
    registry: &Registry,
    counter: Option<&dyn TokenCounter>,
    store_limit: Option<usize>,
) -> Result<Packed, PackError> {
    let mut p = Packing::plan(result, pre.as_ref(), opts, registry, counter, store_limit)?;
    p.redact(pre);
    p.shape();
    let observed = p.truncate()?;
    p.store();
    let span = p.span(observed)?;
    Ok(p.assemble(span))
}

/// The pack settings after the registry and the options are combined.
pub(crate) struct Plan {
    kind: Option<Kind>,
    pub budget: Budget,
    pageable: bool,
    /// Largest text the page store accepts (`None`: the caller's store, no bound).
    store_limit: Option<usize>,
    /// The page size `get_more` cuts the stored text at: the options', else the tool's.
    page_bytes: usize,
}

/// The settings for `tool`: the options where they say, the tool's registered spec where
/// they do not. A zero limit is refused here, before anything is read.
pub(crate) fn plan(
    tool: &str,
    opts: &PackOptions,
    registry: &Registry,
    store_limit: Option<usize>,
) -> Result<Plan, PackError> {
    let spec = registry.spec(tool);
    let limit = opts.limit.unwrap_or(spec.max_bytes);
    if limit == 0 {
        return Err(PackError::InvalidOptions("limit must be at least 1".into()));
    }
    Ok(Plan {
        kind: opts.kind.or(spec.kind),
        budget: Budget::new(opts.unit, limit),
        pageable: opts.pageable.unwrap_or(spec.pageable),
        store_limit,
        page_bytes: opts.page_bytes.unwrap_or_else(|| spec.page_bytes()).max(1),
    })
}

/// One pack in progress. [`Packing::plan`] fills the inputs and the header fields; every
/// later field is written by the stage named in its comment and only read after it.
struct Packing<'a> {
    result: &'a ToolResult,
    opts: &'a PackOptions,
    counter: &'a dyn TokenCounter,
    plan: Plan,
    redactor: Redactor,
    /// The tool name, call id and command, redacted (plan).
    shown: Shown,
    /// The size of what the tool returned, rendered (compact JSON for a value): set by plan
    /// as the size the input bound is checked on, corrected by redact for a text redacted
    /// before (its length then) and a binary body (its declared size).
    raw_len: usize,
    /// Every receipt: the body's (redact), then the header fields' (plan).
    receipts: Vec<Receipt>,
    /// The body only as its size and type (redact).
    binary: bool,
    /// The body as the model would have seen it uncut, after redaction: the rendering
    /// before shaping (redact). With `header` in front, the observed slice. Moved to the
    /// page store when it is the text cut (store): read only through `observed_sha256`
    /// and `verbatim` after truncate.
    observed: String,
    /// The terminal header the model would have read above the uncut body (truncate).
    /// Kept apart from `observed` rather than copied in front of it: the span hashes and
    /// compares the two pieces in turn.
    header: String,
    /// A JSON body after redaction, waiting to be shaped (redact, taken by shape).
    json: Option<Value>,
    /// The text the truncator cuts when shaping changed it (shape); `None`: `observed`
    /// itself, not a copy of it (a 4 MiB log was copied twice more: here and for the store).
    text: Option<String>,
    /// The kind the truncator cuts by (shape; redact for a binary body).
    kind: Option<Kind>,
    /// What shaping dropped or summarised (shape).
    shape: ShapeReport,
    /// The observation, filled in by every stage from plan to store.
    envelope: Envelope,
    /// Whether the rest of a cut can be kept for `get_more` (truncate).
    can_store: bool,
    /// `observed`'s byte count, with the tool's raw size in place of the redacted one
    /// (truncate).
    observed_bytes: u64,
    /// The content is the observed slice, byte for byte (truncate).
    verbatim: bool,
    /// The cut applied (truncate).
    pattern: String,
    /// How the content maps onto `text` (truncate).
    segments: Vec<Segment>,
    /// The content is a kept cut that left something out, to be paged (truncate).
    paged: bool,
    /// The text `get_more` pages through (store).
    stored: Option<Stored>,
}

impl<'a> Packing<'a> {
    /// Combines the registry and the options, refuses a result over the input bound before
    /// anything is copied from it, and redacts the header fields every later stage names
    /// (the envelope's id and name, the truncator's header, the span).
    fn plan(
        result: &'a ToolResult,
        pre: Option<&Redacted>,
        opts: &'a PackOptions,
        registry: &Registry,
        counter: Option<&'a dyn TokenCounter>,
        store_limit: Option<usize>,
    ) -> Result<Packing<'a>, PackError> {
        let plan = plan(&result.tool, opts, registry, store_limit)?;
        let size = match (pre, &result.body) {
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
        let mut receipts = Vec::new();
        let shown = Shown::new(
            &result.tool,
            &result.call_id,
            result.command.as_deref(),
            &redactor,
            &mut receipts,
        );
        let envelope = blank_envelope(&shown, &shown.tool);
        Ok(Packing {
            result,
            opts,
            counter: counter.unwrap_or(&EstimateTokens),
            plan,
            redactor,
            shown,
            raw_len: size,
            receipts,
            binary: false,
            observed: String::new(),
            header: String::new(),
            json: None,
            text: None,
            kind: None,
            shape: ShapeReport::default(),
            envelope,
            can_store: false,
            observed_bytes: 0,
            verbatim: false,
            pattern: "none".into(),
            segments: Vec::new(),
            paged: false,
            stored: None,
        })
    }

    /// Renders the body and takes every secret and other tenants' row out of it, so that
    /// nothing after this stage (the observed hash, the preview, the page store, every
    /// cut) ever sees them. Other tenants' rows go first: redaction never reads them.
    fn redact(&mut self, pre: Option<Redacted>) {
        let result = self.result;
        let mut receipts = match (pre, &result.body) {
            (Some(pre), _) => {
                // The stream redacted it chunk by chunk; only other tenants' rows are left.
                let (filtered, dropped) = self.tenant_filter(&pre.text);
                let mut receipts = pre.receipts;
                receipts.splice(0..0, dropped);
                self.raw_len = pre.raw_len;
                self.observed = filtered.unwrap_or(pre.text);
                receipts
            }
            (None, Body::Text(raw)) => {
                // A text that is JSON (most tool results arrive as text) is filtered as
                // JSON.
                let (filtered, dropped) = self.tenant_filter(raw);
                let mut red = self.redactor.text(filtered.as_deref().unwrap_or(raw));
                red.receipts.splice(0..0, dropped);
                self.observed = red.text;
                red.receipts
            }
            (None, Body::Json(value)) => {
                let mut v = value.clone();
                let mut receipts = match &self.opts.tenant {
                    Some(t) => tenant::drop_foreign_rows(&mut v, t),
                    None => Vec::new(),
                };
                receipts.extend(self.redactor.json(&mut v));
                self.observed = v.to_string();
                self.json = Some(v);
                receipts
            }
            (None, Body::Binary { bytes, media_type }) => {
                let text = format!(
                    "[binary output omitted: {bytes} bytes{}]",
                    media_type
                        .as_deref()
                        .map(|m| format!(" of {m}"))
                        .unwrap_or_default()
                );
                self.raw_len = *bytes as usize;
                self.binary = true;
                self.kind = Some(Kind::Text);
                self.observed = text;
                Vec::new()
            }
        };
        receipts.append(&mut self.receipts);
        self.receipts = receipts;
        self.envelope.redacted = !self.receipts.is_empty();
    }

    /// The tenant policy's filter of a text result: the filtered text when it dropped
    /// something, and a receipt per drop.
    fn tenant_filter(&self, text: &str) -> (Option<String>, Vec<Receipt>) {
        match &self.opts.tenant {
            Some(policy) => tenant::filter_text(text, policy),
            None => (None, Vec::new()),
        }
    }

    /// Makes the result small and structured before the byte cap applies (noisy keys
    /// dropped, HTML pages and stack traces turned into structured errors), and collects
    /// the outcomes the later stages must never cut: the JSON outcome keys, then the exit
    /// code and timeout.
    fn shape(&mut self) {
        match self.json.take() {
            Some(v) => self.shape_json(v),
            None if !self.binary => self.shape_text(),
            None => {}
        }
        outcome_flags(
            &mut self.envelope.outcome,
            self.result.exit_code,
            self.result.timed_out,
        );
        let omitted = &mut self.envelope.omitted;
        omitted.keys = self.shape.dropped.len() as u64;
        omitted.shaped_bytes =
            self.shape.dropped.iter().map(|d| d.bytes).sum::<u64>() + self.shape.summarized_bytes;
    }

    /// A JSON body: shaped as a value, cut with the JSON pattern unless the options say
    /// otherwise.
    fn shape_json(&mut self, mut v: Value) {
        self.shape = shape::shape_json(&mut v, &self.opts.shape);
        self.envelope.outcome = shape::outcomes(&v, &self.opts.shape.keep_keys);
        self.text = Some(v.to_string());
        self.kind = Some(self.plan.kind.unwrap_or(Kind::Json));
    }

    /// A text body: an HTML page or a stack trace becomes a JSON error (cut as JSON); any
    /// other text is cut as it is, its outcomes read when it is a JSON object.
    fn shape_text(&mut self) {
        let keep = &self.opts.shape.keep_keys;
        match shape::shape_text(&self.observed, &self.opts.shape) {
            Some((t, report)) => {
                self.shape = report;
                let v: Value = serde_json::from_str(&t).unwrap_or(Value::Null);
                self.envelope.outcome = shape::outcomes(&v, keep);
                self.text = Some(t);
                self.kind = Some(Kind::Json);
            }
            None => {
                let object = self.observed.trim_start().starts_with('{');
                self.envelope.outcome = match object.then(|| parse_bounded(&self.observed)) {
                    Some(Some(v @ Value::Object(_))) => shape::outcomes(&v, keep),
                    _ => Map::new(),
                };
                self.kind = self.plan.kind;
            }
        }
    }

    /// Cuts the text to the budget. A cut is kept only when what it left out can be paged
    /// and every outcome survived it; otherwise the content is the short error (seed 004:
    /// "Do not return a silent prefix"). Also completes the observed slice (the header the
    /// model would have read above the uncut result) and returns its SHA-256, the one pass
    /// of the hash over the text, taken before the store may move the text away.
    fn truncate(&mut self) -> Result<Digest, PackError> {
        let topts = self.truncate_options();
        self.header = header_text(&topts)?;
        self.observed_bytes = (self.header.len() + self.raw_len) as u64;
        let kept = match truncate::truncate_with(self.text(), &topts, self.counter) {
            Ok(t) => ((!t.truncated || self.can_store)
                && outcomes_survive(&t.text, &self.envelope.outcome))
            .then_some(t),
            Err(TruncateError::BudgetTooSmall { .. }) => None,
            Err(TruncateError::TokenCounter(m)) => return Err(PackError::TokenCounter(m)),
            Err(e) => return Err(PackError::InvalidOptions(e.to_string())),
        };
        match kept {
            Some(t) => self.keep_cut(t),
            None => {
                let text = self.text.as_deref().unwrap_or(&self.observed);
                let size = (text.len() as u64, text.lines().count() as u64);
                too_large(&mut self.envelope, size, self.plan.budget, self.counter)?;
                self.pattern = "too_large".into();
            }
        }
        // The observed slice is complete: what the span says of it is taken now, before
        // the store may take the text.
        let mut h = Sha256::new();
        h.update(self.header.as_bytes());
        h.update(self.observed.as_bytes());
        self.verbatim = is_concat(&self.envelope.content, &self.header, &self.observed);
        Ok(h.finish())
    }

    /// The text the truncator cuts: the shaped text, else the observed one.
    fn text(&self) -> &str {
        self.text.as_deref().unwrap_or(&self.observed)
    }

    /// The truncator's options: the terminal header above the output (the exit code
    /// outside the cut), the outcome keys a JSON cut keeps, and the `get_more` call for the
    /// marker when the rest can be paged (a pageable tool, a text the store can hold).
    fn truncate_options(&mut self) -> truncate::Options {
        let result = self.result;
        let mut topts = header_options(
            self.plan.budget,
            &self.shown,
            self.kind,
            result.exit_code,
            result.timed_out,
        );
        topts.header &= !self.binary;
        topts.json.keep_keys = self.opts.shape.keep_keys.clone();
        self.can_store = self.plan.pageable
            && (self.plan.store_limit).is_none_or(|max| self.text().len() <= max);
        if self.can_store {
            topts.fetch = Some(Fetch {
                id: self.shown.call_id.clone(),
                offset: 0,
                tool: GET_MORE.into(),
            });
        }
        topts
    }

    /// The cut becomes the content, with what it left out counted in the envelope.
    fn keep_cut(&mut self, t: Truncation) {
        self.pattern = t.pattern.name().to_string();
        let e = &mut self.envelope;
        e.truncated = t.truncated;
        e.omitted.bytes = t.omitted_bytes as u64;
        e.omitted.lines = t.omitted_lines as u64;
        if t.truncated {
            e.next_offset = t.next_offset;
        }
        e.content = t.text;
        self.segments = t.segments;
        self.paged = t.truncated;
    }

    /// Keeps the whole (redacted, shaped) text for `get_more` when the content is a cut of
    /// it, and tells the model how to read on (seed 004: "Truncation without a follow-up
    /// tool trains hallucination").
    fn store(&mut self) {
        if !self.paged {
            return;
        }
        let e = &mut self.envelope;
        let omitted = e.omitted.bytes;
        e.hint = Some(match e.next_offset {
            Some(n) => format!(
                "Output truncated: {omitted} bytes omitted. Call {GET_MORE}(id={}, offset={n}) for the next page.",
                Value::String(self.shown.call_id.clone())
            ),
            None => format!("Output truncated: {omitted} bytes omitted."),
        });
        // The text moves to the store, unless the assembled cut (`segments`) shows it too.
        let text = if self.opts.segments {
            self.text().to_string()
        } else {
            (self.text.take()).unwrap_or_else(|| std::mem::take(&mut self.observed))
        };
        self.stored = Some(Stored {
            id: self.shown.call_id.clone(),
            text,
            page_bytes: self.plan.page_bytes,
        });
    }

    /// The seed-000 span record, with the clip reason that names the policy which changed
    /// the bytes (never `none` for bytes that differ); `observed_sha256` is truncate's
    /// digest of the observed slice.
    fn span(&self, observed_sha256: Digest) -> Result<SpanRecord, PackError> {
        let e = &self.envelope;
        let reason = if self.binary {
            ClipReason::BinaryOmitted
        } else if e.truncated || self.shape.changed() {
            match self.plan.budget.unit() {
                Unit::Tokens => ClipReason::PromptTokenCap,
                _ => ClipReason::ToolResultCharLimit,
            }
        } else if e.redacted {
            ClipReason::Redaction
        } else if !self.verbatim {
            // Cannot happen (every change above has a reason), but a record must never
            // claim `none` for bytes that differ.
            ClipReason::ToolResultCharLimit
        } else {
            ClipReason::None
        };
        let result = self.result;
        let ok_false = matches!(&result.body,
            Body::Json(Value::Object(m)) if m.get("ok") == Some(&Value::Bool(false)));
        let observed = Observed {
            bytes: self.observed_bytes,
            sha256: observed_sha256,
            failed: failed(result.exit_code, result.timed_out) || ok_false,
        };
        span_record(
            &self.shown,
            self.opts,
            self.plan.budget,
            observed,
            &e.content,
            reason,
            self.counter,
        )
    }

    /// The finished pack, with the cut's segments when the options ask for them.
    fn assemble(self, span: SpanRecord) -> Packed {
        let cut = if self.opts.segments {
            // Receipt offsets are into the redacted text; they hold in `text` only when it
            // is that text (a text result shaping did not turn into JSON).
            let placeholders_hold =
                matches!(self.result.body, Body::Text(_)) && !self.shape.changed();
            let redacted = (self.receipts.iter())
                .filter(|_| placeholders_hold)
                .filter_map(|r| {
                    let at = r.offset? as usize;
                    Some([at, at + r.replacement.len()])
                })
                .collect();
            Some(Cut {
                redacted,
                source: self.text.unwrap_or(self.observed),
                segments: self.segments,
                offsets: Offsets::Utf8,
            })
        } else {
            None
        };
        Packed {
            envelope: self.envelope,
            span,
            receipts: self.receipts,
            shape: self.shape,
            pattern: self.pattern,
            stored: self.stored,
            cut,
        }
    }
}

/// `text` is `head` followed by `tail`.
fn is_concat(text: &str, head: &str, tail: &str) -> bool {
    text.len() == head.len() + tail.len() && text.starts_with(head) && text.ends_with(tail)
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

/// An observation of the call `shown` answers, named `name`, with nothing in it yet: the
/// one place the envelope's constant fields are written.
pub(crate) fn blank_envelope(shown: &Shown, name: &str) -> Envelope {
    Envelope {
        role: "tool".into(),
        tool_call_id: shown.call_id.clone(),
        name: name.into(),
        content: String::new(),
        truncated: false,
        redacted: false,
        omitted: Omitted::default(),
        next_offset: None,
        hint: None,
        outcome: Map::new(),
        error: None,
    }
}

/// Adds the command's outcome (exit code, timeout) to the outcomes no cut may remove.
pub(crate) fn outcome_flags(
    outcome: &mut Map<String, Value>,
    exit_code: Option<i64>,
    timed_out: bool,
) {
    if let Some(code) = exit_code {
        outcome.insert("exit_code".into(), code.into());
    }
    if timed_out {
        outcome.insert("timed_out".into(), true.into());
    }
}

/// The call failed: a nonzero exit code or a timeout (a JSON `ok: false` is the pack's
/// own addition).
pub(crate) fn failed(exit_code: Option<i64>, timed_out: bool) -> bool {
    exit_code.is_some_and(|c| c != 0) || timed_out
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

/// The truncation options of an observation of `shown`'s call: the header's fields
/// (redacted) and whether the header is written (the truncator's own default, so a
/// streamed result and a packed one get the same header).
pub(crate) fn header_options(
    budget: Budget,
    shown: &Shown,
    kind: Option<Kind>,
    exit_code: Option<i64>,
    timed_out: bool,
) -> truncate::Options {
    let kind = kind.map(tool_kind);
    let mut topts = truncate::Options::new(truncate::Pattern::Auto, budget);
    topts.tool = Some(shown.tool.clone());
    topts.kind = kind;
    topts.exit_code = exit_code;
    topts.timed_out = timed_out;
    topts.command = shown.command.clone();
    topts.header =
        truncate::header_by_default(kind, exit_code, timed_out, shown.command.as_deref());
    topts
}

/// The terminal header the truncator writes with `topts` (empty when it writes none),
/// obtained by truncating nothing.
pub(crate) fn header_text(topts: &truncate::Options) -> Result<String, PackError> {
    if !topts.header {
        return Ok(String::new());
    }
    let mut o = topts.clone();
    o.budget = Budget::new(Unit::Bytes, usize::MAX / 2);
    o.fetch = None;
    truncate::truncate("", &o)
        .map(|t| t.text)
        .map_err(|e| PackError::InvalidOptions(e.to_string()))
}

/// A JSON object or array parsed when its values fit in memory (see
/// `truncate::MAX_NODES`); `None` otherwise, or when it is not JSON.
fn parse_bounded(text: &str) -> Option<Value> {
    if crate::truncate::node_bound(text.as_bytes()) > crate::truncate::MAX_NODES {
        return None;
    }
    serde_json::from_str(text).ok()
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
pub(crate) fn too_large(
    envelope: &mut Envelope,
    (bytes, lines): (u64, u64),
    budget: Budget,
    counter: &dyn TokenCounter,
) -> Result<(), PackError> {
    let limit = budget.limit();
    let measure = |s: &str| -> Result<usize, PackError> {
        match budget.unit() {
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
        budget.unit().name()
    ));
    envelope.error = Some("result_too_large".into());
    Ok(())
}

/// What the span record says was observed, besides the content.
pub(crate) struct Observed {
    /// The bytes the tool returned, rendered as the model would have seen them uncut.
    pub bytes: u64,
    /// The SHA-256 of that rendering after redaction.
    pub sha256: Digest,
    /// The call failed (the span's status is `error`).
    pub failed: bool,
}

/// The span record of an observation whose content is `content`: injected bytes, tokens
/// and hash from the exact content, observed ones from `observed`.
pub(crate) fn span_record(
    shown: &Shown,
    opts: &PackOptions,
    budget: Budget,
    observed: Observed,
    content: &str,
    reason: ClipReason,
    counter: &dyn TokenCounter,
) -> Result<SpanRecord, PackError> {
    let tokens = match budget.unit() {
        Unit::Tokens => counter.count(content).map_err(PackError::TokenCounter)?,
        _ => estimate_tokens(content),
    };
    let hex = |d: Digest| {
        if opts.short_hashes {
            d.short_hex()
        } else {
            d.hex()
        }
    };
    let (span_id, parent_id) = span_ids(opts, shown);
    Ok(SpanRecord {
        span_id: Some(span_id),
        parent_id,
        name: Some(shown.tool.clone()),
        status: Some(if observed.failed { "error" } else { "ok" }.into()),
        observed_bytes: Some(observed.bytes),
        injected_bytes: Some(content.len() as u64),
        injected_tokens: Some(tokens as u64),
        clip_reason: Some(reason.as_str().into()),
        sha256_observed: Some(hex(observed.sha256)),
        sha256_injected: Some(hex(sha256(content.as_bytes()))),
        injected_preview: Some(super::preview(content)),
        prompt_builder_version: Some(builder_version(opts, budget)),
        model_context_limit_tokens: opts.model_context_limit_tokens,
    })
}

/// The span's id and parent: the caller's (redacted like every field of the record), or the
/// call's id.
fn span_ids(opts: &PackOptions, shown: &Shown) -> (String, Option<String>) {
    let field = |s: &str| match Redactor::new(&opts.redact) {
        Ok(r) => r.text(s).text,
        Err(_) => super::scrub(s),
    };
    (
        opts.span_id
            .as_deref()
            .map_or_else(|| shown.call_id.clone(), field),
        opts.parent_id.as_deref().map(field),
    )
}

fn builder_version(opts: &PackOptions, budget: Budget) -> String {
    let mut v = format!(
        "{BUILDER}+{RULES_VERSION};{}={}",
        budget.unit().name(),
        budget.limit()
    );
    if let Some(extra) = &opts.builder_version {
        v.push(';');
        v.push_str(&super::scrub(extra));
    }
    v
}
