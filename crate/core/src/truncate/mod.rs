//! Truncators that keep the evidence.
//!
//! A tool result that is larger than its budget has to be cut before the model sees it, and
//! *how* it is cut decides what the model can conclude (seed 001). A build log cut to its
//! head hides the failure at its end; a head-and-tail cut hides the root-cause error in the
//! middle; a JSON cut by bytes is no longer JSON; a marker that says only "[truncated]" lets
//! the model guess. This module cuts by the information geography of each kind of output:
//!
//! | pattern | keeps |
//! | --- | --- |
//! | [`Pattern::Head`] | the first lines |
//! | [`Pattern::Tail`] | the last lines |
//! | [`Pattern::HeadTail`] | first and last lines (`head_share` of the budget to the head) |
//! | [`Pattern::Terminal`] | head, every error line of the middle with its line number and context, a larger tail; repeats and progress redraws collapsed |
//! | [`Pattern::Search`] | whole results from the top, with the count of those dropped |
//! | [`Pattern::File`] | a requested line range, or head, tail and definition lines |
//! | [`Pattern::Json`] | valid JSON: arrays trimmed, long strings cut, deep nesting summarised, outcome keys kept |
//! | [`Pattern::Csv`] | the header, first and last rows, and the row count |
//! | [`Pattern::Yaml`] | head, tail, and every top-level and outcome key line with its line number |
//! | [`Pattern::Auto`] | the seed's decision tree, by tool kind or by sniffing the content |
//!
//! Every pattern shares the same guarantees, tested as properties over generated inputs:
//! the output (header and markers included) never exceeds the budget in its unit; a budget
//! too small for even the marker is [`TruncateError::BudgetTooSmall`], never an overrun;
//! output that fits is returned unchanged; cuts fall on line boundaries, or inside an
//! over-long line at a grapheme boundary with an inline marker; the marker's counts are
//! exact; the exit code and the timeout travel beside the text, never inside it; and the
//! result is deterministic.
//!
//! The entry points are [`truncate`] (built-in token estimate) and [`truncate_with`] (the
//! caller's token counter). The observation packer calls them between redaction and the
//! envelope; [`Truncation`] carries everything the envelope and the clip-aware span need.

mod audit;
mod auto;
mod budget;
mod ends;
mod file;
mod grapheme;
mod json;
pub(crate) use json::{node_bound, MAX_NODES};
mod lines;
mod marker;
mod matcher;
mod output;
mod positional;
mod render;
mod run;
mod search;
mod tabular;
mod terminal;

use std::cell::OnceCell;
use std::fmt;

use serde::{Deserialize, Serialize};

pub use audit::{aggregate, AuditRecord, AuditSummary};
pub use auto::ToolKind;
pub use budget::{estimate_tokens, Budget, EstimateTokens, TokenCounter, Unit};
pub use output::{Segment, SegmentKind};
pub use run::{label_streams, run_terminal, success_of, CommandRun, TerminalResult};

use budget::Measure;
use lines::{line_accounting, Line};
use marker::{FetchAt, Level, Place, Spec};
use output::Out;

use crate::error::Coded;

/// Which cut to apply.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Pattern {
    /// Choose by tool kind, else by sniffing the content (seed 001's decision tree).
    #[default]
    Auto,
    Head,
    Tail,
    HeadTail,
    Terminal,
    Search,
    File,
    Json,
    /// A CSV table: header, first and last rows, the row count.
    Csv,
    /// A YAML document: head, tail, and every top-level and outcome key.
    Yaml,
}

/// The cut actually applied: `none` when the text fit, else the concrete pattern.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Applied {
    None,
    Head,
    Tail,
    HeadTail,
    Terminal,
    Search,
    File,
    Json,
    Csv,
    Yaml,
}

impl Applied {
    pub fn name(self) -> &'static str {
        match self {
            Applied::None => "none",
            Applied::Head => "head",
            Applied::Tail => "tail",
            Applied::HeadTail => "head_tail",
            Applied::Terminal => "terminal",
            Applied::Search => "search",
            Applied::File => "file",
            Applied::Json => "json",
            Applied::Csv => "csv",
            Applied::Yaml => "yaml",
        }
    }
}

