//! The packer: seed 004's packing tests, span records that pass `toolslice check` by
//! construction, outcomes that survive every budget, no secret fragment at any budget,
//! paging, and the streaming packer.

mod common;

#[cfg(not(target_arch = "wasm32"))]
use proptest::prelude::*;
use serde_json::{json, Value};
use toolslice::check::{check_bytes, CheckOptions, Status};
use toolslice::pack::{
    pack, Body, Envelope, Kind, PackOptions, Packed, Packer, Registry, StreamPacker, ToolResult,
    ToolSpec, TOO_LARGE,
};
use toolslice::span::SpanRecord;
use toolslice::truncate::{Offsets, SegmentKind, Unit};

const GH: &str = "ghp_aB3dE5fG7hI9jK1lM3nO5pQ7rS9tU1vW3xY5";

fn opts(limit: usize) -> PackOptions {
    PackOptions {
        limit: Some(limit),
        ..PackOptions::default()
    }
}

fn run(result: &ToolResult, limit: usize) -> Packed {
    pack(result, &opts(limit), &Registry::new(), None, None).unwrap()
}

/// The spans as a JSONL run, checked by the checker.
fn check(spans: &[SpanRecord]) -> toolslice::check::Report {
    let mut run = String::new();
    for s in spans {
        run.push_str(&serde_json::to_string(s).unwrap());
        run.push('\n');
    }
    check_bytes(run.as_bytes(), CheckOptions::default())
}

fn assert_checks(packed: &Packed) {
    let report = check(std::slice::from_ref(&packed.span));
    assert_eq!(report.exit_code, 0, "{:?}", packed.span);
    let status = report.rows.row(0).status;
    assert!(
        matches!(status, Status::Ok | Status::Clipped),
        "{status:?}: {:?}",
        packed.span
    );
}

// --- Seed 004, "How to test packing" ------------------------------------------------

#[test]
fn small_result_round_trips_unchanged() {
    let v = json!({"job": "build-42", "state": "done", "ok": true});
    let p = run(&ToolResult::json("get_job", "call_1", v.clone()), 80);
    assert!(!p.envelope.truncated);
    assert_eq!(
        serde_json::from_str::<Value>(&p.envelope.content).unwrap(),
        v
    );
    assert_eq!(p.envelope.role, "tool");
    assert_eq!(p.envelope.tool_call_id, "call_1");
    assert_eq!(p.span.clip_reason.as_deref(), Some("none"));
    assert_eq!(p.span.sha256_observed, p.span.sha256_injected);
    assert_checks(&p);
    let p = run(&ToolResult::text("ping", "call_3", "pong"), 80);
    assert_eq!(p.envelope.content, "pong");
}

#[test]
fn huge_result_is_flagged_within_the_limit_with_a_hint() {
    let log = (0..200)
        .map(|i| format!("log line {i}\n"))
        .collect::<String>();
    let p = run(&ToolResult::text("get_logs", "call_2", log.clone()), 400);
    assert!(p.envelope.truncated);
    assert!(p.envelope.content.len() <= 400);
    let next = p.envelope.next_offset.expect("next_offset");
    assert!(p
        .envelope
        .hint
        .as_deref()
        .unwrap()
        .contains("get_more(id=\"call_2\""));
    assert!(p.envelope.content.contains("get_more"));
    assert_eq!(p.stored.as_ref().unwrap().text, log);
    assert!(next > 0 && next < log.len() as u64);
    assert_eq!(
        p.span.clip_reason.as_deref(),
        Some("tool_result_char_limit")
    );
    assert!(p.span.injected_bytes.unwrap() < p.span.observed_bytes.unwrap());
    assert_checks(&p);
}

// --- The cut, for a reader that shows both ends (the page's classroom packer) ----------

fn with_segments(limit: usize) -> PackOptions {
    PackOptions {
        limit: Some(limit),
        unit: Unit::Chars,
        segments: true,
        ..PackOptions::default()
    }
}

