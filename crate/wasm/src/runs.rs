//! JS binding of run comparison: `diffRuns` and `readRecords`, the file reading and
//! kind detection that `toolslice diff` and the page's diff view share.

use serde::Deserialize;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

use super::check::JsInput;
use super::gate::JsStore;
use super::{bytes_of, error_with_code, into_error, options_of, to_js};
use toolslice::gate::BodyStore;
use toolslice::runs;

#[wasm_bindgen(typescript_custom_section)]
const TS_RUNS: &'static str = r#"
export interface DiffRunsOptions {
  /** How errors name each side (a file name); default "left run" and "right run". */
  leftName?: string;
  rightName?: string;
  /**
   * Body stores for the export gate that runs before a manifest diff (seed 002: diff only
   * after both gates are empty). `store` serves both sides. Without one, bodies are not
   * checked and the runs are not gated.
   */
  store?: DigestLookup;
  leftStore?: DigestLookup;
  rightStore?: DigestLookup;
  /** Do not fail (`fails`) a manifest diff of runs that are not gated; `gate` still says so. */
  allowUngated?: boolean;
}

/** Generation fingerprints of two runs, paired by id, else turn, else position. */
export interface GenerationDiff {
  same: number;
  changed: {
    key: string;
    left_sha256: string | null; right_sha256: string | null;
    left_len: number | null; right_len: number | null;
  }[];
  only_left: string[];
  only_right: string[];
}

/** The export gate of both runs of a manifest diff. */
export interface RunGate {
  left: GateProblem[];
  right: GateProblem[];
  left_bodies_checked: boolean;
  right_bodies_checked: boolean;
  /** Both gates empty and both sides' bodies checked. */
  gated: boolean;
  allowed_ungated: boolean;
}

/** Two runs compared as what they hold: clip-aware span files (`slices`), hop rows
 * (`hops`) or span records (`manifest`, the seeds' multiset diff). */
export type RunDiff = (
  | { kind: "slices"; diff: SpanRunDiff }
  | { kind: "hops"; diff: RunComparison }
  | { kind: "manifest"; diff: ManifestDiff }
  | { kind: "generations"; diff: GenerationDiff }
) & {
  /** Records read from each side. */
  left_records: number;
  right_records: number;
  /** A difference a gate should fail on (policy drift alone is none). */
  differs: boolean;
  /** Manifest diffs only: what the export gate says of each run. */
  gate?: RunGate;
  /** The comparison fails: the runs differ, or a manifest diff ran on runs not gated. */
  fails: boolean;
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
    allow_ungated: bool,
}

/// `options[key]`, as a body store, when present.
fn store_of(options: &JsValue, key: &str) -> Result<Option<JsStore>, JsValue> {
    if !options.is_object() {
        return Ok(None);
    }
    let v = js_sys::Reflect::get(options, &JsValue::from_str(key))?;
    if v.is_undefined() || v.is_null() {
        return Ok(None);
    }
    JsStore::new(&v).map(Some)
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
    let raw: JsValue = options.map(JsValue::from).unwrap_or(JsValue::UNDEFINED);
    let names: Names = options_of(Some(stores_removed(&raw)?), "diffRuns options")?;
    let left_name = names.left_name.as_deref().unwrap_or("left run");
    let right_name = names.right_name.as_deref().unwrap_or("right run");
    let l = text_of(left, left_name)?;
    let r = text_of(right, right_name)?;
    let both = store_of(&raw, "store")?;
    let left_store = store_of(&raw, "leftStore")?;
    let right_store = store_of(&raw, "rightStore")?;
    fn pick<'a>(own: &'a Option<JsStore>, both: &'a Option<JsStore>) -> Option<&'a dyn BodyStore> {
        own.as_ref().or(both.as_ref()).map(|s| s as &dyn BodyStore)
    }
    let opts = runs::DiffOptions {
        left_name: Some(left_name),
        right_name: Some(right_name),
        left_store: pick(&left_store, &both),
        right_store: pick(&right_store, &both),
        allow_ungated: names.allow_ungated,
    };
    let diff = runs::diff_runs_with(&l, &r, &opts).map_err(into_error)?;
    Ok(to_js(&diff)?.unchecked_into())
}

/// A copy of the options without the store objects (serde reads the plain fields).
fn stores_removed(options: &JsValue) -> Result<JsValue, JsValue> {
    if !options.is_object() {
        return Ok(options.clone());
    }
    let copy = js_sys::Object::assign(&js_sys::Object::new(), options.unchecked_ref());
    for key in ["store", "leftStore", "rightStore"] {
        js_sys::Reflect::delete_property(&copy, &JsValue::from_str(key))?;
    }
    Ok(copy.into())
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