/// Where the model can fetch what was cut: the marker then says
/// `get_more(id="<id>", offset=<offset + start of the omitted part>)`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Fetch {
    /// The id the paging tool takes (the tool call id, or the stored result's id).
    pub id: String,
    /// Byte offset of this text within the stored full result (0 for a whole result).
    pub offset: u64,
    /// The paging tool's name.
    pub tool: String,
}

impl Default for Fetch {
    fn default() -> Self {
        Fetch {
            id: String::new(),
            offset: 0,
            tool: "get_more".into(),
        }
    }
}

/// Settings of the terminal pattern (seed 001 §4, without its flaws).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct TerminalOptions {
    /// Share of the budget (after markers) for the first lines, command echo included.
    pub head_share: f64,
    /// Share for the last lines; the tail also gets whatever the error lines leave.
    pub tail_share: f64,
    /// Context lines shown before and after each error line of the dropped middle.
    pub context_before: usize,
    pub context_after: usize,
    /// Collapse runs of identical lines and `\r` progress redraws to one line with a count.
    pub collapse: bool,
}

impl Default for TerminalOptions {
    fn default() -> Self {
        TerminalOptions {
            head_share: 0.25,
            tail_share: 0.45,
            context_before: 1,
            context_after: 0,
            collapse: true,
        }
    }
}

/// Settings of the file pattern.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct FileOptions {
    /// The requested lines, 1-based and inclusive; `None` for a whole-file read.
    pub range: Option<[usize; 2]>,
    /// Whole-file shares of the budget for the head and the tail; definitions get the rest.
    pub head_share: f64,
    pub tail_share: f64,
}

impl Default for FileOptions {
    fn default() -> Self {
        FileOptions {
            range: None,
            head_share: 0.4,
            tail_share: 0.3,
        }
    }
}

/// Settings of the JSON pattern.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct JsonOptions {
    /// Outcome keys: never dropped at any depth, and their scalar values never cut.
    pub keep_keys: Vec<String>,
    /// Also keep every key ending in `_id` or `Id` (receipt ids, call ids).
    pub keep_id_keys: bool,
    /// Name of the records that say what was omitted (`{"_omitted": "120 more items"}`).
    pub omitted_key: String,
}

impl Default for JsonOptions {
    fn default() -> Self {
        JsonOptions {
            keep_keys: [
                "status",
                "ok",
                "success",
                "error",
                "errors",
                "code",
                "exit_code",
                "id",
                "receipt",
                "receipt_id",
                "timed_out",
                "truncated",
                "next_offset",
            ]
            .map(String::from)
            .to_vec(),
            keep_id_keys: true,
            omitted_key: "_omitted".into(),
        }
    }
}

/// Whether output gets the `Tool: / Command: / Exit code: / Output:` header when the caller
/// does not say: when there is an outcome or a command to show (they are never cut, so they
/// must be above the cut), or the output is a terminal's. The one rule for `pack`,
/// `truncate` (JS `header` absent), the CLI and the page, which each used to decide it.
pub fn header_by_default(
    kind: Option<ToolKind>,
    exit_code: Option<i64>,
    timed_out: bool,
    command: Option<&str>,
) -> bool {
    exit_code.is_some() || timed_out || command.is_some() || kind == Some(ToolKind::Terminal)
}

/// What to cut, to what budget, and what travels beside the text.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Options {
    pub pattern: Pattern,
    pub budget: Budget,
    /// Tool name: recorded in the audit, shown in the header, and used by `auto`.
    pub tool: Option<String>,
    /// Tool kind for `auto`; when absent it is derived from `tool`, else sniffed.
    pub kind: Option<ToolKind>,
    /// The command's exit code: carried beside the text (and in the header), never cut.
    pub exit_code: Option<i64>,
    pub timed_out: bool,
    /// The command that ran, for the header.
    pub command: Option<String>,
    /// Prepend the header (`Tool: ...`, `Command: ...`, `Exit code: ...`, `Output:`); the
    /// budget then covers header and output together.
    pub header: bool,
    pub fetch: Option<Fetch>,
    /// `head_tail`: share of the budget for the head (seed 001's `head_ratio`).
    pub head_share: f64,
    pub terminal: TerminalOptions,
    pub file: FileOptions,
    pub json: JsonOptions,
    /// The success signal and re-verify instruction for the header ([`run_terminal`] sets
    /// it; `None` writes the header without them).
    #[serde(skip)]
    pub outcome: Option<Outcome>,
}

