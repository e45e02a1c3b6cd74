//! JS binding of SHA-256: one-shot (`sha256`, `sha256Hex`, `sha256Short`), batched
//! (`sha256Batch`, `sha256HexBatch`, `sha256Many`) and incremental (`Sha256`).
//!
//! The one-shot calls have a fast path in the JS glue (`scripts/hash-glue.mjs`): a string or
//! `Uint8Array` that fits the module's hash area is written there by JS and hashed by one
//! plain wasm call, [`toolslice_sha256_area_digest`], which leaves the digest in the same
//! area for JS to read. At 32 bytes a call through wasm-bindgen spent more time on its three
//! imports (type check, length, copy), the digest's heap `Vec` and its free than on hashing,
//! and was 0.85x hash-wasm's speed. Everything else (`ArrayBuffer`, longer inputs, wrong
//! arguments and their errors) goes through the exported functions below.

use std::cell::UnsafeCell;

use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

use super::check::JsInput;
use super::{error_with_code, into_error, string_of};
use toolslice::hash::{self, Digest, DIGEST_LEN};

#[wasm_bindgen(typescript_custom_section)]
const TS_HASH: &'static str = r#"
/** Inputs for `sha256Many`: strings are hashed as UTF-8. */
export type HashInputs = Array<string | Uint8Array | ArrayBuffer>;
/** Bytes end to end: a `Uint8Array`, an `ArrayBuffer`, or an array of integers 0-255. */
export type BatchData = Uint8Array | ArrayBuffer | number[];
/** Lengths of the inputs: a `Uint32Array`, or an array of integers 0 to 2**32-1. */
export type BatchLengths = Uint32Array | number[];
"#;

#[wasm_bindgen]
extern "C" {
    #[wasm_bindgen(typescript_type = "HashInputs")]
    pub type JsHashInputs;
    #[wasm_bindgen(typescript_type = "BatchData")]
    pub type JsBatchData;
    #[wasm_bindgen(typescript_type = "BatchLengths")]
    pub type JsBatchLengths;
}

/// Reads a batch's bytes. A plain array is checked element by element: wasm-bindgen's own
/// conversion would wrap `256` to `0` and `-1` to `255` without a word.
fn batch_data(value: &JsValue) -> Result<Vec<u8>, JsValue> {
    if let Some(view) = value.dyn_ref::<js_sys::Uint8Array>() {
        return Ok(view.to_vec());
    }
    if value.is_instance_of::<js_sys::ArrayBuffer>() {
        return Ok(js_sys::Uint8Array::new(value).to_vec());
    }
    let array = value.dyn_ref::<js_sys::Array>().ok_or_else(|| {
        error_with_code(
            "data must be a Uint8Array, an ArrayBuffer or an array of bytes",
            "invalid_argument",
        )
    })?;
    array
        .iter()
        .enumerate()
        .map(|(i, v)| match v.as_f64() {
            Some(n) if n.fract() == 0.0 && (0.0..=255.0).contains(&n) => Ok(n as u8),
            _ => Err(error_with_code(
                &format!("data[{i}] must be an integer from 0 to 255"),
                "invalid_argument",
            )),
        })
        .collect()
}

/// Reads a batch's lengths; a plain array is checked element by element (`2**32 + 3` is not
/// `3`, `-1` is not `4294967295`).
fn batch_lengths(value: &JsValue) -> Result<Vec<u32>, JsValue> {
    if let Some(view) = value.dyn_ref::<js_sys::Uint32Array>() {
        return Ok(view.to_vec());
    }
    let array = value.dyn_ref::<js_sys::Array>().ok_or_else(|| {
        error_with_code(
            "lengths must be a Uint32Array or an array of integers",
            "invalid_argument",
        )
    })?;
    array
        .iter()
        .enumerate()
        .map(|(i, v)| match v.as_f64() {
            Some(n) if n.fract() == 0.0 && (0.0..=u32::MAX as f64).contains(&n) => Ok(n as u32),
            _ => Err(error_with_code(
                &format!("lengths[{i}] must be an integer from 0 to 4294967295"),
                "invalid_argument",
            )),
        })
        .collect()
}

/// Bytes copied from a JS typed array per step: large inputs are hashed through one small
/// buffer instead of being copied whole into wasm memory (which would grow it for good).
const STEP: u32 = 1 << 16;

/// Inputs up to this many bytes are copied into a buffer on the stack: the per-call cost of
/// hashing a short id or token is the crossings into JS, not the hashing, and a heap buffer
/// added an allocation and a free to each call.
const SMALL: usize = 256;

/// Bytes to hash: a typed array as given (no handle is cloned), or a view over an
/// ArrayBuffer.
enum Bytes<'a> {
    View(&'a js_sys::Uint8Array),
    Buffer(js_sys::Uint8Array),
}

impl Bytes<'_> {
    fn view(&self) -> &js_sys::Uint8Array {
        match self {
            Bytes::View(v) => v,
            Bytes::Buffer(v) => v,
        }
    }
}