/// The output segments tile the content, and every kept one is a verbatim copy of the
/// source range it names.
fn assert_cut_maps_content(p: &Packed) {
    let cut = p.cut.as_ref().expect("segments were asked for");
    let content = &p.envelope.content;
    let mut at = 0;
    for s in &cut.segments {
        assert_eq!(
            s.output[0], at,
            "segments tile the content: {:?}",
            cut.segments
        );
        at = s.output[1];
        if s.kind == SegmentKind::Kept {
            let [from, to] = s.source.expect("kept text names its source");
            assert_eq!(&content[s.output[0]..s.output[1]], &cut.source[from..to]);
        } else {
            assert!(s.source.is_none());
        }
    }
    assert_eq!(at, content.len());
}

#[test]
fn segments_map_the_content_onto_the_redacted_result() {
    // Seed 004's get_logs: 200 characters with a token on the second line, limit 80.
    let log = format!(
        "job 42 started\nauth token={GH}\n{}",
        "wrote a batch of rows\n".repeat(7)
    );
    let p = pack(
        &ToolResult::text("get_logs", "call_2", log.clone()),
        &with_segments(80),
        &Registry::new(),
        None,
        None,
    )
    .unwrap();
    assert!(p.envelope.truncated);
    let cut = p.cut.as_ref().unwrap();
    assert_eq!(cut.offsets, Offsets::Utf8);
    assert!(
        !cut.source.contains(&GH[4..12]),
        "the source is the redacted text"
    );
    assert_eq!(cut.source, p.stored.as_ref().unwrap().text);
    assert_cut_maps_content(&p);
    assert!(cut.segments.iter().any(|s| s.kind == SegmentKind::Marker));
    let kept: usize = (cut.segments.iter())
        .filter_map(|s| s.source.map(|[a, b]| b - a))
        .sum();
    assert_eq!(
        (cut.source.len() - kept) as u64,
        p.envelope.omitted.bytes,
        "what no kept segment covers is what the envelope says was omitted"
    );
    assert_eq!(cut.redacted.len(), p.receipts.len());
    for (range, receipt) in cut.redacted.iter().zip(&p.receipts) {
        assert_eq!(&cut.source[range[0]..range[1]], receipt.replacement);
    }

    // Not asked for: no copy of the result.
    assert!(run(&ToolResult::text("get_logs", "call_2", log), 80)
        .cut
        .is_none());
}

#[test]
fn segments_of_a_whole_result_and_of_the_too_large_error() {
    let p = pack(
        &ToolResult::text("ping", "call_3", "pong"),
        &with_segments(80),
        &Registry::new(),
        None,
        None,
    )
    .unwrap();
    assert_cut_maps_content(&p);
    let cut = p.cut.unwrap();
    assert_eq!(cut.source, "pong");
    assert!(cut.redacted.is_empty());
    assert_eq!(cut.segments.len(), 1);
    assert_eq!(cut.segments[0].source, Some([0, 4]));

    // Not pageable and too long: the content is the short error, made of no source text.
    let opts = PackOptions {
        pageable: Some(false),
        ..with_segments(60)
    };
    let p = pack(
        &ToolResult::text("get_logs", "call_2", "x".repeat(500)),
        &opts,
        &Registry::new(),
        None,
        None,
    )
    .unwrap();
    assert_eq!(p.envelope.error.as_deref(), Some("result_too_large"));
    let cut = p.cut.unwrap();
    assert!(cut.segments.is_empty());
    assert_eq!(cut.source.len(), 500);
}

#[test]
fn segment_offsets_convert_to_utf16_for_javascript() {
    // Characters of 1, 2, 3 and 4 UTF-8 bytes (the last is 2 UTF-16 units).
    let text = format!("{GH} é€😀 {}", "ünïcödé line\n".repeat(20));
    let p = pack(
        &ToolResult::text("get_logs", "call_2", text),
        &with_segments(90),
        &Registry::new(),
        None,
        None,
    )
    .unwrap();
    assert!(p.envelope.truncated);
    let bytes = p.cut.clone().unwrap();
    let units = bytes.clone().into_utf16_offsets(&p.envelope.content);
    assert_eq!(units.offsets, Offsets::Utf16);
    let utf16 = |s: &str, at: usize| s[..at].encode_utf16().count();
    let content = &p.envelope.content;
    for (b, u) in bytes.segments.iter().zip(&units.segments) {
        assert_eq!(b.kind, u.kind);
        assert_eq!(u.output, b.output.map(|at| utf16(content, at)));
        assert_eq!(
            u.source,
            b.source.map(|r| r.map(|at| utf16(&bytes.source, at)))
        );
    }
    for (b, u) in bytes.redacted.iter().zip(&units.redacted) {
        assert_eq!(*u, b.map(|at| utf16(&bytes.source, at)));
    }
    assert!(!units.redacted.is_empty());
    assert_eq!(
        units.clone().into_utf16_offsets(content),
        units,
        "idempotent"
    );
}