/// What the header says beyond the exit code (set by [`run_terminal`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Outcome {
    /// `None`: no success signal was captured.
    pub success: Option<bool>,
    pub timeout_secs: Option<u64>,
    /// Tell the model to re-verify instead of assuming success.
    pub reverify: bool,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            pattern: Pattern::Auto,
            budget: Budget::default(),
            tool: None,
            kind: None,
            exit_code: None,
            timed_out: false,
            command: None,
            header: false,
            fetch: None,
            head_share: 0.6,
            terminal: TerminalOptions::default(),
            file: FileOptions::default(),
            json: JsonOptions::default(),
            outcome: None,
        }
    }
}

impl Options {
    /// Options with this pattern and budget, everything else default.
    pub fn new(pattern: Pattern, budget: Budget) -> Options {
        Options {
            pattern,
            budget,
            ..Options::default()
        }
    }

    fn validate(&self) -> Result<(), TruncateError> {
        let share = |name: &str, v: f64| {
            if v.is_finite() && (0.0..=1.0).contains(&v) {
                Ok(())
            } else {
                Err(TruncateError::InvalidOptions(format!(
                    "{name} must be between 0 and 1, got {v}"
                )))
            }
        };
        share("head_share", self.head_share)?;
        share("terminal.head_share", self.terminal.head_share)?;
        share("terminal.tail_share", self.terminal.tail_share)?;
        share("file.head_share", self.file.head_share)?;
        share("file.tail_share", self.file.tail_share)?;
        if self.terminal.head_share + self.terminal.tail_share > 1.0 {
            return Err(TruncateError::InvalidOptions(
                "terminal.head_share + terminal.tail_share must not exceed 1".into(),
            ));
        }
        if self.file.head_share + self.file.tail_share > 1.0 {
            return Err(TruncateError::InvalidOptions(
                "file.head_share + file.tail_share must not exceed 1".into(),
            ));
        }
        if self.terminal.context_before > 100 || self.terminal.context_after > 100 {
            return Err(TruncateError::InvalidOptions(
                "terminal context must be at most 100 lines".into(),
            ));
        }
        if let Some([a, b]) = self.file.range {
            if a == 0 || b < a {
                return Err(TruncateError::InvalidOptions(format!(
                    "file.range must be 1-based with start <= end, got [{a}, {b}]"
                )));
            }
        }
        if self.json.omitted_key.is_empty() {
            return Err(TruncateError::InvalidOptions(
                "json.omitted_key must not be empty".into(),
            ));
        }
        Ok(())
    }
}

/// Error-matching lines of the input, and how many the output lost.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ErrorLines {
    /// Lines of the input that match the error patterns.
    pub total: usize,
    /// Of those, shown (whole, cut in their middle, or as a counted repeat).
    pub kept: usize,
    /// Of those, not shown at all: `total - kept`.
    pub dropped: usize,
}

/// What the offsets in [`Truncation::kept`] and [`Truncation::segments`] count.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Offsets {
    /// UTF-8 bytes (Rust string indices): what [`truncate`] returns.
    #[default]
    Utf8,
    /// UTF-16 code units (JavaScript string indices): see [`Truncation::into_utf16_offsets`].
    Utf16,
}

/// A truncated (or unchanged) tool result, with exact accounting of what was cut.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Truncation {
    /// What the model sees: header (when asked), kept text, markers.
    pub text: String,
    pub truncated: bool,
    pub pattern: Applied,
    pub unit: Unit,
    pub limit: usize,
    /// Size of `text` in `unit`.
    pub size: usize,
    /// Size, in `unit`, of what the model would have seen uncut (header included).
    pub full_size: usize,
    /// Bytes of the input text.
    pub full_bytes: usize,
    /// Bytes of `text`.
    pub output_bytes: usize,
    /// Input bytes not copied into `text`: `full_bytes` minus the kept ranges.
    pub omitted_bytes: usize,
    pub total_lines: usize,
    /// Input lines none of whose bytes were kept.
    pub omitted_lines: usize,
    /// Input lines of which only part was kept (cut in their middle, or redraws collapsed).
    pub partial_lines: usize,
    /// Ranges of the input copied into `text`, sorted and disjoint (in `offsets` units).
    pub kept: Vec<[usize; 2]>,
    /// The output, stretch by stretch, mapped back to the input (in `offsets` units).
    pub segments: Vec<Segment>,
    /// The unit of `kept` and `segments` offsets; every count (`omitted_bytes` ...) and
    /// `next_offset` are bytes regardless.
    pub offsets: Offsets,
    /// The main marker, when one was written (for the envelope and the span record).
    pub marker: Option<String>,
    /// Offset of the first omitted byte in the stored result (fetch offset + position).
    pub next_offset: Option<u64>,
    pub error_lines: ErrorLines,
    /// Carried beside the text, never inside it.
    pub exit_code: Option<i64>,
    pub timed_out: bool,
    pub audit: AuditRecord,
}

