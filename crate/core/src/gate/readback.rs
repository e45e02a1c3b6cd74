//! Read-back: after a collector accepts a batch, fetch the spans once and check that every
//! hash sent is still there and unchanged. A missing hash is a failure, never a partial
//! success: the courier photographed the label and then smudged it.

use std::collections::{BTreeMap, VecDeque};

use serde::Serialize;
use serde_json::Value;

/// Fields compared between a sent span and its fetched copy (when the sent span has them).
const COMPARED: [&str; 6] = [
    "name",
    "status",
    "args_sha256",
    "args_len",
    "result_sha256",
    "result_len",
];
/// Fields that identify a span across the hop when present.
const ID_FIELDS: [&str; 2] = ["span_id", "tool_call_id"];

/// What went wrong with one span.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ReadBackIssueKind {
    /// No fetched span corresponds to a sent one: all its hashes are gone.
    MissingSpan,
    /// The fetched span lacks a field the sent span had.
    MissingField,
    /// The fetched span has a different value (possibly `truncated`).
    ChangedField,
    /// A fetched span that was never sent. Reported, but not a failure.
    UnexpectedSpan,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ReadBackIssue {
    pub kind: ReadBackIssueKind,
    /// Index of the span in the sent list (none for an unexpected span).
    pub sent_index: Option<usize>,
    /// Index of the span in the fetched list (none for a missing span).
    pub fetched_index: Option<usize>,
    pub name: Option<String>,
    pub field: Option<String>,
    pub sent: Option<Value>,
    pub fetched: Option<Value>,
    /// The fetched string is a strict prefix of the sent one: an attribute budget cut it.
    pub truncated: bool,
}

/// The read-back verdict.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ReadBack {
    /// True only when every sent span came back with every field intact.
    pub ok: bool,
    pub sent: usize,
    pub fetched: usize,
    /// Sent spans that came back intact.
    pub intact: usize,
    pub issues: Vec<ReadBackIssue>,
}

/// The first index in `queue` not taken yet, now taken.
fn take(queue: Option<&mut VecDeque<usize>>, taken: &mut [bool]) -> Option<usize> {
    let queue = queue?;
    while let Some(j) = queue.pop_front() {
        if !taken[j] {
            taken[j] = true;
            return Some(j);
        }
    }
    None
}

fn id_of(span: &Value) -> Option<&str> {
    ID_FIELDS
        .iter()
        .find_map(|f| span.get(f).and_then(Value::as_str))
}

fn name_of(span: &Value) -> Option<String> {
    span.get("name").and_then(Value::as_str).map(str::to_string)
}

/// The compared fields as one key, for exact matching.
fn key_of(span: &Value) -> String {
    let fields: Vec<&Value> = COMPARED
        .iter()
        .map(|f| span.get(f).unwrap_or(&Value::Null))
        .collect();
    serde_json::to_string(&fields).unwrap_or_default()
}

