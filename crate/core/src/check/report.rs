//! The report of one checked run, and the builder that accumulates it line by line.
//!
//! Every input line ends up in exactly one place: a row, a skipped record, an invalid line,
//! or the blank-line count, so `counts.lines` always equals the sum of the four. The
//! builder keeps rows (all, or only flagged ones for huge runs) and the small per-span
//! facts the summaries need; it never keeps the raw lines.

use crate::intern::Interner;

use super::blocks::{Blocks, TextBlocks};
use super::rollups::Rollups;
use super::rows::{NewRow, Rows, PACKED_BYTES};

use serde::{Deserialize, Serialize};

use super::classify::{
    classify_with, clip_ratio_of, ReasonPolicy, Status, Verdict, UNKNOWN_REASON_WARNING,
};
use crate::formats::FormatOption;
use crate::record::Sink;
use crate::record::{Invalid, Join, Provenance, ReadAs, Skipped};
use crate::span::{InvalidKind, LazyText, SpanView};

/// At most this many invalid and skipped entries are listed (the counts cover all): a
/// non-trace file of millions of lines must not exhaust memory describing itself.
pub const MAX_LISTED: usize = 1000;

/// One classified tool span, with owned fields. A report keeps its rows packed ([`Rows`]);
/// this is what [`Rows::row`] and [`super::RowRef::to_row`] hand out, and what a report's
/// JSON holds per row.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Row {
    /// 1-based line number in the input.
    pub line: u64,
    pub span_id: Option<String>,
    pub parent_id: Option<String>,
    pub name: String,
    pub status: Status,
    pub detail: Vec<String>,
    pub observed_bytes: Option<u64>,
    pub injected_bytes: Option<u64>,
    pub injected_tokens: Option<u64>,
    /// The share of observed bytes that did not reach the model, when both are known.
    pub clip_ratio: Option<f64>,
    pub clip_reason: Option<String>,
    pub sha256_observed: Option<String>,
    pub sha256_injected: Option<String>,
    pub injected_preview: Option<String>,
    pub prompt_builder_version: Option<String>,
    pub model_context_limit_tokens: Option<u64>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
    /// How the tool result was matched with what a later model call received (trace formats
    /// only; absent for seed-000 span JSONL, whose records carry both sides already).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub join: Option<Join>,
    /// Why a length is missing, where a declared clip was found, and the like (trace formats
    /// only). Notes explain the status; they do not change it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
    /// `injected_tokens` is an estimate (bytes / 4, rounded up), not a count an API reported:
    /// trace formats record tokens per model call, never per tool message.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub injected_tokens_estimated: bool,
}

/// How many lines went where, and how many rows had each status.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Counts {
    pub silent_clip: u64,
    pub incomplete: u64,
    pub hash_mismatch: u64,
    pub clipped: u64,
    /// Same data in another serialisation (trace formats only).
    #[serde(default)]
    pub reformatted: u64,
    pub ok: u64,
    /// Rows (tool spans) of every status.
    pub total: u64,
    pub invalid: u64,
    pub skipped: u64,
    pub blank: u64,
    /// Every entry of the input: `total + invalid + skipped + blank`. An entry is a line of
    /// span JSONL; for trace formats, a span (or an unreadable line or document).
    pub lines: u64,
    /// Rows that carry a warning (an unknown `clip_reason`, say).
    pub warned: u64,
    /// Rows whose `clip_reason` is outside the closed enum. They fail the run unless the
    /// check is lenient ([`CheckOptions::lenient_clip_reason`]).
    #[serde(default)]
    pub unknown_clip_reason: u64,
}

impl Counts {
    pub fn of(&self, status: Status) -> u64 {
        match status {
            Status::SilentClip => self.silent_clip,
            Status::Incomplete => self.incomplete,
            Status::HashMismatch => self.hash_mismatch,
            Status::Clipped => self.clipped,
            Status::Reformatted => self.reformatted,
            Status::Ok => self.ok,
        }
    }
    fn bump(&mut self, status: Status) {
        *match status {
            Status::SilentClip => &mut self.silent_clip,
            Status::Incomplete => &mut self.incomplete,
            Status::HashMismatch => &mut self.hash_mismatch,
            Status::Clipped => &mut self.clipped,
            Status::Reformatted => &mut self.reformatted,
            Status::Ok => &mut self.ok,
        } += 1;
        self.total += 1;
    }
}

/// Median lengths of one tool: a sudden drop in injected bytes often ships with a new cap.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolStats {
    pub name: String,
    pub spans: u64,
    pub median_observed_bytes: Option<f64>,
    pub median_injected_bytes: Option<f64>,
}

/// Silent clips per prompt builder version: compare builders before comparing models.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BuilderStats {
    pub prompt_builder_version: Option<String>,
    pub spans: u64,
    pub silent_clip: u64,
    /// Silent clips per 100 spans of this builder.
    pub silent_clip_rate: f64,
}

/// A parent whose own span looks fine while its subtree holds a failure.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Rollup {
    pub span_id: String,
    /// The parent's own status, or `None` when the parent is not a tool span: absent from
    /// this input (a turn or agent span that the exporter did not write as a tool span), or
    /// present as an agent, turn or model-call span of a trace format (then `line` is set).
    pub own_status: Option<Status>,
    pub line: Option<u64>,
    pub name: Option<String>,
    pub silent_clip: u64,
    pub incomplete: u64,
    /// The first failing descendants in input order (at most [`MAX_ROLLUP_EXAMPLES`]; the
    /// counts above cover all of them): their span ids, or `line N` for spans without an id.
    pub flagged: Vec<String>,
}

/// How much of each span was cut: rows with both lengths, by clip ratio. Counted over every
/// span, also when only flagged rows are listed.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ClipHistogram {
    /// Spans whose injected bytes are at least their observed bytes.
    pub not_cut: u64,
    /// `bins[i]` counts spans with a clip ratio in `(i/10, (i+1)/10]` (a ratio of 1.0, all
    /// bytes cut, falls in the last bin).
    pub bins: [u64; 10],
}