/// Why a truncation could not be done.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TruncateError {
    /// Even the smallest honest output (header and marker) does not fit.
    BudgetTooSmall {
        unit: Unit,
        limit: usize,
        needed: usize,
    },
    InvalidOptions(String),
    /// The JSON pattern was asked for and the text is not JSON.
    InvalidJson(String),
    /// The caller's token counter failed.
    TokenCounter(String),
}

impl fmt::Display for TruncateError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TruncateError::BudgetTooSmall { unit, limit, needed } => write!(
                f,
                "budget of {limit} {} is too small: the header and truncation marker alone need {needed}",
                unit.name()
            ),
            TruncateError::InvalidOptions(m) => write!(f, "invalid truncate options: {m}"),
            TruncateError::InvalidJson(m) => write!(f, "not valid JSON: {m}"),
            TruncateError::TokenCounter(m) => write!(f, "token counter failed: {m}"),
        }
    }
}

impl std::error::Error for TruncateError {}

impl Coded for TruncateError {
    fn code(&self) -> &'static str {
        match self {
            TruncateError::BudgetTooSmall { .. } => "budget_too_small",
            TruncateError::InvalidOptions(_) => "invalid_options",
            TruncateError::InvalidJson(_) => "invalid_json",
            TruncateError::TokenCounter(_) => "token_counter_failed",
        }
    }
}

/// Whether a line (without its terminator) reports an error: the terminal pattern's
/// matcher (seed 001's `ERROR_PATTERNS` plus real toolchains' markers).
pub fn is_error_line(line: &str) -> bool {
    matcher::is_error_line(line.as_bytes())
}

/// Whether a line starts a definition (function, class, struct, impl ...): the file
/// pattern's matcher.
pub fn is_definition_line(line: &str) -> bool {
    matcher::is_definition_line(line)
}

impl Truncation {
    /// The same result with `kept` and `segments` in UTF-16 code units, so that JavaScript
    /// can slice its strings with them (`input` is the text that was truncated).
    pub fn into_utf16_offsets(self, input: &str) -> Truncation {
        self.utf16_offsets(input, None)
    }

    /// [`Truncation::into_utf16_offsets`] for a caller that knows the input's length in
    /// UTF-16 units (JavaScript's `length`). When that equals its length in bytes the input
    /// is ASCII and its offsets are the same in both units, so only the output is read.
    pub fn into_utf16_offsets_of(self, input: &str, input_utf16_len: usize) -> Truncation {
        self.utf16_offsets(input, Some(input_utf16_len))
    }

    fn utf16_offsets(mut self, input: &str, input_utf16_len: Option<usize>) -> Truncation {
        if self.offsets == Offsets::Utf16 {
            return self;
        }
        let src_at: Vec<usize> = self
            .kept
            .iter()
            .flatten()
            .chain(
                self.segments
                    .iter()
                    .filter_map(|s| s.source.as_ref())
                    .flatten(),
            )
            .copied()
            .collect();
        let out_at: Vec<usize> = self.segments.iter().flat_map(|s| s.output).collect();
        let src = if input_utf16_len == Some(input.len()) {
            Utf16Map::identity(input.len())
        } else {
            Utf16Map::new(input, src_at)
        };
        let out = Utf16Map::new(&self.text, out_at);
        for r in &mut self.kept {
            *r = [src.get(r[0]), src.get(r[1])];
        }
        for s in &mut self.segments {
            s.output = [out.get(s.output[0]), out.get(s.output[1])];
            if let Some(r) = &mut s.source {
                *r = [src.get(r[0]), src.get(r[1])];
            }
        }
        self.offsets = Offsets::Utf16;
        self
    }
}

