//! JS binding of the checker: `checkSpans`, the streaming `Checker`, and `CheckReport`.

use js_sys::Uint8Array;
use serde::Deserialize;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

use super::{error_with_code, into_error, options_of, to_js};
use toolslice::check::{
    compare_span_runs, render, CheckOptions, Checker as CoreChecker, Limits,
    PartReader as CorePartReader, Report,
};
use toolslice::formats::{Format, FormatOption};

#[wasm_bindgen(typescript_custom_section)]
const TS_CHECK: &'static str = r#"
/** Bytes of an exported run: text, or raw bytes (any chunk boundary is fine). */
export type Input = string | Uint8Array | ArrayBuffer;

/** A reader of one input format. */
export type Format = "spans" | "otlp" | "langfuse" | "openai_agents" | "phoenix";
/** `auto` (the default) detects the format from the first non-blank line. */
export type FormatOption = "auto" | Format;

export interface CheckOptions {
  /** Keep only rows that are not `ok` (counts and summaries still cover every span). */
  flaggedOnly?: boolean;
  /**
   * Which reader to use: seed-000 span JSONL (`spans`), OTLP JSON traces with OpenTelemetry
   * GenAI, OpenInference or Vercel AI SDK attributes (`otlp`), Langfuse observation exports
   * (`langfuse`), OpenAI Agents SDK trace exports (`openai_agents`), or Arize Phoenix's REST
   * span exports (`phoenix`). An unknown name throws an `Error` with code `unknown_format`.
   */
  format?: FormatOption;
  /**
   * Keep the seed script's leniency about `clip_reason`: a value outside the closed enum
   * declares the clip and does not fail the run (it is still counted and warned about). By
   * default it is not a declaration, and the run fails naming it.
   */
  lenientClipReason?: boolean;
  /**
   * Let an input with no tool call at all pass (`exitCode` 0). Off by default: such a run
   * exits 1 and `nothing_checked` says what the input held instead.
   */
  allowEmpty?: boolean;
  /**
   * How much memory the check may keep, in bytes; each field defaults to the value shown.
   * Past `rowBytes` or `factBytes` the check still counts and classifies every span, and
   * `not_kept` says what was not listed or summarised; a line longer than `lineBytes` or a
   * JSON document larger than `documentBytes` is reported as `too_large`. Lower them in an
   * isolate with a small memory cap (an edge worker), raise them for a larger run.
   */
  limits?: {
    /** Per-span facts for the parent rollup, tool medians and builder rates (384 MiB). */
    factBytes?: number;
    /** Listed rows (256 MiB). */
    rowBytes?: number;
    /** The longest line a reader holds (128 MiB). */
    lineBytes?: number;
    /** The largest single JSON document a reader buffers (256 MiB). */
    documentBytes?: number;
  };
}

/** How a tool result was matched with what a later model call received. */
export type Join = "tool_call_id" | "order" | "unmatched";

/**
 * Worst first. `reformatted` (trace formats only): the model received the same data as the
 * tool returned in another serialisation (JSON and Python's repr, key order, spacing); not a
 * cut, and it does not fail the run.
 */
export type Status = "silent_clip" | "incomplete" | "hash_mismatch" | "clipped" | "reformatted" | "ok";

export type ClipReason =
  | "none" | "prompt_token_cap" | "tool_result_char_limit"
  | "provider_context_window" | "redaction" | "binary_omitted";

/** One classified tool span. Field names are the seed's snake_case. */
export interface Row {
  /** 1-based line number in the input. */
  line: number;
  span_id: string | null;
  parent_id: string | null;
  name: string;
  status: Status;
  /** The seed's detail: `ratio=0.88`, missing field names, the declared reason ... */
  detail: string[];
  observed_bytes: number | null;
  injected_bytes: number | null;
  injected_tokens: number | null;
  /** Share of observed bytes that did not reach the model, when both lengths are known. */
  clip_ratio: number | null;
  /** As written in the input (an unknown value is kept verbatim and warned about). */
  clip_reason: ClipReason | string | null;
  sha256_observed: string | null;
  sha256_injected: string | null;
  injected_preview: string | null;
  prompt_builder_version: string | null;
  model_context_limit_tokens: number | null;
  /** Present when the row has problems that do not change its status. */
  warnings?: string[];
  /**
   * Trace formats only: `tool_call_id` (same call id on the tool span and a later model
   * call's tool message), `order` (no usable ids: paired by position and tool name), or
   * `unmatched` (no later model call in the trace).
   */
  join?: Join;
  /**
   * Trace formats only: why a length is missing (`not_captured: ...`), a result no later
   * model call received (`not_received: ...`), the marker that declared a cut, and the like.
   */
  notes?: string[];
  /** Trace formats only: `injected_tokens` is bytes / 4 rounded up, not a count an API reported. */
  injected_tokens_estimated?: true;
}