impl ClipHistogram {
    fn add(&mut self, ratio: f64) {
        if ratio <= 0.0 {
            self.not_cut += 1;
        } else {
            // ceil(r*10)-1 puts 0.1 in bin 0 and 0.11 in bin 1; clamp guards rounding.
            let bin = ((ratio * 10.0).ceil() as usize).clamp(1, 10) - 1;
            self.bins[bin] += 1;
        }
    }
}

/// Options of a check.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct CheckOptions {
    /// Keep only rows that are not `ok` (plus rows with warnings); all counts and
    /// summaries still cover every span. For runs too large to list.
    pub flagged_only: bool,
    /// Which reader to use: `auto` (the default) detects it from the first non-blank lines.
    pub format: FormatOption,
    /// Let an input with no tool call at all pass (exit 0). Off by default: a checker used as
    /// a CI gate must never pass a run it did not check; pipelines that expect empty runs
    /// turn this on.
    pub allow_empty: bool,
    /// How much memory the check may keep; the defaults fit a wasm32 module.
    pub limits: Limits,
    /// Keep the seed script's leniency: a `clip_reason` outside the closed enum declares the
    /// clip and does not fail the run (it is still counted and warned about).
    pub lenient_clip_reason: bool,
}

/// The memory a check may keep (issue 13: a file of any size checks in bounded memory).
/// Past a budget the check goes on counting every span, and the report says what it could
/// not keep ([`NotKept`]); nothing aborts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct Limits {
    /// Per-span facts for the rollup and the summaries: [`SPAN_FACT_BYTES`] per span plus
    /// its id, plus each new tool name, builder version and parent id. Default 384 MiB; at
    /// most 4 GiB is kept whatever this says (the facts are placed by 32-bit offsets).
    pub fact_bytes: u64,
    /// Listed rows: [`ROW_BYTES`] per row plus its text fields. Default 256 MiB.
    pub row_bytes: u64,
    /// The longest line a reader holds (default 128 MiB); a longer one is `too_large`.
    pub line_bytes: u64,
    /// The largest single JSON document a reader buffers (default 256 MiB).
    pub document_bytes: u64,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            fact_bytes: 384 << 20,
            row_bytes: 256 << 20,
            line_bytes: crate::lines::MAX_LINE as u64,
            document_bytes: crate::formats::MAX_DOCUMENT as u64,
        }
    }
}

/// The memory a kept span fact costs beyond its id: its rollup node and the two lengths the
/// tool medians need.
pub const SPAN_FACT_BYTES: u64 = (std::mem::size_of::<Node>() + 2 * 4) as u64;
/// The facts kept never exceed this, whatever [`Limits::fact_bytes`] says: ids are placed
/// by 32-bit offsets, and spans (each charged at least [`SPAN_FACT_BYTES`]) then number
/// below 2^28, which the nodes' 29-bit name indexes hold.
const MAX_FACT_BYTES: u64 = u32::MAX as u64;
/// The memory a listed row costs beyond its texts (and 4 bytes per item of its lists).
pub const ROW_BYTES: u64 = PACKED_BYTES;
/// What a new entry of a name table (tool, builder, parent id) costs beyond its text.
const NAME_BYTES: u64 = 48;

/// What a check could not keep within its [`Limits`]. Counts, statuses, the clip histogram,
/// the silent-clip rate and the exit code always cover every span; the parts named here are
/// partial, and the table says so.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct NotKept {
    /// Rows not listed (they are in the counts), from `rows_from_line` on.
    pub rows: u64,
    pub rows_from_line: Option<u64>,
    /// Tool spans whose facts were not kept, from `facts_from_line` on: the rollup, the
    /// per-tool medians and the per-builder rates cover only the spans before that line.
    pub spans: u64,
    pub facts_from_line: Option<u64>,
}

impl NotKept {
    pub fn is_empty(&self) -> bool {
        self.rows == 0 && self.spans == 0
    }
}

/// The checked run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Report {
    /// Which reader understood the input (`spans` is seed 000's JSONL; see
    /// [`crate::formats::Format`]), or `unknown` when none did.
    pub format: String,
    /// Layout and conventions of a trace-format input; absent for seed-000 span JSONL.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read_as: Option<ReadAs>,
    /// Rows in priority order (worst first), then by line, kept compactly (see [`Rows`]).
    pub rows: Rows,
    pub counts: Counts,
    pub invalid: Vec<Invalid>,
    pub skipped: Vec<Skipped>,
    /// Silent clips per 100 tool spans: the rate to watch when prompt builders change.
    pub silent_clips_per_100: f64,
    pub clip_histogram: ClipHistogram,
    pub tools: Vec<ToolStats>,
    pub builders: Vec<BuilderStats>,
    /// Parents whose own span looks fine while their subtree holds a failure, kept
    /// compactly (see [`Rollups`]).
    pub rollup: Rollups,
    /// Whether the rows list is only the flagged rows.
    pub flagged_only: bool,
    /// When the input held no tool call at all: one line saying that nothing was checked and
    /// what was seen instead. Never a pass unless [`CheckOptions::allow_empty`] (issues 13,
    /// 14): a trace read with the wrong reader skips every line, an empty file or one of
    /// model calls only checks nothing, and an empty verdict must not look green.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nothing_checked: Option<String>,
    /// What the check could not keep within its memory limits (all zero when it kept
    /// everything).
    #[serde(default)]
    pub not_kept: NotKept,
    /// 1 when any silent clip, incomplete span or invalid line (as the seed), when nothing
    /// was checked (unless empty runs are allowed), or, unless the check is lenient, a
    /// `clip_reason` outside the closed enum; else 0.
    pub exit_code: i32,
}

#[derive(Default)]
struct ToolAcc {
    spans: u64,
    observed: Lengths,
    injected: Lengths,
}

/// Every length of one tool, for its median: 4 bytes each, in blocks that never double,
/// until one does not fit in 32 bits (a tool output of 4 GiB), 8 from then on.
enum Lengths {
    Narrow(Blocks<u32>),
    Wide(Vec<u64>),
}

impl Default for Lengths {
    fn default() -> Self {
        Lengths::Narrow(Blocks::default())
    }
}

