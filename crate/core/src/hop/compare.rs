//! Comparing two runs' hop rows: a changed redaction rule is policy drift, not a regression.

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;

use super::classify::HopRow;

/// What happened to one tool call between two runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum RowVerdict {
    /// Same digests at all three boundaries, same redaction rules.
    Same,
    /// A redaction rule changed (or was added or removed) for some field. The digests may
    /// differ because of it; this is a policy change, not a model regression.
    PolicyDrift,
    /// Some boundary's digest changed with the same redaction rules.
    Changed,
    /// The call is only in the left run.
    OnlyLeft,
    /// The call is only in the right run.
    OnlyRight,
}

/// A field whose redaction rule differs between the runs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PolicyDrift {
    pub field_path: String,
    pub left_rule_id: Option<String>,
    pub right_rule_id: Option<String>,
}

/// One tool call compared across two runs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RowComparison {
    /// The `tool_call_id` the rows were paired by, if any.
    pub tool_call_id: Option<String>,
    pub tool_name: Option<String>,
    pub left_index: Option<usize>,
    pub right_index: Option<usize>,
    pub verdict: RowVerdict,
    /// Boundaries whose digest differs: `process`, `adapter`, `model`.
    pub changed_boundaries: Vec<&'static str>,
    pub left_hop: Option<String>,
    pub right_hop: Option<String>,
    pub drift: Vec<PolicyDrift>,
}

/// The comparison of two runs, with counts per verdict.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RunComparison {
    pub rows: Vec<RowComparison>,
    pub same: usize,
    pub policy_drift: usize,
    pub changed: usize,
    pub only_left: usize,
    pub only_right: usize,
}

/// The rule applied to each redacted field (a field redacted twice lists its rules joined).
fn rules(row: &HopRow) -> BTreeMap<&str, String> {
    let mut out: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for r in &row.redactions {
        out.entry(r.field_path.as_str())
            .or_default()
            .push(r.rule_id.as_str());
    }
    // Inserted one by one: collecting into a BTreeMap sorts, another copy of std's sort in
    // the wasm module (see `crate::sort`).
    let mut joined = BTreeMap::new();
    for (k, mut v) in out {
        crate::sort::sort(&mut v);
        joined.insert(k, v.join("+"));
    }
    joined
}

fn compare_pair(l: &HopRow, r: &HopRow) -> (RowVerdict, Vec<&'static str>, Vec<PolicyDrift>) {
    let mut changed = Vec::new();
    if l.process_sha256 != r.process_sha256 {
        changed.push("process");
    }
    if l.adapter_sha256 != r.adapter_sha256 {
        changed.push("adapter");
    }
    if l.model_sha256 != r.model_sha256 {
        changed.push("model");
    }
    let (lr, rr) = (rules(l), rules(r));
    let mut fields: BTreeSet<&str> = BTreeSet::new(); // extend, not collect: see `rules`
    fields.extend(lr.keys().chain(rr.keys()).copied());
    let drift: Vec<PolicyDrift> = fields
        .into_iter()
        .filter(|f| lr.get(f) != rr.get(f))
        .map(|f| PolicyDrift {
            field_path: f.to_string(),
            left_rule_id: lr.get(f).cloned(),
            right_rule_id: rr.get(f).cloned(),
        })
        .collect();
    let verdict = if !drift.is_empty() {
        RowVerdict::PolicyDrift
    } else if !changed.is_empty() {
        RowVerdict::Changed
    } else {
        RowVerdict::Same
    };
    (verdict, changed, drift)
}