#[test]
fn fake_token_is_redacted() {
    let p = run(
        &ToolResult::json(
            "deploy",
            "c",
            json!({"ok": true, "note": format!("used {GH}")}),
        ),
        4096,
    );
    assert!(p.envelope.redacted);
    assert!(!p.envelope.content.contains(&GH[4..12]));
    assert!(p.envelope.content.contains("[REDACTED:github_token]"));
    assert_eq!(p.receipts[0].field_path, "$.note");
    assert_eq!(p.span.clip_reason.as_deref(), Some("redaction"));
    assert!(!p.span.injected_preview.as_deref().unwrap().contains("aB3d"));
    assert_checks(&p);
}

#[test]
fn receipt_id_survives_every_budget() {
    let v = json!({
        "ok": true,
        "receipt_id": "rcpt_7f3a9c",
        "charges": (0..300).map(|i| json!({"n": i, "memo": "x".repeat(30)})).collect::<Vec<_>>()
    });
    let full = v.to_string().len();
    let mut too_large = 0;
    let mut refused = 0;
    for limit in (30..full + 10).step_by(97) {
        match pack(
            &ToolResult::json("charge", "c", v.clone()),
            &opts(limit),
            &Registry::new(),
            None,
            None,
        ) {
            Ok(p) => {
                assert!(p.envelope.content.len() <= limit, "limit {limit}");
                if p.envelope.error.is_some() {
                    too_large += 1;
                    assert!(p.envelope.content.starts_with(TOO_LARGE));
                }
                assert!(
                    p.envelope.content.contains("rcpt_7f3a9c"),
                    "limit {limit}: {}",
                    p.envelope.content
                );
                assert_eq!(p.envelope.outcome["receipt_id"], "rcpt_7f3a9c");
                assert_checks(&p);
            }
            Err(e) => {
                refused += 1;
                assert_eq!(
                    toolslice::error::Coded::code(&e),
                    "budget_too_small",
                    "limit {limit}"
                )
            }
        }
    }
    // Budgets too small for the outcomes get the short error, or an error when not even
    // that fits; never a content without the receipt id.
    assert!(too_large + refused > 0);
}

#[test]
fn the_assembler_only_receives_the_packed_object() {
    // The assembler's input type is the envelope: it cannot be handed the raw result.
    fn assemble(messages: &mut Vec<Value>, obs: &Envelope) {
        messages.push(serde_json::to_value(obs).unwrap());
    }
    let raw = json!({"ok": false, "error": {"code": "E_AUTH"}, "raw_http": "HTTP/1.1 401\r\nSet-Cookie: sid=abc123secret", "token": "tok_live_abcdef123"});
    let p = run(&ToolResult::json("login", "call_9", raw.clone()), 4096);
    let mut messages = Vec::new();
    assemble(&mut messages, &p.envelope);
    let sent = serde_json::to_string(&messages).unwrap();
    assert!(!sent.contains("abc123secret") && !sent.contains("tok_live_abcdef123"));
    assert!(!sent.contains("raw_http"));
    assert!(sent.contains("E_AUTH"));
    assert_eq!(messages[0]["role"], "tool");
    assert_eq!(messages[0]["tool_call_id"], "call_9");
    assert_eq!(p.envelope.outcome["ok"], false);
    assert_eq!(p.span.status.as_deref(), Some("error"));
}

// --- Terminal results, shaping, binary ------------------------------------------------

