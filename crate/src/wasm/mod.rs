//! The JavaScript binding: the only module that knows about wasm-bindgen, js-sys and
//! serde-wasm-bindgen. It converts types and errors and nothing else; every decision lives
//! in the pure core so the CLI, the page, Node, Deno and workerd all run the same code.
//!
//! Conventions for every submodule:
//! - JS names are camelCase (`#[wasm_bindgen(js_name = ...)]`); JSON records keep the seeds'
//!   snake_case field names.
//! - Every exported function has a typed TypeScript signature: parameters and results that
//!   are plain JS objects use an extern type declared with `typescript_type`, whose interface
//!   is written in a `typescript_custom_section` next to it. No bare `any` reaches users.
//! - Errors are thrown as `Error` objects with a stable `code` property (see [`into_error`]).

// With neither API feature (a build nobody ships) the shared helpers below go unused.
#![cfg_attr(not(feature = "check"), allow(dead_code, unused_imports))]

use wasm_bindgen::prelude::*;

use crate::error::Coded;

// `check` is the small module's API (see the features in Cargo.toml); `full` adds the rest.
#[cfg(feature = "full")]
pub mod canonical;
#[cfg(feature = "check")]
pub mod check;
#[cfg(feature = "check")]
pub mod formats;
#[cfg(feature = "full")]
pub mod gate;
#[cfg(feature = "full")]
pub mod hash;
#[cfg(feature = "full")]
pub mod hop;
#[cfg(feature = "full")]
pub mod pack;
#[cfg(feature = "full")]
pub mod redact;
#[cfg(feature = "full")]
pub mod truncate;

/// Runs once when the module is instantiated: route Rust panics (which should never happen;
/// every input error is a value) to `console.error` with a readable message.
#[wasm_bindgen(start)]
pub fn start() {
    console_error_panic_hook::set_once();
}

/// Turns any coded core error into a JS `Error` with `code` set.
pub(crate) fn into_error<E: Coded>(err: E) -> JsValue {
    error_with_code(&err.to_string(), err.code())
}

/// A JS `Error` with the given message and `code` property.
pub(crate) fn error_with_code(message: &str, code: &str) -> JsValue {
    let error = js_sys::Error::new(message);
    // Setting a property on a fresh Error object cannot fail.
    let _ = js_sys::Reflect::set(&error, &JsValue::from_str("code"), &JsValue::from_str(code));
    error.into()
}

/// The serializer every binding uses to hand a Rust value to JS: maps become plain objects,
/// 64-bit integers become numbers (all our counts are far below 2^53).
pub(crate) fn to_js<T: serde::Serialize + ?Sized>(value: &T) -> Result<JsValue, JsValue> {
    let serializer = serde_wasm_bindgen::Serializer::json_compatible();
    value
        .serialize(&serializer)
        .map_err(|e| error_with_code(&e.to_string(), "serialize"))
}

/// Reads a JS value into a Rust value, naming what was expected when it does not fit.
pub(crate) fn from_js<T: serde::de::DeserializeOwned>(
    value: JsValue,
    what: &str,
) -> Result<T, JsValue> {
    serde_wasm_bindgen::from_value(value)
        .map_err(|e| error_with_code(&format!("invalid {what}: {e}"), "invalid_argument"))
}

/// Input that may be a string or bytes (`Uint8Array`, `ArrayBuffer`): copied once into Rust.
pub(crate) fn bytes_of(value: &JsValue, what: &str) -> Result<Vec<u8>, JsValue> {
    if let Some(s) = value.as_string() {
        return Ok(s.into_bytes());
    }
    if value.is_instance_of::<js_sys::Uint8Array>() {
        return Ok(js_sys::Uint8Array::unchecked_from_js_ref(value).to_vec());
    }
    if value.is_instance_of::<js_sys::ArrayBuffer>() {
        return Ok(js_sys::Uint8Array::new(value).to_vec());
    }
    Err(error_with_code(
        &format!("{what} must be a string, a Uint8Array or an ArrayBuffer"),
        "invalid_argument",
    ))
}