export interface Counts {
  silent_clip: number; incomplete: number; hash_mismatch: number; clipped: number;
  reformatted: number; ok: number;
  /** Rows (tool spans) of every status. */
  total: number;
  invalid: number; skipped: number; blank: number;
  /**
   * Every entry of the input: total + invalid + skipped + blank. An entry is a line of span
   * JSONL; for trace formats, a span (or an unreadable line or document).
   */
  lines: number;
  /** Rows that carry a warning. */
  warned: number;
  /** Rows whose clip_reason is outside the closed enum (they fail the run unless lenient). */
  unknown_clip_reason: number;
}

/** Why a line is invalid, as a stable code. */
export type InvalidKind = "not_utf8" | "binary" | "not_json" | "not_an_object" | "bad_field" | "unknown_format" | "too_large";
/** At most 1000 invalid (and 1000 skipped) lines are listed; `counts` covers all of them. */
export interface InvalidLine { line: number; kind: InvalidKind; error: string; }
export interface SkippedLine { line: number; span_id: string | null; reason: string; }
export interface ClipHistogram {
  /** Spans whose injected bytes are at least their observed bytes. */
  not_cut: number;
  /** bins[i]: spans with a clip ratio in (i/10, (i+1)/10]. */
  bins: [number, number, number, number, number, number, number, number, number, number];
}
export interface ToolStats {
  name: string; spans: number;
  median_observed_bytes: number | null; median_injected_bytes: number | null;
}
export interface BuilderStats {
  prompt_builder_version: string | null; spans: number; silent_clip: number;
  /** Silent clips per 100 spans of this builder. */
  silent_clip_rate: number;
}
export interface Rollup {
  span_id: string;
  /**
   * null when the parent is not a tool span: absent from the input (`line` null), or an
   * agent, turn or model-call span of a trace format (`line` set).
   */
  own_status: Status | null;
  line: number | null;
  name: string | null;
  silent_clip: number;
  incomplete: number;
  flagged: string[];
}

/** How a trace-format input was laid out, and the conventions its spans followed. */
export interface ReadAs {
  /** `lines`: one JSON value per line (streamed); `document`: one JSON document. */
  layout: "lines" | "document";
  conventions: ("gen_ai" | "openinference" | "ai_sdk")[];
}

/** One side of a tool call paired across two runs. */
export interface SliceSide {
  line: number; span_id: string | null;
  injected_bytes: number | null; injected_tokens: number | null;
  sha256_injected: string | null; clip_reason: string | null;
  prompt_builder_version: string | null;
}
/** A tool call that observed the same bytes in both runs but injected a different slice. */
export interface InjectedChange {
  name: string; sha256_observed: string; observed_bytes: number | null;
  left: SliceSide; right: SliceSide;
}
/** Two clip-aware span runs compared (spans paired by tool name and observed hash). */
export interface SpanRunDiff {
  injected_changed: InjectedChange[];
  unchanged: number; only_left: number; only_right: number;
  unhashed_left: number; unhashed_right: number;
  left_builders: (string | null)[]; right_builders: (string | null)[];
  /** The set of prompt_builder_version values differs between the runs. */
  builder_changed: boolean;
}

