//! Run-to-run comparison of clip-aware span files: the seed-000 incident, where observed
//! hashes stayed stable across two runs while injected hashes diverged (a tighter builder
//! policy) and the model's answer flipped.
//!
//! Spans are paired by tool name and observed hash: the i-th span of a tool that observed
//! digest D in the left run pairs with the i-th such span in the right run. A pair whose
//! injected hash (or length, when hashes are absent) differs is the finding: same evidence
//! from the tool, different slice in front of the model. Compare builder versions before
//! you compare models.

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};

use super::report::Report;
use super::rows::RowRef;

/// One side of a paired tool call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SliceSide {
    pub line: u64,
    pub span_id: Option<String>,
    pub injected_bytes: Option<u64>,
    pub injected_tokens: Option<u64>,
    pub sha256_injected: Option<String>,
    pub clip_reason: Option<String>,
    pub prompt_builder_version: Option<String>,
}

/// A tool call that observed the same bytes in both runs but injected a different slice.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct InjectedChange {
    pub name: String,
    pub sha256_observed: String,
    pub observed_bytes: Option<u64>,
    pub left: SliceSide,
    pub right: SliceSide,
}

/// The comparison of two runs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SpanRunDiff {
    /// Pairs with equal observed hashes and different injected slices.
    pub injected_changed: Vec<InjectedChange>,
    /// Paired tool calls whose injected slice is the same.
    pub unchanged: u64,
    /// Spans with an observed hash that found no partner on the other side.
    pub only_left: u64,
    pub only_right: u64,
    /// Spans without `sha256_observed`, which cannot be paired.
    pub unhashed_left: u64,
    pub unhashed_right: u64,
    /// Builder versions seen in each run, sorted (`null` for spans without one).
    pub left_builders: Vec<Option<String>>,
    pub right_builders: Vec<Option<String>>,
    /// Whether the set of builder versions differs: a cap change rewrites every
    /// downstream token, so look here before blaming the model.
    pub builder_changed: bool,
}

fn side(row: &RowRef<'_>) -> SliceSide {
    SliceSide {
        line: row.line,
        span_id: row.span_id.map(str::to_string),
        injected_bytes: row.injected_bytes,
        injected_tokens: row.injected_tokens,
        sha256_injected: row.sha256_injected.map(str::to_string),
        clip_reason: row.clip_reason.map(str::to_string),
        prompt_builder_version: row.prompt_builder_version.map(str::to_string),
    }
}

type Grouped<'a> = (Vec<RowRef<'a>>, BTreeMap<(String, String), Vec<usize>>, u64);

/// Rows in line order, the indexes of each (tool, observed hash), and the unhashed count.
fn group(report: &Report) -> Grouped<'_> {
    let mut rows: Vec<RowRef<'_>> = report.rows.iter().collect();
    crate::sort::sort_by_key(&mut rows, |r| r.line);
    let mut by_key: BTreeMap<(String, String), Vec<usize>> = BTreeMap::new();
    let mut unhashed = 0;
    for (i, row) in rows.iter().enumerate() {
        match row.sha256_observed.filter(|h| !h.is_empty()) {
            Some(h) => by_key
                .entry((row.name.to_string(), h.to_string()))
                .or_default()
                .push(i),
            None => unhashed += 1,
        }
    }
    (rows, by_key, unhashed)
}

