//! The canonicaliser on arbitrary bytes: it never panics, its output is a fixed point, the
//! python form reads back to an equal value (by serde_json where serde_json can hold it),
//! and every refusal has a code and a message.
#![no_main]

use libfuzzer_sys::fuzz_target;
use toolslice::canonical::{canonicalize, Form};
use toolslice::error::Coded;

fuzz_target!(|data: &[u8]| {
    for form in [Form::Python, Form::Jcs] {
        match canonicalize(data, form) {
            Ok(text) => {
                // Idempotent: canonical text is already canonical.
                let again = canonicalize(text.as_bytes(), form).expect("canonical output re-parses");
                assert_eq!(again, text);
                // JCS output is plain JSON; so is python output without NaN/Infinity.
                if form == Form::Jcs || !(text.contains("NaN") || text.contains("Infinity")) {
                    if let (Ok(a), Ok(b)) = (
                        serde_json::from_slice::<serde_json::Value>(data),
                        serde_json::from_str::<serde_json::Value>(&text),
                    ) {
                        if !has_float(&a) {
                            assert_eq!(a, b);
                        }
                    }
                }
            }
            Err(e) => {
                assert!(!e.code().is_empty());
                assert!(!e.to_string().is_empty());
            }
        }
    }
});

/// serde_json's default float reader may round long mantissas differently from Rust's
/// correctly rounded parse; compare exactly only values without floats.
fn has_float(v: &serde_json::Value) -> bool {
    match v {
        serde_json::Value::Number(n) => n.is_f64(),
        serde_json::Value::Array(items) => items.iter().any(has_float),
        serde_json::Value::Object(map) => map.values().any(has_float),
        _ => false,
    }
}
