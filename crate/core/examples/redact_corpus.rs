//! Runs toolslice's redaction over a labelled corpus (JSONL: `id`, `text`, and `rule` +
//! `secrets` for positives, `why` for negatives; `policy` optional) and prints one JSON line
//! per sample: whether anything was flagged, the rules, whether every listed secret is
//! gone, and the time taken. scripts/bench_redact.py compares this with detect-secrets.
//!
//!   cargo run --release --example redact_corpus -- crate/core/tests/fixtures/redact/positives.jsonl ...
use std::time::Instant;

use serde_json::{json, Value};
use toolslice::redact::{Policy, Redactor};

fn main() {
    for path in std::env::args().skip(1) {
        let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
        for line in text.lines().filter(|l| !l.trim().is_empty()) {
            let rec: Value = serde_json::from_str(line).expect("a JSON line");
            let policy: Policy = rec
                .get("policy")
                .map(|p| serde_json::from_value(p.clone()).expect("a policy"))
                .unwrap_or_default();
            let r = Redactor::new(&policy).expect("a valid policy");
            let sample = rec["text"].as_str().unwrap_or_default();
            let reps = 200;
            let t = Instant::now();
            let mut out = r.text(sample);
            for _ in 1..reps {
                out = r.text(std::hint::black_box(sample));
            }
            let us = t.elapsed().as_secs_f64() * 1e6 / f64::from(reps);
            let secrets_gone = rec.get("secrets").and_then(Value::as_array).map(|s| {
                s.iter()
                    .all(|x| !out.text.contains(x.as_str().unwrap_or("\u{0}")))
            });
            let rules: Vec<&str> = out.receipts.iter().map(|r| r.rule_id.as_str()).collect();
            println!(
                "{}",
                json!({
                    "id": rec["id"], "flagged": !out.receipts.is_empty(), "rules": rules,
                    "secrets_gone": secrets_gone, "bytes": sample.len(), "us": us
                })
            );
        }
    }
}
