//! The labelled redaction corpus (`tests/fixtures/redact/`, written by its `generate.py`):
//! every positive must be caught by its rule with no secret substring left (recall 100 %),
//! every hard negative must come out byte-identical (no false positive).

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde_json::Value;
use toolslice::redact::{Policy, Redactor, Rule};

fn load(name: &str) -> Vec<Value> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/redact")
        .join(name);
    std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn redactor(rec: &Value) -> Redactor {
    let policy: Policy = match rec.get("policy") {
        Some(p) => serde_json::from_value(p.clone()).unwrap(),
        None => Policy::default(),
    };
    Redactor::new(&policy).unwrap()
}

#[test]
fn recall_is_total_on_the_positives() {
    let positives = load("positives.jsonl");
    let mut per_rule: BTreeMap<String, usize> = BTreeMap::new();
    let mut failures = Vec::new();
    for rec in &positives {
        let id = rec["id"].as_str().unwrap();
        let rule = rec["rule"].as_str().unwrap();
        let text = rec["text"].as_str().unwrap();
        let out = redactor(rec).text(text);
        *per_rule.entry(rule.to_string()).or_default() += 1;
        for secret in rec["secrets"].as_array().unwrap() {
            let secret = secret.as_str().unwrap();
            if out.text.contains(secret) {
                failures.push(format!("{id}: secret survived in {:?}", out.text));
            }
        }
        if !out.receipts.iter().any(|r| r.rule_id == rule) {
            let got: Vec<_> = out.receipts.iter().map(|r| r.rule_id.as_str()).collect();
            failures.push(format!("{id}: expected rule {rule}, receipts {got:?}"));
        }
        for r in &out.receipts {
            assert!(Rule::parse(&r.rule_id).is_some());
            assert_eq!(r.replacement, format!("[REDACTED:{}]", r.rule_id));
        }
        // Text that was JSON stays JSON.
        if serde_json::from_str::<Value>(text).is_ok() {
            if let Err(e) = serde_json::from_str::<Value>(&out.text) {
                failures.push(format!("{id}: no longer JSON ({e}): {}", out.text));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    // Every rule has positives.
    for rule in Rule::ALL {
        assert!(
            per_rule.contains_key(rule.id()),
            "no positive for {}",
            rule.id()
        );
    }
}

#[test]
fn no_false_positive_on_the_hard_negatives() {
    let mut failures = Vec::new();
    for rec in load("negatives.jsonl") {
        let text = rec["text"].as_str().unwrap();
        let out = redactor(&rec).text(text);
        if out.text != text || !out.receipts.is_empty() {
            let rules: Vec<_> = out.receipts.iter().map(|r| r.rule_id.clone()).collect();
            failures.push(format!(
                "{} ({}): {rules:?}\n  {}",
                rec["id"], rec["why"], out.text
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn parsed_json_positives_are_caught_too() {
    // The same corpus through the JSON walker, for every positive that is a JSON document.
    for rec in load("positives.jsonl") {
        let text = rec["text"].as_str().unwrap();
        let Ok(mut value) = serde_json::from_str::<Value>(text) else {
            continue;
        };
        let receipts = redactor(&rec).json(&mut value);
        let out = serde_json::to_string(&value).unwrap();
        assert!(!receipts.is_empty(), "{}", rec["id"]);
        for secret in rec["secrets"].as_array().unwrap() {
            assert!(
                !out.contains(secret.as_str().unwrap()),
                "{}: {out}",
                rec["id"]
            );
        }
    }
}
