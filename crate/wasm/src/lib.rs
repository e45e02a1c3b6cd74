//! The JavaScript binding of the `toolslice` core: the only crate that knows about
//! wasm-bindgen, js-sys and serde-wasm-bindgen. It converts types and errors and nothing else; every decision lives
//! in the pure core so the CLI, the page, Node, Deno and workerd all run the same code.
//!
//! Conventions for every submodule:
//! - JS names are camelCase (`#[wasm_bindgen(js_name = ...)]`); JSON records keep the seeds'
//!   snake_case field names.
//! - Every exported function has a typed TypeScript signature: parameters and results that
//!   are plain JS objects use an extern type declared with `typescript_type`, whose interface
//!   is written in a `typescript_custom_section` next to it. No bare `any` reaches users.
//! - Errors are thrown as `Error` objects with a stable `code` property (see [`into_error`]).

// The binding exists only in wasm; a native workspace build compiles an empty crate.
#![cfg(target_arch = "wasm32")]
// With neither API feature (a build nobody ships) the shared helpers below go unused.
#![cfg_attr(not(feature = "check"), allow(dead_code, unused_imports))]

use wasm_bindgen::prelude::*;

/// Talc instead of Rust's default wasm allocator (dlmalloc): the checker keeps a row of a
/// dozen strings for every flagged span, and dlmalloc's malloc/free were a tenth of its
/// profile in wasm. The allocator is the binary's choice, so it lives here, not in the core.
#[cfg(not(target_feature = "atomics"))]
#[global_allocator]
static ALLOCATOR: talc::wasm::WasmDynamicTalc = talc::wasm::new_wasm_dynamic_allocator();

use toolslice::error::Coded;

// `check` is the small module's API (see the features in Cargo.toml); `full` adds the rest.
#[cfg(feature = "full")]
pub mod canonical;
#[cfg(feature = "check")]
pub mod check;
#[cfg(feature = "full")]
pub mod emit;
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
pub mod runs;
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

/// An optional options object: absent, `undefined` or `null` means the defaults.
pub(crate) fn options_of<T: serde::de::DeserializeOwned + Default>(
    value: Option<impl Into<JsValue>>,
    what: &str,
) -> Result<T, JsValue> {
    match value.map(Into::into) {
        Some(v) if !v.is_undefined() && !v.is_null() => from_js(v, what),
        _ => Ok(T::default()),
    }
}

/// Input that may be a string or bytes (`Uint8Array`, `ArrayBuffer`): copied once into Rust.
pub(crate) fn bytes_of(value: &JsValue, what: &str) -> Result<Vec<u8>, JsValue> {
    if let Some(s) = value.dyn_ref::<js_sys::JsString>() {
        return Ok(string_of(s).into_bytes());
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

#[wasm_bindgen]
extern "C" {
    /// The engine's `TextEncoder` (Node, Deno, workerd and browsers all have one; the
    /// wasm-bindgen glue relies on it too).
    type TextEncoder;
    #[wasm_bindgen(constructor)]
    fn new() -> TextEncoder;
    #[wasm_bindgen(method, js_name = encodeInto)]
    fn encode_into(
        this: &TextEncoder,
        source: &js_sys::JsString,
        destination: &js_sys::Uint8Array,
    ) -> EncodeIntoResult;

    /// `{ read, written }`: UTF-16 units consumed, bytes written.
    type EncodeIntoResult;
    #[wasm_bindgen(method, getter)]
    fn read(this: &EncodeIntoResult) -> f64;
    #[wasm_bindgen(method, getter)]
    fn written(this: &EncodeIntoResult) -> f64;
}

thread_local! {
    static ENCODER: TextEncoder = TextEncoder::new();
}

/// A JS string as a Rust `String`: the engine encodes it straight into a Rust-owned buffer
/// with `TextEncoder.encodeInto`.
///
/// wasm-bindgen's own string passing (`&str`, `String`, `JsValue::as_string`) copies the
/// ASCII prefix with a JavaScript `charCodeAt` loop, one character per iteration, which for
/// a multi-megabyte tool result costs more than the truncation itself; `encodeInto` is a
/// native bulk copy. The buffer starts at one byte per UTF-16 unit (exact for ASCII); when
/// the encoder stops for lack of room, the rest gets three bytes per unit (the most any unit
/// needs) and a second call. Lone surrogates become U+FFFD, as with wasm-bindgen.
pub(crate) fn string_of(s: &js_sys::JsString) -> String {
    let len = s.length() as usize;
    let mut buf: Vec<u8> = Vec::with_capacity(len);
    let mut read = 0usize;
    let mut rest = s.clone();
    // Two passes always suffice (see above); the bound only rules out a loop on an engine bug.
    for _ in 0..4 {
        let spare = buf.capacity() - buf.len();
        // SAFETY: the view covers the vector's spare capacity, which it owns, and lives only
        // for this call, during which nothing else allocates (allocation could move memory).
        let view =
            unsafe { js_sys::Uint8Array::view_mut_raw(buf.as_mut_ptr().add(buf.len()), spare) };
        let done = ENCODER.with(|e| e.encode_into(&rest, &view));
        let written = (done.written() as usize).min(spare);
        // SAFETY: the encoder initialised the first `written` bytes of the spare capacity.
        unsafe { buf.set_len(buf.len() + written) };
        read += done.read() as usize;
        if read >= len {
            break;
        }
        rest = s.slice(read as u32, len as u32);
        buf.reserve((len - read) * 3);
    }
    if read < len {
        return s.as_string().unwrap_or_default();
    }
    // encodeInto writes UTF-8 and stops only between code points, so this is valid; checked
    // anyway rather than trusted. One byte per unit means ASCII, which a word-at-a-time OR
    // confirms faster than the general validator.
    if buf.len() == len && is_ascii(&buf) {
        // SAFETY: all bytes are below 0x80, and ASCII is valid UTF-8.
        return unsafe { String::from_utf8_unchecked(buf) };
    }
    String::from_utf8(buf).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
}

/// Whether every byte is below 0x80 (the OR of all words, which the compiler vectorizes).
fn is_ascii(b: &[u8]) -> bool {
    let words = b.chunks_exact(8);
    let tail = words.remainder().iter().fold(0u8, |a, &x| a | x);
    let any = words.fold(0u64, |a, w| a | u64::from_le_bytes(w.try_into().unwrap()));
    (any & 0x8080_8080_8080_8080) == 0 && tail < 0x80
}
