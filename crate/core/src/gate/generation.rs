//! Fingerprints of generation text: what the model wrote that never passed through a tool.
//!
//! Seed 002: "Generation text that never passed through a tool needs its own fingerprint,
//! stored beside the manifest, not stuffed into the tool hash." A tool manifest can be
//! identical across two runs while the model's own text changed (a reflowed answer, a
//! different plan); these records make that visible without mixing it into the tool
//! boundary. One record per model turn, in a file of its own beside the spans
//! (`runs/a/generation.jsonl` next to `runs/a/spans.jsonl`):
//!
//! `{"turn": 3, "generation_sha256": "...", "generation_len": 412}`
//!
//! The text is redacted first (the gate's order: a hash of a secret can still identify
//! it), hashed as exact UTF-8 bytes (it is prose, not JSON: no canonical form), and only the
//! fingerprint is kept. [`diff_generations`] pairs two runs' records by `id`, else by `turn`,
//! else by position, and lists the turns whose text changed.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::hash::sha256_hex;
use crate::redact::{Receipt, Redactor};

/// The fingerprint of one turn's generation text.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GenerationFingerprint {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub turn: Option<u64>,
    pub generation_sha256: String,
    /// UTF-8 bytes of the (redacted) text.
    pub generation_len: u64,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub receipts: Vec<Receipt>,
}

/// Fingerprints one turn's text; `redactor` is the gate's (None only when redaction was
/// turned off explicitly).
pub fn generation_fingerprint(
    text: &str,
    turn: Option<u64>,
    id: Option<&str>,
    redactor: Option<&Redactor>,
) -> GenerationFingerprint {
    let (text, receipts) = match redactor {
        Some(r) => {
            let out = r.text(text);
            (out.text, out.receipts)
        }
        None => (text.to_string(), Vec::new()),
    };
    GenerationFingerprint {
        id: id.map(str::to_string),
        turn,
        generation_sha256: sha256_hex(text.as_bytes()),
        generation_len: text.len() as u64,
        receipts,
    }
}

/// One turn whose text differs between the runs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct GenerationChange {
    /// `id:X`, `turn:N` or `#N` (position), as the records were paired.
    pub key: String,
    pub left_sha256: Option<String>,
    pub right_sha256: Option<String>,
    pub left_len: Option<u64>,
    pub right_len: Option<u64>,
}

/// Two runs' generation fingerprints compared.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct GenerationDiff {
    pub same: usize,
    /// Paired turns whose text changed.
    pub changed: Vec<GenerationChange>,
    /// Turns on one side only.
    pub only_left: Vec<String>,
    pub only_right: Vec<String>,
}

impl GenerationDiff {
    pub fn is_empty(&self) -> bool {
        self.changed.is_empty() && self.only_left.is_empty() && self.only_right.is_empty()
    }
}

fn key(record: &Value, index: usize, by: By) -> String {
    match by {
        By::Id => format!("id:{}", text_of(&record["id"])),
        By::Turn => format!("turn:{}", text_of(&record["turn"])),
        By::Position => format!("#{}", index + 1),
    }
}

fn text_of(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

#[derive(Clone, Copy)]
enum By {
    Id,
    Turn,
    Position,
}

/// Compares two runs' generation records (JSON objects with `generation_sha256`).
pub fn diff_generations(left: &[Value], right: &[Value]) -> GenerationDiff {
    let all = |f: &str| {
        left.iter()
            .chain(right)
            .all(|r| r.get(f).is_some_and(|v| !v.is_null()))
    };
    let by = if all("id") {
        By::Id
    } else if all("turn") {
        By::Turn
    } else {
        By::Position
    };
    let side = |records: &[Value]| -> BTreeMap<String, (Option<String>, Option<u64>)> {
        (records.iter().enumerate())
            .map(|(i, r)| {
                let sha = r["generation_sha256"].as_str().map(str::to_string);
                (key(r, i, by), (sha, r["generation_len"].as_u64()))
            })
            .collect()
    };
    let (l, mut r) = (side(left), side(right));
    let mut diff = GenerationDiff::default();
    for (k, (lsha, llen)) in l {
        match r.remove(&k) {
            None => diff.only_left.push(k),
            Some((rsha, rlen)) if rsha == lsha && rlen == llen => diff.same += 1,
            Some((rsha, rlen)) => diff.changed.push(GenerationChange {
                key: k,
                left_sha256: lsha,
                right_sha256: rsha,
                left_len: llen,
                right_len: rlen,
            }),
        }
    }
    diff.only_right = r.into_keys().collect();
    diff
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fingerprint_redacts_and_hashes_exact_bytes() {
        let r = Redactor::default();
        let gh = "ghp_aB3dE5fG7hI9jK1lM3nO5pQ7rS9tU1vW3xY5";
        let f = generation_fingerprint(&format!("Use {gh} to push."), Some(2), None, Some(&r));
        let redacted = "Use [REDACTED:github_token] to push.";
        assert_eq!(f.generation_sha256, sha256_hex(redacted.as_bytes()));
        assert_eq!(f.generation_len, redacted.len() as u64);
        assert_eq!(f.receipts.len(), 1);
        let json = serde_json::to_string(&f).unwrap();
        assert!(
            json.starts_with(r#"{"turn":2,"generation_sha256":""#),
            "{json}"
        );
        assert!(!json.contains("ghp_"));
        // Off is explicit: then the bytes are hashed as they are.
        let raw = generation_fingerprint("a  b", None, Some("g1"), None);
        assert_eq!(raw.generation_sha256, sha256_hex(b"a  b"));
    }

    #[test]
    fn diff_pairs_by_id_turn_or_position() {
        let fp = |turn: u64, text: &str| {
            serde_json::to_value(generation_fingerprint(text, Some(turn), None, None)).unwrap()
        };
        let left = vec![fp(1, "plan"), fp(2, "answer: 8080")];
        let right = vec![fp(1, "plan"), fp(2, "answer: 5432"), fp(3, "more")];
        let d = diff_generations(&left, &right);
        assert_eq!(d.same, 1);
        assert_eq!(d.changed.len(), 1);
        assert_eq!(d.changed[0].key, "turn:2");
        assert_eq!(d.only_right, ["turn:3"]);
        assert!(diff_generations(&left, &left).is_empty());
        let bare = |t: &str| serde_json::json!({"generation_sha256": sha256_hex(t.as_bytes())});
        let d = diff_generations(&[bare("a"), bare("b")], &[bare("a"), bare("c")]);
        assert_eq!(d.changed[0].key, "#2");
    }
}
