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
//!   ([`crate::gate::diff_manifests`]). Seed 002: "diff manifests only after both gates are
//!   empty". Both sides go through the export gate first ([`RunGate`]): every open span, and,
//!   when a body store is given, every missing body. A run that is not gated (or whose bodies
//!   were not checked) makes the comparison fail ([`RunDiff::fails`]) unless the caller
//!   allows it ([`DiffOptions::allow_ungated`]); the diff is still computed and shown.

use std::fmt;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::check::{check_bytes, compare_span_runs, CheckOptions, SpanRunDiff};
use crate::error::Coded;
use crate::formats::json_error;
use crate::gate::{
    self, BodyStore, GenerationDiff, ManifestDiff, ManifestError, Problem, StoreError,
};
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
    /// Generation fingerprints (the file beside the manifest): turns whose text changed.
    Generations(GenerationDiff),
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
    /// The export gate of each side (manifest diffs only: span records of the seed's gate).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gate: Option<RunGate>,
    /// Whether the comparison fails (exit code 1): the runs differ, or a manifest diff ran
    /// on a run that is not gated and the caller did not allow that.
    pub fails: bool,
}

/// What the export gate says of both runs before their manifests are compared.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RunGate {
    /// Every open span and (when a store was given) missing body of the left run.
    pub left: Vec<Problem>,
    pub right: Vec<Problem>,
    /// Whether each side's bodies were looked up in a store (without one, only open spans
    /// and malformed digests are found, and the run cannot be called gated).
    pub left_bodies_checked: bool,
    pub right_bodies_checked: bool,
    /// Both gates empty, bodies checked: the diff means what the seed says it means.
    pub gated: bool,
    /// The caller allowed a diff of runs that are not gated.
    pub allowed_ungated: bool,
}

/// How to compare two runs.
#[derive(Default)]
pub struct DiffOptions<'a> {
    /// How errors name each side; default "left run" and "right run".
    pub left_name: Option<&'a str>,
    pub right_name: Option<&'a str>,
    /// Body stores of each side, for the missing-body check (one store may serve both).
    pub left_store: Option<&'a dyn BodyStore>,
    pub right_store: Option<&'a dyn BodyStore>,
    /// Do not fail a manifest diff of runs that are not gated (it still says so).
    pub allow_ungated: bool,
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
    /// One side holds hop rows (or generation fingerprints) and the other records of
    /// another kind; `kind` names the first.
    MixedKinds { kind: &'static str },
    /// A record of a hop-row run does not have a hop row's fields.
    BadHopRow {
        side: String,
        index: usize,
        message: String,
    },
    /// A span record cannot go into a manifest.
    Manifest { side: String, error: ManifestError },
    /// A body store failed while the gate looked up a digest.
    Store { side: String, error: StoreError },
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
            RunsError::MixedKinds { kind } => write!(
                f,
                "one run holds {kind} and the other does not: compare runs of the same kind"
            ),
            RunsError::BadHopRow {
                side,
                index,
                message,
            } => write!(f, "{side}, record {}: not a hop row: {message}", index + 1),
            RunsError::Manifest { side, error } => write!(f, "{side}: {error}"),
            RunsError::Store { side, error } => write!(f, "{side}: {error}"),
        }
    }
}

impl std::error::Error for RunsError {}