impl Lengths {
    #[inline(always)]
    fn push(&mut self, value: Option<u64>) {
        let Some(value) = value else { return };
        match self {
            Lengths::Narrow(values) => match u32::try_from(value) {
                Ok(v) => values.push(v),
                Err(_) => {
                    let mut wide: Vec<u64> = values.iter().map(|&v| u64::from(v)).collect();

                    wide.push(value);
                    *self = Lengths::Wide(wide);
                }
            },
            Lengths::Wide(values) => values.push(value),
        }
    }

    /// The median, from a contiguous copy of the values (one tool's, while the memory of
    /// those already taken is free again).
    fn median(&mut self) -> Option<f64> {
        match self {
            Lengths::Narrow(values) => {
                median(&mut values.iter().copied().collect::<Vec<u32>>(), f64::from)
            }
            Lengths::Wide(values) => median(values, |v| v as f64),
        }
    }
}

/// What the rollup needs to know of every span that has an id, in 16 bytes (a `Node` of
/// `Option`s and a 64-bit line was 32 in wasm, 40 natively, and its vector doubled). Spans
/// are appended in input order and their ids to one shared text, with no per-span
/// allocation or hashing: only the few ids that turn out to be parents are looked up, once,
/// when the report is built.
#[derive(Clone, Copy)]
struct Node {
    /// Where this span's id starts in [`ReportBuilder::ids`] (it ends where the next node's
    /// starts).
    id_start: u32,
    /// Its parent's index among the parent ids, or [`NO_PARENT`].
    parent: u32,
    /// Its line, or [`WIDE_LINE`] for a line past 32 bits (then in
    /// [`ReportBuilder::wide_lines`]).
    line: u32,
    /// Bits 0-2: its status (the index in [`Status::ALL`]), or [`CONTEXT`] for a span that
    /// is not a tool span (an agent or model call of a trace format); bits 3-31: its name,
    /// an index into the tool names, or for a context span into the context span names.
    tag: u32,
}

const NO_PARENT: u32 = u32::MAX;
const WIDE_LINE: u32 = u32::MAX;
const CONTEXT: u32 = 7;

impl Node {
    fn parent(&self) -> Option<u32> {
        (self.parent != NO_PARENT).then_some(self.parent)
    }
    fn status(&self) -> Option<Status> {
        Status::ALL.get((self.tag & 7) as usize).copied()
    }
    fn name(&self) -> u32 {
        self.tag >> 3
    }
}

/// A span that fails the run and has a parent, in 12 bytes: its label (a node, or a line
/// for a span without an id), its parent and whether it is a silent clip or incomplete.
#[derive(Clone, Copy)]
struct Flagged {
    parent: u32,
    /// The label's node index, or the low 32 bits of its line.
    low: u32,
    /// Bit 31: the label is a line (then bits 0-29 are the line's high bits; no input has
    /// 2^62 lines); bit 30: incomplete (else a silent clip).
    high: u32,
}

const LINE_LABEL: u32 = 1 << 31;
const INCOMPLETE: u32 = 1 << 30;
const LINE_HIGH: u32 = !(LINE_LABEL | INCOMPLETE);

impl Flagged {
    fn new(label: Label, parent: u32, status: Status) -> Flagged {
        let status = if status == Status::Incomplete {
            INCOMPLETE
        } else {
            0
        };
        let (low, high) = match label {
            Label::Node(n) => (n, 0),
            Label::Line(line) => (line as u32, LINE_LABEL | ((line >> 32) as u32 & LINE_HIGH)),
        };
        Flagged {
            parent,
            low,
            high: high | status,
        }
    }
    fn label(&self) -> Label {
        if self.high & LINE_LABEL == 0 {
            Label::Node(self.low)
        } else {
            Label::Line(u64::from(self.high & LINE_HIGH) << 32 | u64::from(self.low))
        }
    }
    fn status(&self) -> Status {
        if self.high & INCOMPLETE != 0 {
            Status::Incomplete
        } else {
            Status::SilentClip
        }
    }
}

/// Accumulates a report from lines or records. Used by the streaming checker and by the
/// other format readers, which hand it records they have built.
///
/// Per span it keeps only the row (when the row is listed), the two lengths for the tool's
/// medians and a small rollup node; nothing of the raw line.
#[derive(Default)]
pub struct ReportBuilder {
    options: CheckOptions,
    format: String,
    read_as: Option<ReadAs>,
    /// Listed rows in arrival order, put in the report's order at the end.
    rows: Rows,
    counts: Counts,
    invalid: Vec<Invalid>,
    skipped: Vec<Skipped>,
    clip_histogram: ClipHistogram,
    /// Tool names, and per tool (by the same index) what its medians need.
    tool_names: Interner,
    tools: Vec<ToolAcc>,
    /// Prompt builder versions, and per version (spans, silent clips); `no_builder` for
    /// spans without one.
    builder_names: Interner,
    builders: Vec<(u64, u64)>,
    no_builder: (u64, u64),
    parents: Interner,
    /// Every span with an id, in input order, and their ids end to end.
    nodes: Blocks<Node>,
    ids: TextBlocks,
    /// The lines of nodes whose line is past 32 bits, by node index.
    wide_lines: Vec<(u32, u64)>,
    /// Names of the context spans (agents, turns, model calls) among the nodes.
    other_names: Vec<Box<str>>,
    /// Every span that fails the run and has a parent.
    flagged_children: Blocks<Flagged>,
    /// Bytes kept so far against [`Limits::fact_bytes`] and [`Limits::row_bytes`].
    fact_bytes: u64,
    row_bytes: u64,
    not_kept: NotKept,
    /// Skip reasons and how often each came, for the line that says what an input with no
    /// tool call held instead (the first [`MAX_SEEN`] distinct reasons; `seen_other` counts
    /// the rest).
    seen: Vec<(String, u64)>,
    seen_other: u64,
}

/// Distinct skip reasons kept for [`Report::nothing_checked`].
const MAX_SEEN: usize = 32;