/// Compares two checked runs. Both reports must list every row (checked without
/// `flagged_only`); rows are taken in line order.
pub fn compare_span_runs(left: &Report, right: &Report) -> SpanRunDiff {
    let (lrows, lkeys, unhashed_left) = group(left);
    let (rrows, rkeys, unhashed_right) = group(right);

    let mut injected_changed = Vec::new();
    let (mut unchanged, mut only_left, mut only_right) = (0, 0, 0);
    for (key, lidx) in &lkeys {
        let ridx = rkeys.get(key).map_or(&[][..], Vec::as_slice);
        for (l, r) in lidx.iter().zip(ridx) {
            let (l, r) = (lrows[*l], rrows[*r]);
            let differs = match (l.sha256_injected, r.sha256_injected) {
                (Some(a), Some(b)) if !a.is_empty() && !b.is_empty() => a != b,
                _ => l.injected_bytes != r.injected_bytes,
            };
            if differs {
                injected_changed.push(InjectedChange {
                    name: key.0.clone(),
                    sha256_observed: key.1.clone(),
                    observed_bytes: l.observed_bytes,
                    left: side(&l),
                    right: side(&r),
                });
            } else {
                unchanged += 1;
            }
        }
        only_left += lidx.len().saturating_sub(ridx.len()) as u64;
        only_right += ridx.len().saturating_sub(lidx.len()) as u64;
    }
    for (key, ridx) in &rkeys {
        if !lkeys.contains_key(key) {
            only_right += ridx.len() as u64;
        }
    }
    crate::sort::sort_by_key(&mut injected_changed, |c| c.left.line);

    let builders = |rows: &[RowRef<'_>]| -> Vec<Option<String>> {
        // Extended, not collected: collecting into a BTreeSet sorts, another copy of std's
        // sort in the wasm module (see `crate::sort`).
        let mut set: BTreeSet<Option<String>> = BTreeSet::new();
        set.extend(
            rows.iter()
                .map(|r| r.prompt_builder_version.map(str::to_string)),
        );
        set.into_iter().collect()
    };
    let left_builders = builders(&lrows);
    let right_builders = builders(&rrows);
    SpanRunDiff {
        builder_changed: left_builders != right_builders,
        injected_changed,
        unchanged,
        only_left,
        only_right,
        unhashed_left,
        unhashed_right,
        left_builders,
        right_builders,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::check::{check_bytes, CheckOptions};

    fn run(lines: &[&str]) -> Report {
        check_bytes(lines.join("\n").as_bytes(), CheckOptions::default())
    }

    #[test]
    fn the_seed_incident_same_observed_different_injected() {
        let left = run(&[
            r#"{"span_id":"t1","name":"read_file","observed_bytes":96412,"injected_bytes":40000,"injected_tokens":9000,"clip_reason":"prompt_token_cap","sha256_observed":"ab12","sha256_injected":"cd34","prompt_builder_version":"cap-v3"}"#,
            r#"{"span_id":"t2","name":"ls","observed_bytes":10,"injected_bytes":10,"injected_tokens":3,"sha256_observed":"11","sha256_injected":"11","prompt_builder_version":"cap-v3"}"#,
            r#"{"span_id":"t3","name":"grep","observed_bytes":10,"injected_bytes":10,"injected_tokens":3}"#,
        ]);
        let right = run(&[
            r#"{"span_id":"u1","name":"read_file","observed_bytes":96412,"injected_bytes":12040,"injected_tokens":8192,"clip_reason":"prompt_token_cap","sha256_observed":"ab12","sha256_injected":"ee99","prompt_builder_version":"cap-v4"}"#,
            r#"{"span_id":"u2","name":"ls","observed_bytes":10,"injected_bytes":10,"injected_tokens":3,"sha256_observed":"11","sha256_injected":"11","prompt_builder_version":"cap-v4"}"#,
            r#"{"span_id":"u4","name":"ls","observed_bytes":12,"injected_bytes":12,"injected_tokens":3,"sha256_observed":"22","sha256_injected":"22","prompt_builder_version":"cap-v4"}"#,
        ]);
        let d = compare_span_runs(&left, &right);
        assert_eq!(d.injected_changed.len(), 1);
        let c = &d.injected_changed[0];
        assert_eq!(
            (
                c.name.as_str(),
                c.left.span_id.as_deref(),
                c.right.span_id.as_deref()
            ),
            ("read_file", Some("t1"), Some("u1"))
        );
        assert_eq!(
            (c.left.injected_bytes, c.right.injected_bytes),
            (Some(40000), Some(12040))
        );
        assert_eq!((d.unchanged, d.only_left, d.only_right), (1, 0, 1));
        assert_eq!((d.unhashed_left, d.unhashed_right), (1, 0));
        assert!(d.builder_changed);
        assert_eq!(d.left_builders, [None, Some("cap-v3".to_string())]);
        assert_eq!(d.right_builders, [Some("cap-v4".to_string())]);
    }

    #[test]
    fn identical_runs_have_no_findings() {
        let lines = [
            r#"{"name":"a","observed_bytes":5,"injected_bytes":5,"injected_tokens":1,"sha256_observed":"x","sha256_injected":"x"}"#,
        ];
        let d = compare_span_runs(&run(&lines), &run(&lines));
        assert!(d.injected_changed.is_empty() && !d.builder_changed);
        assert_eq!((d.unchanged, d.only_left, d.only_right), (1, 0, 0));
    }
}
