//! JS binding of the truncators: `truncate`, `auditSummary`, `estimateTokens`,
//! `isErrorLine`.
//!
//! Options arrive camelCase (like every options object of the package) and map one to one
//! onto `truncate::Options`; results keep the core's snake_case field names, with `kept` and
//! `segments` re-expressed in UTF-16 code units so JavaScript can slice its strings with
//! them. A token counter is any JS function `(text) => number` (a real tokenizer such as
//! `js-tiktoken`'s `encode(text).length`); the core only sees a `TokenCounter`.

use serde::Deserialize;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

use super::check::JsInput;
use super::{bytes_of, error_with_code, from_js, into_error, options_of, string_of, to_js};
use toolslice::truncate::{
    self, AuditRecord, Budget, Fetch, FileOptions, JsonOptions, Options, Pattern, TerminalOptions,
    TokenCounter, ToolKind,
};

#[wasm_bindgen(typescript_custom_section)]
const TS_TRUNCATE: &'static str = r#"
/** Which cut to apply; `auto` follows seed 001's decision tree. */
export type TruncatePattern =
  | "auto" | "head" | "tail" | "head_tail" | "terminal" | "search" | "file" | "json" | "csv" | "yaml";

/** The cut applied: `none` when the text fit and came back unchanged. */
export type AppliedPattern =
  | "none" | "head" | "tail" | "head_tail" | "terminal" | "search" | "file" | "json" | "csv" | "yaml";

/** `chars` counts code points (Python's len); `utf16` counts JavaScript string length. */
export type BudgetUnit = "bytes" | "chars" | "utf16" | "tokens";

/** Exactly one unit, e.g. `{ bytes: 8192 }` or `{ tokens: 500 }`. */
export type Budget =
  | { bytes: number } | { chars: number } | { utf16: number } | { tokens: number };

export type ToolKind = "terminal" | "search" | "file" | "json" | "other";

/** Counts the tokens of a text (for token budgets); must return a non-negative integer. */
export type TokenCounter = (text: string) => number;

export interface TruncateOptions {
  /** Default `auto`. */
  pattern?: TruncatePattern;
  /** Hard limit on everything the model sees, markers and header included. Default 8 KiB. */
  budget?: Budget;
  /** Tool name: recorded in the audit, shown in the header, used by `auto`. */
  tool?: string;
  /** Tool kind for `auto` (else derived from `tool`, else sniffed from the content). */
  kind?: ToolKind;
  /** Carried beside the text (and in the header), never inside the cut. */
  exitCode?: number;
  timedOut?: boolean;
  /** The command that ran, for the header. */
  command?: string;
  /**
   * Prepend `Tool:`, `Command:`, `Exit code:`, `Output:`; the budget covers it. Default: the
   * rule `pack` uses, on when `exitCode`, `timedOut` or `command` is given or `kind` is
   * `"terminal"`.
   */
  header?: boolean;
  /** Markers then say `get_more(id="<id>", offset=<offset + position>)`. */
  fetch?: { id: string; offset?: number; tool?: string };
  /** `head_tail`: share of the budget for the head (default 0.6). */
  headShare?: number;
  terminal?: {
    /** Default 0.25. */
    headShare?: number;
    /** Default 0.45; the tail also gets what the error lines leave. */
    tailShare?: number;
    /** Context lines around each error line of the dropped middle (default 1 and 0). */
    contextBefore?: number;
    contextAfter?: number;
    /** Collapse identical-line runs and `\r` progress redraws (default true). */
    collapse?: boolean;
  };
  file?: {
    /** The requested lines, 1-based and inclusive. */
    range?: [number, number];
    headShare?: number;
    tailShare?: number;
  };
  json?: {
    /** Outcome keys never dropped (default: status, ok, success, error, errors, code, exit_code, id, receipt, receipt_id, timed_out, truncated, next_offset). */
    keepKeys?: string[];
    /** Also keep every key ending in `_id` or `Id` (default true). */
    keepIdKeys?: boolean;
    /** Name of the omitted-count records (default `_omitted`). */
    omittedKey?: string;
  };
}

/** A stretch of the output; `source` (kept stretches only) is where it came from. */
export interface Segment {
  kind: "header" | "kept" | "marker" | "annotation";
  /** UTF-16 offsets into `text`. */
  output: [number, number];
  /** UTF-16 offsets into the input. */
  source?: [number, number];
}