/// The bytes of `input` when it holds bytes; typed arrays are checked first, since they are
/// what hot loops pass (each check is a call into JS).
fn bytes_of_input(input: &JsValue) -> Option<Bytes<'_>> {
    if let Some(view) = input.dyn_ref::<js_sys::Uint8Array>() {
        Some(Bytes::View(view))
    } else if input.is_instance_of::<js_sys::ArrayBuffer>() {
        Some(Bytes::Buffer(js_sys::Uint8Array::new(input)))
    } else {
        None
    }
}

fn not_hashable(what: &str) -> JsValue {
    error_with_code(
        &format!("{what} must be a string, a Uint8Array or an ArrayBuffer"),
        "invalid_argument",
    )
}

/// Feeds a string (as UTF-8) or bytes to `hasher`.
fn feed(
    hasher: &mut hash::Sha256,
    input: &JsValue,
    scratch: &mut Vec<u8>,
    what: &str,
) -> Result<(), JsValue> {
    let Some(bytes) = bytes_of_input(input) else {
        let s = input
            .dyn_ref::<js_sys::JsString>()
            .ok_or_else(|| not_hashable(what))?;
        feed_string(hasher, s);
        return Ok(());
    };
    let view = bytes.view();
    let len = view.length();
    if len as usize <= SMALL {
        let mut buf = [0u8; SMALL];
        let part = &mut buf[..len as usize];
        view.copy_to(part);
        hasher.update(part);
        return Ok(());
    }
    if len <= STEP {
        scratch.resize(len as usize, 0);
        view.copy_to(scratch);
        hasher.update(scratch);
        return Ok(());
    }
    scratch.resize(STEP as usize, 0);
    let mut at = 0;
    while at < len {
        let end = (at + STEP).min(len);
        let part = &mut scratch[..(end - at) as usize];
        view.subarray(at, end).copy_to(part);
        hasher.update(part);
        at = end;
    }
    Ok(())
}

/// UTF-16 units of a string encoded per step: `string_of` takes at most four bytes of buffer
/// per unit (one in its first pass, three in its second), so a step costs at most 64 KiB of
/// module memory however long the string is.
const STRING_STEP: u32 = 1 << 14;

/// Feeds a string as UTF-8, a step at a time, through `string_of` (the engine's
/// `TextEncoder.encodeInto`; wasm-bindgen's own conversion copies ASCII with a JS
/// `charCodeAt` loop, which made hashing a 1 MiB string 0.77x hash-wasm's speed). A step never
/// ends between the two halves of a surrogate pair: each half alone would encode as U+FFFD.
fn feed_string(hasher: &mut hash::Sha256, s: &js_sys::JsString) {
    let len = s.length();
    if len <= STRING_STEP {
        hasher.update(string_of(s).as_bytes());
        return;
    }
    let mut start = 0;
    while start < len {
        let mut end = len.min(start + STRING_STEP);
        if end < len && (0xD800..0xDC00).contains(&(s.char_code_at(end - 1) as u32)) {
            end -= 1;
        }
        hasher.update(string_of(&s.slice(start, end)).as_bytes());
        start = end;
    }
}

/// Bytes in the hash area the glue's fast path writes into (see the module docs). Inputs up
/// to this size are hashed in place; the area is zero-initialised memory of the module, so it
/// costs no bytes of the `.wasm` file. scripts/hash-glue.mjs reads this line for its size.
const AREA_LEN: usize = 64 * 1024;

/// The hash area: input bytes in, then the digest (raw or hex) out at its start.
struct Area(UnsafeCell<[u8; AREA_LEN]>);

// SAFETY: this module runs on one thread (wasm32 without the atomics feature, the only build),
// and the area is touched only by the glue's fast path between its JS write and its JS read,
// during which no other code of the module runs.
unsafe impl Sync for Area {}

static AREA: Area = Area(UnsafeCell::new([0; AREA_LEN]));

/// Where the hash area starts in the module's memory. Not a wasm-bindgen export: the glue
/// calls it through the instance's exports.
#[no_mangle]
pub extern "C" fn toolslice_sha256_area() -> *mut u8 {
    AREA.0.get().cast()
}

/// Hashes the first `len` bytes of the hash area (at most its size) and writes the digest at
/// the area's start: the 32 raw bytes when `form` is 0, else the 64 lowercase hex characters.
/// Returns how many bytes it wrote.
#[no_mangle]
pub extern "C" fn toolslice_sha256_area_digest(len: usize, form: u32) -> usize {
    // SAFETY: see `Area`; no reference to the area outlives this call.
    let area = unsafe { &mut *AREA.0.get() };
    let digest = hash::sha256(&area[..len.min(AREA_LEN)]);
    if form == 0 {
        area[..DIGEST_LEN].copy_from_slice(digest.as_bytes());
        return DIGEST_LEN;
    }
    let mut hex = [0u8; 2 * DIGEST_LEN];
    digest.write_hex(&mut hex);
    area[..hex.len()].copy_from_slice(&hex);
    hex.len()
}

fn digest_of(data: &JsInput) -> Result<Digest, JsValue> {
    let mut hasher = hash::Sha256::new();
    feed(&mut hasher, data, &mut Vec::new(), "data")?;
    Ok(hasher.finish())
}