impl ReportBuilder {
    pub fn new(format: &str, options: CheckOptions) -> Self {
        ReportBuilder {
            options,
            format: format.to_string(),
            ..ReportBuilder::default()
        }
    }

    pub fn counts(&self) -> &Counts {
        &self.counts
    }

    /// Names the format the input was read as (readers that detect it late call this).
    pub fn set_format(&mut self, format: &str) {
        self.format = format.to_string();
    }

    /// Layout and conventions of a trace-format input.
    pub fn set_read_as(&mut self, read_as: Option<ReadAs>) {
        self.read_as = read_as;
    }

    /// A span of a trace format that is not a tool call (an agent, a turn, a model call):
    /// counted as skipped with its reason, and kept in the span graph so the rollup walks
    /// through it from a failing tool span to every ancestor.
    pub fn context_span(
        &mut self,
        line: u64,
        span_id: Option<&str>,
        parent_id: Option<&str>,
        name: Option<&str>,
        reason: &str,
    ) {
        let cost =
            SPAN_FACT_BYTES + (span_id.map_or(0, str::len) + name.map_or(0, str::len)) as u64;
        if let Some(id) = span_id.filter(|_| self.keep_facts(line, cost)) {
            let parent = parent_id.filter(|p| !p.is_empty()).map(|p| self.parent(p));
            let other = self.other_names.len() as u32;
            self.other_names.push(name.unwrap_or_default().into());
            self.node(id, parent, None, line, other);
        }
        self.skipped_lent(line, span_id, reason);
    }

    pub fn blank(&mut self) {
        self.counts.blank += 1;
        self.counts.lines += 1;
    }

    pub fn invalid(&mut self, line: u64, kind: InvalidKind, error: String) {
        self.counts.invalid += 1;
        self.counts.lines += 1;
        if self.invalid.len() < MAX_LISTED {
            self.invalid.push(Invalid { line, kind, error });
        }
    }

    pub fn skipped(&mut self, line: u64, span_id: Option<String>, reason: String) {
        self.skipped_lent(line, span_id.as_deref(), &reason);
    }

    /// [`Self::skipped`] with the id and reason lent: copied only when listed or first seen
    /// (a large input skips most spans past both lists' ends).
    pub fn skipped_lent(&mut self, line: u64, span_id: Option<&str>, reason: &str) {
        self.counts.skipped += 1;
        self.counts.lines += 1;
        // A word at a time: `==` on strings is a byte-by-byte `memcmp` in wasm32, and every
        // model call and context span of a trace export is counted here.
        let same = |r: &String| crate::bytes::eq(r.as_bytes(), reason.as_bytes());
        match self.seen.iter().position(|(r, _)| same(r)) {
            Some(i) => self.seen[i].1 += 1,
            None if self.seen.len() < MAX_SEEN => self.seen.push((reason.to_string(), 1)),
            None => self.seen_other += 1,
        }
        if self.skipped.len() < MAX_LISTED {
            self.skipped.push(Skipped {
                line,
                span_id: span_id.map(str::to_string),
                reason: reason.to_string(),
            });
        }
    }

    /// Adds one record read from `line`: a row, or a skip when it names no tool.
    #[cfg_attr(feature = "speed", inline(always))]
    pub fn record(&mut self, line: u64, rec: &mut SpanView<'_>) {
        // The span JSONL hot path: with an empty provenance inlined, its handling folds away.
        self.add(line, rec, Provenance::default())
    }

    /// [`record`](Self::record) for a record a trace-format reader built, with what it knows
    /// beyond the seed's fields.
    pub fn record_with(&mut self, line: u64, mut rec: SpanView<'_>, provenance: Provenance) {
        self.add(line, &mut rec, provenance)
    }

    #[cfg_attr(feature = "speed", inline(always))]
    fn add(&mut self, line: u64, rec: &mut SpanView<'_>, provenance: Provenance) {
        let name = match rec.name.as_deref() {
            Some(n) if !n.is_empty() => n,
            other => {
                let reason = match other {
                    Some(_) => "name is empty",
                    None => "record has no name",
                };
                return self.skipped(line, owned(rec.span_id.take()), reason.into());
            }
        };
        self.counts.lines += 1;
        let policy = if self.options.lenient_clip_reason {
            ReasonPolicy::Lenient
        } else {
            ReasonPolicy::Strict
        };
        let mut verdict = classify_with(rec, policy);
        if verdict
            .warnings
            .first()
            .is_some_and(|w| w.starts_with(UNKNOWN_REASON_WARNING))
        {
            self.counts.unknown_clip_reason += 1;
        }
        // The join measured a format-only change as equal lengths and digests, so the
        // classifier says `ok`; the reader knows it was another serialisation.
        if provenance.reformatted && verdict.status == Status::Ok {
            verdict.status = Status::Reformatted;
        }
        if !provenance.warnings.is_empty() {
            verdict.warnings.extend(provenance.warnings);
        }
        self.counts.bump(verdict.status);
        if !verdict.warnings.is_empty() {
            self.counts.warned += 1;
        }

        let cost = SPAN_FACT_BYTES + rec.span_id.as_deref().map_or(0, str::len) as u64;
        if self.keep_facts(line, cost) {
            self.facts(line, name, rec, verdict.status);
        } else {
            self.not_kept.spans += 1;
        }

        let clip_ratio = clip_ratio_of(rec.observed_bytes, rec.injected_bytes);
        if let Some(r) = clip_ratio {
            self.clip_histogram.add(r);
        }

        let keep = !self.options.flagged_only
            || verdict.status != Status::Ok
            || !verdict.warnings.is_empty();
        if keep && !self.keep_row(line, row_cost(rec, &verdict, &provenance.notes)) {
            self.not_kept.rows += 1;
        } else if keep {
            // Straight from the view into the packed rows: no `String` per field.
            let preview = rec.injected_preview.as_ref().map(LazyText::decode);
            self.rows.push(NewRow {
                line,
                status: verdict.status,
                texts: [
                    rec.span_id.as_deref(),
                    rec.parent_id.as_deref(),
                    Some(name),
                    rec.clip_reason.as_deref(),
                    rec.sha256_observed.as_deref(),
                    rec.sha256_injected.as_deref(),
                    preview.as_deref(),
                    rec.prompt_builder_version.as_deref(),
                ],
                observed_bytes: rec.observed_bytes,
                injected_bytes: rec.injected_bytes,
                injected_tokens: rec.injected_tokens,
                model_context_limit_tokens: rec.model_context_limit_tokens,
                clip_ratio,
                detail: &verdict.detail,
                warnings: &verdict.warnings,
                notes: &provenance.notes,
                join: provenance.join,
                injected_tokens_estimated: provenance.injected_tokens_estimated,
            });
        }
    }