export interface ErrorLines {
  total: number;
  kept: number;
  dropped: number;
}

/** Seed 001's audit record, with its field names. */
export interface AuditRecord {
  tool: string;
  full_bytes: number;
  truncated_bytes: number;
  truncation_ratio: number;
  was_truncated: boolean;
  pattern: string;
  exit_code_preserved: boolean;
  errors_in_dropped_region: boolean;
}

/** A truncated (or unchanged) tool result with exact accounting. */
export interface Truncation {
  /** What the model sees. */
  text: string;
  truncated: boolean;
  pattern: AppliedPattern;
  unit: BudgetUnit;
  limit: number;
  /** Size of `text` in `unit`. */
  size: number;
  /** Size in `unit` of what the model would have seen uncut. */
  full_size: number;
  full_bytes: number;
  output_bytes: number;
  omitted_bytes: number;
  total_lines: number;
  omitted_lines: number;
  partial_lines: number;
  /** Input ranges copied into `text`, in UTF-16 offsets. */
  kept: Array<[number, number]>;
  segments: Segment[];
  /** Always "utf16" from JavaScript. */
  offsets: "utf8" | "utf16";
  marker: string | null;
  /** Byte offset of the first omitted byte in the stored result. */
  next_offset: number | null;
  error_lines: ErrorLines;
  exit_code: number | null;
  timed_out: boolean;
  audit: AuditRecord;
}

/** Seed 001 §9 over many records. */
export interface AuditSummary {
  calls: number;
  truncated: number;
  share_truncated: number;
  lost_error_line: number;
  share_lost_error_line: number | null;
  terminal_calls: number;
  exit_code_preserved: number;
  share_exit_code_preserved: number | null;
  mean_retention: number | null;
  warnings: string[];
}
"#;

