//! JS binding of run comparison: `diffRuns` and `readRecords`, the file reading and
//! kind detection that `toolslice diff` and the page's diff view share.

use serde::Deserialize;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

use super::check::JsInput;
use super::{bytes_of, error_with_code, into_error, options_of, to_js};
use toolslice::runs;

#[wasm_bindgen(typescript_custom_section)]
const TS_RUNS: &'static str = r#"
export interface DiffRunsOptions {
  /** How errors name each side (a file name); default "left run" and "right run". */
  leftName?: string;
  rightName?: string;
}

/** Two runs compared as what they hold: clip-aware span files (`slices`), hop rows
 * (`hops`) or span records (`manifest`, the seeds' multiset diff). */
export type RunDiff = (
  | { kind: "slices"; diff: SpanRunDiff }
  | { kind: "hops"; diff: RunComparison }
  | { kind: "manifest"; diff: ManifestDiff }
) & {
  /** Records read from each side. */
  left_records: number;
  right_records: number;
  /** A difference a gate should fail on (policy drift alone is none). */
  differs: boolean;
};
"#;

#[wasm_bindgen]
extern "C" {
    #[wasm_bindgen(typescript_type = "DiffRunsOptions")]
    pub type JsDiffRunsOptions;
    #[wasm_bindgen(typescript_type = "RunDiff")]
    pub type JsRunDiff;
    #[wasm_bindgen(typescript_type = "JsonValue[]")]
    pub type JsRecords;
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase", default, deny_unknown_fields)]
struct Names {
    left_name: Option<String>,
    right_name: Option<String>,
}

fn text_of(input: &JsInput, side: &str) -> Result<String, JsValue> {
    String::from_utf8(bytes_of(input, side)?).map_err(|e| {
        error_with_code(
            &format!(
                "{side}: not JSON: not valid UTF-8 (bad byte at offset {})",
                e.utf8_error().valid_up_to()
            ),
            "invalid_json",
        )
    })
}

/// Compares two runs (file texts or bytes), choosing the comparison from what they hold.
/// Errors (`invalid_json`, `mixed_runs`, `invalid_hop_row`, `invalid_span`) name the side
/// and, for JSON, the line.
#[wasm_bindgen(js_name = diffRuns)]
pub fn diff_runs_js(
    left: &JsInput,
    right: &JsInput,
    options: Option<JsDiffRunsOptions>,
) -> Result<JsRunDiff, JsValue> {
    let names: Names = options_of(options, "diffRuns options")?;
    let left_name = names.left_name.as_deref().unwrap_or("left run");
    let right_name = names.right_name.as_deref().unwrap_or("right run");
    let l = text_of(left, left_name)?;
    let r = text_of(right, right_name)?;
    let diff = runs::diff_runs(&l, &r, left_name, right_name).map_err(into_error)?;
    Ok(to_js(&diff)?.unchecked_into())
}

/// The JSON records of a file: a JSON array, one object, or one value per line (blank
/// lines skipped). An `invalid_json` error names `name` and the 1-based line.
#[wasm_bindgen(js_name = readRecords)]
pub fn read_records_js(input: &JsInput, name: Option<String>) -> Result<JsRecords, JsValue> {
    let name = name.as_deref().unwrap_or("input");
    let text = text_of(input, name)?;
    let records = runs::read_records(&text, name).map_err(into_error)?;
    Ok(super::to_js_json(&records)?.unchecked_into())
}