/// Byte offset → UTF-16 offset for a known set of byte offsets: the UTF-16 units before each
/// one, counted from the previous one, so the text is read once and only up to the last
/// offset. The count works on bytes, a word at a time (`budget::utf16_units`), not char by
/// char: the input is often megabytes of ASCII.
pub(crate) enum Utf16Map {
    Counted(Vec<(usize, usize)>),
    /// An ASCII text of this length: every offset up to it maps to itself.
    Identity(usize),
}

impl Utf16Map {
    fn identity(len: usize) -> Utf16Map {
        Utf16Map::Identity(len)
    }

    pub(crate) fn new(text: &str, mut at: Vec<usize>) -> Utf16Map {
        crate::sort::sort(&mut at);
        at.dedup();
        let bytes = text.as_bytes();
        let mut map = Vec::with_capacity(at.len());
        let mut units = 0;
        let mut prev = 0;
        // Offsets beyond the text have no mapping (and read as 0), as before.
        for b in at.into_iter().take_while(|&b| b <= bytes.len()) {
            units += budget::utf16_units(&bytes[prev..b]);
            map.push((b, units));
            prev = b;
        }
        Utf16Map::Counted(map)
    }

    pub(crate) fn get(&self, byte: usize) -> usize {
        match self {
            Utf16Map::Counted(map) => map
                .binary_search_by_key(&byte, |p| p.0)
                .map_or(0, |i| map[i].1),
            // Offsets beyond the text read as 0, as in the counted map.
            Utf16Map::Identity(len) => {
                if byte <= *len {
                    byte
                } else {
                    0
                }
            }
        }
    }
}

/// Cuts `text` to `options.budget`; token budgets use the built-in [`estimate_tokens`].
pub fn truncate(text: &str, options: &Options) -> Result<Truncation, TruncateError> {
    truncate_with(text, options, &EstimateTokens)
}

/// Cuts `text` to `options.budget`, counting tokens with `counter` when the budget is in
/// tokens (it is not called otherwise).
pub fn truncate_with(
    text: &str,
    options: &Options,
    counter: &dyn TokenCounter,
) -> Result<Truncation, TruncateError> {
    options.validate()?;
    let unit = options.budget.unit();
    let limit = options.budget.limit();
    let header = if options.header {
        render::header(options, limit)
    } else {
        String::new()
    };
    let size = |s: &str| -> Result<usize, TruncateError> {
        match unit {
            Unit::Tokens => counter.count(s).map_err(TruncateError::TokenCounter),
            _ => Ok(Measure::for_unit(unit).of(s)),
        }
    };
    let ctx = Ctx::new(text, options, Measure::for_unit(unit));
    // Bytes, chars and UTF-16 units add up, so the header is measured apart from the text
    // (no copy of a large text behind it); a token counter must see them together.
    let full_size = match unit {
        Unit::Tokens if header.is_empty() => size(text)?,
        Unit::Tokens => size(&format!("{header}{text}"))?,
        _ => ctx.m.of(&header) + ctx.measure(0, text.len()),
    };
    if full_size <= limit {
        let mut out = Out::new(text);
        out.keep(0, text.len());
        let built = Built::new(out, None);
        return Ok(finish(
            &ctx,
            &header,
            built,
            Applied::None,
            full_size,
            full_size,
            limit,
        ));
    }

    let applied = auto::resolve(&ctx)?;
    let plan = Plan::new(&ctx, applied)?;
    let too_small = |needed: usize| TruncateError::BudgetTooSmall {
        unit,
        limit,
        needed,
    };

    let (built, out_size) = match unit {
        Unit::Tokens => fit_tokens(&ctx, &plan, &header, limit, full_size, &size)?,
        _ => {
            let m = ctx.m;
            let header_size = m.of(&header);
            let mut body = limit
                .checked_sub(header_size)
                .ok_or_else(|| too_small(header_size + 1))?;
            // One pass lands under the limit; the loop only guards the guarantee against a
            // planning bug (a debug assertion reports it in tests).
            let mut attempt = 0;
            loop {
                let built = plan
                    .build(&ctx, body)
                    .map_err(|need| too_small(header_size + need))?;
                let got = header_size + m.of(&built.out.text);
                if got <= limit {
                    break (built, got);
                }
                debug_assert!(
                    false,
                    "planned output of {got} exceeds {limit}:\n{}",
                    built.out.text
                );
                attempt += 1;
                body = body.saturating_sub(got - limit);
                if attempt > 4 || body == 0 {
                    return Err(too_small(got));
                }
            }
        }
    };
    Ok(finish(
        &ctx, &header, built, applied, out_size, full_size, limit,
    ))
}