    /// Whether a span's facts (`cost` bytes) fit the budget. Once one does not, no later
    /// span's facts are kept either, so the partial parts cover a prefix of the input.
    #[cfg_attr(feature = "speed", inline(always))]
    fn keep_facts(&mut self, line: u64, cost: u64) -> bool {
        // One comparison per span: once the budget is spent, `fact_bytes` is set past every
        // cost so the test fails for good.
        let budget = self.options.limits.fact_bytes.min(MAX_FACT_BYTES);
        if self.fact_bytes.saturating_add(cost) <= budget {
            self.fact_bytes += cost;
            return true;
        }
        if self.not_kept.facts_from_line.is_none() {
            self.not_kept.facts_from_line = Some(line);
            self.fact_bytes = u64::MAX;
        }
        false
    }

    /// Whether a row of `cost` bytes fits the row budget. Once one does not, no later row is
    /// listed, so the listed rows are those of a prefix of the input.
    fn keep_row(&mut self, line: u64, cost: u64) -> bool {
        if self.not_kept.rows_from_line.is_some() {
            return false;
        }
        if self.row_bytes + cost > self.options.limits.row_bytes {
            self.not_kept.rows_from_line = Some(line);
            return false;
        }
        self.row_bytes += cost;
        true
    }

    /// A parent id's index, charging a new one to the fact budget (past it, an id is still
    /// interned: the span that names it was within the budget, and ids are bounded by it).
    fn parent(&mut self, id: &str) -> u32 {
        let before = self.parents.len();
        let pid = self.parents.intern(id);
        if self.parents.len() > before {
            self.fact_bytes = self.fact_bytes.saturating_add(NAME_BYTES + id.len() as u64);
        }
        pid
    }

    /// What the summaries and the rollup keep of one tool span.
    #[cfg_attr(feature = "speed", inline(always))]
    fn facts(&mut self, line: u64, name: &str, rec: &SpanView<'_>, status: Status) {
        let tool = self.tool_names.intern(name);
        if tool as usize == self.tools.len() {
            self.tools.push(ToolAcc::default());
            self.fact_bytes = self
                .fact_bytes
                .saturating_add(NAME_BYTES + name.len() as u64);
        }
        let acc = &mut self.tools[tool as usize];
        acc.spans += 1;
        acc.observed.push(rec.observed_bytes);
        acc.injected.push(rec.injected_bytes);

        let silent = u64::from(status == Status::SilentClip);
        let builder = match rec.prompt_builder_version.as_deref() {
            None => &mut self.no_builder,
            Some(v) => {
                let b = self.builder_names.intern(v) as usize;
                if b == self.builders.len() {
                    self.builders.push((0, 0));
                    self.fact_bytes = self.fact_bytes.saturating_add(NAME_BYTES + v.len() as u64);
                }
                &mut self.builders[b]
            }
        };
        builder.0 += 1;
        builder.1 += silent;

        let parent = rec.parent_id.as_deref().map(|p| self.parent(p));
        if let Some(id) = rec.span_id.as_deref() {
            self.node(id, parent, Some(status), line, tool);
        }
        if status.fails_run() {
            if let Some(parent) = parent {
                // The span's node (just added) names it; no text of its own per failing span.
                let label = match rec.span_id {
                    Some(_) => Label::Node(self.nodes.len() as u32 - 1),
                    None => Label::Line(line),
                };
                let cost = std::mem::size_of::<Flagged>() as u64;
                self.fact_bytes = self.fact_bytes.saturating_add(cost);
                self.flagged_children
                    .push(Flagged::new(label, parent, status));
            }
        }
    }

    /// Adds a node: `name` indexes the tool names for a tool span (`status` given), the
    /// context span names otherwise. Within [`MAX_FACT_BYTES`], ids end before 4 GiB and
    /// names number below 2^29.
    fn node(
        &mut self,
        id: &str,
        parent: Option<u32>,
        status: Option<Status>,
        line: u64,
        name: u32,
    ) {
        let id_start = self.ids.len() as u32;
        self.ids.push(id);
        let status = status.map_or(CONTEXT, |s| u32::from(s.priority()));
        let narrow = u32::try_from(line).ok().filter(|&l| l != WIDE_LINE);
        if narrow.is_none() {
            self.wide_lines.push((self.nodes.len() as u32, line));
        }
        self.nodes.push(Node {
            id_start,
            parent: parent.unwrap_or(NO_PARENT),
            line: narrow.unwrap_or(WIDE_LINE),
            tag: name << 3 | status,
        });
    }

    /// Node `n`'s line.
    fn line_of(&self, n: u32) -> u64 {
        match self.nodes[n as usize].line {
            WIDE_LINE => {
                let at = self.wide_lines.partition_point(|&(m, _)| m < n);
                self.wide_lines[at].1
            }
            line => u64::from(line),
        }
    }

    /// Node `n`'s id.
    fn id_of(&self, n: u32) -> &str {
        let n = n as usize;
        let from = self.nodes[n].id_start as usize;
        let to = (self.nodes.get(n + 1)).map_or(self.ids.len(), |next| next.id_start as usize);
        self.ids.get(from, to)
    }