#[test]
fn terminal_exit_code_is_outside_the_cut() {
    let mut out = (0..5000)
        .map(|i| format!("   compiling module {i}\n"))
        .collect::<String>();
    out.push_str("error[E0425]: cannot find value `port`\n");
    out.push_str(&(0..3000).map(|i| format!("note {i}\n")).collect::<String>());
    let mut r = ToolResult::text("bash", "c", out);
    r.exit_code = Some(101);
    r.command = Some("cargo build".into());
    for limit in [300, 800, 2000, 8000] {
        let p = run(&r, limit);
        assert!(p.envelope.content.len() <= limit);
        assert!(p.envelope.content.contains("Exit code: 101\n"), "{limit}");
        assert_eq!(p.envelope.outcome["exit_code"], 101);
        assert_eq!(p.span.status.as_deref(), Some("error"));
        assert_checks(&p);
    }
    let p = run(&r, 8000);
    assert!(p.envelope.content.contains("error[E0425]"));
    // A fitting terminal result: observed and injected are the same rendering.
    let mut small = ToolResult::text("bash", "c", "ok\n");
    small.exit_code = Some(0);
    let p = run(&small, 1000);
    assert!(p.envelope.content.starts_with("Tool: bash\n"));
    assert_eq!(p.span.clip_reason.as_deref(), Some("none"));
    assert_eq!(p.span.sha256_observed, p.span.sha256_injected);
    assert_eq!(p.span.observed_bytes, p.span.injected_bytes);
}

#[test]
fn html_error_pages_become_structured_errors() {
    let page = format!("<!DOCTYPE html><html><head><title>503 Service Unavailable</title></head><body><h1>Service Unavailable</h1>{}</body></html>", "<p>filler</p>".repeat(500));
    let p = run(&ToolResult::text("fetch_url", "c", page), 2000);
    let v: Value = serde_json::from_str(&p.envelope.content).unwrap();
    assert_eq!(v["error"]["status"], 503);
    assert!(!p.envelope.truncated);
    assert_eq!(p.shape.html_pages, 1);
    assert_eq!(
        p.span.clip_reason.as_deref(),
        Some("tool_result_char_limit")
    );
    assert_checks(&p);
}

#[test]
fn binary_is_omitted() {
    let r = ToolResult {
        body: Body::Binary {
            bytes: 123456,
            media_type: Some("image/png".into()),
        },
        ..ToolResult::text("screenshot", "c", "")
    };
    let p = run(&r, 1000);
    assert_eq!(p.span.clip_reason.as_deref(), Some("binary_omitted"));
    assert!(p.envelope.content.contains("123456 bytes of image/png"));
    assert_checks(&p);
}

#[test]
fn unpageable_tools_get_the_short_error() {
    let mut reg = Registry::new();
    reg.register(
        "cat_secrets",
        ToolSpec {
            kind: Some(Kind::File),
            max_bytes: 200,
            page_bytes: None,
            pageable: false,
        },
    );
    let text = "line\n".repeat(100);
    let p = pack(
        &ToolResult::text("cat_secrets", "c", text),
        &PackOptions::default(),
        &reg,
        None,
        None,
    )
    .unwrap();
    assert!(p.envelope.content.starts_with(TOO_LARGE));
    assert_eq!(p.envelope.error.as_deref(), Some("result_too_large"));
    assert!(p.envelope.next_offset.is_none());
    assert_checks(&p);
    // Unknown tools get the small default.
    let p = pack(
        &ToolResult::text("mystery", "c", "y\n".repeat(10_000)),
        &PackOptions::default(),
        &reg,
        None,
        None,
    )
    .unwrap();
    assert!(p.envelope.content.len() <= toolslice::pack::DEFAULT_MAX_BYTES);
}

// --- get_more -----------------------------------------------------------------------------

#[test]
fn get_more_pages_through_the_redacted_rest() {
    let mut packer = Packer::default();
    let text: String = (0..400).map(|i| format!("row {i} token={GH}\n")).collect();
    let o = PackOptions {
        limit: Some(600),
        page_bytes: Some(700),
        ..PackOptions::default()
    };
    let first = packer
        .pack(&ToolResult::text("rows", "call_1", text.clone()), &o, None)
        .unwrap();
    let mut offset = first.envelope.next_offset.unwrap();
    let mut spans = vec![first.span.clone()];
    let mut pages = 0;
    loop {
        let p = packer
            .get_more(
                "call_1",
                offset,
                &format!("call_more_{pages}"),
                &PackOptions::default(),
            )
            .unwrap();
        assert!(p.envelope.content.len() <= 700);
        assert!(!p.envelope.content.contains("aB3dE5"));
        spans.push(p.span.clone());
        pages += 1;
        match p.envelope.next_offset {
            Some(n) => {
                assert!(n > offset);
                offset = n;
            }
            None => break,
        }
    }
    assert!(pages > 10);
    let report = check(&spans);
    assert_eq!(report.exit_code, 0);
    let err = packer
        .get_more("nope", 0, "c", &PackOptions::default())
        .unwrap_err();
    assert_eq!(toolslice::error::Coded::code(&err), "not_found");
}

