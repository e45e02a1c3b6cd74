//! Issue 13, the checker's half: hostile inputs (terminal escapes, detection steering, a
//! deep parent chain, huge lines) get an honest report, never a green run or a panic.

use toolslice::check::{check_bytes, render, CheckOptions, Status};

#[test]
fn control_characters_are_escaped_in_the_table() {
    // ESC [2J clears the screen; CR + "ok" would overwrite the row's own `silent_clip`.
    let input = concat!(
        r#"{"span_id":"t1\u001b[2J","name":"read\rok              ","observed_bytes":1000,"#,
        r#""injected_bytes":10,"injected_tokens":3,"parent_id":"p\u009b1m"}"#,
        "\n",
        r#"{"span_id":"p\u009b1m","name":"agent\u202e","observed_bytes":1,"injected_bytes":1,"injected_tokens":1}"#,
        "\n",
        r#"{"span_id":"x\u0007","observed_bytes":1}"#,
        "\n"
    );
    let r = check_bytes(input.as_bytes(), CheckOptions::default());
    assert_eq!(r.counts.silent_clip, 1);
    let table = render::table(&r);
    for c in table.chars() {
        assert!(
            c == '\n' || !(c.is_control() || ('\u{202a}'..='\u{202e}').contains(&c)),
            "raw control character {c:?} in the table:\n{table}"
        );
    }
    assert!(table.contains(r"t1\x1b[2J"), "{table}");
    assert!(table.contains(r"read\rok"), "{table}");
    assert!(
        table.contains(r"agent") && table.contains(r"p\x9b1m"),
        "{table}"
    );
    // The skipped line's id is not shown, but its reason is; the rollup names the parent.
    assert!(table.contains(r"# parent p\x9b1m (ok)"), "{table}");
    assert_eq!(r.rows.row(0).status, Status::SilentClip);
    // The data itself is kept verbatim: only the rendering escapes.
    assert_eq!(r.rows.row(0).span_id.as_deref(), Some("t1\u{1b}[2J"));
}

#[test]
fn escaping_leaves_ordinary_text_alone() {
    assert!(matches!(
        render::esc("read_file ünïcode 😀"),
        std::borrow::Cow::Borrowed(_)
    ));
    assert_eq!(
        render::esc("a\u{1b}b\tc\u{7f}\u{202e}"),
        r"a\x1bb\tc\x7f\u{202e}"
    );
}

/// An OTLP export request per line (the Collector's file exporter), with one silent clip.
fn otlp_line(first_attr: &str) -> String {
    let tool = r#"{"traceId":"t","spanId":"a","name":"execute_tool ls","startTimeUnixNano":"1","endTimeUnixNano":"2","attributes":[{"key":"gen_ai.operation.name","value":{"stringValue":"execute_tool"}},{"key":"gen_ai.tool.call.id","value":{"stringValue":"call_1"}},{"key":"gen_ai.tool.call.result","value":{"stringValue":"a.txt b.txt c.txt"}}]}"#;
    let chat = r#"{"traceId":"t","spanId":"b","name":"chat","startTimeUnixNano":"3","endTimeUnixNano":"4","attributes":[{"key":"gen_ai.operation.name","value":{"stringValue":"chat"}},{"key":"gen_ai.input.messages","value":{"stringValue":"[{\"role\":\"tool\",\"parts\":[{\"type\":\"tool_call_response\",\"id\":\"call_1\",\"response\":\"a.txt\"}]}]"}}]}"#;
    format!(
        r#"{{"resourceSpans":[{{"resource":{{"attributes":[{first_attr}]}},"scopeSpans":[{{"spans":[{tool},{chat}]}}]}}]}}"#
    )
}

fn exit_and_format(input: &str) -> (i32, String, u64) {
    let r = check_bytes(input.as_bytes(), CheckOptions::default());
    (r.exit_code, r.format, r.counts.silent_clip)
}