    /// The bytes the builder holds, by structure (capacities), for
    /// `examples/check_memory.rs`.
    pub(super) fn held_bytes(&self) -> Vec<(&'static str, usize)> {
        let mut out = Vec::new();
        self.rows.held_bytes(&mut out);
        out.push(("facts: nodes", self.nodes.held_bytes()));
        out.push(("facts: ids", self.ids.held_bytes()));
        out.push(("facts: parent ids", self.parents.held_bytes()));
        let lengths = |l: &Lengths| match l {
            Lengths::Narrow(v) => v.held_bytes(),
            Lengths::Wide(v) => v.capacity() * 8,
        };
        out.push((
            "facts: tool lengths",
            (self.tools.iter())
                .map(|t| lengths(&t.observed) + lengths(&t.injected))
                .sum(),
        ));
        out.push((
            "facts: flagged children",
            self.flagged_children.held_bytes(),
        ));
        out
    }

    pub fn finish(mut self) -> Report {
        let nothing_checked = (self.counts.total == 0).then(|| self.nothing_checked());
        // Wasm memory never shrinks, so the order of these steps sets the peak: the tool
        // medians first, each tool's lengths freed once its medians are taken; the rollup
        // next, then the span facts are freed; the rows' order last, in blocks that fit
        // where the freed ones were.
        let mut tools: Vec<ToolStats> = (std::mem::take(&mut self.tools).into_iter())
            .enumerate()
            .map(|(t, mut acc)| ToolStats {
                name: self.tool_names.name(t as u32).to_string(),
                spans: acc.spans,
                median_observed_bytes: acc.observed.median(),
                median_injected_bytes: acc.injected.median(),
            })
            .collect();
        crate::sort::sort_by(&mut tools, |a, b| a.name.cmp(&b.name));
        let flagged = std::mem::take(&mut self.flagged_children);
        let rollup = self.rollup(&flagged);
        drop(flagged);
        drop(std::mem::take(&mut self.nodes));
        drop(std::mem::take(&mut self.ids));
        drop(std::mem::take(&mut self.parents));
        let mut rows = std::mem::take(&mut self.rows);
        rows.sort();
        let counts = self.counts;
        let silent_clips_per_100 = if counts.total == 0 {
            0.0
        } else {
            counts.silent_clip as f64 * 100.0 / counts.total as f64
        };
        let no_builder = (self.no_builder.0 > 0).then_some((None, self.no_builder));
        let mut builders: Vec<BuilderStats> = (self.builder_names.into_names().into_iter())
            .zip(self.builders)
            .map(|(v, counts)| (Some(v), counts))
            .chain(no_builder)
            .map(|(version, (spans, silent))| BuilderStats {
                prompt_builder_version: version.map(String::from),
                spans,
                silent_clip: silent,
                silent_clip_rate: silent as f64 * 100.0 / spans as f64,
            })
            .collect();
        crate::sort::sort_by(&mut builders, |a, b| {
            a.prompt_builder_version.cmp(&b.prompt_builder_version)
        });
        let unknown_reason_fails =
            !self.options.lenient_clip_reason && counts.unknown_clip_reason > 0;
        let fails = counts.silent_clip > 0
            || counts.incomplete > 0
            || counts.invalid > 0
            || (nothing_checked.is_some() && !self.options.allow_empty)
            || unknown_reason_fails;
        Report {
            format: self.format,
            read_as: self.read_as,
            rows,
            invalid: self.invalid,
            skipped: self.skipped,
            silent_clips_per_100,
            clip_histogram: self.clip_histogram,
            tools,
            builders,
            rollup,
            flagged_only: self.options.flagged_only,
            nothing_checked,
            not_kept: self.not_kept,
            exit_code: i32::from(fails),
            counts,
        }
    }

