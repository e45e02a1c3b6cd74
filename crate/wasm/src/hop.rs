//! JS binding of the three-boundary classifier: `classifyHop`, `HopStream`, `compareRuns`,
//! `recomputeHop`.

use serde::Deserialize;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

use super::check::JsInput;
use super::{bytes_of, error_with_code, from_js, options_of, to_js};
use toolslice::hop::{self, HopRow, RedactionReceipt};

#[wasm_bindgen(typescript_custom_section)]
const TS_HOP: &'static str = r#"
/** The hop to inspect, from seed 003's table. */
export type MutationHop =
  | "adapter_shrink" | "adapter_grow" | "prompt_builder_wrap" | "prompt_builder_drop"
  | "no_payload_mutation" | "hash_slice_mismatch" | "needs_manual_review";

/**
 * How the adapter changed the process output: `format_only` when the bytes differ but the
 * canonical JSON is the same (key order, whitespace), `content` when the JSON differs,
 * `unknown` when a side is not JSON.
 */
export type AdapterChange = "none" | "format_only" | "content" | "unknown";

/** What was replaced, by which rule, how long the original was; never the original. */
export interface RedactionReceipt {
  field_path: string;
  rule_id: string;
  original_len: number;
  replacement: string;
}

/** One tool call's row: the seed's fields first, then the canonical hashes and receipts. */
export interface HopRow {
  run_id?: string;
  tool_call_id?: string;
  tool_name?: string;
  process_sha256: string;
  adapter_sha256: string;
  model_sha256: string;
  process_len: number;
  adapter_len: number;
  model_len: number;
  mutation_hop: MutationHop;
  /** Canonical (python form) hash of the process output when it is JSON. */
  process_canonical_sha256: string | null;
  adapter_canonical_sha256: string | null;
  adapter_change: AdapterChange;
  redactions?: RedactionReceipt[];
}

export interface HopOptions {
  runId?: string;
  toolCallId?: string;
  toolName?: string;
  /** Redaction receipts to store beside the row. */
  redactions?: RedactionReceipt[];
}

export interface HopStreamOptions {
  /**
   * Process output up to this many bytes is kept for its canonical hash (default 16 MiB;
   * 0 never keeps any). Longer output is hashed raw only.
   */
  canonicalLimit?: number;
}

export type RowVerdict = "same" | "policy_drift" | "changed" | "only_left" | "only_right";

export interface PolicyDrift {
  field_path: string;
  left_rule_id: string | null;
  right_rule_id: string | null;
}

export interface RowComparison {
  tool_call_id: string | null;
  tool_name: string | null;
  left_index: number | null;
  right_index: number | null;
  verdict: RowVerdict;
  changed_boundaries: Array<"process" | "adapter" | "model">;
  left_hop: MutationHop | null;
  right_hop: MutationHop | null;
  drift: PolicyDrift[];
}

/** `filterHopRows`: the rows kept, and a note per line that is not a hop row or lies. */
export interface HopFilter {
  /** The kept rows, one compact JSON line each. */
  rows: string;
  kept: number;
  /** Lines that are not hop rows (not JSON, or no string `mutation_hop`). */
  invalid: number;
  /** `NAME:LINE: message` for every invalid line and every row whose label its hashes contradict. */
  notes: string[];
}

export interface RunComparison {
  rows: RowComparison[];
  same: number;
  policy_drift: number;
  changed: number;
  only_left: number;
  only_right: number;
}
"#;

