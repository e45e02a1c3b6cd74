//! The trace readers on traces written by the real libraries: every run of
//! pkg-tests/producers/corpus (LangChain with OpenInference and OpenLLMetry, pydantic-ai, the
//! OpenAI Agents SDK, openai-v2 with util-genai, OpenInference's openai instrumentor, the
//! Vercel AI SDK, Arize Phoenix's exports) against its truth file, which says what each tool
//! returned and what the model server received (`scripts/producers` regenerates both).
//! Every row's status, join and sizes, the format read, and the exit code must match.

use std::path::PathBuf;

use serde_json::Value;
use toolslice::check::{check_bytes, CheckOptions, Report};

fn corpus() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../pkg-tests/producers/corpus")
}

fn truths() -> Vec<(String, Value)> {
    let mut out: Vec<(String, Value)> = std::fs::read_dir(corpus())
        .expect("pkg-tests/producers/corpus")
        .filter_map(|e| {
            let path = e.ok()?.path();
            let name = path.file_name()?.to_str()?.to_string();
            name.ends_with(".truth.json").then(|| {
                let text = std::fs::read_to_string(&path).unwrap();
                (name, serde_json::from_str(&text).unwrap())
            })
        })
        .collect();
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out
}

fn check(truth: &Value, options: CheckOptions) -> Report {
    let trace = corpus().join(truth["trace"].as_str().unwrap());
    let bytes = std::fs::read(&trace).unwrap_or_else(|e| panic!("{}: {e}", trace.display()));
    check_bytes(&bytes, options)
}

/// Every difference between a report and its truth, as readable lines.
fn mismatches(truth: &Value, report: &Report) -> Vec<String> {
    let mut out = Vec::new();
    if report.format != truth["format"].as_str().unwrap() {
        out.push(format!(
            "format {} (want {})",
            report.format, truth["format"]
        ));
    }
    if i64::from(report.exit_code) != truth["exit_code"].as_i64().unwrap() {
        out.push(format!(
            "exit {} (want {})",
            report.exit_code, truth["exit_code"]
        ));
    }
    let rows = truth["rows"].as_array().unwrap();
    if report.rows.len() != rows.len() {
        out.push(format!("{} rows (want {})", report.rows.len(), rows.len()));
    }
    for want in rows {
        let tool = want["tool"].as_str().unwrap();
        let got: Vec<_> = report.rows.iter().filter(|r| r.name == tool).collect();
        let [row] = got.as_slice() else {
            out.push(format!("{tool}: {} rows (want 1)", got.len()));
            continue;
        };
        let status = want["status"].as_str().unwrap();
        let join = want["join"].as_str().unwrap();
        let got_join = row.join.map(|j| j.as_str());
        if row.status.as_str() != status || got_join != Some(join) {
            out.push(format!(
                "{tool}: {}/{:?} (want {status}/{join}) detail={:?} obs={:?} inj={:?} notes={:?}",
                row.status, got_join, row.detail, row.observed_bytes, row.injected_bytes, row.notes
            ));
            continue;
        }
        // What the tool returned, measured as the tool's text (not a framework's wrapper).
        if let Some(obs) = want["observed_bytes"].as_u64() {
            if status != "incomplete" && row.observed_bytes != Some(obs) {
                out.push(format!(
                    "{tool}: observed {:?} (want {obs})",
                    row.observed_bytes
                ));
            }
        }
        // What the model received, except where a format-only change is measured as equal.
        let inj = want["injected_bytes"].as_u64();
        if matches!(status, "ok" | "clipped" | "silent_clip") && row.injected_bytes != inj {
            out.push(format!(
                "{tool}: injected {:?} (want {inj:?})",
                row.injected_bytes
            ));
        }
        if status == "reformatted" && !row.notes.iter().any(|n| n.starts_with("reformatted:")) {
            out.push(format!(
                "{tool}: reformatted without its explanation: {:?}",
                row.notes
            ));
        }
        if status == "incomplete" && row.notes.is_empty() {
            out.push(format!("{tool}: incomplete without a note saying why"));
        }
    }
    if rows.is_empty() && report.nothing_checked.is_none() {
        out.push("no tool call, and no line saying nothing was checked".into());
    }
    out
}

#[test]
fn every_producer_trace_matches_its_truth() {
    let truths = truths();
    assert!(truths.len() >= 20, "the corpus holds {} runs", truths.len());
    let mut failures = Vec::new();
    let mut rows = 0;
    for (name, truth) in &truths {
        let report = check(truth, CheckOptions::default());
        rows += report.rows.len();
        for m in mismatches(truth, &report) {
            failures.push(format!("{name}: {m}"));
        }
    }
    assert!(
        failures.is_empty(),
        "{} mismatches:\n{}",
        failures.len(),
        failures.join("\n")
    );
    assert!(rows >= 90, "{rows} rows checked");
}

#[test]
fn the_corpus_covers_every_outcome() {
    let mut seen = std::collections::BTreeSet::new();
    for (_, truth) in truths() {
        for row in truth["rows"].as_array().unwrap() {
            seen.insert((
                row["status"].as_str().unwrap().to_string(),
                row["join"].as_str().unwrap().to_string(),
            ));
        }
        seen.insert((format!("exit {}", truth["exit_code"]), String::new()));
    }
    for want in ["silent_clip", "clipped", "ok", "reformatted", "incomplete"] {
        assert!(
            seen.iter().any(|(s, _)| s == want),
            "no {want} row in the corpus"
        );
    }
    for join in ["tool_call_id", "order"] {
        assert!(
            seen.iter().any(|(_, j)| j == join),
            "no {join} join in the corpus"
        );
    }
    assert!(seen.contains(&("exit 0".to_string(), String::new())));
    assert!(seen.contains(&("exit 1".to_string(), String::new())));
}

#[test]
fn runs_without_tool_calls_pass_only_when_allowed() {
    let empty: Vec<_> = truths()
        .into_iter()
        .filter(|(_, t)| t["rows"].as_array().unwrap().is_empty())
        .collect();
    assert!(empty.len() >= 2);
    for (name, truth) in empty {
        let strict = check(&truth, CheckOptions::default());
        assert_eq!(strict.exit_code, 1, "{name}");
        let line = strict.nothing_checked.as_deref().unwrap();
        assert!(
            line.starts_with("nothing checked: no tool call in "),
            "{name}: {line}"
        );
        assert!(
            line.contains("model call"),
            "{name}: says what it saw instead: {line}"
        );
        let allowed = check(
            &truth,
            CheckOptions {
                allow_empty: true,
                ..CheckOptions::default()
            },
        );
        assert_eq!(allowed.exit_code, 0, "{name}");
        assert_eq!(allowed.nothing_checked, strict.nothing_checked);
    }
}