    /// The line for an input with no tool call: what it held instead, most frequent first.
    fn nothing_checked(&mut self) -> String {
        let c = &self.counts;
        if c.lines == c.blank {
            return "nothing checked: the input is empty".to_string();
        }
        let mut parts = Vec::new();
        if c.invalid > 0 {
            parts.push(format!("{} invalid", c.invalid));
        }
        crate::sort::sort_by(&mut self.seen, |a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
        const SHOWN: usize = 4;
        for (reason, n) in self.seen.iter().take(SHOWN) {
            parts.push(format!("{n} \u{d7} {reason}"));
        }
        let rest: u64 = self.seen.iter().skip(SHOWN).map(|s| s.1).sum::<u64>() + self.seen_other;
        if rest > 0 {
            parts.push(format!("{rest} other"));
        }
        let what = if self.format == "spans" {
            "tool span"
        } else {
            "tool call"
        };
        let entries = c.lines - c.blank;
        format!(
            "nothing checked: no {what} in {entries} {} read as {}: {}",
            if entries == 1 { "entry" } else { "entries" },
            self.format,
            parts.join("; ")
        )
    }

    /// The node of each parent: the first span in the input with that id (later duplicates
    /// do not re-parent it).
    fn parent_nodes(&self) -> Vec<Option<u32>> {
        let mut found = vec![None; self.parents.len()];
        for n in 0..self.nodes.len() as u32 {
            if let Some(pid) = self.parents.lookup(self.id_of(n).as_bytes()) {
                found[pid as usize].get_or_insert(n);
            }
        }
        found
    }

    /// Charges every ancestor of every failing span whose own span is fine (or absent from
    /// the input) with the failures below it. Linear in the spans (issue 13): the ancestors
    /// of failing spans are collected once, and counts flow up the parent graph child before
    /// parent, each ancestor keeping the first [`MAX_ROLLUP_EXAMPLES`] failing descendants
    /// (in input order) as examples. A parent cycle in bad data charges every span on the
    /// cycle with all that reaches it, once, and never loops.
    fn rollup(&self, flagged: &Blocks<Flagged>) -> Rollups {
        if flagged.len() == 0 {
            return Rollups::default();
        }
        let parent_nodes = self.parent_nodes();
        let next =
            |pid: u32| parent_nodes[pid as usize].and_then(|n| self.nodes[n as usize].parent());
        // The ancestors of failing spans, each once: a walk up stops at one already seen.
        let mut slot_of = vec![u32::MAX; self.parents.len()];
        let mut slots: Vec<Charge> = Vec::new();
        for f in flagged.iter() {
            let mut current = Some(f.parent);
            while let Some(pid) = current {
                if slot_of[pid as usize] != u32::MAX {
                    break;
                }
                slot_of[pid as usize] = slots.len() as u32;
                slots.push(Charge::new(pid));
                current = next(pid);
            }
        }
        for (i, f) in flagged.iter().enumerate() {
            let slot = &mut slots[slot_of[f.parent as usize] as usize];
            slot.add(f.status(), i as u32);
        }
        // Child before parent (Kahn's order on the ancestor graph, where every span has at
        // most one parent): each slot hands its totals to its parent once.
        let up: Vec<u32> = (slots.iter())
            .map(|s| next(s.pid).map_or(u32::MAX, |p| slot_of[p as usize]))
            .collect();
        let mut waiting = vec![0u32; slots.len()];
        for &u in up.iter().filter(|&&u| u != u32::MAX) {
            waiting[u as usize] += 1;
        }
        let mut ready: Vec<u32> = (0..slots.len() as u32)
            .filter(|&s| waiting[s as usize] == 0)
            .collect();
        while let Some(s) = ready.pop() {
            let u = up[s as usize];
            if u == u32::MAX {
                continue;
            }
            let child = std::mem::take(&mut slots[s as usize].examples);
            let (silent, incomplete) = (slots[s as usize].silent, slots[s as usize].incomplete);
            let parent = &mut slots[u as usize];
            parent.silent += silent;
            parent.incomplete += incomplete;
            parent.examples = merge_examples(std::mem::take(&mut parent.examples), &child);
            slots[s as usize].examples = child;
            waiting[u as usize] -= 1;
            if waiting[u as usize] == 0 {
                ready.push(u);
            }
        }
        // What is left waits on itself: parent cycles. Every span on a cycle is charged
        // with everything that reached any of them.
        for start in 0..slots.len() {
            if waiting[start] == 0 {
                continue;
            }
            let mut cycle = vec![start];
            let mut s = up[start] as usize;
            while s != start {
                cycle.push(s);
                s = up[s] as usize;
            }
            let (mut silent, mut incomplete, mut examples) = (0, 0, Vec::new());
            for &c in &cycle {
                silent += slots[c].silent;
                incomplete += slots[c].incomplete;
                examples = merge_examples(examples, &slots[c].examples);
                waiting[c] = 0;
            }
            for &c in &cycle {
                let slot = &mut slots[c];
                (slot.silent, slot.incomplete) = (silent, incomplete);
                slot.examples.clone_from(&examples);
            }
        }
        // The entries' order first, from what sorts them (line, then id), so each entry is
        // built and stored once, in place, and no list of them is ever held whole.
        let mut order: Vec<(Option<u64>, u32)> = Vec::new();
        for (s, slot) in slots.iter().enumerate() {
            let node = parent_nodes[slot.pid as usize];
            let own = node.and_then(|n| self.nodes[n as usize].status());
            if !own.is_some_and(Status::fails_run) {
                order.push((node.map(|n| self.line_of(n)), s as u32));
            }
        }
        let id = |s: u32| self.parents.name(slots[s as usize].pid).as_bytes();
        crate::sort::sort_by(&mut order, |a, b| {
            (a.0.is_none(), a.0)
                .cmp(&(b.0.is_none(), b.0))
                .then_with(|| crate::bytes::cmp(id(a.1), id(b.1)))
        });
        let mut list = Rollups::with_capacity(order.len());
        for (_, s) in order {
            let slot = &slots[s as usize];
            let mut entry = self.rollup_entry(slot.pid, parent_nodes[slot.pid as usize]);
            entry.silent_clip = slot.silent;
            entry.incomplete = slot.incomplete;
            entry.flagged = (slot.examples.iter())
                .map(|&i| self.label(flagged[i as usize].label()))
                .collect();
            list.push(&entry);
        }
        list
    }

    /// How a failing span is named among a parent's examples: its id, or `line N`.
    fn label(&self, label: Label) -> String {
        match label {
            Label::Node(n) => self.id_of(n).to_string(),
            Label::Line(line) => format!("line {line}"),
        }
    }

    /// A parent's rollup entry, charged with nothing yet.
    fn rollup_entry(&self, pid: u32, node: Option<u32>) -> Rollup {
        let own_status = node.and_then(|n| self.nodes[n as usize].status());
        Rollup {
            span_id: self.parents.name(pid).to_string(),
            own_status,
            line: node.map(|n| self.line_of(n)),
            name: node.map(|n| {
                let name = self.nodes[n as usize].name();
                match own_status {
                    Some(_) => self.tool_names.name(name).to_string(),
                    None => self.other_names[name as usize].to_string(),
                }
            }),
            silent_clip: 0,
            incomplete: 0,
            flagged: Vec::new(),
        }
    }
}

/// A failing span among a parent's examples: the node that holds its id, or its line when
/// it has none.
#[derive(Clone, Copy)]
enum Label {
    Node(u32),
    Line(u64),
}

/// At most this many failing descendants are named per rollup parent (the counts cover all):
/// a deep chain of fine parents over many failures must not list every failure under every
/// ancestor, which was quadratic in time and output.
pub const MAX_ROLLUP_EXAMPLES: usize = 10;

/// What one ancestor of failing spans is charged with while the rollup is built.
struct Charge {
    pid: u32,
    silent: u64,
    incomplete: u64,
    /// Indexes of failing descendants (into the flagged list, so in input order), at most
    /// [`MAX_ROLLUP_EXAMPLES`].
    examples: Vec<u32>,
}

impl Charge {
    fn new(pid: u32) -> Charge {
        Charge {
            pid,
            silent: 0,
            incomplete: 0,
            examples: Vec::new(),
        }
    }