#[wasm_bindgen]
extern "C" {
    #[wasm_bindgen(typescript_type = "HopRow")]
    pub type JsHopRow;
    #[wasm_bindgen(typescript_type = "HopRow[]")]
    pub type JsHopRows;
    #[wasm_bindgen(typescript_type = "HopOptions")]
    pub type JsHopOptions;
    #[wasm_bindgen(typescript_type = "HopStreamOptions")]
    pub type JsHopStreamOptions;
    #[wasm_bindgen(typescript_type = "RunComparison")]
    pub type JsRunComparison;
    #[wasm_bindgen(typescript_type = "MutationHop")]
    pub type JsMutationHop;
    #[wasm_bindgen(typescript_type = "HopFilter")]
    pub type JsHopFilter;
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase", default, deny_unknown_fields)]
struct HopOptions {
    run_id: Option<String>,
    tool_call_id: Option<String>,
    tool_name: Option<String>,
    redactions: Vec<RedactionReceipt>,
}

fn finish_row(row: HopRow, options: Option<JsHopOptions>) -> Result<JsHopRow, JsValue> {
    let opts: HopOptions = options_of(options, "hop options")?;
    let row = row
        .with_ids(opts.run_id, opts.tool_call_id, opts.tool_name)
        .with_receipts(opts.redactions);
    Ok(to_js(&row)?.unchecked_into())
}

/// Seed 003's `classify(process, adapter, model_part)` over three byte strings (strings are
/// hashed as UTF-8), plus canonical hashes and the adapter change.
#[wasm_bindgen(js_name = classifyHop)]
pub fn classify_hop_js(
    process: &JsInput,
    adapter: &JsInput,
    model: &JsInput,
    options: Option<JsHopOptions>,
) -> Result<JsHopRow, JsValue> {
    let p = bytes_of(process, "process")?;
    let a = bytes_of(adapter, "adapter")?;
    let m = bytes_of(model, "model")?;
    finish_row(hop::classify_hop(&p, &a, &m), options)
}

/// The label the seed's table gives a stored row's digests and lengths (to check a row
/// written elsewhere, or by hand).
#[wasm_bindgen(js_name = recomputeHop)]
pub fn recompute_hop(row: &JsHopRow) -> Result<JsMutationHop, JsValue> {
    let row: HopRow = from_js(row.into(), "hop row")?;
    Ok(JsValue::from_str(row.recomputed_hop().as_str()).unchecked_into())
}

/// Pairs two runs' rows (by `tool_call_id`, else by position) and judges each pair: a changed
/// redaction `rule_id` is `policy_drift`, not a regression.
#[wasm_bindgen(js_name = compareRuns)]
pub fn compare_runs_js(left: &JsHopRows, right: &JsHopRows) -> Result<JsRunComparison, JsValue> {
    let left: Vec<HopRow> = from_js(left.into(), "left rows")?;
    let right: Vec<HopRow> = from_js(right.into(), "right rows")?;
    Ok(to_js(&hop::compare_runs(&left, &right))?.unchecked_into())
}

/// The rows of a hop log (text or UTF-8 bytes, one row per line) that are not
/// `no_payload_mutation`, as `toolslice hop --mutations-only` prints them; `name` names the
/// input in the notes.
#[wasm_bindgen(js_name = filterHopRows)]
pub fn filter_hop_rows(log: &JsInput, name: Option<String>) -> Result<JsHopFilter, JsValue> {
    let bytes = bytes_of(log, "log")?;
    let text = String::from_utf8_lossy(&bytes);
    let filtered = hop::mutations_only(&text, name.as_deref().unwrap_or("input"));
    Ok(to_js(&filtered)?.unchecked_into())
}

/// Streaming process output: `push` chunks as they arrive, then `close` with the adapter
/// output and the model slice. Nothing can be classified before the close.
#[wasm_bindgen]
pub struct HopStream {
    inner: Option<hop::HopStream>,
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase", default, deny_unknown_fields)]
struct StreamOptions {
    canonical_limit: Option<f64>,
}

#[wasm_bindgen]
impl HopStream {
    #[wasm_bindgen(constructor)]
    pub fn new(options: Option<JsHopStreamOptions>) -> Result<HopStream, JsValue> {
        let opts: StreamOptions = options_of(options, "stream options")?;
        let inner = match opts.canonical_limit {
            None => hop::HopStream::new(),
            Some(n) if n >= 0.0 && n.is_finite() => {
                hop::HopStream::with_canonical_limit(n as usize)
            }
            Some(_) => {
                return Err(error_with_code(
                    "canonicalLimit must be a non-negative number",
                    "invalid_argument",
                ))
            }
        };
        Ok(HopStream { inner: Some(inner) })
    }

    /// Feeds the next chunk of process output.
    pub fn push(&mut self, chunk: &JsInput) -> Result<(), JsValue> {
        let inner = self.inner.as_mut().ok_or_else(closed)?;
        inner.push(&bytes_of(chunk, "chunk")?);
        Ok(())
    }

    /// Process bytes seen so far.
    #[wasm_bindgen(getter)]
    pub fn length(&self) -> f64 {
        self.inner.as_ref().map_or(0.0, |s| s.len() as f64)
    }

    /// Closes the stream and classifies it. The stream cannot be used afterwards.
    pub fn close(
        &mut self,
        adapter: &JsInput,
        model: &JsInput,
        options: Option<JsHopOptions>,
    ) -> Result<JsHopRow, JsValue> {
        let a = bytes_of(adapter, "adapter")?;
        let m = bytes_of(model, "model")?;
        let inner = self.inner.take().ok_or_else(closed)?;
        finish_row(inner.close(&a, &m), options)
    }
}

fn closed() -> JsValue {
    error_with_code("this HopStream is already closed", "stream_closed")
}
