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
    assert_eq!(r.rows[0].status, Status::SilentClip);
    // The data itself is kept verbatim: only the rendering escapes.
    assert_eq!(r.rows[0].span_id.as_deref(), Some("t1\u{1b}[2J"));
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
    assert!(r.nothing_checked);
    assert_eq!(r.exit_code, 1);
    assert!(render::table(&r).contains(
        "# nothing checked: no line held a tool span (2 skipped, 0 invalid); not a pass"
    ));
    // One checked span is enough for the usual verdict.
    let r = check_bytes(
        b"{\"span_id\":\"a\"}\n{\"name\":\"ls\",\"observed_bytes\":1,\"injected_bytes\":1,\"injected_tokens\":1}\n",
        CheckOptions::default(),
    );
    assert!(!r.nothing_checked);
    assert_eq!(r.exit_code, 0);
    // An empty input skipped nothing: left to the general empty-input rule.
    let r = check_bytes(b"\n\n", CheckOptions::default());
    assert!(!r.nothing_checked);
}
