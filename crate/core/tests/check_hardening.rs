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
