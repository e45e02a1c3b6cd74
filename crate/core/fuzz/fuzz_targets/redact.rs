//! Redaction on arbitrary bytes: no panic, idempotent, and the stream at any chunking writes
//! exactly what whole-text redaction writes.
#![no_main]

use libfuzzer_sys::fuzz_target;
use toolslice::redact::{RedactStream, Redactor};

fuzz_target!(|data: &[u8]| {
    let r = Redactor::default();
    let text = String::from_utf8_lossy(data);
    let once = r.text(&text);
    assert_eq!(r.text(&once.text).text, once.text);
    let chunk = 1 + data.first().copied().unwrap_or(0) as usize;
    let mut s = RedactStream::new(r.clone());
    let mut out = Vec::new();
    for c in text.as_bytes().chunks(chunk) {
        s.push(c, &mut out);
    }
    s.finish(&mut out);
    assert_eq!(out, once.text.as_bytes());
});