/// Token budgets: plan in bytes, count each candidate with the caller's counter, and keep
/// the largest byte plan whose output fits. Counters are arbitrary (not additive, not even
/// monotone), so only measured candidates are ever returned. Steps are proportional to the
/// last measurement (tokens scale roughly with bytes) and fall back to bisection, so a
/// slow tokenizer counts a handful of budget-sized candidates, never the text again.
fn fit_tokens<'a>(
    ctx: &Ctx<'a>,
    plan: &Plan<'a>,
    header: &str,
    limit: usize,
    full_tokens: usize,
    size: &dyn Fn(&str) -> Result<usize, TruncateError>,
) -> Result<(Built<'a>, usize), TruncateError> {
    let total = ctx.src.len();
    let count = |b: &Built| size(&format!("{header}{}", b.out.text));
    let mut lo = 0usize; // no byte plan below `lo` is worth building
    let mut hi = total; // no byte plan at or above `hi` fits
    let mut best: Option<(Built<'a>, usize)> = None;
    let mut smallest: Option<usize> = None;
    let mut b = ((limit as f64 / full_tokens.max(1) as f64) * total as f64) as usize;
    for _ in 0..48 {
        b = b.max(lo);
        if b >= hi {
            b = lo + (hi.saturating_sub(lo)) / 2;
            if b >= hi {
                break;
            }
        }
        match plan.build(ctx, b) {
            Err(need) => {
                lo = need.max(b + 1);
                b = lo;
            }
            Ok(built) => {
                let tokens = count(&built)?;
                smallest = Some(smallest.map_or(tokens, |s| s.min(tokens)));
                let fits = tokens <= limit;
                if fits {
                    best = Some((built, tokens));
                    lo = b + 1;
                } else {
                    hi = b;
                }
                // Close enough: within 3% of the limit, or a byte interval under 0.4%.
                let near = best.as_ref().is_some_and(|(_, t)| *t * 100 >= limit * 97);
                if lo >= hi || near || (best.is_some() && hi - lo <= (hi / 256).max(1)) {
                    break;
                }
                // Aim at the limit in proportion to this measurement (with a 2% margin when
                // shrinking). When that leaves the open interval: gallop up from the last fit
                // while no failure above it was measured, else bisect.
                let ratio = limit as f64 / tokens.max(1) as f64;
                let aim = (b as f64 * if fits { ratio } else { ratio * 0.98 }) as usize;
                b = if aim > lo && aim < hi {
                    aim
                } else if hi == total {
                    (lo + (lo / 8).max(16)).min(hi - 1)
                } else {
                    lo + (hi - lo) / 2
                };
                continue;
            }
        }
        if lo >= hi {
            break;
        }
    }
    if let Some((built, tokens)) = best {
        return Ok((built, tokens));
    }
    // Nothing planned fit. Text: the marker alone, if the counter accepts it. JSON has no
    // smaller valid form than its most squeezed emission, which was too large.
    let needed = if plan.is_json() {
        smallest.unwrap_or(limit + 1)
    } else {
        let only = marker_only(ctx, usize::MAX).expect("an unbounded marker always plans");
        let tokens = count(&only)?;
        if tokens <= limit {
            return Ok((only, tokens));
        }
        tokens
    };
    Err(TruncateError::BudgetTooSmall {
        unit: Unit::Tokens,
        limit,
        needed: needed.max(limit + 1),
    })
}

/// What every cutter works from.
pub(crate) struct Ctx<'a> {
    pub src: &'a str,
    pub lines: Vec<Line>,
    pub m: Measure,
    pub opts: &'a Options,
    /// `src` is all ASCII (then every measure of a stretch is its length).
    ascii: bool,
    /// Lines whose content holds a `\r`, ascending.
    pub cr_lines: Vec<usize>,
    errors: OnceCell<Vec<bool>>,
}

impl<'a> Ctx<'a> {
    fn new(src: &'a str, opts: &'a Options, m: Measure) -> Self {
        let split = lines::split(src);
        Ctx {
            src,
            lines: split.lines,
            m,
            opts,
            ascii: split.ascii,
            cr_lines: split.cr_lines,
            errors: OnceCell::new(),
        }
    }