    fn add(&mut self, status: Status, index: u32) {
        match status {
            Status::SilentClip => self.silent += 1,
            _ => self.incomplete += 1,
        }
        if self.examples.len() < MAX_ROLLUP_EXAMPLES {
            self.examples.push(index);
        }
    }
}

/// The first [`MAX_ROLLUP_EXAMPLES`] of two ascending lists, ascending.
fn merge_examples(a: Vec<u32>, b: &[u32]) -> Vec<u32> {
    if b.is_empty() {
        return a;
    }
    let mut out = Vec::with_capacity((a.len() + b.len()).min(MAX_ROLLUP_EXAMPLES));
    let (mut i, mut j) = (0, 0);
    while out.len() < MAX_ROLLUP_EXAMPLES && (i < a.len() || j < b.len()) {
        if j >= b.len() || (i < a.len() && a[i] < b[j]) {
            out.push(a[i]);
            i += 1;
        } else {
            out.push(b[j]);
            j += 1;
        }
    }
    out
}

/// What a listed row costs: [`ROW_BYTES`] and its text fields.
fn row_cost(rec: &SpanView<'_>, verdict: &Verdict, notes: &[String]) -> u64 {
    let text = |v: &Option<std::borrow::Cow<'_, str>>| v.as_deref().map_or(0, str::len);
    let preview = match &rec.injected_preview {
        None => 0,
        Some(LazyText::Text(t)) => t.len(),
        Some(LazyText::Escaped(raw)) => raw.len(),
    };
    let lists = (verdict.detail.iter())
        .chain(&verdict.warnings)
        .chain(notes)
        .map(|t| t.len() + 4)
        .sum::<usize>();
    let fields = text(&rec.span_id)
        + text(&rec.parent_id)
        + text(&rec.name)
        + text(&rec.clip_reason)
        + text(&rec.sha256_observed)
        + text(&rec.sha256_injected)
        + text(&rec.prompt_builder_version);
    ROW_BYTES + (fields + preview + lists) as u64
}

fn owned(v: Option<std::borrow::Cow<'_, str>>) -> Option<String> {
    v.map(crate::bytes::own)
}

/// The median of the values (mean of the middle two for an even count), by selection
/// rather than a full sort: a tool of a large run has millions of lengths.
fn median<T: Copy + Ord>(values: &mut [T], float: impl Fn(T) -> f64) -> Option<f64> {
    if values.is_empty() {
        return None;
    }
    // A selection, not a sort: O(n), and these are the only u64 values the crate orders (the
    // crate's one sort, `crate::sort`, goes through indexes and would be slower here).
    let (mid, odd) = (values.len() / 2, values.len() % 2 == 1);
    let (below, &mut middle, _) = values.select_nth_unstable(mid);
    Some(if odd {
        float(middle)
    } else {
        // Everything below `mid` is <= the middle value; the largest of it is the other one.
        let lower = below.iter().copied().max().unwrap_or(middle);
        (float(lower) + float(middle)) / 2.0
    })
}

impl Sink for ReportBuilder {
    // Inlined, with `record` and `scan_line`, into the reader's loop: a span view is some
    // two hundred bytes, and each call boundary copied it. By reference for the same reason:
    // moved, it was copied once per span with `memory.copy`, which V8 runs as a call into C.
    #[cfg_attr(feature = "speed", inline(always))]
    fn span(&mut self, line: u64, record: &mut SpanView<'_>) {
        self.record(line, record);
    }
    fn row(&mut self, line: u64, record: &mut SpanView<'_>, provenance: Provenance) {
        self.add(line, record, provenance);
    }
    fn context(
        &mut self,
        line: u64,
        span_id: Option<&str>,
        parent_id: Option<&str>,
        name: Option<&str>,
        reason: &str,
    ) {
        self.context_span(line, span_id, parent_id, name, reason);
    }
    fn skipped(&mut self, line: u64, span_id: Option<String>, reason: String) {
        ReportBuilder::skipped(self, line, span_id, reason);
    }
    fn invalid(&mut self, line: u64, kind: InvalidKind, error: String) {
        ReportBuilder::invalid(self, line, kind, error);
    }
    fn blank(&mut self) {
        ReportBuilder::blank(self);
    }
    fn set_format(&mut self, format: &str, read_as: Option<ReadAs>) {
        ReportBuilder::set_format(self, format);
        ReportBuilder::set_read_as(self, read_as);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lengths_widen_past_32_bits_and_keep_their_median() {
        let mut narrow = Lengths::default();
        for v in [7, 1, 5, 3] {
            narrow.push(Some(v));
        }
        narrow.push(None);
        assert!(matches!(narrow, Lengths::Narrow(_)));
        assert_eq!(narrow.median(), Some(4.0));
        let big = u64::from(u32::MAX) + 10;
        let mut wide = Lengths::default();
        for v in [7, 1, big, 5, 3] {
            wide.push(Some(v));
        }
        assert!(matches!(wide, Lengths::Wide(_)));
        assert_eq!(wide.median(), Some(5.0));
        wide.push(Some(big + 1));
        assert_eq!(wide.median(), Some(6.0));
        assert_eq!(Lengths::default().median(), None);
    }

    #[test]
    fn nodes_and_flagged_children_give_back_lines_past_32_bits() {
        let mut b = ReportBuilder::default();
        let lines = [1, u64::from(u32::MAX), 7, u64::from(u32::MAX) + 1, 1 << 61];
        for (i, &line) in lines.iter().enumerate() {
            let status = (i % 2 == 0).then_some(Status::ALL[i]);
            b.node(
                &format!("id-{i}"),
                Some(i as u32).filter(|_| i > 1),
                status,
                line,
                i as u32,
            );
        }
        for (i, &line) in lines.iter().enumerate() {
            let n = i as u32;
            assert_eq!(b.line_of(n), line);
            assert_eq!(b.id_of(n), format!("id-{i}"));
            let node = b.nodes[i];
            assert_eq!(node.status(), (i % 2 == 0).then_some(Status::ALL[i]));
            assert_eq!((node.name(), node.parent()), (n, Some(n).filter(|_| i > 1)));
        }
        for (label, status) in [
            (Label::Node(u32::MAX - 1), Status::SilentClip),
            (Label::Line((1 << 62) - 1), Status::Incomplete),
            (Label::Line(3), Status::SilentClip),
        ] {
            let f = Flagged::new(label, 9, status);
            let same = match (f.label(), label) {
                (Label::Node(a), Label::Node(b)) => a == b,
                (Label::Line(a), Label::Line(b)) => a == b,
                _ => false,
            };
            assert!(same && f.status() == status && f.parent == 9);
        }
    }
}