/** The checked run, as plain data. */
export interface Report {
  /** The reader that understood the input; `unknown` when none did (see `invalid`). */
  format: Format | "unknown";
  /** Trace formats only. */
  read_as?: ReadAs;
  rows: Row[];
  counts: Counts;
  invalid: InvalidLine[];
  skipped: SkippedLine[];
  silent_clips_per_100: number;
  /** Every span with both lengths, by clip ratio (also when only flagged rows are listed). */
  clip_histogram: ClipHistogram;
  tools: ToolStats[];
  builders: BuilderStats[];
  rollup: Rollup[];
  flagged_only: boolean;
  /**
   * Present when the input held no tool call at all: one line saying nothing was checked and
   * what was seen instead (`nothing checked: no tool call in 2 entries read as otlp: ...`);
   * the run does not pass (exit 1) unless `allowEmpty`.
   */
  nothing_checked?: string;
  /**
   * What the check could not keep within its memory limits (all zero / null when it kept
   * everything): rows counted but not listed from `rows_from_line` on, and the spans whose
   * facts (rollup, tool medians, builder rates) were not kept from `facts_from_line` on.
   */
  not_kept: { rows: number; rows_from_line: number | null; spans: number; facts_from_line: number | null };
  /**
   * 1 when any silent clip, incomplete span or invalid line, or when nothing was checked
   * (unless `allowEmpty`), else 0.
   */
  exit_code: 0 | 1;
}
"#;

