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
/// profile in wasm. Small blocks are served by size class in front of it (see `alloc`).
/// The allocator is the binary's choice, so it lives here, not in the core.
#[cfg(not(target_feature = "atomics"))]
#[global_allocator]
static ALLOCATOR: alloc::Classes<talc::wasm::WasmDynamicTalc> =
    alloc::Classes::new(talc::wasm::new_wasm_dynamic_allocator());

#[cfg(not(target_feature = "atomics"))]
mod alloc;
mod seed;

/// Orders the allocator's free blocks by address (see `alloc::Classes::tidy`): called when
/// a check has freed what it held.
pub(crate) fn tidy_free_blocks() {
    #[cfg(not(target_feature = "atomics"))]
    ALLOCATOR.tidy();
}

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
pub mod mcp;
#[cfg(feature = "full")]
pub mod otlp;
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
    seed::unpredictable_hash_keys();
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

/// [`to_js`] for results that carry a caller's own JSON (a pack's `outcome`, records read
/// from a file, a redacted value, read-back issues), which can hold an integer beyond 2^53
/// (an `id` of 9007199254740993, now that the core reads raw output). The direct serializer
/// refuses those; the value then goes through JSON text and `JSON.parse`, which gives such a
/// number the nearest double, as any JS reader of that JSON would (the exact digits stay in
/// the text fields). Kept apart from `to_js` because the fallback instantiates serde_json's
/// writer per type: about 70 KB of wasm if every result had it.
#[cfg_attr(not(feature = "full"), allow(dead_code))]
pub(crate) fn to_js_json<T: serde::Serialize + ?Sized>(value: &T) -> Result<JsValue, JsValue> {
    let serializer = serde_wasm_bindgen::Serializer::json_compatible();
    value.serialize(&serializer).or_else(|e| {
        let text = serde_json::to_string(value)
            .map_err(|_| error_with_code(&e.to_string(), "serialize"))?;
        js_sys::JSON::parse(&text).map_err(|_| error_with_code(&e.to_string(), "serialize"))
    })
}

/// The binding's two codes for an argument that does not fit (one vocabulary for every
/// exported function): an options object (options, policies, tool specs) is
/// `invalid_options`; any other argument (an input record, a list, a value of the wrong
/// type) is `invalid_argument`. The core's own errors keep their codes.
pub(crate) const INVALID_OPTIONS: &str = "invalid_options";
pub(crate) const INVALID_ARGUMENT: &str = "invalid_argument";

/// Reads an input record (or list of them) into a Rust value through the strict decoder
/// ([`decode`]); a mismatch is `invalid_argument`, naming `what` and the field.
#[cfg_attr(not(feature = "full"), allow(dead_code))]
pub(crate) fn from_js<T: serde::de::DeserializeOwned>(
    value: JsValue,
    what: &str,
) -> Result<T, JsValue> {
    decode(&value).map_err(|e| error_with_code(&format!("invalid {what}: {e}"), INVALID_ARGUMENT))
}

/// Reads a required options object (a tool spec, say) through the strict decoder; a
/// mismatch, or a value that is not an object, is `invalid_options`.
pub(crate) fn options_from<T: serde::de::DeserializeOwned>(
    value: &JsValue,
    what: &str,
) -> Result<T, JsValue> {
    let invalid = |e: String| error_with_code(&format!("invalid {what}: {e}"), INVALID_OPTIONS);
    if !is_plain_object(value) {
        return Err(invalid("must be an object".into()));
    }
    decode(value).map_err(invalid)
}

/// An optional options object: absent, `undefined` or `null` means the defaults.
pub(crate) fn options_of<T: serde::de::DeserializeOwned + Default>(
    value: Option<impl Into<JsValue>>,
    what: &str,
) -> Result<T, JsValue> {
    match value.map(Into::into) {
        Some(v) if !v.is_undefined() && !v.is_null() => options_from(&v, what),
        _ => Ok(T::default()),
    }
}