/// Pairs each sent span with a fetched one and reports every field that went missing or
/// changed. Pairing: by `span_id`/`tool_call_id` when the sent span has one; otherwise an
/// identical fetched span (order does not matter: collectors reorder); otherwise the next
/// unpaired fetched span with the same name, whose differences are then reported.
pub fn read_back(sent: &[Value], fetched: &[Value]) -> ReadBack {
    let mut partner: Vec<Option<usize>> = vec![None; sent.len()];
    let mut taken = vec![false; fetched.len()];

    // Ordered maps, not hash maps: ids, names and span texts come from the traces, and std's
    // SipHash has fixed keys in wasm, so keys searched out to share a bucket would make a
    // hash map's lookups linear; a B-tree's are logarithmic whatever the keys.
    let mut by_id: BTreeMap<&str, VecDeque<usize>> = BTreeMap::new();
    let mut by_key: BTreeMap<String, VecDeque<usize>> = BTreeMap::new();
    let mut by_name: BTreeMap<Option<String>, VecDeque<usize>> = BTreeMap::new();
    for (j, span) in fetched.iter().enumerate() {
        if let Some(id) = id_of(span) {
            by_id.entry(id).or_default().push_back(j);
        }
        by_key.entry(key_of(span)).or_default().push_back(j);
        by_name.entry(name_of(span)).or_default().push_back(j);
    }
    // 1. By id.
    for (i, span) in sent.iter().enumerate() {
        if let Some(id) = id_of(span) {
            partner[i] = take(by_id.get_mut(id), &mut taken);
        }
    }
    // 2. Identical spans.
    for (i, span) in sent.iter().enumerate() {
        if partner[i].is_none() && id_of(span).is_none() {
            partner[i] = take(by_key.get_mut(&key_of(span)), &mut taken);
        }
    }
    // 3. Same name, in order.
    for (i, span) in sent.iter().enumerate() {
        if partner[i].is_none() && id_of(span).is_none() {
            partner[i] = take(by_name.get_mut(&name_of(span)), &mut taken);
        }
    }

    let mut issues = Vec::new();
    let mut intact = 0;
    for (i, span) in sent.iter().enumerate() {
        let name = name_of(span);
        let Some(j) = partner[i] else {
            issues.push(ReadBackIssue {
                kind: ReadBackIssueKind::MissingSpan,
                sent_index: Some(i),
                fetched_index: None,
                name,
                field: None,
                sent: None,
                fetched: None,
                truncated: false,
            });
            continue;
        };
        let before = issues.len();
        for field in COMPARED {
            let Some(want) = span.get(field) else {
                continue;
            };
            let got = fetched[j].get(field);
            let kind = match got {
                None | Some(Value::Null) if !want.is_null() => ReadBackIssueKind::MissingField,
                Some(got) if got == want => continue,
                None => continue,
                _ => ReadBackIssueKind::ChangedField,
            };
            let truncated = matches!((want, got), (Value::String(w), Some(Value::String(g))) if g.len() < w.len() && w.starts_with(g.as_str()));
            issues.push(ReadBackIssue {
                kind,
                sent_index: Some(i),
                fetched_index: Some(j),
                name: name.clone(),
                field: Some(field.to_string()),
                sent: Some(want.clone()),
                fetched: got.cloned(),
                truncated,
            });
        }
        if issues.len() == before {
            intact += 1;
        }
    }
    for (j, span) in fetched.iter().enumerate() {
        if !taken[j] {
            issues.push(ReadBackIssue {
                kind: ReadBackIssueKind::UnexpectedSpan,
                sent_index: None,
                fetched_index: Some(j),
                name: name_of(span),
                field: None,
                sent: None,
                fetched: None,
                truncated: false,
            });
        }
    }
    let ok = issues
        .iter()
        .all(|i| i.kind == ReadBackIssueKind::UnexpectedSpan);
    ReadBack {
        ok,
        sent: sent.len(),
        fetched: fetched.len(),
        intact,
        issues,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn span(name: &str, a: &str, r: &str) -> Value {
        json!({"name": name, "status": "ok", "args_sha256": a, "args_len": 2, "result_sha256": r, "result_len": 3})
    }

    #[test]
    fn reordered_but_intact_is_ok() {
        let sent = vec![
            span("a", "1", "2"),
            span("b", "3", "4"),
            span("a", "5", "6"),
        ];
        let fetched = vec![sent[2].clone(), sent[0].clone(), sent[1].clone()];
        let rb = read_back(&sent, &fetched);
        assert!(rb.ok, "{rb:?}");
        assert_eq!(rb.intact, 3);
    }

    #[test]
    fn missing_changed_and_truncated_hashes_fail() {
        let sent = vec![
            span("a", "1111", "2222"),
            span("b", "3333", "4444"),
            span("c", "5", "6"),
        ];
        let mut cut = sent[0].clone();
        cut["result_sha256"] = json!("22");
        let mut dropped = sent[1].clone();
        dropped.as_object_mut().unwrap().remove("args_sha256");
        let fetched = vec![cut, dropped, span("z", "9", "9")];
        let rb = read_back(&sent, &fetched);
        assert!(!rb.ok);
        assert_eq!(rb.intact, 0);
        let kinds: Vec<(ReadBackIssueKind, Option<&str>, bool)> = rb
            .issues
            .iter()
            .map(|i| (i.kind, i.field.as_deref(), i.truncated))
            .collect();
        assert_eq!(
            kinds,
            vec![
                (ReadBackIssueKind::ChangedField, Some("result_sha256"), true),
                (ReadBackIssueKind::MissingField, Some("args_sha256"), false),
                (ReadBackIssueKind::MissingSpan, None, false),
                (ReadBackIssueKind::UnexpectedSpan, None, false),
            ]
        );
    }

    #[test]
    fn ids_pair_spans_across_renames() {
        let mut a = span("a", "1", "2");
        a["span_id"] = json!("s1");
        let mut back = a.clone();
        back["args_sha256"] = json!("7");
        let rb = read_back(&[a], &[span("a", "1", "2"), back]);
        assert!(!rb.ok);
        assert_eq!(rb.issues[0].fetched_index, Some(1));
        assert_eq!(rb.issues[0].kind, ReadBackIssueKind::ChangedField);
    }
}