/// Pairs the rows of two runs (by `tool_call_id` when both have one, otherwise by position
/// among the rows without one) and judges each pair.
pub fn compare_runs(left: &[HopRow], right: &[HopRow]) -> RunComparison {
    // Ordered, not hashed: std's SipHash has fixed keys in wasm (see gate::readback).
    let mut right_by_id: BTreeMap<&str, usize> = BTreeMap::new();
    for (j, row) in right.iter().enumerate() {
        if let Some(id) = &row.tool_call_id {
            right_by_id.entry(id.as_str()).or_insert(j);
        }
    }
    let right_plain: Vec<usize> = (0..right.len())
        .filter(|&j| right[j].tool_call_id.is_none())
        .collect();
    let mut plain_next = 0;
    let mut taken = vec![false; right.len()];
    let mut rows = Vec::new();
    for (i, l) in left.iter().enumerate() {
        let partner = match &l.tool_call_id {
            Some(id) => right_by_id.get(id.as_str()).copied().filter(|&j| !taken[j]),
            None => {
                let j = right_plain.get(plain_next).copied();
                plain_next += 1;
                j
            }
        };
        let Some(j) = partner else {
            rows.push(RowComparison {
                tool_call_id: l.tool_call_id.clone(),
                tool_name: l.tool_name.clone(),
                left_index: Some(i),
                right_index: None,
                verdict: RowVerdict::OnlyLeft,
                changed_boundaries: Vec::new(),
                left_hop: Some(l.mutation_hop.to_string()),
                right_hop: None,
                drift: Vec::new(),
            });
            continue;
        };
        taken[j] = true;
        let r = &right[j];
        let (verdict, changed_boundaries, drift) = compare_pair(l, r);
        rows.push(RowComparison {
            tool_call_id: l.tool_call_id.clone(),
            tool_name: l.tool_name.clone().or_else(|| r.tool_name.clone()),
            left_index: Some(i),
            right_index: Some(j),
            verdict,
            changed_boundaries,
            left_hop: Some(l.mutation_hop.to_string()),
            right_hop: Some(r.mutation_hop.to_string()),
            drift,
        });
    }
    for (j, r) in right.iter().enumerate() {
        if !taken[j] {
            rows.push(RowComparison {
                tool_call_id: r.tool_call_id.clone(),
                tool_name: r.tool_name.clone(),
                left_index: None,
                right_index: Some(j),
                verdict: RowVerdict::OnlyRight,
                changed_boundaries: Vec::new(),
                left_hop: None,
                right_hop: Some(r.mutation_hop.to_string()),
                drift: Vec::new(),
            });
        }
    }
    let count = |v: RowVerdict| rows.iter().filter(|r| r.verdict == v).count();
    RunComparison {
        same: count(RowVerdict::Same),
        policy_drift: count(RowVerdict::PolicyDrift),
        changed: count(RowVerdict::Changed),
        only_left: count(RowVerdict::OnlyLeft),
        only_right: count(RowVerdict::OnlyRight),
        rows,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hop::{classify_hop, RedactionReceipt};

    fn receipt(path: &str, rule: &str) -> RedactionReceipt {
        RedactionReceipt {
            field_path: path.into(),
            rule_id: rule.into(),
            original_len: 40,
            replacement: "[REDACTED:token]".into(),
        }
    }

    #[test]
    fn rule_change_is_policy_drift_not_regression() {
        let id = |s: &str| Some(s.to_string());
        let l = classify_hop(b"{\"t\":\"[A]\"}", b"{\"t\":\"[A]\"}", b"{\"t\":\"[A]\"}")
            .with_ids(None, id("c1"), id("read"))
            .with_receipts(vec![receipt("$.t", "token-v1")]);
        let r = classify_hop(b"{\"t\":\"[B]\"}", b"{\"t\":\"[B]\"}", b"{\"t\":\"[B]\"}")
            .with_ids(None, id("c1"), id("read"))
            .with_receipts(vec![receipt("$.t", "token-v2")]);
        let same = classify_hop(b"1", b"1", b"1").with_ids(None, id("c2"), None);
        let changed = classify_hop(b"1", b"1", b"12").with_ids(None, id("c2"), None);
        let cmp = compare_runs(&[l.clone(), same.clone()], &[changed, r]);
        assert_eq!(cmp.rows[0].verdict, RowVerdict::PolicyDrift);
        assert_eq!(
            cmp.rows[0].drift,
            vec![PolicyDrift {
                field_path: "$.t".into(),
                left_rule_id: id("token-v1"),
                right_rule_id: id("token-v2")
            }]
        );
        assert_eq!(
            cmp.rows[0].changed_boundaries,
            vec!["process", "adapter", "model"]
        );
        assert_eq!(cmp.rows[1].verdict, RowVerdict::Changed);
        assert_eq!(cmp.rows[1].changed_boundaries, vec!["model"]);
        assert_eq!((cmp.same, cmp.policy_drift, cmp.changed), (0, 1, 1));

        let cmp = compare_runs(&[l.clone(), same], &[l]);
        assert_eq!((cmp.same, cmp.only_left, cmp.only_right), (1, 1, 0));
    }
}