#[wasm_bindgen]
extern "C" {
    #[wasm_bindgen(typescript_type = "Input")]
    pub type JsInput;
    #[wasm_bindgen(typescript_type = "CheckOptions")]
    pub type JsCheckOptions;
    #[wasm_bindgen(typescript_type = "Report")]
    pub type JsReport;
    #[wasm_bindgen(typescript_type = "Counts")]
    pub type JsCounts;
    #[wasm_bindgen(typescript_type = "SpanRunDiff")]
    pub type JsSpanRunDiff;
    #[wasm_bindgen(typescript_type = "Uint8Array")]
    pub type JsBuffer;
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase", default, deny_unknown_fields)]
struct Options {
    flagged_only: bool,
    format: Option<String>,
    lenient_clip_reason: bool,
    allow_empty: bool,
    limits: LimitOptions,
}

/// `limits` as JS spells it; an absent field keeps the core's default.
#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase", default, deny_unknown_fields)]
struct LimitOptions {
    fact_bytes: Option<u64>,
    row_bytes: Option<u64>,
    line_bytes: Option<u64>,
    document_bytes: Option<u64>,
}

impl LimitOptions {
    fn apply(&self, mut limits: Limits) -> Limits {
        let set = |field: &mut u64, v: Option<u64>| {
            if let Some(v) = v {
                *field = v;
            }
        };
        set(&mut limits.fact_bytes, self.fact_bytes);
        set(&mut limits.row_bytes, self.row_bytes);
        set(&mut limits.line_bytes, self.line_bytes);
        set(&mut limits.document_bytes, self.document_bytes);
        limits
    }
}

fn options(value: Option<JsCheckOptions>) -> Result<CheckOptions, JsValue> {
    let opts: Options = options_of(value, "check options")?;
    Ok(CheckOptions {
        flagged_only: opts.flagged_only,
        format: format_option(opts.format.as_deref())?,
        lenient_clip_reason: opts.lenient_clip_reason,
        allow_empty: opts.allow_empty,
        limits: opts.limits.apply(Limits::default()),
    })
}

/// A `format` option: absent means `auto`; an unknown name is an `unknown_format` error.
pub(crate) fn format_option(name: Option<&str>) -> Result<FormatOption, JsValue> {
    name.map_or(Ok(FormatOption::Auto), |n| {
        FormatOption::parse(n).map_err(into_error)
    })
}

/// A streaming check: `push` chunks as they arrive (split anywhere), then `finish`.
#[wasm_bindgen]
pub struct Checker {
    inner: Option<CoreChecker>,
    scratch: Vec<u8>,
}

#[wasm_bindgen]
impl Checker {
    #[wasm_bindgen(constructor)]
    pub fn new(options_: Option<JsCheckOptions>) -> Result<Checker, JsValue> {
        // What earlier checks freed is taken in address order (nothing to order in a fresh
        // instance, so a one-file run pays nothing).
        crate::tidy_free_blocks();
        Ok(Checker {
            inner: Some(CoreChecker::new(options(options_)?)),
            scratch: Vec::new(),
        })
    }

    /// Feeds the next chunk: a string, a `Uint8Array` or an `ArrayBuffer`, of any size. A
    /// chunk is copied into the module a window at a time, so a 1 GiB chunk costs a window of
    /// memory, not a gigabyte (which trapped the module and leaked it; issue 13).
    pub fn push(&mut self, chunk: &JsInput) -> Result<(), JsValue> {
        let inner = self.inner.as_mut().ok_or_else(finished)?;
        if let Some(text) = chunk.dyn_ref::<js_sys::JsString>() {
            let len = text.length();
            let mut start = 0;
            while start < len {
                let mut end = len.min(start + WINDOW as u32 / 4);
                // Never split a surrogate pair: each half alone would decode as U+FFFD.
                if end < len && (0xD800..0xDC00).contains(&(text.char_code_at(end - 1) as u32)) {
                    end -= 1;
                }
                let piece = text.slice(start, end).as_string().unwrap_or_default();
                inner.push(piece.as_bytes());
                start = end;
            }
            return Ok(());
        }
        let bytes = if let Some(view) = chunk.dyn_ref::<js_sys::Uint8Array>() {
            view.clone()
        } else if chunk.is_instance_of::<js_sys::ArrayBuffer>() {
            js_sys::Uint8Array::new(chunk)
        } else {
            return Err(error_with_code(
                "chunk must be a string, a Uint8Array or an ArrayBuffer",
                "invalid_argument",
            ));
        };
        in_windows(&bytes, &mut self.scratch, |window| inner.push(window));
        Ok(())
    }

    /// Makes room in the module's memory for about `bytes` of report, up front (a file's
    /// size is a good figure for span JSONL: its report takes 0.4-0.9x the input). Without
    /// it the allocator grows the memory a few pages at a time as rows arrive, and V8
    /// answered those growths with about a hundred garbage collections while checking 300 MB
    /// (`node --trace-gc`; two with the room made first): a third or more of its CPU time.
    /// Room not used is address space, not resident memory. Results are the same either
    /// way. Returns false when the memory cannot grow that far (the check then grows it as
    /// it goes, as without `reserve`); at most 1 GiB is reserved.
    pub fn reserve(&mut self, bytes: f64) -> bool {
        let bytes = bytes.clamp(0.0, RESERVE_MAX as f64) as usize;
        // Allocated and freed at once: the freed block stays in the allocator's free list,
        // and later allocations are cut from it.
        Vec::<u8>::new().try_reserve_exact(bytes).is_ok()
    }

    /// The trace format of the input, once its first lines showed it is one with a value
    /// per line (OTLP's Collector file, Langfuse or Agents SDK JSONL); `undefined` before
    /// that, for span JSONL, and for a single JSON document. Such an input's later lines can
    /// be read apart by a `PartReader` and taken in with `absorb`.
    #[wasm_bindgen(getter, js_name = lineFormat)]
    pub fn line_format(&self) -> Option<String> {
        let format = self.inner.as_ref()?.line_format()?;
        Some(format.as_str().to_string())
    }

    /// Whether the first lines have chosen how the input is read (span JSONL, a trace format
    /// with a value per line, or one JSON document): until then `lineFormat` is `undefined`
    /// whatever the input turns out to be, and after it, `undefined` means an input that
    /// cannot be read in parts.
    #[wasm_bindgen(getter, js_name = formatDecided)]
    pub fn format_decided(&self) -> bool {
        self.inner.as_ref().is_some_and(|c| c.format_decided())
    }

    /// Takes in the lines that follow what was pushed, read apart by a `PartReader` (in a
    /// worker): the report is the one pushing those lines would give. What was pushed must
    /// end with a newline and have a `lineFormat`, the part's. Otherwise, or when the bytes
    /// are not a whole part, nothing changes: throws an `Error` with code `part_refused`
    /// (push the lines instead).
    pub fn absorb(&mut self, part: &Uint8Array) -> Result<(), JsValue> {
        let inner = self.inner.as_mut().ok_or_else(finished)?;
        inner.absorb(&part.to_vec()).map_err(into_error)
    }

    /// Bytes fed so far.
    #[wasm_bindgen(getter, js_name = bytesRead)]
    pub fn bytes_read(&self) -> f64 {
        self.inner.as_ref().map_or(0.0, |c| c.bytes_read() as f64)
    }

    /// Complete lines seen so far.
    #[wasm_bindgen(getter, js_name = linesRead)]
    pub fn lines_read(&self) -> f64 {
        self.inner.as_ref().map_or(0.0, |c| c.lines_read() as f64)
    }

    /// Tool spans classified so far.
    #[wasm_bindgen(getter, js_name = spansRead)]
    pub fn spans_read(&self) -> f64 {
        self.inner.as_ref().map_or(0.0, |c| c.spans_read() as f64)
    }

    /// Ends the input and returns the report. The checker cannot be used afterwards.
    pub fn finish(&mut self) -> Result<CheckReport, JsValue> {
        self.end(CoreChecker::finish)
    }

    /// `finish` for a process that exits once the report is out (the command line): the
    /// same report, but what the check worked on (a trace's tool and model calls, the
    /// measures kept for re-listed inputs) is left in the module's memory rather than freed
    /// block by block, which took 8-12 ms of a 50 MB trace check. That memory stays taken
    /// for the life of this module instance: use `finish` anywhere the instance goes on to
    /// other work.
    #[wasm_bindgen(js_name = finishForExit)]
    pub fn finish_for_exit(&mut self) -> Result<CheckReport, JsValue> {
        self.end(CoreChecker::finish_for_exit)
    }
}

impl Checker {
    /// The report `finish` (one of the core checker's) makes; the checker is done after it.
    fn end(&mut self, finish: fn(CoreChecker) -> Report) -> Result<CheckReport, JsValue> {
        let inner = self.inner.take().ok_or_else(finished)?;
        self.scratch = Vec::new();
        Ok(CheckReport {
            report: finish(inner),
        })
    }
}

/// Reads later lines of a trace file apart from the `Checker` that reads the lines before
/// them, in another worker with its own module instance: `push` the bytes from a line
/// start to the end of the file (or to a line start), `finish`, and hand the bytes it
/// returns to that checker's `absorb`. Two threads read a large file in about half the time.
#[wasm_bindgen]
pub struct PartReader {
    inner: Option<CorePartReader>,
    scratch: Vec<u8>,
}

#[wasm_bindgen]
impl PartReader {
    /// `format`: the checker's `lineFormat`; `options`: the checker's (the longest line it
    /// holds is theirs).
    #[wasm_bindgen(constructor)]
    pub fn new(format: &str, options_: Option<JsCheckOptions>) -> Result<PartReader, JsValue> {
        let options = options(options_)?;
        let format =
            match FormatOption::parse(format).map_err(into_error)?.forced() {
                Some(f) if f != Format::Spans => f,
                _ => return Err(error_with_code(
                    "a part is read in a trace format: otlp, langfuse, openai_agents or phoenix",
                    "invalid_argument",
                )),
            };
        Ok(PartReader {
            inner: Some(CorePartReader::for_check(format, &options)),
            scratch: Vec::new(),
        })
    }

    /// Feeds the next bytes (a `Uint8Array`, split anywhere).
    pub fn push(&mut self, chunk: &Uint8Array) -> Result<(), JsValue> {
        let inner = self.inner.as_mut().ok_or_else(part_finished)?;
        in_windows(chunk, &mut self.scratch, |window| inner.push(window));
        Ok(())
    }

    /// Ends the part (a last line without a newline counts) and returns it, for `absorb`.
    pub fn finish(&mut self) -> Result<Vec<u8>, JsValue> {
        let inner = self.inner.take().ok_or_else(part_finished)?;
        self.scratch = Vec::new();
        Ok(inner.finish())
    }
}

fn part_finished() -> JsValue {
    error_with_code("this PartReader has already finished", "checker_finished")
}

/// Hands `bytes` to `feed` a window at a time, each copied into the reused `scratch`: one
/// copy per window and no allocation per chunk, and a 1 GiB chunk costs a window of the
/// module's memory, not a gigabyte.
fn in_windows(bytes: &Uint8Array, scratch: &mut Vec<u8>, mut feed: impl FnMut(&[u8])) {
    let len = bytes.length();
    let mut start = 0;
    while start < len {
        let end = len.min(start + WINDOW as u32);
        let n = (end - start) as usize;
        if scratch.len() < n {
            scratch.resize(n, 0);
        }
        bytes.subarray(start, end).copy_to(&mut scratch[..n]);
        feed(&scratch[..n]);
        start = end;
    }
}

/// Bytes of a chunk copied into the module at a time.
const WINDOW: usize = 1 << 20;

/// The most `reserve` asks for: a quarter of the 4 GiB a module's memory can reach.
const RESERVE_MAX: usize = 1 << 30;

fn finished() -> JsValue {
    error_with_code("this Checker has already finished", "checker_finished")
}

/// A finished check: read it as plain data (`toJSON`) or render it.
#[wasm_bindgen]
pub struct CheckReport {
    report: Report,
}

#[wasm_bindgen]
impl CheckReport {
    /// 1 when any silent clip, incomplete span or invalid line, or when the input held no
    /// tool call (unless `allowEmpty`), else 0.
    #[wasm_bindgen(getter, js_name = exitCode)]
    pub fn exit_code(&self) -> i32 {
        self.report.exit_code
    }

    /// When the input held no tool call: one line saying nothing was checked and what was
    /// seen instead; else `undefined`.
    #[wasm_bindgen(getter, js_name = nothingChecked)]
    pub fn nothing_checked(&self) -> Option<String> {
        self.report.nothing_checked.clone()
    }

    /// The counts alone (cheap: no rows are converted).
    #[wasm_bindgen(getter)]
    pub fn counts(&self) -> Result<JsCounts, JsValue> {
        Ok(to_js(&self.report.counts)?.unchecked_into())
    }

    /// The report as plain data (also what `JSON.stringify(report)` writes).
    #[wasm_bindgen(js_name = toJSON)]
    pub fn to_json(&self) -> Result<JsReport, JsValue> {
        Ok(to_js(&self.report)?.unchecked_into())
    }

    /// The seed's table, ending with `# silent_clip=N incomplete=N total=N`.
    pub fn table(&self) -> String {
        render::table(&self.report)
    }

    /// The report as pretty-printed JSON text.
    pub fn json(&self) -> String {
        render::json(&self.report)
    }

    /// One JSON object per row, newline-terminated.
    pub fn jsonl(&self) -> String {
        render::jsonl(&self.report)
    }

    /// How many rows the report lists: the range the piecewise renderings below take.
    #[wasm_bindgen(getter, js_name = rowCount)]
    pub fn row_count(&self) -> u32 {
        self.report.rows.len() as u32
    }

    /// The table's header line. `tableHead() + tableRows(0, rowCount) + tableTail()` is
    /// `table()`, written piece by piece so a large table is never one string.
    #[wasm_bindgen(js_name = tableHead)]
    pub fn table_head(&self) -> String {
        render::table_head()
    }

    /// The table lines of rows `from` to `to` (exclusive; clamped to `rowCount`).
    #[wasm_bindgen(js_name = tableRows)]
    pub fn table_rows(&self, from: u32, to: u32) -> String {
        render::table_rows(&self.report, from as usize, to as usize)
    }

    /// Everything after the table's rows: the summary line and the `#` comments. In pieces:
    /// `tableTailHead()`, `tableWarningsBytes` then `tableNotesBytes` over rows 0 to
    /// `rowCount`, `tableTailMiddle()`, `tableRollupBytes` over 0 to `rollupCount`.
    #[wasm_bindgen(js_name = tableTail)]
    pub fn table_tail(&self) -> String {
        render::table_tail(&self.report)
    }

    /// The tail's first lines: the blank line, the summary, what the input was read as.
    #[wasm_bindgen(js_name = tableTailHead)]
    pub fn table_tail_head(&self) -> String {
        render::table_tail_head(&self.report)
    }

    /// The tail's skipped, invalid and not-kept lines, between the notes and the rollup.
    #[wasm_bindgen(js_name = tableTailMiddle)]
    pub fn table_tail_middle(&self) -> String {
        render::table_tail_middle(&self.report)
    }

    /// The JSON report up to and including `"rows": [`. `jsonHead() + jsonRows(0, rowCount)
    /// + jsonTail()` is `json()`.
    #[wasm_bindgen(js_name = jsonHead)]
    pub fn json_head(&self) -> String {
        render::json_head(&self.report)
    }

    /// Rows `from` to `to` (exclusive; clamped to `rowCount`) of the JSON report, each after
    /// its separator.
    #[wasm_bindgen(js_name = jsonRows)]
    pub fn json_rows(&self, from: u32, to: u32) -> String {
        render::json_rows(&self.report, from as usize, to as usize)
    }

    /// The rest of the JSON report after its rows.
    #[wasm_bindgen(js_name = jsonTail)]
    pub fn json_tail(&self) -> String {
        render::json_tail(&self.report)
    }

    /// How many rollup entries the report lists: the range `jsonRollup` takes.
    #[wasm_bindgen(getter, js_name = rollupCount)]
    pub fn rollup_count(&self) -> u32 {
        self.report.rollup.len() as u32
    }

    /// `jsonTail()` in pieces: the rows' close up to `"rollup": [`. `jsonMiddle() +
    /// jsonRollup(0, rollupCount) + jsonEnd()` is `jsonTail()`.
    #[wasm_bindgen(js_name = jsonMiddle)]
    pub fn json_middle(&self) -> String {
        render::json_middle(&self.report)
    }

    /// Rollup entries `from` to `to` (exclusive; clamped to `rollupCount`) of the JSON
    /// report, each after its separator.
    #[wasm_bindgen(js_name = jsonRollup)]
    pub fn json_rollup(&self, from: u32, to: u32) -> String {
        render::json_rollup(&self.report, from as usize, to as usize)
    }

    /// The rest of the JSON report after its rollup.
    #[wasm_bindgen(js_name = jsonEnd)]
    pub fn json_end(&self) -> String {
        render::json_end(&self.report)
    }

    /// The JSONL lines of rows `from` to `to` (exclusive; clamped to `rowCount`).
    #[wasm_bindgen(js_name = jsonlRows)]
    pub fn jsonl_rows(&self, from: u32, to: u32) -> String {
        render::jsonl_rows(&self.report, from as usize, to as usize)
    }
}

/// The large piecewise renderings again, as UTF-8 bytes: byte for byte what `TextEncoder`
/// makes of the string methods' text. A writer that sends the report to a file or a pipe
/// takes these, and skips decoding each piece into a JS string only to encode it back to
/// UTF-8 on `write` (at 300 MB of input, `check --json` spent a third of its time there;
/// issue 17). Given a buffer (`into`), a piece is copied into it instead of into a new
/// `Uint8Array`: a writer that reuses one buffer allocates nothing per piece (fresh arrays
/// pile up between garbage collections: `check --json` of 300 MB peaked 30 MB higher).
#[wasm_bindgen]
impl CheckReport {
    /// `tableRows(from, to)` as UTF-8 bytes. With `into`, the bytes are written at its start
    /// and `into.subarray(0, n)` is returned when they fit; otherwise (or without `into`) a
    /// new `Uint8Array`, and `into` is left as it was.
    #[wasm_bindgen(js_name = tableRowsBytes)]
    pub fn table_rows_bytes(
        &self,
        from: u32,
        to: u32,
        into: Option<JsBuffer>,
    ) -> Result<Uint8Array, JsValue> {
        self.range_bytes(render::table_rows, from, to, into)
    }

    /// `tableTail()` as UTF-8 bytes (`into` as for `tableRowsBytes`). The tail lists a line
    /// per parent span with flagged children: 14 MB of it for 300 MB of mostly flagged
    /// spans, which as a string was held three times over (module, JS string, encoded copy):
    /// as bytes, `check` of that input peaked 11 MB lower.
    #[wasm_bindgen(js_name = tableTailBytes)]
    pub fn table_tail_bytes(&self, into: Option<JsBuffer>) -> Result<Uint8Array, JsValue> {
        let into = buffer(into)?;
        Ok(bytes_into(render::table_tail(&self.report), into))
    }

    /// The tail's `# warning` lines of rows `from` to `to` (exclusive; clamped to `rowCount`)
    /// as UTF-8 bytes (`into` as for `tableRowsBytes`); see `tableTail`.
    #[wasm_bindgen(js_name = tableWarningsBytes)]
    pub fn table_warnings_bytes(
        &self,
        from: u32,
        to: u32,
        into: Option<JsBuffer>,
    ) -> Result<Uint8Array, JsValue> {
        self.range_bytes(render::table_warnings, from, to, into)
    }

    /// The tail's `# note` lines of rows `from` to `to`, as `tableWarningsBytes`.
    #[wasm_bindgen(js_name = tableNotesBytes)]
    pub fn table_notes_bytes(
        &self,
        from: u32,
        to: u32,
        into: Option<JsBuffer>,
    ) -> Result<Uint8Array, JsValue> {
        self.range_bytes(render::table_notes, from, to, into)
    }

    /// The tail's `# parent` lines of rollup entries `from` to `to` (exclusive; clamped to
    /// `rollupCount`) as UTF-8 bytes (`into` as for `tableRowsBytes`); see `tableTail`.
    #[wasm_bindgen(js_name = tableRollupBytes)]
    pub fn table_rollup_bytes(
        &self,
        from: u32,
        to: u32,
        into: Option<JsBuffer>,
    ) -> Result<Uint8Array, JsValue> {
        self.range_bytes(render::table_rollup, from, to, into)
    }

    /// `jsonRows(from, to)` as UTF-8 bytes (`into` as for `tableRowsBytes`): `jsonHead()`,
    /// these pieces and `jsonTail()`, written in order, are `json()` encoded as UTF-8.
    #[wasm_bindgen(js_name = jsonRowsBytes)]
    pub fn json_rows_bytes(
        &self,
        from: u32,
        to: u32,
        into: Option<JsBuffer>,
    ) -> Result<Uint8Array, JsValue> {
        self.range_bytes(render::json_rows, from, to, into)
    }

    /// `jsonRollup(from, to)` as UTF-8 bytes (`into` as for `tableRowsBytes`).
    #[wasm_bindgen(js_name = jsonRollupBytes)]
    pub fn json_rollup_bytes(
        &self,
        from: u32,
        to: u32,
        into: Option<JsBuffer>,
    ) -> Result<Uint8Array, JsValue> {
        self.range_bytes(render::json_rollup, from, to, into)
    }

    /// `jsonlRows(from, to)` as UTF-8 bytes (`into` as for `tableRowsBytes`).
    #[wasm_bindgen(js_name = jsonlRowsBytes)]
    pub fn jsonl_rows_bytes(
        &self,
        from: u32,
        to: u32,
        into: Option<JsBuffer>,
    ) -> Result<Uint8Array, JsValue> {
        self.range_bytes(render::jsonl_rows, from, to, into)
    }
}

impl CheckReport {
    /// Rows `from..to` rendered by `render`, as bytes (`into` as for `tableRowsBytes`).
    fn range_bytes(
        &self,
        render: fn(&Report, usize, usize) -> String,
        from: u32,
        to: u32,
        into: Option<JsBuffer>,
    ) -> Result<Uint8Array, JsValue> {
        let into = buffer(into)?;
        Ok(bytes_into(
            render(&self.report, from as usize, to as usize),
            into,
        ))
    }
}

/// The `into` argument, checked before anything is rendered: not a `Uint8Array` is an
/// `invalid_argument` error.
fn buffer(into: Option<JsBuffer>) -> Result<Option<Uint8Array>, JsValue> {
    into.map(|b| b.dyn_into::<Uint8Array>())
        .transpose()
        .map_err(|_| error_with_code("into must be a Uint8Array", "invalid_argument"))
}

/// `text` copied into the start of `into` when it fits (one copy, no allocation on the JS
/// side), else into a new array.
fn bytes_into(text: String, into: Option<Uint8Array>) -> Uint8Array {
    let bytes = text.as_bytes();
    match into {
        Some(buffer) if bytes.len() <= buffer.length() as usize => {
            let out = buffer.subarray(0, bytes.len() as u32);
            out.copy_from(bytes);
            out
        }
        _ => Uint8Array::from(bytes),
    }
}

/// Checks a whole input at once (any supported format; see `CheckOptions.format`).
#[wasm_bindgen(js_name = checkSpans)]
pub fn check_spans(
    input: &JsInput,
    options_: Option<JsCheckOptions>,
) -> Result<CheckReport, JsValue> {
    let mut checker = Checker::new(options_)?;
    checker.push(input)?;
    checker.finish()
}

/// Compares two clip-aware span runs: tool calls whose observed hashes match while their
/// injected slices differ, and builder version changes.
#[wasm_bindgen(js_name = compareSpanRuns)]
pub fn compare_span_runs_js(left: &JsInput, right: &JsInput) -> Result<JsSpanRunDiff, JsValue> {
    let left = check_spans(left, None)?;
    let right = check_spans(right, None)?;
    Ok(to_js(&compare_span_runs(&left.report, &right.report))?.unchecked_into())
}
