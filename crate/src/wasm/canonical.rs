//! JS binding of canonical JSON: `canonicalize`, `canonicalizeWithReport`,
//! `canonicalizeValue`, and the JS-value reader the other bindings share.

use serde_json::{Map, Number, Value};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

use super::{bytes_of, error_with_code, into_error, to_js};
use crate::canonical::{
    canonicalize_into, canonicalize_value, push_key_segment, Form, MAX_VALUE_DEPTH,
};

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

/// The canonical text of a JavaScript value. Read like `JSON.stringify` reads it (`toJSON`
/// is honoured, `undefined` properties are left out, `undefined` array items become
/// `null`), except that nothing is silently changed: `NaN`, `Infinity`, strings with lone
/// surrogates, functions and symbols are errors, not `null`s.
#[wasm_bindgen(js_name = canonicalizeValue)]
pub fn canonicalize_value_js(
    value: &JsJsonValue,
    form: Option<JsCanonicalForm>,
) -> Result<String, JsValue> {
    let form = form_of(form.as_ref().map(|f| f.as_ref()))?;
    let value = json_of(value)?;
    canonicalize_value(&value, form).map_err(into_error)
}

/// Reads a JS value as JSON (see `canonicalizeValue` for the rules).
pub(crate) fn json_of(value: &JsValue) -> Result<Value, JsValue> {
    let mut path = String::from("$");
    if value.is_undefined() {
        return Err(error_with_code(
            "undefined is not a JSON value at $",
            "invalid_json_value",
        ));
    }
    read(value, &mut path, 0)
}

fn invalid(what: &str, path: &str, code: &str) -> JsValue {
    error_with_code(&format!("{what} at {path} is not a JSON value"), code)
}

fn read(value: &JsValue, path: &mut String, depth: usize) -> Result<Value, JsValue> {
    if depth > MAX_VALUE_DEPTH {
        return Err(error_with_code(
            &format!("value nested too deeply at {path} (more than {MAX_VALUE_DEPTH} levels, or a cycle)"),
            "too_deep",
        ));
    }
    if value.is_null() || value.is_undefined() {
        return Ok(Value::Null);
    }
    if let Some(b) = value.as_bool() {
        return Ok(Value::Bool(b));
    }
    if let Some(x) = value.as_f64() {
        if !x.is_finite() {
            return Err(error_with_code(
                &format!("number {x} at {path} is not finite; JSON has no NaN or Infinity"),
                "non_finite_number",
            ));
        }
        if js_sys::Number::is_safe_integer(value) {
            return Ok(Value::Number(Number::from(x as i64)));
        }
        return Ok(Number::from_f64(x).map_or(Value::Null, Value::Number));
    }
    if let Some(s) = value.dyn_ref::<js_sys::JsString>() {
        if !s.is_valid_utf16() {
            return Err(error_with_code(
                &format!("string at {path} has a lone surrogate, which has no UTF-8 form"),
                "lone_surrogate",
            ));
        }
        return Ok(Value::String(s.as_string().unwrap_or_default()));
    }
    if value.is_bigint() {
        let big: &js_sys::BigInt = value.unchecked_ref();
        let text = big.to_string(10).map(String::from).unwrap_or_default();
        return text
            .parse::<i64>()
            .map(Number::from)
            .or_else(|_| text.parse::<u64>().map(Number::from))
            .map(Value::Number)
            .map_err(|_| {
                error_with_code(
                    &format!("BigInt {text} at {path} is outside the 64-bit range; pass the JSON text instead"),
                    "invalid_json_value",
                )
            });
    }
    if value.is_function() {
        return Err(invalid("a function", path, "invalid_json_value"));
    }
    if value.is_symbol() {
        return Err(invalid("a symbol", path, "invalid_json_value"));
    }
    // `toJSON` (Date and friends) comes first, as in JSON.stringify.
    let to_json =
        js_sys::Reflect::get(value, &JsValue::from_str("toJSON")).unwrap_or(JsValue::UNDEFINED);
    if let Some(f) = to_json.dyn_ref::<js_sys::Function>() {
        let replaced = f.call0(value)?;
        return read(&replaced, path, depth + 1);
    }
    if js_sys::Array::is_array(value) {
        let array: &js_sys::Array = value.unchecked_ref();
        let mut items = Vec::with_capacity(array.length() as usize);
        for (i, item) in array.iter().enumerate() {
            let len = path.len();
            path.push_str(&format!("[{i}]"));
            items.push(read(&item, path, depth + 1)?);
            path.truncate(len);
        }
        return Ok(Value::Array(items));
    }
    if value.is_instance_of::<js_sys::Map>() || value.is_instance_of::<js_sys::Set>() {
        return Err(invalid("a Map or Set", path, "invalid_json_value"));
    }
    let object: &js_sys::Object = value.unchecked_ref();
    let mut map = Map::new();
    for key in js_sys::Object::keys(object).iter() {
        let Some(name) = key.as_string() else {
            continue;
        };
        let item = js_sys::Reflect::get(value, &key)?;
        // JSON.stringify leaves out undefined, function and symbol properties.
        if item.is_undefined() || item.is_function() || item.is_symbol() {
            continue;
        }
        let len = path.len();
        push_key_segment(path, &name);
        let read_item = read(&item, path, depth + 1)?;
        path.truncate(len);
        map.insert(name, read_item);
    }
    Ok(Value::Object(map))
}
