//! JS binding of canonical JSON: `canonicalize`, `canonicalizeWithReport`,
//! `canonicalizeValue`, and the JS-value reader the other bindings share.

use std::cell::RefCell;
use std::rc::Rc;

use serde_json::Value;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

use super::{bytes_of, error_with_code, into_error, to_js};
use toolslice::canonical::{canonicalize_into, Form};

#[wasm_bindgen(typescript_custom_section)]
const TS_CANONICAL: &'static str = r#"
/** A JSON value as JavaScript holds it. */
export type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue };

/**
 * `python` (the default): byte-identical to Python's
 * `json.dumps(v, sort_keys=True, separators=(",", ":"), ensure_ascii=False)`, the seeds' form.
 * `jcs`: RFC 8785, the JSON Canonicalization Scheme.
 */
export type CanonicalForm = "python" | "jcs";

export interface CanonicalResult {
  /** The canonical text. */
  text: string;
  /**
   * Paths of keys that appeared more than once in one object and were collapsed to their last
   * value, as Python does (python form only; jcs refuses duplicates).
   */
  duplicate_keys: string[];
}
"#;

#[wasm_bindgen]
extern "C" {
    #[wasm_bindgen(typescript_type = "JsonValue")]
    pub type JsJsonValue;
    #[wasm_bindgen(typescript_type = "CanonicalForm")]
    pub type JsCanonicalForm;
    #[wasm_bindgen(typescript_type = "CanonicalResult")]
    pub type JsCanonicalResult;
}

/// Reads an optional form name (`undefined` means python).
pub(crate) fn form_of(value: Option<&JsValue>) -> Result<Form, JsValue> {
    match value {
        None => Ok(Form::Python),
        Some(v) if v.is_undefined() || v.is_null() => Ok(Form::Python),
        Some(v) => match v.as_string() {
            Some(name) => name.parse().map_err(into_error),
            None => Err(error_with_code(
                "form must be \"python\" or \"jcs\"",
                "unknown_form",
            )),
        },
    }
}

/// The canonical text of JSON text (a string, or UTF-8 bytes). Big integers, number
/// lexemes and duplicate keys survive the parse; errors carry line, column and JSON path.
#[wasm_bindgen(js_name = canonicalize)]
pub fn canonicalize_js(
    json: &super::check::JsInput,
    form: Option<JsCanonicalForm>,
) -> Result<String, JsValue> {
    let form = form_of(form.as_ref().map(|f| f.as_ref()))?;
    let bytes = bytes_of(json, "json")?;
    let mut out = String::with_capacity(bytes.len());
    canonicalize_into(&bytes, form, &mut out).map_err(into_error)?;
    Ok(out)
}

#[derive(serde::Serialize)]
struct WithReport {
    text: String,
    duplicate_keys: Vec<String>,
}

/// Like `canonicalize`, and also lists the duplicate keys the python form collapsed.
#[wasm_bindgen(js_name = canonicalizeWithReport)]
pub fn canonicalize_with_report(
    json: &super::check::JsInput,
    form: Option<JsCanonicalForm>,
) -> Result<JsCanonicalResult, JsValue> {
    let form = form_of(form.as_ref().map(|f| f.as_ref()))?;
    let bytes = bytes_of(json, "json")?;
    let mut text = String::with_capacity(bytes.len());
    let report = canonicalize_into(&bytes, form, &mut text).map_err(into_error)?;
    Ok(to_js(&WithReport {
        text,
        duplicate_keys: report.duplicate_keys,
    })?
    .unchecked_into())
}

/// The canonical text of a JavaScript value: the canonical form of what `JSON.stringify`
/// would send (`toJSON` is honoured, `undefined` properties are left out), except that
/// nothing is changed silently: `NaN` and `Infinity` (which `JSON.stringify` turns into
/// `null`), `Map` and `Set` (which it turns into `{}`), lone surrogates, `BigInt`s and cycles
/// are errors.
#[wasm_bindgen(js_name = canonicalizeValue)]
pub fn canonicalize_value_js(
    value: &JsJsonValue,
    form: Option<JsCanonicalForm>,
) -> Result<String, JsValue> {
    let form = form_of(form.as_ref().map(|f| f.as_ref()))?;
    let text = json_text_of(value)?;
    let mut out = String::with_capacity(text.len());
    canonicalize_into(text.as_bytes(), form, &mut out).map_err(into_error)?;
    Ok(out)
}

/// A JS value read as JSON (see `canonicalizeValue` for the rules), parsed by serde_json.
pub(crate) fn json_of(value: &JsValue) -> Result<Value, JsValue> {
    let text = json_text_of(value)?;
    serde_json::from_str(&text)
        .map_err(|e| error_with_code(&format!("not JSON: {e}"), "invalid_json_value"))
}

/// `JSON.stringify(value)`, refusing what it would change silently. The walk is the engine's
/// own; a replacer sees every value once and flags non-finite numbers, `Map`s and `Set`s
/// (one call per value, instead of several property reads per value from Rust).
pub(crate) fn json_text_of(value: &JsValue) -> Result<String, JsValue> {
    let problem: Rc<RefCell<Option<String>>> = Rc::new(RefCell::new(None));
    let seen = Rc::clone(&problem);
    let replacer =
        Closure::<dyn FnMut(JsValue, JsValue) -> JsValue>::new(move |key: JsValue, x: JsValue| {
            let what = if let Some(n) = x.as_f64() {
                (!n.is_finite()).then(|| format!("number {n}"))
            } else if x.is_object()
                && (x.is_instance_of::<js_sys::Map>() || x.is_instance_of::<js_sys::Set>())
            {
                Some("a Map or Set".to_string())
            } else {
                None
            };
            if let Some(what) = what {
                let mut slot = seen.borrow_mut();
                if slot.is_none() {
                    let key = key.as_string().unwrap_or_default();
                    *slot = Some(if key.is_empty() {
                        format!("{what} (at the top)")
                    } else {
                        format!("{what} under key {key:?}")
                    });
                }
            }
            x
        });
    let text = js_sys::JSON::stringify_with_replacer(value, replacer.as_ref().unchecked_ref())
        .map_err(|e| {
            error_with_code(
                &format!("not a JSON value: {}", describe(&e)),
                "invalid_json_value",
            )
        })?;
    drop(replacer);
    if let Some(what) = problem.borrow_mut().take() {
        let code = if what.starts_with("number") {
            "non_finite_number"
        } else {
            "invalid_json_value"
        };
        return Err(error_with_code(
            &format!("{what} is not JSON (JSON.stringify would write it as null or {{}})"),
            code,
        ));
    }
    text.as_string().ok_or_else(|| {
        error_with_code(
            "undefined, a function or a symbol is not a JSON value",
            "invalid_json_value",
        )
    })
}

fn describe(err: &JsValue) -> String {
    err.dyn_ref::<js_sys::Error>()
        .map(|e| String::from(e.message()))
        .or_else(|| err.as_string())
        .unwrap_or_else(|| "an exception".into())
}
