//! Two runs compared, whatever records they hold: the one place that reads a file of JSON
//! records and decides what kind of run it is, so `toolslice diff` and the page's diff view
//! cannot drift apart.
//!
//! - **Clip-aware spans** (seed 000: every record has `observed_bytes` or
//!   `sha256_observed`): checked, then paired by tool name and observed hash
//!   ([`crate::check::compare_span_runs`]).
//! - **Hop rows** (every record has `mutation_hop`): paired by `tool_call_id` and judged
//!   ([`crate::hop::compare_runs`]).
//! - **Span records** of any other shape: the seeds' multiset manifest diff
//!   ([`crate::gate::diff_manifests`]).

use std::fmt;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::check::{check_bytes, compare_span_runs, CheckOptions, SpanRunDiff};
use crate::error::Coded;
use crate::formats::json_error;
use crate::gate::{self, ManifestDiff, ManifestError};
use crate::hop::{self, HopRow, RunComparison};

/// What two runs were compared as, and the comparison.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "kind", content = "diff", rename_all = "snake_case")]
pub enum RunDiffKind {
    /// Clip-aware span files: same observed bytes, different injected slice.
    Slices(SpanRunDiff),
    /// Hop rows: same, changed, policy drift, only on one side.
    Hops(RunComparison),
    /// Span records: the multiset of (name, status, args_sha256, result_sha256).
    Manifest(ManifestDiff),
}

/// The comparison of two runs.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RunDiff {
    #[serde(flatten)]
    pub kind: RunDiffKind,
    /// Records read from each side (JSON values, before any checking).
    pub left_records: usize,
    pub right_records: usize,
    /// Whether the runs differ in a way that should fail a gate (exit code 1): a changed
    /// injected slice or builder, a changed or unpaired hop row, a manifest entry on one side
    /// only. Policy drift alone is not a difference.
    pub differs: bool,
}

/// Why two runs could not be compared. Each names the side (the caller's name for it: a
/// file name, or "left run").
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RunsError {
    /// A side is not JSON: a JSON array, one object, or one object per line.
    NotJson {
        side: String,
        line: Option<usize>,
        message: String,
    },
    /// One side holds hop rows and the other records of another kind.
    MixedKinds,
    /// A record of a hop-row run does not have a hop row's fields.
    BadHopRow {
        side: String,
        index: usize,
        message: String,
    },
    /// A span record cannot go into a manifest.
    Manifest { side: String, error: ManifestError },
}

impl fmt::Display for RunsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RunsError::NotJson {
                side,
                line: Some(line),
                message,
            } => write!(f, "{side}, line {line}: not JSON: {message}"),
            RunsError::NotJson { side, message, .. } => write!(f, "{side}: not JSON: {message}"),
            RunsError::MixedKinds => f.write_str(
                "one run holds hop rows and the other does not: compare runs of the same kind",
            ),
            RunsError::BadHopRow {
                side,
                index,
                message,
            } => write!(f, "{side}, record {}: not a hop row: {message}", index + 1),
            RunsError::Manifest { side, error } => write!(f, "{side}: {error}"),
        }
    }
}

impl std::error::Error for RunsError {}

impl Coded for RunsError {
    fn code(&self) -> &'static str {
        match self {
            RunsError::NotJson { .. } => "invalid_json",
            RunsError::MixedKinds => "mixed_runs",
            RunsError::BadHopRow { .. } => "invalid_hop_row",
            RunsError::Manifest { error, .. } => error.code(),
        }
    }
}

/// The records of a file: a JSON array, one JSON object (also pretty-printed over several
/// lines), or JSON lines (one value per line; blank lines skipped). An error names the
/// 1-based line.
pub fn read_records(text: &str, side: &str) -> Result<Vec<Value>, RunsError> {
    let trimmed = text.trim();
    if trimmed.is_empty() {
        return Ok(Vec::new());
    }
    let not_json = |line: Option<usize>, e: serde_json::Error| RunsError::NotJson {
        side: side.to_string(),
        line,
        message: json_error(&e),
    };
    if trimmed.starts_with('[') {
        match serde_json::from_str::<Value>(trimmed) {
            Ok(Value::Array(records)) => return Ok(records),
            Ok(_) => {}
            Err(e) => return Err(not_json(None, e)),
        }
    }
    let mut records = Vec::new();
    for (i, line) in text.split('\n').enumerate() {
        let line = line.trim();
        if line.is_empty() {
            continue;
        }
        match serde_json::from_str(line) {
            Ok(value) => records.push(value),
            Err(e) => {
                // A single pretty-printed object spans several lines: try the whole text.
                if records.is_empty() {
                    if let Ok(value) = serde_json::from_str(trimmed) {
                        return Ok(vec![value]);
                    }
                }
                return Err(not_json(Some(i + 1), e));
            }
        }
    }
    Ok(records)
}

fn all_have(records: &[Value], keys: &[&str]) -> bool {
    !records.is_empty()
        && records.iter().all(|r| {
            r.as_object()
                .is_some_and(|o| keys.iter().any(|k| o.contains_key(*k)))
        })
}

