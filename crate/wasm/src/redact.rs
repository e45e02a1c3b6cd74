//! JS binding of redaction: `redact` (text) and `redactJson` (a JSON value), with the
//! policy of `RedactPolicy` and receipts that never hold a character of a secret.

use serde_json::Value;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

use super::canonical::json_text_of;
use super::pack::{JsJsonValue, JsPolicy, JsRedactPolicy, JsRedacted, JsRedactedJson};
use super::{error_with_code, into_error, options_of, to_js};
use toolslice::redact::{Policy, Redactor};

fn policy(value: Option<JsRedactPolicy>) -> Result<Redactor, JsValue> {
    let policy: Policy = options_of::<JsPolicy>(value, "redaction policy")?.into_core();
    Redactor::new(&policy).map_err(into_error)
}

/// Replaces every secret in `text` with a typed placeholder (`[REDACTED:github_token]`);
/// returns the text and one receipt per replacement.
#[wasm_bindgen]
pub fn redact(
    text: &js_sys::JsString,
    policy_: Option<JsRedactPolicy>,
) -> Result<JsRedacted, JsValue> {
    let redactor = policy(policy_)?;
    // Checked before the copy: every UTF-16 unit is at least one UTF-8 byte.
    if text.length() as usize > toolslice::pack::MAX_INPUT_BYTES {
        return Err(into_error(toolslice::pack::PackError::TooLarge {
            bytes: u64::from(text.length()),
            max: toolslice::pack::MAX_INPUT_BYTES as u64,
        }));
    }
    let out = redactor.text(&super::string_of(text));
    Ok(to_js(&out)?.unchecked_into())
}

/// Redacts every string of a JSON value (and secret scalars under secret keys); the value
/// stays valid JSON. Receipts carry JSON paths (`$.headers.Authorization`).
#[wasm_bindgen(js_name = redactJson)]
pub fn redact_json(
    value: &JsJsonValue,
    policy_: Option<JsRedactPolicy>,
) -> Result<JsRedactedJson, JsValue> {
    let redactor = policy(policy_)?;
    let text = json_text_of(value.as_ref())?;
    let mut v: Value = serde_json::from_str(&text)
        .map_err(|e| error_with_code(&format!("not a JSON value: {e}"), "invalid_json"))?;
    let receipts = redactor.json(&mut v);
    let out = serde_json::json!({ "value": v, "receipts": receipts });
    Ok(super::to_js_json(&out)?.unchecked_into())
}