    /// `m` of `src[start..end]`, without reading it when the source is ASCII.
    #[inline]
    pub fn measure(&self, start: usize, end: usize) -> usize {
        if self.ascii {
            end - start
        } else {
            self.m.of(&self.src[start..end])
        }
    }

    /// Which lines match the error patterns (computed once).
    pub fn error_flags(&self) -> &[bool] {
        self.errors
            .get_or_init(|| matcher::error_flags(self.src.as_bytes(), &self.lines))
    }

    pub fn exit_reported(&self) -> bool {
        self.opts.exit_code.is_some()
    }

    /// Where to fetch from byte `at` of the text, when the caller gave a fetch id.
    pub fn fetch_at(&self, at: usize) -> Option<FetchAt> {
        self.opts.fetch.as_ref().map(|f| FetchAt {
            tool: f.tool.clone(),
            id: serde_json::to_string(&f.id).unwrap_or_default(),
            offset: f.offset.saturating_add(at as u64),
        })
    }

    pub fn fetch_call(&self, at: usize) -> Option<String> {
        self.fetch_at(at).map(|f| f.call())
    }
}

/// A cutter's output before the final accounting.
pub(crate) struct Built<'a> {
    pub out: Out<'a>,
    pub marker: Option<String>,
    /// Line ranges shown by a representative although none of their own bytes are kept
    /// (collapsed repeats): they count as shown for error accounting.
    pub represented: Vec<(usize, usize)>,
    /// Set by cutters whose error accounting is not line-based (JSON).
    pub errors: Option<ErrorLines>,
}

impl<'a> Built<'a> {
    pub fn new(out: Out<'a>, marker: Option<String>) -> Self {
        Built {
            out,
            marker,
            represented: Vec::new(),
            errors: None,
        }
    }

    /// Records the multi-line units among `units` as represented.
    pub fn represent<'u>(mut self, units: impl Iterator<Item = &'u ends::Unit>) -> Self {
        self.represented.extend(
            units
                .filter(|u| u.last_line > u.first_line)
                .map(|u| (u.first_line, u.last_line)),
        );
        self
    }
}

/// Everything omitted, said by the marker alone (the last resort before "too small").
pub(crate) fn marker_only<'a>(ctx: &Ctx<'a>, limit: usize) -> Result<Built<'a>, usize> {
    let total_lines = ctx.lines.len();
    let spec = Spec {
        bytes: ctx.src.len(),
        lines: total_lines,
        place: Place::Whole,
        span: (total_lines > 0).then_some((1, total_lines)),
        total_lines,
        results: None,
        kept: Vec::new(),
        exit_code: ctx.exit_reported(),
        fetch: ctx.fetch_at(0),
    };
    for level in [Level::Full, Level::Compact, Level::Minimal] {
        let text = spec.render(level);
        if ctx.m.of(&text) <= limit {
            let mut out = Out::new(ctx.src);
            out.marker(&text);
            return Ok(Built::new(out, Some(text.trim_end().to_string())));
        }
    }
    Err(ctx.m.of(&spec.render(Level::Minimal)))
}

/// The analysis a pattern needs, done once (token budgets build many candidates).
enum Plan<'a> {
    Lines(Vec<ends::Unit>, ends::Shape),
    Search(search::Results),
    FileRange(file::RangePlan),
    Json(json::Doc<'a>),
}

impl<'a> Plan<'a> {
    fn new(ctx: &Ctx<'a>, applied: Applied) -> Result<Self, TruncateError> {
        Ok(match applied {
            Applied::None => unreachable!("nothing to plan when the text fits"),
            Applied::Head | Applied::Tail | Applied::HeadTail => {
                let (units, shape) = positional::plan(ctx, applied);
                Plan::Lines(units, shape)
            }
            Applied::Terminal => {
                let (units, shape) = terminal::plan(ctx);
                Plan::Lines(units, shape)
            }
            Applied::File => match ctx.opts.file.range {
                Some(range) => Plan::FileRange(file::plan_range(ctx, range)),
                None => {
                    let (units, shape) = file::plan_whole(ctx);
                    Plan::Lines(units, shape)
                }
            },
            Applied::Search => Plan::Search(search::plan(ctx)),
            Applied::Csv => {
                let (units, shape) = tabular::plan_csv(ctx);
                Plan::Lines(units, shape)
            }
            Applied::Yaml => {
                let (units, shape) = tabular::plan_yaml(ctx);
                Plan::Lines(units, shape)
            }
            Applied::Json => {
                Plan::Json(json::Doc::parse(ctx.src).map_err(TruncateError::InvalidJson)?)
            }
        })
    }

