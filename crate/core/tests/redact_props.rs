//! Property tests of redaction over generated texts: no panic on any bytes, planted
//! secrets never survive, redaction is idempotent, and the bounded-memory stream writes
//! exactly what whole-text redaction writes, at any chunking.

// proptest is a native-only dev-dependency (see Cargo.toml).
#![cfg(not(target_arch = "wasm32"))]

mod common;

use std::sync::OnceLock;

use common::{chunked, proptest_config};
use proptest::prelude::*;
use proptest::sample::select;
use serde_json::Value;
use toolslice::redact::{RedactStream, Redactor};

/// The positive samples of the redaction corpus (without policy-specific ones): a text and
/// the secrets it holds. Read once.
fn positives() -> &'static [(String, Vec<String>)] {
    static POSITIVES: OnceLock<Vec<(String, Vec<String>)>> = OnceLock::new();
    POSITIVES.get_or_init(read_positives)
}

fn read_positives() -> Vec<(String, Vec<String>)> {
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

/// A piece of a generated text: a positive sample on its own lines, or noise.
#[derive(Clone, Debug)]
enum Piece {
    Sample(usize),
    Noise(&'static str),
}

/// Up to 40 pieces, one in six a positive sample.
fn pieces() -> impl Strategy<Value = Vec<Piece>> {
    prop::collection::vec(
        prop_oneof![
            1 => (0..positives().len()).prop_map(Piece::Sample),
            5 => select(&NOISE[..]).prop_map(Piece::Noise),
        ],
        0..40,
    )
}

/// The text of `pieces`; the secrets of its samples are added to `planted`.
fn text(pieces: &[Piece], planted: &mut Vec<String>) -> String {
    let mut t = String::new();
    for piece in pieces {
        match piece {
            Piece::Sample(i) => {
                let (sample, secrets) = &positives()[*i];
                t.push('\n');
                t.push_str(sample);
                t.push('\n');
                planted.extend(secrets.iter().cloned());
            }
            Piece::Noise(noise) => t.push_str(noise),
        }
    }
    t
}

proptest! {
    #![proptest_config(proptest_config(400))]
    #[test]
    fn planted_secrets_never_survive_and_redaction_is_idempotent(pieces in pieces()) {
        let r = Redactor::default();
        let mut planted = Vec::new();
        let t = text(&pieces, &mut planted);
        let once = r.text(&t);
        for s in &planted {
            prop_assert!(!once.text.contains(s.as_str()), "{} in {}", s, once.text);
        }
        let twice = r.text(&once.text);
        prop_assert_eq!(&twice.text, &once.text);
        prop_assert!(twice.receipts.is_empty(), "{:?}", twice.receipts);
    }
}

proptest! {
    #![proptest_config(proptest_config(300))]
    /// Bytes drawn from secret prefixes, separators, digits and a split-able UTF-8 é.
    #[test]
    fn no_panic_on_arbitrary_bytes(
        bytes in prop::collection::vec(
            select(&b"sk-ghp_AKIAxoxeyJ.:=@/\\\"%3D0123456789 \n\xc3\xa9aZ"[..]),
            0..400,
        )
    ) {
        let r = Redactor::default();
        let t = String::from_utf8_lossy(&bytes);
        let _ = r.text(&t);
        let mut s = RedactStream::new(r.clone());
        let mut out = Vec::new();
        s.push(&bytes, &mut out);
        s.finish(&mut out);
    }
}

/// A long text: blocks of generated pieces, each followed by up to 2000 "build step ok"
/// lines, repeated in turn until the text is 200 KB, long enough to cross several stream
/// windows.
fn long_text(blocks: &[(Vec<Piece>, usize)], planted: &mut Vec<String>) -> String {
    let mut t = String::new();
    while t.len() < 200_000 {
        let before = t.len();
        for (pieces, reps) in blocks {
            t.push_str(&text(pieces, planted));
            t.push_str(&"build step ok\n".repeat(*reps));
        }
        if t.len() == before {
            t.push_str("build step ok\n");
        }
    }
    t
}

proptest! {
    #![proptest_config(proptest_config(60))]
    #[test]
    fn stream_equals_whole_text(
        blocks in prop::collection::vec((pieces(), 0..2000usize), 1..8),
        sizes in prop::collection::vec(1..=30_000usize, 0..64),
    ) {
        let r = Redactor::default();
        let mut planted = Vec::new();
        let t = long_text(&blocks, &mut planted);
        let whole = r.text(&t);
        let mut s = RedactStream::new(r.clone());
        let mut out = Vec::new();
        for chunk in chunked(t.as_bytes(), &sizes) {
            s.push(chunk, &mut out);
        }
        let receipts = s.finish(&mut out);
        prop_assert!(out == whole.text.as_bytes(), "stream differs");
        prop_assert_eq!(receipts, whole.receipts);
    }
}