impl Coded for RunsError {
    fn code(&self) -> &'static str {
        match self {
            RunsError::NotJson { .. } => "invalid_json",
            RunsError::MixedKinds { .. } => "mixed_runs",
            RunsError::BadHopRow { .. } => "invalid_hop_row",
            RunsError::Manifest { error, .. } => error.code(),
            RunsError::Store { error, .. } => error.code(),
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

/// Compares two runs given as file texts, choosing the comparison from what they hold
/// (with no body stores, so a manifest diff reports its runs as not gated; see
/// [`diff_runs_with`]).
pub fn diff_runs(
    left: &str,
    right: &str,
    left_name: &str,
    right_name: &str,
) -> Result<RunDiff, RunsError> {
    diff_runs_with(
        left,
        right,
        &DiffOptions {
            left_name: Some(left_name),
            right_name: Some(right_name),
            ..DiffOptions::default()
        },
    )
}

/// A store that holds every digest: the gate then reports open spans and malformed digests
/// only (no store was given, so bodies are not checked).
struct Unchecked;

impl BodyStore for Unchecked {
    fn get(&self, _: &str) -> Result<Option<String>, StoreError> {
        Ok(None)
    }
    fn put(&mut self, _: &str, _: &str) -> Result<(), StoreError> {
        Ok(())
    }
    fn contains(&self, _: &str) -> Result<bool, StoreError> {
        Ok(true)
    }
}

fn side_gate(
    records: &[Value],
    store: Option<&dyn BodyStore>,
    side: &str,
) -> Result<Vec<Problem>, RunsError> {
    gate::export_ready(records, store.unwrap_or(&Unchecked)).map_err(|error| RunsError::Store {
        side: side.to_string(),
        error,
    })
}

/// [`diff_runs`] with body stores and the choice to allow runs that are not gated.
pub fn diff_runs_with(
    left: &str,
    right: &str,
    options: &DiffOptions<'_>,
) -> Result<RunDiff, RunsError> {
    let left_name = options.left_name.unwrap_or("left run");
    let right_name = options.right_name.unwrap_or("right run");
    let l = read_records(left, left_name)?;
    let r = read_records(right, right_name)?;
    let clip_aware = ["observed_bytes", "sha256_observed"];
    let kind = if all_have(&l, &clip_aware) && all_have(&r, &clip_aware) {
        let check = |text: &str| check_bytes(text.as_bytes(), CheckOptions::default());
        RunDiffKind::Slices(compare_span_runs(&check(left), &check(right)))
    } else if all_have(&l, &["generation_sha256"]) || all_have(&r, &["generation_sha256"]) {
        let generations =
            |records: &[Value]| records.is_empty() || all_have(records, &["generation_sha256"]);
        if !generations(&l) || !generations(&r) {
            return Err(RunsError::MixedKinds {
                kind: "generation fingerprints",
            });
        }
        RunDiffKind::Generations(gate::diff_generations(&l, &r))
    } else if all_have(&l, &["mutation_hop"]) || all_have(&r, &["mutation_hop"]) {
        let hop_run =
            |records: &[Value]| records.is_empty() || all_have(records, &["mutation_hop"]);
        if !hop_run(&l) || !hop_run(&r) {
            return Err(RunsError::MixedKinds { kind: "hop rows" });
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
        RunDiffKind::Generations(d) => !d.is_empty(),
    };
    let gate = match &kind {
        RunDiffKind::Manifest(_) => {
            let left = side_gate(&l, options.left_store, left_name)?;
            let right = side_gate(&r, options.right_store, right_name)?;
            let (lc, rc) = (options.left_store.is_some(), options.right_store.is_some());
            Some(RunGate {
                gated: left.is_empty() && right.is_empty() && lc && rc,
                left,
                right,
                left_bodies_checked: lc,
                right_bodies_checked: rc,
                allowed_ungated: options.allow_ungated,
            })
        }
        _ => None,
    };
    let ungated = gate
        .as_ref()
        .is_some_and(|g| !g.gated && !g.allowed_ungated);
    Ok(RunDiff {
        kind,
        left_records: l.len(),
        right_records: r.len(),
        differs,
        fails: differs || ungated,
        gate,
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
            RunDiffKind::Generations(_) => "generations",
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
    fn manifests_are_diffed_after_both_gates() {
        use crate::gate::{tool_span_of_values, write_bodies, Body, MemoryStore};
        use serde_json::json;
        let mut store = MemoryStore::new();
        let line = |name: &str, status: &str, store: &mut MemoryStore| {
            let (a, r) = (json!({"q": name}), json!([1]));
            let span = tool_span_of_values(name, &a, &r, status).unwrap();
            let body = |v: &Value| Body::from_value(v, crate::canonical::Form::Python).unwrap();
            write_bodies(store, &span, &body(&a), &body(&r)).unwrap();
            serde_json::to_string(&span).unwrap()
        };
        let ok = line("grep", "ok", &mut store);
        let open = line("edit", "running", &mut store);
        let opts = |allow| DiffOptions {
            left_store: Some(&store as &dyn BodyStore),
            right_store: Some(&store as &dyn BodyStore),
            allow_ungated: allow,
            ..DiffOptions::default()
        };
        // Same runs, both gated: no failure.
        let d = diff_runs_with(&ok, &ok, &opts(false)).unwrap();
        assert!(d.gate.as_ref().unwrap().gated && !d.fails);
        // An open span on the right: the diff is empty, yet the comparison fails, naming it.
        let both = format!("{ok}\n{open}");
        let d = diff_runs_with(&both, &both, &opts(false)).unwrap();
        let g = d.gate.as_ref().unwrap();
        assert!(!d.differs && d.fails && !g.gated);
        assert_eq!(g.right[0].message, "open:edit");
        assert!(!diff_runs_with(&both, &both, &opts(true)).unwrap().fails);
        // Without stores the bodies are unchecked: not gated.
        let d = diff_runs(&ok, &ok, "l", "r").unwrap();
        let g = d.gate.as_ref().unwrap();
        assert!(g.left.is_empty() && !g.left_bodies_checked && !g.gated && d.fails);
        // A body missing from the store.
        let mut thin = store.clone();
        let digest = serde_json::from_str::<Value>(&ok).unwrap()["result_sha256"]
            .as_str()
            .unwrap()
            .to_string();
        thin.remove(&digest);
        let d = diff_runs_with(
            &ok,
            &ok,
            &DiffOptions {
                left_store: Some(&thin),
                right_store: Some(&store),
                ..DiffOptions::default()
            },
        )
        .unwrap();
        let g = d.gate.unwrap();
        assert_eq!(g.left[0].message, format!("missing:{digest}"));
        assert!(g.right.is_empty() && d.fails);
        // Clip-aware spans and hop rows have no export gate.
        let spans =
            r#"{"name":"grep","observed_bytes":10,"injected_bytes":10,"injected_tokens":3}"#;
        let d = diff_runs(spans, spans, "l", "r").unwrap();
        assert!(d.gate.is_none() && !d.fails);
    }

    #[test]
    fn generation_files_diff_beside_the_manifest() {
        let g = |turn: u64, text: &str| {
            serde_json::to_string(&gate::generation_fingerprint(text, Some(turn), None, None))
                .unwrap()
        };
        let left = format!("{}\n{}", g(1, "plan"), g(2, "port 8080"));
        let right = format!("{}\n{}", g(1, "plan"), g(2, "port 5432"));
        let d = diff_runs(&left, &right, "l", "r").unwrap();
        assert_eq!(kind(&d), "generations");
        assert!(d.differs && d.fails && d.gate.is_none());
        assert!(!diff_runs(&left, &left, "l", "r").unwrap().differs);
        let rec = r#"{"name":"grep","status":"ok","args_sha256":"a","result_sha256":"b"}"#;
        assert_eq!(
            diff_runs(&left, rec, "l", "r").unwrap_err().code(),
            "mixed_runs"
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
