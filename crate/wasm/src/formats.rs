//! JS binding of the format conversion: `convertToSpans`.

use serde::Deserialize;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

use super::check::{format_option, JsInput};
use super::{bytes_of, options_of, to_js};
use toolslice::formats::convert_to_spans as core_convert;

#[wasm_bindgen(typescript_custom_section)]
const TS_FORMATS: &'static str = r#"
export interface ConvertOptions {
  /** Which reader to use; `auto` (the default) detects it. */
  format?: FormatOption;
}

/** Seed-000 span JSONL written from a trace of any supported format. */
export interface Conversion {
  /** The reader that understood the input; `unknown` when none did (see `invalid`). */
  format: Format | "unknown";
  /** Trace formats only. */
  read_as?: ReadAs;
  /**
   * One seed-000 span record per tool call, newline-terminated. Each record of a trace
   * format also has a `toolslice` object (`format`, `line`, `join`, `notes`, `warnings`,
   * `injected_tokens_estimated`) that the seed's scripts ignore.
   */
  jsonl: string;
  /** Records written. */
  records: number;
  invalid: InvalidLine[];
  /** Spans that are not tool calls (agents, model calls ...), with the reason. */
  skipped: SkippedLine[];
}
"#;

#[wasm_bindgen]
extern "C" {
    #[wasm_bindgen(typescript_type = "ConvertOptions")]
    pub type JsConvertOptions;
    #[wasm_bindgen(typescript_type = "Conversion")]
    pub type JsConversion;
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase", default, deny_unknown_fields)]
struct Options {
    format: Option<String>,
}

/// Converts a trace of any supported format to seed-000 span JSONL.
#[wasm_bindgen(js_name = convertToSpans)]
pub fn convert_to_spans(
    input: &JsInput,
    options: Option<JsConvertOptions>,
) -> Result<JsConversion, JsValue> {
    let opts: Options = options_of(options, "convert options")?;
    let format = format_option(opts.format.as_deref())?;
    let bytes = bytes_of(input, "input")?;
    Ok(to_js(&core_convert(&bytes, format))?.unchecked_into())
}