// --- No leak through any cut --------------------------------------------------------------

#[test]
fn no_secret_fragment_at_any_budget() {
    let secrets = [
        GH.to_string(),
        "sk-proj-Qw3rTy8uIoP1aSdFgHjKl2ZxCvBnM4qWeRtYuIoPaS5dFgHjKlZxC".to_string(),
        "AKIAQ3EGRIVPZ7NHK2JD".to_string(),
        "hunter2Xy9Qz".to_string(),
    ];
    let mut text = String::new();
    for i in 0..60 {
        text.push_str(&format!("step {i}: building module m{i}\n"));
        if i % 15 == 3 {
            text.push_str(&format!("export GITHUB_TOKEN={}\n", secrets[0]));
            text.push_str(&format!("{{\"api_key\": \"{}\"}}\n", secrets[1]));
            text.push_str(&format!("aws {} password={}\n", secrets[2], secrets[3]));
        }
    }
    let without: String = secrets
        .iter()
        .fold(text.clone(), |t, s| t.replace(s.as_str(), ""));
    let fragments: Vec<String> = secrets
        .iter()
        .flat_map(|s| (0..=s.len() - 4).map(move |i| s[i..i + 4].to_string()))
        .filter(|f| !without.contains(f.as_str()) && !"[REDACTED:".contains(f.as_str()))
        .collect();
    let mut checked = 0;
    let mut r = ToolResult::text("bash", "c", text.clone());
    r.exit_code = Some(1);
    // Every budget, with the kind chosen by sniffing (terminal here) and as search results.
    for kind in [None, Some(Kind::Search)] {
        for limit in 1..=text.len() + 200 {
            let o = PackOptions {
                limit: Some(limit),
                kind,
                ..PackOptions::default()
            };
            let Ok(p) = pack(&r, &o, &Registry::new(), None, None) else {
                continue;
            };
            checked += 1;
            let outputs = [
                p.envelope.content.as_str(),
                p.span.injected_preview.as_deref().unwrap(),
                p.envelope.hint.as_deref().unwrap_or(""),
                p.stored.as_ref().map_or("", |s| s.text.as_str()),
            ];
            for out in outputs {
                for f in &fragments {
                    assert!(
                        !out.contains(f.as_str()),
                        "limit {limit}: fragment {f:?} in {out:?}"
                    );
                }
            }
            let receipts = serde_json::to_string(&p.receipts).unwrap();
            for f in &fragments {
                assert!(!receipts.contains(f.as_str()));
            }
        }
    }
    assert!(checked > 1000);
}

// --- Property: budget, determinism, check -------------------------------------------------

/// A tool result's text: up to 300 words (an error line, JSON, a secret-looking token,
/// non-ASCII, a tab...), each followed by a newline (one in three) or a space.
#[cfg(not(target_arch = "wasm32"))]
fn pack_text() -> impl Strategy<Value = String> {
    const WORDS: [&str; 8] = [
        "ok",
        "error: failed",
        "warning",
        "{\"a\":1}",
        "é",
        "token=abc123xyz",
        "\t",
        "done",
    ];
    prop::collection::vec(
        (
            prop::sample::select(&WORDS[..]),
            prop::bool::weighted(1.0 / 3.0),
        ),
        0..300,
    )
    .prop_map(|words| {
        let mut t = String::new();
        for (w, newline) in words {
            t.push_str(w);
            t.push(if newline { '\n' } else { ' ' });
        }
        t
    })
}