/// Compares two runs given as file texts, choosing the comparison from what they hold.
pub fn diff_runs(
    left: &str,
    right: &str,
    left_name: &str,
    right_name: &str,
) -> Result<RunDiff, RunsError> {
    let l = read_records(left, left_name)?;
    let r = read_records(right, right_name)?;
    let clip_aware = ["observed_bytes", "sha256_observed"];
    let kind = if all_have(&l, &clip_aware) && all_have(&r, &clip_aware) {
        let check = |text: &str| check_bytes(text.as_bytes(), CheckOptions::default());
        RunDiffKind::Slices(compare_span_runs(&check(left), &check(right)))
    } else if all_have(&l, &["mutation_hop"]) || all_have(&r, &["mutation_hop"]) {
        let hop_run =
            |records: &[Value]| records.is_empty() || all_have(records, &["mutation_hop"]);
        if !hop_run(&l) || !hop_run(&r) {
            return Err(RunsError::MixedKinds);
        }
        RunDiffKind::Hops(hop::compare_runs(
            &hop_rows(&l, left_name)?,
            &hop_rows(&r, right_name)?,
        ))
    } else {
        let manifest = |records: &[Value], side: &str| {
            gate::manifest(records).map_err(|error| RunsError::Manifest {
                side: side.to_string(),
                error,
            })
        };
        RunDiffKind::Manifest(gate::diff_manifests(
            &manifest(&l, left_name)?,
            &manifest(&r, right_name)?,
        ))
    };
    let differs = match &kind {
        RunDiffKind::Slices(d) => !d.injected_changed.is_empty() || d.builder_changed,
        RunDiffKind::Hops(c) => c.changed + c.only_left + c.only_right > 0,
        RunDiffKind::Manifest(d) => !d.is_empty(),
    };
    Ok(RunDiff {
        kind,
        left_records: l.len(),
        right_records: r.len(),
        differs,
    })
}

fn hop_rows(records: &[Value], side: &str) -> Result<Vec<HopRow>, RunsError> {
    (records.iter().enumerate())
        .map(|(index, value)| {
            HopRow::deserialize(value).map_err(|e| RunsError::BadHopRow {
                side: side.to_string(),
                index,
                message: e.to_string(),
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kind(d: &RunDiff) -> &'static str {
        match d.kind {
            RunDiffKind::Slices(_) => "slices",
            RunDiffKind::Hops(_) => "hops",
            RunDiffKind::Manifest(_) => "manifest",
        }
    }

    #[test]
    fn reads_arrays_objects_and_lines() {
        assert_eq!(read_records(" \n", "x").unwrap(), Vec::<Value>::new());
        assert_eq!(read_records("[1, 2]", "x").unwrap().len(), 2);
        assert_eq!(read_records("{\n  \"a\": 1\n}\n", "x").unwrap().len(), 1);
        assert_eq!(
            read_records("{\"a\":1}\n\n{\"a\":2}\r\n", "x")
                .unwrap()
                .len(),
            2
        );
        let err = read_records("{\"a\":1}\n{oops}\n", "left run").unwrap_err();
        assert_eq!(err.code(), "invalid_json");
        assert!(
            err.to_string().starts_with("left run, line 2: not JSON: "),
            "{err}"
        );
        assert!(!err.to_string().contains("column"), "{err}");
    }

    #[test]
    fn chooses_the_comparison_from_the_records() {
        let spans_l = r#"{"name":"grep","observed_bytes":10,"injected_bytes":10,"injected_tokens":3,"sha256_observed":"a","sha256_injected":"a"}"#;
        let spans_r = r#"{"name":"grep","observed_bytes":10,"injected_bytes":5,"injected_tokens":2,"clip_reason":"prompt_token_cap","sha256_observed":"a","sha256_injected":"b"}"#;
        let d = diff_runs(spans_l, spans_r, "l", "r").unwrap();
        assert_eq!(kind(&d), "slices");
        assert!(d.differs);
        assert!(!diff_runs(spans_l, spans_l, "l", "r").unwrap().differs);

        let rec = |s: &str| {
            format!(r#"{{"name":"grep","status":"{s}","args_sha256":"a","result_sha256":"b"}}"#)
        };
        let d = diff_runs(&rec("ok"), &rec("error"), "l", "r").unwrap();
        assert_eq!(kind(&d), "manifest");
        assert!(d.differs);
        assert_eq!((d.left_records, d.right_records), (1, 1));
        assert!(!diff_runs(&rec("ok"), &rec("ok"), "l", "r").unwrap().differs);

        let hop = r#"{"tool_call_id":"c1","process_sha256":"p","adapter_sha256":"p","model_sha256":"p","process_len":1,"adapter_len":1,"model_len":1,"mutation_hop":"no_payload_mutation"}"#;
        let d = diff_runs(hop, "", "l", "r").unwrap();
        assert_eq!(kind(&d), "hops");
        assert!(d.differs, "a row only on the left is a difference");
        let err = diff_runs(hop, &rec("ok"), "l", "r").unwrap_err();
        assert_eq!(err.code(), "mixed_runs");
        let err = diff_runs(
            r#"{"mutation_hop":"no_payload_mutation"}"#,
            "",
            "left.jsonl",
            "r",
        )
        .unwrap_err();
        assert_eq!(err.code(), "invalid_hop_row");
        assert!(
            err.to_string()
                .starts_with("left.jsonl, record 1: not a hop row"),
            "{err}"
        );
    }

    #[test]
    fn serializes_with_a_kind_tag() {
        let d = diff_runs("", "", "l", "r").unwrap();
        let json = serde_json::to_value(&d).unwrap();
        assert_eq!(json["kind"], "manifest");
        assert_eq!(json["diff"]["only_left"], serde_json::json!([]));
        assert_eq!(json["differs"], false);
    }
}