/// The one strict decoder every options object and input record goes through.
///
/// serde-wasm-bindgen cannot be strict: for a struct it reads the fields it knows by name
/// and never sees the others, so `#[serde(deny_unknown_fields)]` has no effect and
/// `pack(input, { limt: 100 })` would pack at the default limit. Here the value is first
/// walked whole into a `serde_json::Value` (every own key, strings copied with
/// `encodeInto`), then deserialized by serde_json, where `deny_unknown_fields` works at
/// every depth: a misspelt key is an error that names it and lists the accepted ones
/// (`unknown field `limt`, expected one of `limit`, `unit`, ...`), prefixed with the path
/// of the object that holds it (`redact: unknown field ...`).
pub(crate) fn decode<T: serde::de::DeserializeOwned>(value: &JsValue) -> Result<T, String> {
    let json = json_value_of(value, &mut String::new())?;
    serde_path_to_error::deserialize(&json).map_err(|e| {
        let message = e.inner().to_string();
        let mut segments: Vec<String> = e.path().iter().map(|s| s.to_string()).collect();
        // For an unknown key the path ends at the key itself, which the message names.
        if message.starts_with("unknown field") {
            segments.pop();
        }
        segments.retain(|s| s != "?");
        if segments.is_empty() {
            message
        } else {
            format!("{}: {message}", segments.join("."))
        }
    })
}

/// An object literal (or `Object.create(null)`), not an array, function, Map or class
/// instance with its own meaning.
fn is_plain_object(value: &JsValue) -> bool {
    if !value.is_object() || js_sys::Array::is_array(value) {
        return false;
    }
    let proto = js_sys::Object::get_prototype_of(value);
    proto.is_null() || js_sys::Object::get_prototype_of(&proto).is_null()
}

/// A JS value as JSON data, refusing what is not data rather than dropping it: a function
/// or symbol (which `JSON.stringify` would leave out, so `truncate(text, { countTokens })`
/// would lose the counter silently), a `Map`/`Set` (which it writes as `{}`), a `BigInt`, a
/// non-finite number. Keys whose value is `undefined` are left out, as an absent key.
/// `path` is the key path so far, for the message.
fn json_value_of(v: &JsValue, path: &mut String) -> Result<serde_json::Value, String> {
    use serde_json::Value;
    let at = |path: &str| {
        if path.is_empty() {
            "the value".to_string()
        } else {
            format!("`{path}`")
        }
    };
    if v.is_null() || v.is_undefined() {
        return Ok(Value::Null);
    }
    if let Some(b) = v.as_bool() {
        return Ok(Value::Bool(b));
    }
    if let Some(n) = v.as_f64() {
        // Integers stay integers (serde reads a `usize` from them); 2^53 bounds the exact ones.
        const EXACT: f64 = 9_007_199_254_740_992.0;
        return if !n.is_finite() {
            Err(format!("{} is {n}, not a finite number", at(path)))
        } else if n.fract() == 0.0 && n.abs() <= EXACT {
            Ok(if n >= 0.0 {
                Value::from(n as u64)
            } else {
                Value::from(n as i64)
            })
        } else {
            Ok(serde_json::Number::from_f64(n).map_or(Value::Null, Value::Number))
        };
    }
    if let Some(s) = v.dyn_ref::<js_sys::JsString>() {
        return Ok(Value::String(string_of(s)));
    }
    if v.is_function() {
        return Err(format!(
            "{} is a function; this object takes data only",
            at(path)
        ));
    }
    if !v.is_object() {
        return Err(format!(
            "{} is a {}, not JSON data",
            at(path),
            v.js_typeof().as_string().unwrap_or_default()
        ));
    }
    if v.is_instance_of::<js_sys::Map>() || v.is_instance_of::<js_sys::Set>() {
        return Err(format!(
            "{} is a Map or Set; give a plain object or array",
            at(path)
        ));
    }
    // Options and records are a few levels deep; a deeper value is a cycle or not ours.
    if path.matches(['.', '[']).count() >= 64 {
        return Err(format!("{} is nested too deeply (a cycle?)", at(path)));
    }
    let len = path.len();
    if js_sys::Array::is_array(v) {
        let items = js_sys::Array::unchecked_from_js_ref(v);
        let mut out = Vec::with_capacity(items.length() as usize);
        for (i, item) in items.iter().enumerate() {
            path.push_str(&format!("[{i}]"));
            out.push(json_value_of(&item, path)?);
            path.truncate(len);
        }
        return Ok(Value::Array(out));
    }
    let mut out = serde_json::Map::new();
    for key in js_sys::Object::keys(v.unchecked_ref::<js_sys::Object>()).iter() {
        let value = js_sys::Reflect::get(v, &key).unwrap_or(JsValue::UNDEFINED);
        if value.is_undefined() {
            continue;
        }
        let key = key.as_string().unwrap_or_default();
        if !path.is_empty() {
            path.push('.');
        }
        path.push_str(&key);
        let value = json_value_of(&value, path)?;
        path.truncate(len);
        out.insert(key, value);
    }
    Ok(Value::Object(out))
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
        INVALID_ARGUMENT,
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