// proptest is a native-only dev-dependency (see Cargo.toml): the property is too.
#[cfg(not(target_arch = "wasm32"))]
proptest! {
    #![proptest_config(common::proptest_config(300))]
    /// Every pack that succeeds fits its budget, is deterministic, and its span passes the
    /// checker (each case's span alone, so a failure names one result).
    #[test]
    fn every_pack_fits_and_checks(
        t in pack_text(),
        limit in 1..=3000usize,
        exit_code in prop::option::weighted(0.5, 0..3i64),
    ) {
        let mut r = ToolResult::text("tool", "c1", t);
        r.exit_code = exit_code;
        let o = opts(limit);
        if let Ok(p) = pack(&r, &o, &Registry::new(), None, None) {
            prop_assert!(p.envelope.content.len() <= limit);
            let again = pack(&r, &o, &Registry::new(), None, None).unwrap();
            prop_assert_eq!(&again, &p, "deterministic");
            let report = check(std::slice::from_ref(&p.span));
            prop_assert_eq!(report.exit_code, 0, "{:?}", p.span);
            prop_assert_eq!(
                report.counts.silent_clip + report.counts.incomplete + report.counts.hash_mismatch,
                0
            );
        }
    }
}

// --- Streams ------------------------------------------------------------------------------

#[test]
fn stream_matches_pack_when_it_fits_and_bounds_memory_when_not() {
    let text = "line one\nline two\n";
    let mut s = StreamPacker::new(
        "bash",
        "c",
        Some("ls".into()),
        &opts(1000),
        &Registry::new(),
        None,
    )
    .unwrap();
    s.push(text.as_bytes());
    let streamed = s.finish(Some(0), false).unwrap();
    let mut r = ToolResult::text("bash", "c", text);
    r.exit_code = Some(0);
    r.command = Some("ls".into());
    let packed = run(&r, 1000);
    assert_eq!(streamed, packed);

    // 8 MB through a 4 KB budget: kept (within the cap) and paged like `pack` pages it, the
    // error line in the middle shown, the secret never seen.
    let limit = 4096;
    let stream_8mb = |packer: &mut Packer, cap: Option<usize>| {
        let o = PackOptions {
            stream_cap: cap,
            ..opts(limit)
        };
        let mut s = packer.stream("bash", "c2", None, &o).unwrap();
        let mut max_held = 0;
        let line = "compiling crate foo v1.2.3 ... ok\n";
        let mut sent = 0u64;
        for i in 0..240_000u32 {
            let mut chunk = line.to_string();
            if i == 120_000 {
                chunk = format!("error[E0599]: no method `port` found (token={GH})\n");
            }
            s.push(chunk.as_bytes());
            sent += chunk.len() as u64;
            max_held = max_held.max(s.held_bytes());
        }
        let p = s.finish(Some(1), false).unwrap();
        packer.keep(&p).unwrap();
        (p, sent, max_held)
    };
    let mut packer = Packer::default();
    let (p, sent, max_held) = stream_8mb(&mut packer, None);
    assert!(sent > 8_000_000);
    assert!(max_held as u64 <= sent);
    assert!(p.envelope.content.len() <= limit);
    assert!(
        p.envelope.content.contains("120001: error[E0599]")
            || p.envelope.content.contains("error[E0599]"),
        "{}",
        p.envelope.content
    );
    assert!(!p.envelope.content.contains("aB3dE5"));
    assert!(p.envelope.content.contains("Exit code: 1"));
    assert!(p.envelope.truncated && p.envelope.redacted);
    let next = p
        .envelope
        .next_offset
        .expect("a stream within the cap is pageable");
    assert!(p
        .envelope
        .hint
        .as_deref()
        .unwrap()
        .contains("get_more(id=\"c2\""));
    let page = packer
        .get_more("c2", next, "c3", &PackOptions::default())
        .unwrap();
    assert!(page.envelope.content.contains("compiling crate foo"));
    assert_eq!(
        p.span.observed_bytes.unwrap(),
        sent + "Tool: bash\nExit code: 1\nOutput:\n".len() as u64
    );
    assert_checks(&p);

    // Beyond a 1 MiB cap: the short error with the outcome, memory within the cap.
    let (p, sent, max_held) = stream_8mb(&mut Packer::default(), Some(1 << 20));
    assert!(max_held <= 1 << 20, "held {max_held}");
    assert_eq!(p.envelope.error.as_deref(), Some("result_too_large"));
    assert!(
        p.envelope.content.starts_with(TOO_LARGE),
        "{}",
        p.envelope.content
    );
    assert!(p.envelope.content.contains("\"exit_code\":1"));
    assert!(p
        .envelope
        .hint
        .as_deref()
        .unwrap()
        .contains("1048576 bytes"));
    assert_eq!(p.envelope.next_offset, None);
    assert!(p.stored.is_none());
    assert!(p.envelope.content.len() <= limit);
    assert_eq!(
        p.span.observed_bytes.unwrap(),
        sent + "Tool: bash\nExit code: 1\nOutput:\n".len() as u64
    );
    assert_checks(&p);
}

