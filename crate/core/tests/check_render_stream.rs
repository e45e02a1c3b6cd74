//! Issue 17: the CLI writes a large report piece by piece (head, rows in ranges, tail). The
//! pieces put together must be byte for byte the one-shot renderings: the table, the JSONL
//! rows, and the pretty JSON as `serde_json` writes the whole report.

use toolslice::check::{check_bytes, render, CheckOptions, Report};
use toolslice::formats::FormatOption;

fn inputs() -> Vec<(&'static str, Vec<u8>, CheckOptions)> {
    let hostile = concat!(
        r#"{"span_id":"t1\u001b[2J","name":"read\rok \"q\" \\ \n","observed_bytes":1000,"#,
        r#""injected_bytes":10,"injected_tokens":3,"parent_id":"p\u009b1m","clip_reason":"odd\u2028","#,
        r#""injected_preview":"line1\nline2\t\u0000 \ud83d\ude00 \u202e"}"#,
        "\n",
        r#"{"span_id":"p\u009b1m","name":"agent\u202e","observed_bytes":1,"injected_bytes":1,"injected_tokens":1}"#,
        "\n",
        r#"{"span_id":"x\u0007","observed_bytes":1}"#,
        "\n",
        "not json\n",
        "\n",
        r#"{"span_id":"o","name":"ls","status":"running","observed_bytes":5,"injected_bytes":5,"injected_tokens":2}"#,
        "\n",
    );
    let mut many = String::new();
    for i in 0..300 {
        let inj = if i % 3 == 0 { 100 } else { 1000 };
        many.push_str(&format!(
            r#"{{"span_id":"s{i}","parent_id":"turn-{}","name":"read_file","observed_bytes":1000,"injected_bytes":{inj},"injected_tokens":{},"clip_reason":"none","prompt_builder_version":"v{}"}}"#,
            i / 8,
            inj / 4,
            i % 3
        ));
        many.push('\n');
    }
    let fixtures = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/formats/");
    let otlp = std::fs::read(format!("{fixtures}otlp-genai.json")).expect("fixture");
    let langfuse = std::fs::read(format!("{fixtures}langfuse.jsonl")).expect("fixture");
    let flagged = CheckOptions {
        flagged_only: true,
        ..CheckOptions::default()
    };
    let mut tiny_rows = CheckOptions::default();
    tiny_rows.limits.row_bytes = 4000;
    vec![
        ("empty", Vec::new(), CheckOptions::default()),
        ("blank lines", b"\n\n".to_vec(), CheckOptions::default()),
        (
            "hostile",
            hostile.as_bytes().to_vec(),
            CheckOptions::default(),
        ),
        ("many", many.clone().into_bytes(), CheckOptions::default()),
        ("many flagged only", many.clone().into_bytes(), flagged),
        ("many rows not kept", many.into_bytes(), tiny_rows),
        ("otlp", otlp, CheckOptions::default()),
        (
            "langfuse",
            langfuse,
            CheckOptions {
                format: FormatOption::Auto,
                ..CheckOptions::default()
            },
        ),
    ]
}

/// Rows in ranges of `step` (and one range past the end, which must add nothing).
fn pieces(report: &Report, step: usize, range: fn(&Report, usize, usize) -> String) -> String {
    pieces_of(report, report.rows.len(), step, range)
}

/// The first `n` items in ranges of `step`, then one range past the end.
fn pieces_of(
    report: &Report,
    n: usize,
    step: usize,
    range: fn(&Report, usize, usize) -> String,
) -> String {
    let mut out = String::new();
    let mut from = 0;
    while from < n {
        out.push_str(&range(report, from, from + step));
        from += step;
    }
    out.push_str(&range(report, n, n + 5));
    out
}

#[test]
fn streamed_renderings_equal_the_one_shot_ones() {
    // The table's tail in pieces is exercised with warnings and with notes.
    let (mut warned, mut noted) = (false, false);
    for (name, input, options) in inputs() {
        let report = check_bytes(&input, options);
        if name.starts_with("many") {
            assert!(report.rollup.len() > 10, "{name}: the rollup is exercised");
        }
        let whole_json = serde_json::to_string_pretty(&report).unwrap();
        assert_eq!(render::json(&report), whole_json, "{name}");
        for step in [1, 2, 7, 1000] {
            let json = render::json_head(&report)
                + &pieces(&report, step, render::json_rows)
                + &render::json_tail(&report);
            assert_eq!(json, whole_json, "{name}, step {step}");
            let tail = render::json_middle(&report)
                + &pieces_of(&report, report.rollup.len(), step, render::json_rollup)
                + &render::json_end(&report);
            assert_eq!(tail, render::json_tail(&report), "{name}, step {step}");
            let jsonl = pieces(&report, step, render::jsonl_rows);
            assert_eq!(jsonl, render::jsonl(&report), "{name}, step {step}");
            let table = render::table_head()
                + &pieces(&report, step, render::table_rows)
                + &render::table_tail(&report);
            assert_eq!(table, render::table(&report), "{name}, step {step}");
            let tail = render::table_tail_head(&report)
                + &pieces(&report, step, render::table_warnings)
                + &pieces(&report, step, render::table_notes)
                + &render::table_tail_middle(&report)
                + &pieces_of(&report, report.rollup.len(), step, render::table_rollup);
            assert_eq!(tail, render::table_tail(&report), "{name}, step {step}");
        }
        let rows = report.rows.len();
        warned |= !render::table_warnings(&report, 0, rows).is_empty();
        noted |= !render::table_notes(&report, 0, rows).is_empty();
        // Each JSONL line is byte for byte what serde_json writes for its row.
        let jsonl = render::jsonl(&report);
        assert_eq!(jsonl.lines().count(), report.rows.len(), "{name}");
        for (line, row) in jsonl.lines().zip(report.rows.iter()) {
            assert_eq!(line, serde_json::to_string(&row).unwrap(), "{name}");
        }
        // The JSON is the report, and each JSONL line one of its rows.
        let back: serde_json::Value = serde_json::from_str(&whole_json).unwrap();
        let rows = back["rows"].as_array().unwrap();
        assert_eq!(rows.len(), report.rows.len(), "{name}");
        for (line, row) in render::jsonl(&report).lines().zip(rows) {
            assert_eq!(
                &serde_json::from_str::<serde_json::Value>(line).unwrap(),
                row
            );
        }
    }
    assert!(warned && noted, "warnings {warned}, notes {noted}");
}