#[test]
fn a_lone_surrogate_on_line_one_does_not_turn_detection_off() {
    let plain = otlp_line(r#"{"key":"service.name","value":{"stringValue":"svc"}}"#);
    assert_eq!(exit_and_format(&plain), (1, "otlp".into(), 1));
    let hostile = otlp_line(r#"{"key":"x","value":{"stringValue":"\ud83d"}}"#);
    // Line 1 is the hostile one; line 2 is a clean export with the silent clip.
    let input = format!("{hostile}\n{plain}\n");
    let r = check_bytes(input.as_bytes(), CheckOptions::default());
    assert_eq!(r.format, "otlp", "{:?}", r.invalid);
    assert_eq!(r.counts.silent_clip, 1);
    assert_eq!(r.exit_code, 1);
    // A single hostile line alone: recognised as OTLP, and its reader reports the line.
    let (exit, format, _) = exit_and_format(&format!("{hostile}\n"));
    assert_eq!((exit, format.as_str()), (1, "otlp"));
}

#[test]
fn deep_nesting_on_line_one_does_not_turn_detection_off() {
    let deep = format!("{}1{}", "[".repeat(200), "]".repeat(200));
    let hostile = otlp_line(&format!(
        r#"{{"key":"x","value":{{"stringValue":"y"}},"junk":{deep}}}"#
    ));
    let plain = otlp_line(r#"{"key":"service.name","value":{"stringValue":"svc"}}"#);
    let r = check_bytes(
        format!("{hostile}\n{plain}\n").as_bytes(),
        CheckOptions::default(),
    );
    assert_eq!(r.format, "otlp");
    assert_eq!(r.counts.silent_clip, 1);
    assert_eq!(r.exit_code, 1);
}

#[test]
fn a_span_line_first_does_not_steer_detection() {
    let span =
        r#"{"span_id":"s1","name":"ls","observed_bytes":5,"injected_bytes":5,"injected_tokens":2}"#;
    let plain = otlp_line(r#"{"key":"service.name","value":{"stringValue":"svc"}}"#);
    // Within the detection window: read as OTLP (the span line is then invalid).
    let r = check_bytes(
        format!("{span}\n{plain}\n").as_bytes(),
        CheckOptions::default(),
    );
    assert_eq!((r.format.as_str(), r.counts.silent_clip), ("otlp", 1));
    assert_eq!(r.exit_code, 1);
    // Past the window: read as span JSONL, and the OTLP line is invalid, never skipped.
    let mut input = String::new();
    for _ in 0..20 {
        input.push_str(span);
        input.push('\n');
    }
    input.push_str(&plain);
    input.push('\n');
    let r = check_bytes(input.as_bytes(), CheckOptions::default());
    assert_eq!(r.format, "spans");
    assert_eq!(r.counts.skipped, 0);
    assert_eq!(r.counts.invalid, 1);
    assert!(
        r.invalid[0].error.contains("--format otlp"),
        "{:?}",
        r.invalid
    );
    assert_eq!(r.exit_code, 1);
}

#[test]
fn nothing_checked_is_never_a_pass() {
    // Span JSONL whose every line is skipped: no name anywhere.
    let r = check_bytes(
        b"{\"span_id\":\"a\"}\n{\"span_id\":\"b\"}\n",
        CheckOptions::default(),
    );
    assert_eq!(r.counts.total, 0);
    assert!(r.nothing_checked.is_some());
    assert_eq!(r.exit_code, 1);
    assert!(render::table(&r).contains("\n# nothing checked: "));
    // One checked span is enough for the usual verdict.
    let r = check_bytes(
        b"{\"span_id\":\"a\"}\n{\"name\":\"ls\",\"observed_bytes\":1,\"injected_bytes\":1,\"injected_tokens\":1}\n",
        CheckOptions::default(),
    );
    assert!(r.nothing_checked.is_none());
    assert_eq!(r.exit_code, 0);
}

mod common;
#[cfg(not(target_arch = "wasm32"))]
use proptest::prelude::*;
#[cfg(not(target_arch = "wasm32"))]
use std::collections::HashMap;
use toolslice::check::MAX_ROLLUP_EXAMPLES;

/// A chain of `n` fine spans, each with one silently clipped leaf.
fn chain_with_leaves(n: usize, every: usize) -> String {
    let mut out = String::new();
    for i in 0..n {
        let parent = if i == 0 {
            String::new()
        } else {
            format!(r#","parent_id":"c{}""#, i - 1)
        };
        out.push_str(&format!(
            "{{\"span_id\":\"c{i}\"{parent},\"name\":\"agent\",\"observed_bytes\":1,\"injected_bytes\":1,\"injected_tokens\":1}}\n"
        ));
        if i % every == 0 {
            out.push_str(&format!(
                "{{\"span_id\":\"leaf{i}\",\"parent_id\":\"c{i}\",\"name\":\"read\",\"observed_bytes\":100,\"injected_bytes\":1,\"injected_tokens\":1}}\n"
            ));
        }
    }
    out
}

#[test]
fn rollup_output_is_linear_in_the_chain() {
    let n = 2000;
    let r = check_bytes(chain_with_leaves(n, 1).as_bytes(), CheckOptions::default());
    assert_eq!(r.rollup.len(), n);
    let rollup = r.rollup.to_vec();
    // The root hides every leaf; the deepest parent only its own.
    assert_eq!(rollup[0].span_id, "c0");
    assert_eq!(rollup[0].silent_clip, n as u64);
    assert_eq!(rollup[n - 1].silent_clip, 1);
    assert!(r
        .rollup
        .iter()
        .all(|e| e.flagged.len() <= MAX_ROLLUP_EXAMPLES));
    // The first examples in input order.
    assert_eq!(rollup[0].flagged[..2], ["leaf0", "leaf1"]);
    let table = render::table(&r);
    // Before: every leaf under every ancestor, some 34 MB; now a bounded line per parent.
    assert!(table.len() < 600 * (2 * n), "{} bytes", table.len());
    assert!(table.contains(&format!(
        "# parent c0 (ok) hides silent_clip={n} incomplete=0: leaf0,leaf1,"
    )));
    assert!(table.contains(&format!("(+{} more)\n", n - MAX_ROLLUP_EXAMPLES)));
}

/// The rollup as it was defined before it was made linear: walk up from every failing span,
/// charge every ancestor whose own span does not fail the run, stop at a cycle.
#[cfg(not(target_arch = "wasm32"))]
fn naive_rollup(rows: &[toolslice::check::Row]) -> Vec<(String, u64, u64, Vec<String>)> {
    let mut by_line: Vec<&toolslice::check::Row> = rows.iter().collect();
    by_line.sort_by_key(|r| r.line);
    let mut node: HashMap<&str, &toolslice::check::Row> = HashMap::new();
    for r in &by_line {
        if let Some(id) = r.span_id.as_deref() {
            node.entry(id).or_insert(r);
        }
    }
    let mut out: HashMap<String, (u64, u64, Vec<String>)> = HashMap::new();
    for r in by_line.iter().filter(|r| r.status.fails_run()) {
        let Some(mut pid) = r.parent_id.clone() else {
            continue;
        };
        let label = r
            .span_id
            .clone()
            .unwrap_or_else(|| format!("line {}", r.line));
        let mut seen = Vec::new();
        loop {
            if seen.contains(&pid) {
                break;
            }
            seen.push(pid.clone());
            let n = node.get(pid.as_str());
            if !n.is_some_and(|n| n.status.fails_run()) {
                let e = out.entry(pid.clone()).or_default();
                match r.status {
                    Status::SilentClip => e.0 += 1,
                    _ => e.1 += 1,
                }
                if e.2.len() < MAX_ROLLUP_EXAMPLES {
                    e.2.push(label.clone());
                }
            }
            match n.and_then(|n| n.parent_id.clone()) {
                Some(p) => pid = p,
                None => break,
            }
        }
    }
    let mut list: Vec<_> = out.into_iter().map(|(k, (s, i, f))| (k, s, i, f)).collect();
    list.sort();
    list
}

/// A run of 1-40 spans over 1 to n+3 ids (so ids repeat and parents are often missing or
/// cyclic): four in five have a parent, one in four is silently clipped, one in eight is
/// still running.
#[cfg(not(target_arch = "wasm32"))]
fn rollup_run() -> impl Strategy<Value = String> {
    (1..=40usize)
        .prop_flat_map(|n| {
            let ids = 1..(n as u64 + 4);
            ids.prop_flat_map(move |ids| {
                prop::collection::vec(
                    (
                        0..ids,
                        prop::option::weighted(0.8, 0..ids),
                        prop::bool::weighted(0.25),
                        prop::bool::weighted(0.125),
                    ),
                    n,
                )
            })
        })
        .prop_map(|spans| {
            let mut input = String::new();
            for (id, parent, clipped, running) in spans {
                let parent = parent.map_or(String::new(), |p| format!(r#","parent_id":"s{p}""#));
                let inj = if clipped { 1 } else { 10 };
                let status = if running { r#","status":"running""# } else { "" };
                input.push_str(&format!(
                    "{{\"span_id\":\"s{id}\"{parent}{status},\"name\":\"t\",\"observed_bytes\":10,\"injected_bytes\":{inj},\"injected_tokens\":1}}\n"
                ));
            }
            input
        })
}

// proptest is a native-only dev-dependency (see Cargo.toml): the property is too.
#[cfg(not(target_arch = "wasm32"))]
proptest! {
    #![proptest_config(common::proptest_config(400))]
    #[test]
    fn linear_rollup_equals_the_walk_up_definition(input in rollup_run()) {
        let r = check_bytes(input.as_bytes(), CheckOptions::default());
        let mut got: Vec<_> = (r.rollup.iter())
            .map(|e| {
                (
                    e.span_id.clone(),
                    e.silent_clip,
                    e.incomplete,
                    e.flagged.clone(),
                )
            })
            .collect();
        got.sort();
        let want = naive_rollup(&r.rows.to_vec());
        prop_assert_eq!(got, want, "{}", input);
    }
}

use toolslice::check::{Checker, Limits, SPAN_FACT_BYTES};

fn limited(limits: Limits) -> CheckOptions {
    CheckOptions {
        flagged_only: true,
        limits,
        ..CheckOptions::default()
    }
}

#[test]
fn past_the_fact_budget_the_report_is_partial_and_says_so() {
    // 200 spans in a chain; facts for about 50 of them.
    let input = chain_with_leaves(100, 1);
    let budget = 50 * (SPAN_FACT_BYTES + 8) + 2000;
    let r = check_bytes(
        input.as_bytes(),
        limited(Limits {
            fact_bytes: budget,
            ..Limits::default()
        }),
    );
    // Every span is still counted and classified, and the run still fails.
    assert_eq!(r.counts.total, 200);
    assert_eq!(r.counts.silent_clip, 100);
    assert_eq!(r.exit_code, 1);
    let nk = &r.not_kept;
    let from = nk.facts_from_line.expect("facts ran out");
    assert!(nk.spans > 100 && nk.spans < 200, "{nk:?}");
    let tool_spans: u64 = r.tools.iter().map(|t| t.spans).sum();
    assert_eq!(tool_spans + nk.spans, 200);
    assert!(r.rollup.iter().all(|e| e.line.is_none_or(|l| l < from)));
    assert!(render::table(&r).contains(&format!(
        "# not kept (memory limit): the facts of {} spans from line {from} on;",
        nk.spans
    )));
}

#[test]
fn past_the_row_budget_rows_are_counted_not_listed() {
    let input = chain_with_leaves(100, 1);
    let r = check_bytes(
        input.as_bytes(),
        limited(Limits {
            row_bytes: 20 * (toolslice::check::ROW_BYTES + 40),
            ..Limits::default()
        }),
    );
    assert_eq!(r.counts.silent_clip, 100);
    assert!(r.rows.len() < 30 && !r.rows.is_empty());
    assert_eq!(r.rows.len() as u64 + r.not_kept.rows, 100);
    assert!(render::table(&r).contains("rows from line "));
}

#[test]
fn a_line_past_the_limit_is_too_large_and_named() {
    let long = format!(
        "{{\"name\":\"x\",\"injected_preview\":\"{}\",\"observed_bytes\":1}}",
        "a".repeat(5000)
    );
    let ok = r#"{"name":"ls","observed_bytes":1,"injected_bytes":1,"injected_tokens":1}"#;
    let input = format!("{ok}\n{long}\n{ok}\n{long}");
    let options = CheckOptions {
        limits: Limits {
            line_bytes: 1000,
            ..Limits::default()
        },
        ..CheckOptions::default()
    };
    let whole = check_bytes(input.as_bytes(), options.clone());
    assert_eq!(whole.counts.total, 2);
    assert_eq!(whole.counts.invalid, 2);
    assert_eq!(whole.invalid[0].line, 2);
    assert_eq!(whole.invalid[0].kind.as_str(), "too_large");
    assert!(
        whole.invalid[0].error.contains("line is 5053 bytes"),
        "{:?}",
        whole.invalid
    );
    assert_eq!(whole.invalid[1].line, 4);
    assert_eq!(whole.exit_code, 1);
    // Chunked anywhere, the same report.
    for size in [1, 7, 999, 1001, 4096] {
        let mut checker = Checker::new(options.clone());
        for chunk in input.as_bytes().chunks(size) {
            checker.push(chunk);
        }
        assert_eq!(checker.finish(), whole, "chunks of {size}");
    }
    // A trace read line by line, and a document, are bounded the same way.
    let otlp = otlp_line(&format!(
        r#"{{"key":"pad","value":{{"stringValue":"{}"}}}}"#,
        "p".repeat(3000)
    ));
    let r = check_bytes(format!("{otlp}\n").as_bytes(), options.clone());
    assert_eq!(r.invalid[0].kind.as_str(), "too_large");
    assert_eq!(r.exit_code, 1);
    let doc = format!("{{\n\"resourceSpans\": []{}}}\n", " ".repeat(3000));
    let options = CheckOptions {
        limits: Limits {
            document_bytes: 1000,
            ..Limits::default()
        },
        ..CheckOptions::default()
    };
    let r = check_bytes(doc.as_bytes(), options);
    assert_eq!(r.invalid[0].kind.as_str(), "too_large");
    assert_eq!(r.exit_code, 1);
}