/// The SHA-256 of a string (as UTF-8) or bytes: 32 raw bytes.
#[wasm_bindgen(js_name = sha256)]
pub fn sha256_js(data: &JsInput) -> Result<Vec<u8>, JsValue> {
    Ok(digest_of(data)?.0.to_vec())
}

/// The lowercase hex SHA-256 (64 characters) of a string (as UTF-8) or bytes.
#[wasm_bindgen(js_name = sha256Hex)]
pub fn sha256_hex_js(data: &JsInput) -> Result<String, JsValue> {
    Ok(digest_of(data)?.hex())
}

/// The first 16 hex characters of the SHA-256, the short form seed 000 writes.
#[wasm_bindgen(js_name = sha256Short)]
pub fn sha256_short_js(data: &JsInput) -> Result<String, JsValue> {
    Ok(digest_of(data)?.short_hex())
}

/// Hashes many inputs in one call: `data` holds them end to end, `lengths[i]` is the length of
/// the i-th. Returns the raw digests end to end (32 bytes each).
#[wasm_bindgen(js_name = sha256Batch)]
pub fn sha256_batch_js(data: &JsBatchData, lengths: &JsBatchLengths) -> Result<Vec<u8>, JsValue> {
    let (data, lengths) = (batch_data(data)?, batch_lengths(lengths)?);
    let (data, lengths) = (&data[..], &lengths[..]);
    let mut out = vec![0u8; DIGEST_LEN * lengths.len()];
    hash::sha256_batch(data, lengths, &mut out).map_err(into_error)?;
    Ok(out)
}

/// Like `sha256Batch`, returning the hex digests end to end in one string (64 characters
/// each: the i-th is `out.slice(64 * i, 64 * i + 64)`).
#[wasm_bindgen(js_name = sha256HexBatch)]
pub fn sha256_hex_batch_js(
    data: &JsBatchData,
    lengths: &JsBatchLengths,
) -> Result<String, JsValue> {
    let (data, lengths) = (batch_data(data)?, batch_lengths(lengths)?);
    let (data, lengths) = (&data[..], &lengths[..]);
    let mut out = vec![0u8; 2 * DIGEST_LEN * lengths.len()];
    hash::sha256_batch_hex(data, lengths, &mut out).map_err(into_error)?;
    String::from_utf8(out).map_err(|_| error_with_code("hex output is ASCII", "internal"))
}

/// The hex SHA-256 of each input (strings as UTF-8). Convenient; for the most inputs per
/// second pack them into one buffer and call `sha256HexBatch`.
#[wasm_bindgen(js_name = sha256Many)]
pub fn sha256_many_js(inputs: &JsHashInputs) -> Result<Vec<String>, JsValue> {
    let array = inputs
        .dyn_ref::<js_sys::Array>()
        .ok_or_else(|| error_with_code("inputs must be an array", "invalid_argument"))?;
    let mut scratch = Vec::new();
    let mut out = Vec::with_capacity(array.length() as usize);
    for (i, item) in array.iter().enumerate() {
        let mut hasher = hash::Sha256::new();
        feed(&mut hasher, &item, &mut scratch, &format!("inputs[{i}]"))?;
        out.push(hasher.finish().hex());
    }
    Ok(out)
}

/// An incremental SHA-256: `update` with chunks (strings as UTF-8, or bytes), then `digest`
/// or `digestHex` once.
#[wasm_bindgen(js_name = Sha256)]
pub struct Sha256Js {
    inner: Option<hash::Sha256>,
    scratch: Vec<u8>,
}

impl Default for Sha256Js {
    fn default() -> Self {
        Sha256Js::new()
    }
}

#[wasm_bindgen(js_class = Sha256)]
impl Sha256Js {
    #[wasm_bindgen(constructor)]
    pub fn new() -> Sha256Js {
        Sha256Js {
            inner: Some(hash::Sha256::new()),
            scratch: Vec::new(),
        }
    }

    /// Feeds the next chunk.
    pub fn update(&mut self, data: &JsInput) -> Result<(), JsValue> {
        let inner = self.inner.as_mut().ok_or_else(finished)?;
        feed(inner, data, &mut self.scratch, "data")
    }

    /// Bytes fed so far.
    #[wasm_bindgen(getter)]
    pub fn length(&self) -> f64 {
        self.inner.as_ref().map_or(0.0, |h| h.len() as f64)
    }

    /// The 32-byte digest; the hasher cannot be used afterwards.
    pub fn digest(&mut self) -> Result<Vec<u8>, JsValue> {
        Ok(self.finish()?.0.to_vec())
    }

    /// The hex digest; the hasher cannot be used afterwards.
    #[wasm_bindgen(js_name = digestHex)]
    pub fn digest_hex(&mut self) -> Result<String, JsValue> {
        Ok(self.finish()?.hex())
    }
}

impl Sha256Js {
    fn finish(&mut self) -> Result<Digest, JsValue> {
        self.scratch = Vec::new();
        Ok(self.inner.take().ok_or_else(finished)?.finish())
    }
}

fn finished() -> JsValue {
    error_with_code(
        "this Sha256 has already produced its digest",
        "hasher_finished",
    )
}