    fn build(&self, ctx: &Ctx<'a>, limit: usize) -> Result<Built<'a>, usize> {
        match self {
            Plan::Lines(units, shape) => ends::build(ctx, units, shape, limit),
            Plan::Search(results) => search::build(ctx, results, limit),
            Plan::FileRange(plan) => file::build_range(ctx, plan, limit),
            Plan::Json(doc) => json::build(ctx, doc, limit),
        }
    }

    fn is_json(&self) -> bool {
        matches!(self, Plan::Json(_))
    }
}

/// The final accounting: header, kept ranges, counts, error lines, audit record.
fn finish(
    ctx: &Ctx,
    header: &str,
    built: Built,
    applied: Applied,
    size: usize,
    full_size: usize,
    limit: usize,
) -> Truncation {
    let src = ctx.src;
    let kept = built.out.kept_ranges();
    let kept_bytes: usize = kept.iter().map(|r| r[1] - r[0]).sum();
    let (omitted_lines, partial_lines) = line_accounting(&ctx.lines, &kept);
    let truncated = applied != Applied::None;
    let error_lines = built
        .errors
        .unwrap_or_else(|| line_errors(ctx, &kept, &built.represented));
    let next_offset = truncated
        .then(|| first_gap(&kept, src.len()))
        .flatten()
        .map(|at| {
            ctx.opts
                .fetch
                .as_ref()
                .map_or(0, |f| f.offset)
                .saturating_add(at as u64)
        });

    let mut text = String::with_capacity(header.len() + built.out.text.len());
    text.push_str(header);
    text.push_str(&built.out.text);
    let shift = header.len();
    let mut segments = Vec::with_capacity(built.out.segments.len() + 1);
    if shift > 0 {
        segments.push(Segment {
            kind: SegmentKind::Header,
            output: [0, shift],
            source: None,
        });
    }
    segments.extend(built.out.segments.into_iter().map(|mut s| {
        s.output = [s.output[0] + shift, s.output[1] + shift];
        s
    }));
    let full_bytes = src.len();
    let audit = AuditRecord::new(
        ctx.opts.tool.as_deref().unwrap_or("unknown"),
        header.len() + full_bytes,
        text.len(),
        applied.name(),
        ctx.opts.exit_code.is_some(),
        error_lines.dropped > 0,
    );
    Truncation {
        output_bytes: text.len(),
        text,
        truncated,
        pattern: applied,
        unit: ctx.opts.budget.unit(),
        limit,
        size,
        full_size,
        full_bytes,
        omitted_bytes: full_bytes - kept_bytes,
        total_lines: ctx.lines.len(),
        omitted_lines,
        partial_lines,
        kept,
        segments,
        offsets: Offsets::Utf8,
        marker: built.marker,
        next_offset,
        error_lines,
        exit_code: ctx.opts.exit_code,
        timed_out: ctx.opts.timed_out,
        audit,
    }
}

/// The first byte not covered by `kept`, if any.
fn first_gap(kept: &[[usize; 2]], len: usize) -> Option<usize> {
    let mut at = 0;
    for r in kept {
        if r[0] > at {
            return Some(at);
        }
        at = at.max(r[1]);
    }
    (at < len).then_some(at)
}

/// Error lines shown: any of their bytes kept, or represented by a shown repeat.
fn line_errors(ctx: &Ctx, kept: &[[usize; 2]], represented: &[(usize, usize)]) -> ErrorLines {
    let flags = ctx.error_flags();
    let mut shown = vec![false; ctx.lines.len()];
    let mut k = 0;
    for (i, line) in ctx.lines.iter().enumerate() {
        while k < kept.len() && kept[k][1] <= line.start {
            k += 1;
        }
        if k < kept.len() && kept[k][0] < line.end {
            shown[i] = true;
        }
    }
    for &(a, b) in represented {
        for s in &mut shown[a..=b] {
            *s = true;
        }
    }
    let total = flags.iter().filter(|&&f| f).count();
    let kept_n = flags.iter().zip(&shown).filter(|(&f, &s)| f && s).count();
    ErrorLines {
        total,
        kept: kept_n,
        dropped: total - kept_n,
    }
}