#[wasm_bindgen]
extern "C" {
    #[wasm_bindgen(typescript_type = "TruncateOptions")]
    pub type JsTruncateOptions;
    #[wasm_bindgen(typescript_type = "TokenCounter")]
    pub type JsTokenCounter;
    #[wasm_bindgen(typescript_type = "Truncation")]
    pub type JsTruncation;
    #[wasm_bindgen(typescript_type = "AuditRecord[]")]
    pub type JsAuditRecords;
    #[wasm_bindgen(typescript_type = "AuditSummary")]
    pub type JsAuditSummary;
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase", default, deny_unknown_fields)]
struct JsOptions {
    pattern: Option<Pattern>,
    budget: Option<Budget>,
    tool: Option<String>,
    kind: Option<ToolKind>,
    exit_code: Option<i64>,
    timed_out: Option<bool>,
    command: Option<String>,
    header: Option<bool>,
    fetch: Option<JsFetch>,
    head_share: Option<f64>,
    terminal: Option<JsTerminal>,
    file: Option<JsFile>,
    json: Option<JsJson>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct JsFetch {
    id: String,
    #[serde(default)]
    offset: u64,
    tool: Option<String>,
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase", default, deny_unknown_fields)]
struct JsTerminal {
    head_share: Option<f64>,
    tail_share: Option<f64>,
    context_before: Option<usize>,
    context_after: Option<usize>,
    collapse: Option<bool>,
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase", default, deny_unknown_fields)]
struct JsFile {
    range: Option<[usize; 2]>,
    head_share: Option<f64>,
    tail_share: Option<f64>,
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase", default, deny_unknown_fields)]
struct JsJson {
    keep_keys: Option<Vec<String>>,
    keep_id_keys: Option<bool>,
    omitted_key: Option<String>,
}

impl JsOptions {
    fn into_core(self) -> Options {
        let d = Options::default();
        let t = self.terminal.unwrap_or_default();
        let td = TerminalOptions::default();
        let f = self.file.unwrap_or_default();
        let fd = FileOptions::default();
        let j = self.json.unwrap_or_default();
        let jd = JsonOptions::default();
        let header = self.header.unwrap_or_else(|| {
            truncate::header_by_default(
                self.kind,
                self.exit_code,
                self.timed_out.unwrap_or(false),
                self.command.as_deref(),
            )
        });
        Options {
            pattern: self.pattern.unwrap_or(d.pattern),
            budget: self.budget.unwrap_or(d.budget),
            tool: self.tool,
            kind: self.kind,
            exit_code: self.exit_code,
            timed_out: self.timed_out.unwrap_or(false),
            command: self.command,
            header,
            fetch: self.fetch.map(|f| Fetch {
                id: f.id,
                offset: f.offset,
                tool: f.tool.unwrap_or_else(|| Fetch::default().tool),
            }),
            head_share: self.head_share.unwrap_or(d.head_share),
            terminal: TerminalOptions {
                head_share: t.head_share.unwrap_or(td.head_share),
                tail_share: t.tail_share.unwrap_or(td.tail_share),
                context_before: t.context_before.unwrap_or(td.context_before),
                context_after: t.context_after.unwrap_or(td.context_after),
                collapse: t.collapse.unwrap_or(td.collapse),
            },
            file: FileOptions {
                range: f.range,
                head_share: f.head_share.unwrap_or(fd.head_share),
                tail_share: f.tail_share.unwrap_or(fd.tail_share),
            },
            json: JsonOptions {
                keep_keys: j.keep_keys.unwrap_or(jd.keep_keys),
                keep_id_keys: j.keep_id_keys.unwrap_or(jd.keep_id_keys),
                omitted_key: j.omitted_key.unwrap_or(jd.omitted_key),
            },
            outcome: None,
        }
    }
}

/// A JS function as the core's token counter. A throw or a non-integer result becomes the
/// core's `token_counter_failed` error, with the reason.
struct JsCounter<'a>(&'a js_sys::Function);

impl TokenCounter for JsCounter<'_> {
    fn count(&self, text: &str) -> Result<usize, String> {
        let value = self
            .0
            .call1(&JsValue::NULL, &JsValue::from_str(text))
            .map_err(|e| message_of(&e))?;
        let n = value
            .as_f64()
            .ok_or_else(|| "the token counter must return a number".to_string())?;
        if n.is_finite() && n >= 0.0 && n.fract() == 0.0 && n <= 9_007_199_254_740_991.0 {
            Ok(n as usize)
        } else {
            Err(format!(
                "the token counter returned {n}, not a non-negative integer"
            ))
        }
    }
}

fn message_of(thrown: &JsValue) -> String {
    if let Some(e) = thrown.dyn_ref::<js_sys::Error>() {
        return String::from(e.message());
    }
    thrown
        .as_string()
        .unwrap_or_else(|| "the token counter threw".to_string())
}

/// The options through the binding's strict decoder: a misspelt option (`budgte`) is an
/// `invalid_options` error naming it and the accepted keys, never ignored.
fn options(value: Option<JsTruncateOptions>) -> Result<Options, JsValue> {
    Ok(options_of::<JsOptions>(value, "truncate options")?.into_core())
}

/// Cuts a tool result to its budget. `input` is a string or UTF-8 bytes (invalid sequences
/// become U+FFFD, and counts refer to the decoded text). `countTokens` counts tokens for a
/// token budget; without it the built-in estimate is used.
#[wasm_bindgen(js_name = truncate)]
pub fn truncate_js(
    input: &JsInput,
    #[wasm_bindgen(js_name = options)] options_: Option<JsTruncateOptions>,
    #[wasm_bindgen(js_name = countTokens)] count_tokens: Option<JsTokenCounter>,
) -> Result<JsTruncation, JsValue> {
    // A JS string's length in UTF-16 units, when the input is one.
    let mut utf16_len = None;
    let text = match input.dyn_ref::<js_sys::JsString>() {
        Some(s) => {
            utf16_len = Some(s.length() as usize);
            string_of(s)
        }
        None => {
            let bytes = bytes_of(input, "input")?;
            String::from_utf8(bytes)
                .unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
        }
    };
    let opts = options(options_)?;
    let result = match count_tokens.filter(|f| !f.is_undefined() && !f.is_null()) {
        Some(f) => {
            let f = f.dyn_into::<js_sys::Function>().map_err(|_| {
                error_with_code("countTokens must be a function", "invalid_argument")
            })?;
            truncate::truncate_with(&text, &opts, &JsCounter(&f))
        }
        None => truncate::truncate(&text, &opts),
    }
    .map_err(into_error)?;
    let result = match utf16_len {
        Some(units) => result.into_utf16_offsets_of(&text, units),
        None => result.into_utf16_offsets(&text),
    };
    Ok(to_js(&result)?.unchecked_into())
}

#[wasm_bindgen(typescript_custom_section)]
const TS_RUN_TERMINAL: &'static str = r#"
/** What a runner captured of one command. */
export interface CommandRun {
  command?: string;
  stdout?: string;
  stderr?: string;
  /** Absent or null when no exit code was captured. */
  exitCode?: number | null;
  timedOut?: boolean;
  /** The timeout that fired, in seconds (shown in the header). */
  timeoutSecs?: number;
}

/** A finished command as the model should read it (seed 001 §5). */
export interface TerminalResult {
  /**
   * Header (tool, command, exit code, success, timeout, and a re-verify instruction when no
   * success signal was captured), then stdout and stderr under their labels, cut by the
   * terminal pattern to the budget (header included).
   */
  output: string;
  exit_code: number | null;
  /** exit code 0 and not timed out; null when no exit code was captured. */
  success: boolean | null;
  timed_out: boolean;
  /** No success signal: the output tells the model to re-verify. */
  reverify: boolean;
  truncation: Truncation;
}
"#;

#[wasm_bindgen]
extern "C" {
    #[wasm_bindgen(typescript_type = "CommandRun")]
    pub type JsCommandRun;
    #[wasm_bindgen(typescript_type = "TerminalResult")]
    pub type JsTerminalResult;
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", default, deny_unknown_fields)]
#[derive(Default)]
struct JsRun {
    command: Option<String>,
    stdout: String,
    stderr: String,
    exit_code: Option<i64>,
    timed_out: bool,
    timeout_secs: Option<u64>,
}

/// The seed's `run_terminal` result from what a runner captured: labelled streams, exit code
/// and success beside the text, timeout reported, re-verify when no success signal exists.
/// `options` are `truncate`'s (budget, tool, terminal settings); the pattern is `terminal`.
#[wasm_bindgen(js_name = runTerminal)]
pub fn run_terminal_js(
    run: JsCommandRun,
    #[wasm_bindgen(js_name = options)] options_: Option<JsTruncateOptions>,
    #[wasm_bindgen(js_name = countTokens)] count_tokens: Option<JsTokenCounter>,
) -> Result<JsTerminalResult, JsValue> {
    let r: JsRun = from_js(run.into(), "command run")?;
    let run = truncate::CommandRun {
        command: r.command,
        stdout: r.stdout,
        stderr: r.stderr,
        exit_code: r.exit_code,
        timed_out: r.timed_out,
        timeout_secs: r.timeout_secs,
    };
    let opts = options(options_)?;
    let result = match count_tokens.filter(|f| !f.is_undefined() && !f.is_null()) {
        Some(f) => {
            let f = f.dyn_into::<js_sys::Function>().map_err(|_| {
                error_with_code("countTokens must be a function", "invalid_argument")
            })?;
            truncate::run_terminal(&run, &opts, &JsCounter(&f))
        }
        None => truncate::run_terminal(&run, &opts, &truncate::EstimateTokens),
    }
    .map_err(into_error)?;
    let text = truncate::label_streams(&run.stdout, &run.stderr);
    let result = truncate::TerminalResult {
        truncation: result.truncation.into_utf16_offsets(&text),
        ..result
    };
    Ok(to_js(&result)?.unchecked_into())
}

/// Seed 001 §9's aggregate over audit records (toolslice's or the seed's own).
#[wasm_bindgen(js_name = auditSummary)]
pub fn audit_summary_js(records: &JsAuditRecords) -> Result<JsAuditSummary, JsValue> {
    let records: Vec<AuditRecord> = from_js(records.into(), "audit records")?;
    Ok(to_js(&truncate::aggregate(&records))?.unchecked_into())
}

/// The built-in token estimate (an estimate, not a tokenizer).
#[wasm_bindgen(js_name = estimateTokens)]
pub fn estimate_tokens_js(text: &str) -> f64 {
    truncate::estimate_tokens(text) as f64
}

/// Whether a line reports an error, by the terminal pattern's matcher.
#[wasm_bindgen(js_name = isErrorLine)]
pub fn is_error_line_js(line: &str) -> bool {
    truncate::is_error_line(line)
}
