//! Property tests of redaction over generated texts: no panic on any bytes, planted
//! secrets never survive, redaction is idempotent, and the bounded-memory stream writes
//! exactly what whole-text redaction writes, at any chunking.

mod common;

use common::{cases, Rng};
use serde_json::Value;
use toolslice::redact::{RedactStream, Redactor};

fn positives() -> Vec<(String, Vec<String>)> {
    let path = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/redact/positives.jsonl");
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|v| v.get("policy").is_none())
        .map(|v| {
            let secrets = v["secrets"]
                .as_array()
                .unwrap()
                .iter()
                .map(|s| s.as_str().unwrap().to_string())
                .collect();
            (v["text"].as_str().unwrap().to_string(), secrets)
        })
        .collect()
}

const NOISE: [&str; 16] = [
    "ok ", "error: ", "\n", "\\n", "\\\"", "%3D", "%2F", "=", ": ", "\"", "{\"a\": ", "}", "é",
    "token", "sk-", "4111 ",
];

fn text(rng: &mut Rng, pos: &[(String, Vec<String>)], planted: &mut Vec<String>) -> String {
    let mut t = String::new();
    for _ in 0..rng.below(40) {
        if rng.chance(1, 6) {
            let (sample, secrets) = rng.pick(pos);
            t.push('\n');
            t.push_str(sample);
            t.push('\n');
            planted.extend(secrets.iter().cloned());
        } else {
            let piece: &&str = rng.pick(&NOISE[..]);
            t.push_str(piece);
        }
    }
    t
}

#[test]
fn planted_secrets_never_survive_and_redaction_is_idempotent() {
    let pos = positives();
    let r = Redactor::default();
    let mut rng = Rng::new(7);
    for case in 0..cases(400) {
        let mut planted = Vec::new();
        let t = text(&mut rng, &pos, &mut planted);
        let once = r.text(&t);
        for s in &planted {
            assert!(
                !once.text.contains(s.as_str()),
                "case {case}: {s} in {}",
                once.text
            );
        }
        let twice = r.text(&once.text);
        assert_eq!(twice.text, once.text, "case {case}");
        assert!(
            twice.receipts.is_empty(),
            "case {case}: {:?}",
            twice.receipts
        );
    }
}

#[test]
fn no_panic_on_arbitrary_bytes() {
    let r = Redactor::default();
    let mut rng = Rng::new(11);
    for _ in 0..cases(300) {
        let len = rng.below(400) as usize;
        let bytes: Vec<u8> = (0..len)
            .map(|_| *rng.pick(b"sk-ghp_AKIAxoxeyJ.:=@/\\\"%3D0123456789 \n\xc3\xa9aZ"))
            .collect();
        let t = String::from_utf8_lossy(&bytes);
        let _ = r.text(&t);
        let mut s = RedactStream::new(r.clone());
        let mut out = Vec::new();
        s.push(&bytes, &mut out);
        s.finish(&mut out);
    }
}

#[test]
fn stream_equals_whole_text() {
    let pos = positives();
    let r = Redactor::default();
    let mut rng = Rng::new(23);
    for case in 0..cases(60) {
        let mut planted = Vec::new();
        let mut t = String::new();
        // Long enough to cross several stream windows.
        while t.len() < 200_000 {
            t.push_str(&text(&mut rng, &pos, &mut planted));
            t.push_str(&"build step ok\n".repeat(rng.below(2000) as usize));
        }
        let whole = r.text(&t);
        let mut s = RedactStream::new(r.clone());
        let mut out = Vec::new();
        let bytes = t.as_bytes();
        let mut i = 0;
        while i < bytes.len() {
            let n = (1 + rng.below(30_000) as usize).min(bytes.len() - i);
            s.push(&bytes[i..i + n], &mut out);
            i += n;
        }
        let receipts = s.finish(&mut out);
        assert!(out == whole.text.as_bytes(), "case {case}: stream differs");
        assert_eq!(receipts, whole.receipts, "case {case}");
    }
}
