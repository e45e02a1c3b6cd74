//! Secrets in every field of a tool call (issue 13, item 1): the command, the tool's name,
//! the call id, the span options and the text of errors reach the model or the span only
//! redacted, through `pack`, `get_more` and the streaming packer, at every chunk split.

use toolslice::error::Coded;
use toolslice::pack::{
    get_more_from, pack, PackOptions, Packed, Packer, Registry, StreamPacker, ToolResult,
};

const BEARER: &str = "ya29.a0AfB_byC9xQ2Lm7PzKd81mNq";
const GHP: &str = "ghp_aB3dE5fG7hI9jK1lM3nO5pQ7rS9tU1vW3xY5";

/// Fragments of the secrets that must appear nowhere.
fn fragments() -> Vec<String> {
    [BEARER, &GHP[4..]]
        .iter()
        .flat_map(|s| (0..=s.len() - 6).map(move |i| s[i..i + 6].to_string()))
        .collect()
}

fn command() -> String {
    format!(
        "curl -H \"Authorization: Bearer {BEARER}\" https://deploy:{GHP}@github.com/acme/app.git"
    )
}

/// Every string a packed result carries.
fn outputs(p: &Packed) -> String {
    let mut all = serde_json::to_string(p).unwrap();
    all.push_str(&p.envelope.content);
    all
}

fn assert_clean(what: &str, text: &str) {
    for f in fragments() {
        assert!(!text.contains(&f), "{what}: fragment {f:?} in {text}");
    }
}

fn hostile_opts(limit: usize) -> PackOptions {
    PackOptions {
        limit: Some(limit),
        span_id: Some(format!("span token={GHP}")),
        parent_id: Some(format!("parent {GHP}")),
        builder_version: Some(format!("v1 {GHP}")),
        ..PackOptions::default()
    }
}

#[test]
fn the_command_header_is_redacted() {
    let mut r = ToolResult::text("bash", "call_1", "Cloning into 'app'...\nfatal: denied\n");
    r.command = Some(command());
    r.exit_code = Some(128);
    for limit in [70, 200, 400, 4096] {
        let p = pack(&r, &hostile_opts(limit), &Registry::new(), None, None).unwrap();
        assert_clean(&format!("limit {limit}"), &outputs(&p));
        if limit == 4096 {
            assert!(
                p.envelope
                    .content
                    .contains("Authorization: Bearer [REDACTED:bearer_token]"),
                "{}",
                p.envelope.content
            );
            assert!(p.envelope.content.contains("Exit code: 128"));
            assert!(p.envelope.redacted);
            assert!(p.receipts.iter().any(|r| r.field_path == "command"));
        }
    }
}

#[test]
fn hostile_tool_names_and_call_ids_are_redacted_everywhere() {
    let tool = format!("run token={GHP}");
    let call = format!("call {GHP}");
    let text = "line\n".repeat(400);
    let mut packer = Packer::default();
    let r = ToolResult::text(&tool, &call, text.clone());
    let p = packer.pack(&r, &hostile_opts(300), None).unwrap();
    assert_clean("pack", &outputs(&p));
    assert!(p.envelope.truncated);
    // The model pages with the id it was shown.
    let id = p.envelope.tool_call_id.clone();
    let next = p.envelope.next_offset.unwrap();
    let page = packer
        .get_more(&id, next, &call, &hostile_opts(300))
        .unwrap();
    assert_clean("get_more", &outputs(&page));
    assert!(page.envelope.content.starts_with("line\n"));
    let page = get_more_from(&text, &call, 10, &call, 200, &hostile_opts(200)).unwrap();
    assert_clean("get_more_from", &outputs(&page));

    // Errors quote ids: redacted too.
    let err = packer
        .get_more(&format!("id {GHP}"), 0, "c", &PackOptions::default())
        .unwrap_err();
    assert_eq!(err.code(), "not_found");
    assert_clean("error", &err.to_string());
}

#[test]
fn a_stream_redacts_its_header_and_every_split_of_it() {
    let body = format!("Cloning...\nremote: token {GHP} rejected\nfatal: denied\n");
    let reference = {
        let mut s = StreamPacker::new(
            "bash",
            "call_1",
            Some(command()),
            &hostile_opts(4096),
            &Registry::new(),
            None,
        )
        .unwrap();
        s.push(body.as_bytes());
        s.finish(Some(128), false).unwrap()
    };
    assert_clean("stream", &outputs(&reference));
    assert!(reference
        .span
        .injected_preview
        .as_deref()
        .unwrap()
        .contains("Bearer [REDACTED:bearer_token]"));
    for at in 0..=body.len() {
        for limit in [80, 4096] {
            let mut s = StreamPacker::new(
                "bash",
                "call_1",
                Some(command()),
                &hostile_opts(limit),
                &Registry::new(),
                None,
            )
            .unwrap();
            s.push(&body.as_bytes()[..at]);
            s.push(&body.as_bytes()[at..]);
            let p = s.finish(Some(128), false).unwrap();
            assert_clean(&format!("split {at}, limit {limit}"), &outputs(&p));
            if limit == 4096 {
                assert_eq!(p, reference, "split {at}");
            }
        }
    }
}
