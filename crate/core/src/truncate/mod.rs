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
mod options;
mod output;
mod positional;
mod render;
mod run;
mod search;
mod tabular;
mod terminal;
mod utf16;

use std::cell::OnceCell;
use std::fmt;

use serde::{Deserialize, Serialize};

pub use audit::{aggregate, AuditRecord, AuditSummary};
pub use auto::ToolKind;
pub use budget::{estimate_tokens, Budget, EstimateTokens, TokenCounter, Unit};
pub use options::{
    header_by_default, Fetch, FileOptions, JsonOptions, Options, Outcome, Pattern, TerminalOptions,
};
pub use output::{Segment, SegmentKind};
pub use run::{label_streams, run_terminal, success_of, CommandRun, TerminalResult};
pub use utf16::Offsets;
pub(crate) use utf16::Utf16Map;

use budget::Measure;
use lines::{line_accounting, Line};
use marker::{FetchAt, Level, Place, Spec};
use output::Out;

use crate::error::Coded;

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
                // Close enough: within 3% of the limit, or a byte interval under 0.4%. (In
                // u128: a limit over usize::MAX / 97, 44 million tokens in wasm32, overflowed.)
                let near = best
                    .as_ref()
                    .is_some_and(|(_, t)| *t as u128 * 100 >= limit as u128 * 97);
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

/// The piece of text split, then scanned for error lines, at a time: well inside a core's
/// cache (48 KiB L1 and 2 MiB L2 per core here), large enough that the pauses cost nothing.
const ERROR_BLOCK: usize = 64 << 10;

/// The lines of `src` and which of them are error lines, the second found a `block` of
/// lines at a time right after the first.
fn split_with_errors(src: &str, block: usize) -> (lines::Split, Vec<bool>) {
    let bytes = src.as_bytes();
    let mut hits = Vec::new();
    let mut at = 0;
    let split = lines::split_with(src, block, |end| {
        at = matcher::error_hits(bytes, at, end, &mut hits);
    });
    matcher::error_hits(bytes, at, bytes.len(), &mut hits);
    let flags = matcher::flags_of(&hits, &split.lines);
    (split, flags)
}

impl<'a> Ctx<'a> {
    fn new(src: &'a str, opts: &'a Options, m: Measure) -> Self {
        let errors = OnceCell::new();
        // A text with more bytes than the limit is cut (always under a byte budget; a
        // char or token budget may still hold it), and every cut but JSON's reads the
        // error lines: they are found with the split, a piece at a time while the piece is
        // in the cache (a 4 MiB log is larger than the core's cache; read whole, once to
        // split it and once more for the errors, the second pass read all of it from
        // farther away). A text that then fits has had one pass it did not need.
        let split = if src.len() > opts.budget.limit() && !auto::looks_like_json(src) {
            let (split, flags) = split_with_errors(src, ERROR_BLOCK);
            let _ = errors.set(flags);
            split
        } else {
            lines::split(src)
        };
        Ctx {
            src,
            lines: split.lines,
            m,
            opts,
            ascii: split.ascii,
            cr_lines: split.cr_lines,
            errors,
        }
    }

    /// `m` of `src[start..end]`, without reading it when the source is ASCII. Always
    /// inlined: it is called once per line, and in wasm the call cost more than the
    /// subtraction it usually is (2% of packing a 4 MiB log).
    #[inline(always)]
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
    let total = flags.iter().filter(|&&f| f).count();
    // The shown lines: those a kept range meets (found by binary search, not by a walk over
    // every line), and those a kept unit stands for. Their index ranges, merged in order.
    let mut shown: Vec<std::ops::Range<usize>> = (kept.iter())
        .map(|r| lines::lines_meeting(&ctx.lines, r[0], r[1]))
        .chain(represented.iter().map(|&(a, b)| a..b + 1))
        .filter(|r| !r.is_empty())
        .collect();
    shown.sort_unstable_by_key(|r| r.start);
    let mut kept_n = 0;
    let mut done = 0;
    for r in shown {
        let from = r.start.max(done);
        if from < r.end {
            kept_n += flags[from..r.end].iter().filter(|&&f| f).count();
            done = r.end;
        }
    }
    ErrorLines {
        total,
        kept: kept_n,
        dropped: total - kept_n,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn token_limits_near_the_counters_range_do_not_overflow() {
        // Before: `tokens * 100 >= limit * 97` (the "close enough" test of the token fit)
        // overflowed for limits above usize::MAX / 97: with a counter of 2^50 tokens a byte
        // and a limit of 500 * 2^50, a debug build panicked and a release build compared
        // wrapped numbers. In wasm32 (32-bit usize) any limit over 44 million tokens did.
        // The scale follows the pointer width (2^50 here, 2^18 in wasm32), so the test
        // compiles and means the same on both.
        let shift = usize::BITS - 14;
        let counter = move |s: &str| s.len() << shift;
        let text = "line of output\n".repeat(70);
        let options = Options {
            pattern: Pattern::HeadTail,
            budget: Budget::Tokens(500 << shift),
            ..Options::default()
        };
        let t = truncate_with(&text, &options, &counter).unwrap();
        assert!(t.text.len() <= 500, "{}", t.text.len());
        assert!(t.text.len() >= 450, "{}", t.text.len());
    }
}