// --- Seed 004: "Do not paste other tenants' rows" ---------------------------------------

#[test]
fn other_tenants_rows_never_reach_the_model() {
    use toolslice::pack::TenantPolicy;
    let rows = json!({"rows": [
        {"tenant_id": "acme", "invoice": "A-1", "total": 120},
        {"tenant_id": "globex", "invoice": "G-9", "total": 99000},
        {"tenant_id": "acme", "invoice": "A-2", "total": 80}
    ]});
    let policy = PackOptions {
        limit: Some(4096),
        tenant: Some(TenantPolicy {
            tenant: "acme".into(),
            ..TenantPolicy::default()
        }),
        ..PackOptions::default()
    };
    // As a JSON value and as the text most tools return.
    for result in [
        ToolResult::json("list_invoices", "call_t", rows.clone()),
        ToolResult::text("list_invoices", "call_t", rows.to_string()),
    ] {
        let p = pack(&result, &policy, &Registry::new(), None, None).unwrap();
        let content = &p.envelope.content;
        assert!(
            !content.contains("globex") && !content.contains("G-9"),
            "{content}"
        );
        assert!(
            content.contains("A-1") && content.contains("A-2"),
            "{content}"
        );
        let dropped: Vec<_> = p
            .receipts
            .iter()
            .filter(|r| r.rule_id == "foreign_tenant")
            .collect();
        assert_eq!(dropped.len(), 1);
        assert_eq!(dropped[0].field_path, "$.rows[1]");
        // Declared as a change for safety, so the span passes the checker.
        assert_eq!(p.span.clip_reason.as_deref(), Some("redaction"));
        assert!(p.envelope.redacted);
        assert_checks(&p);
    }
    // Without a policy the rows stay (the packer cannot know whose they are).
    let p = run(&ToolResult::json("list_invoices", "c", rows), 4096);
    assert!(p.envelope.content.contains("globex"));
}

// --- Seed 004's classroom: at 80 characters get_logs keeps a preview, not only a marker ---

#[test]
fn classroom_get_logs_at_80_chars_leaves_a_preview_and_a_hint() {
    use toolslice::truncate::Unit;
    // The page's example: a 200-character job log with a (fake) token on its second line.
    let token = format!("ghp_{}Z9y8", "A1b2C3d4E5f6G7h8".repeat(2));
    let log = [
        "job 42 started".to_string(),
        format!("auth token={token}"),
        "fetched 118 rows from the db".into(),
        "wrote batch 1 of 2 (60 rows)".into(),
        "wrote batch 2 of 2 (58 rows)".into(),
        "checksum: ok".into(),
        "done: 118 rows written in 4.20 s.".into(),
    ]
    .join("\n");
    assert_eq!(log.chars().count(), 200);
    let o = PackOptions {
        limit: Some(80),
        unit: Unit::Chars,
        kind: Some(Kind::Text),
        ..PackOptions::default()
    };
    let p = pack(
        &ToolResult::text("get_logs", "call_2", log),
        &o,
        &Registry::new(),
        None,
        None,
    )
    .unwrap();
    let content = &p.envelope.content;
    assert!(content.chars().count() <= 80, "{content}");
    assert!(p.envelope.truncated);
    assert!(
        content.starts_with("job 42 started\n"),
        "a preview of the log: {content}"
    );
    assert!(content.contains("get_more(id=\"call_2\""), "{content}");
    assert!(!content.contains("ghp_"));
}
