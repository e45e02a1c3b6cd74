//! Property tests of the checker's invariants over generated inputs:
//! every line is accounted for, any chunking gives the same report, no input panics.

// proptest is a native-only dev-dependency (see Cargo.toml).
#![cfg(not(target_arch = "wasm32"))]

mod common;

use common::{chunk_sizes, chunked, proptest_config};
use proptest::prelude::*;
use proptest::sample::select;
use toolslice::check::{check_bytes, render, CheckOptions, Checker, Status, MAX_LISTED};

/// One generated line: a well-formed record, a record with odd fields, blank, broken JSON,
/// a non-object, invalid UTF-8, random bytes, or a nameless record. Rendered with its line
/// index, so span ids are unique. Shrinks towards the simpler variants first.
#[derive(Clone, Debug)]
enum Line {
    Empty,
    Blank,
    Broken,
    NotObject,
    BadUtf8,
    Nameless,
    NegativeObserved,
    Bytes(Vec<u8>),
    Record {
        observed: u64,
        /// Injected as much as observed (no cut), else `cut % (observed + 1)`.
        whole: bool,
        cut: u64,
        reason: &'static str,
        status: &'static str,
        parent: u64,
        tool: u64,
        hashes: (u64, u64),
        version: u64,
    },
}

impl Line {
    fn render(&self, i: usize) -> Vec<u8> {
        match self {
            Line::Empty => b"".to_vec(),
            Line::Blank => b"   \t".to_vec(),
            Line::Broken => b"{\"name\":\"x\",".to_vec(),
            Line::NotObject => b"[1,2,3]".to_vec(),
            Line::BadUtf8 => b"{\"name\":\"bad\xff\xfe\",\"observed_bytes\":1}".to_vec(),
            Line::Nameless => format!("{{\"span_id\":\"s{i}\",\"observed_bytes\":5}}").into_bytes(),
            Line::NegativeObserved => {
                format!("{{\"name\":\"t\",\"observed_bytes\":-{i}}}").into_bytes()
            }
            Line::Bytes(b) => b.clone(),
            &Line::Record {
                observed: obs,
                whole,
                cut,
                reason,
                status,
                parent,
                tool,
                hashes: (h1, h2),
                version: v,
            } => {
                let inj = if whole { obs } else { cut % (obs + 1) };
                format!(
                    "{{\"span_id\":\"s{i}\",\"parent_id\":\"s{parent}\",\"name\":\"tool{}\",\"status\":\"{status}\",\"observed_bytes\":{obs},\"injected_bytes\":{inj},\"injected_tokens\":{},\"clip_reason\":\"{reason}\",\"sha256_observed\":\"{}\",\"sha256_injected\":\"{}\",\"prompt_builder_version\":\"v{}\",\"injected_preview\":\"caf\\u00e9 \u{1F600}\"}}",
                    tool,
                    inj / 4,
                    h1,
                    h2,
                    v
                )
                .into_bytes()
            }
        }
    }
}

fn line() -> impl Strategy<Value = Line> {
    let record = (
        (0..2000u64, any::<bool>(), any::<u64>()),
        select(&["none", "", "prompt_token_cap", "redaction", "weird"][..]),
        select(&["ok", "error", "running"][..]),
        (0..5u64, 0..3u64, (0..3u64, 0..3u64), 0..2u64),
    )
        .prop_map(
            |((observed, whole, cut), reason, status, (parent, tool, hashes, version))| {
                Line::Record {
                    observed,
                    whole,
                    cut,
                    reason,
                    status,
                    parent,
                    tool,
                    hashes,
                    version,
                }
            },
        );
    prop_oneof![
        1 => Just(Line::Empty),
        1 => Just(Line::Blank),
        1 => Just(Line::Broken),
        1 => Just(Line::NotObject),
        1 => Just(Line::BadUtf8),
        1 => Just(Line::Nameless),
        1 => Just(Line::NegativeObserved),
        1 => prop::collection::vec(any::<u8>(), 0..30).prop_map(Line::Bytes),
        4 => record,
    ]
}

/// A span-JSONL input: maybe a BOM, up to 40 lines ended by `\n` or (a quarter of them)
/// `\r\n`, the last line's terminator optional.
fn input() -> impl Strategy<Value = Vec<u8>> {
    (
        prop::bool::weighted(0.1),
        prop::collection::vec((line(), prop::bool::weighted(0.25)), 0..40),
        any::<bool>(),
    )
        .prop_map(|(bom, lines, last_ended)| {
            let mut input = Vec::new();
            if bom {
                input.extend_from_slice(b"\xEF\xBB\xBF");
            }
            let n = lines.len();
            for (i, (line, crlf)) in lines.iter().enumerate() {
                input.extend(line.render(i));
                if i + 1 < n || last_ended {
                    input.extend_from_slice(if *crlf { b"\r\n" } else { b"\n" });
                }
            }
            input
        })
}

/// Lines as the checker counts them: split on `\n`, plus a last line without a newline.
fn line_count(input: &[u8]) -> u64 {
    let newlines = input.iter().filter(|&&b| b == b'\n').count() as u64;
    newlines + u64::from(!input.is_empty() && *input.last().unwrap() != b'\n')
}

proptest! {
    #![proptest_config(proptest_config(2000))]
    #[test]
    fn every_line_is_accounted_for(input in input()) {
        let r = check_bytes(&input, CheckOptions::default());
        let c = &r.counts;
        prop_assert_eq!(c.lines, line_count(&input));
        prop_assert_eq!(c.lines, c.total + c.invalid + c.skipped + c.blank);
        prop_assert_eq!(
            c.total,
            c.silent_clip + c.incomplete + c.hash_mismatch + c.clipped + c.reformatted + c.ok
        );
        prop_assert_eq!(r.rows.len() as u64, c.total);
        prop_assert_eq!(r.invalid.len() as u64, c.invalid.min(MAX_LISTED as u64));
        prop_assert_eq!(r.skipped.len() as u64, c.skipped.min(MAX_LISTED as u64));
        let h = &r.clip_histogram;
        let with_lengths = r
            .rows
            .iter()
            .filter(|r| r.observed_bytes.is_some() && r.injected_bytes.is_some())
            .count() as u64;
        prop_assert_eq!(h.not_cut + h.bins.iter().sum::<u64>(), with_lengths);
        // Nothing checked (no entry was a tool span) is never a pass, and neither is a
        // clip_reason outside the closed enum (strict by default).
        if c.total == 0 && c.skipped + c.invalid > 0 {
            prop_assert!(r.nothing_checked.is_some());
        }
        prop_assert!(r.nothing_checked.is_none() || c.total == 0);
        let fails =
            c.silent_clip + c.incomplete + c.invalid + c.unknown_clip_reason > 0 || c.total == 0;
        prop_assert_eq!(r.exit_code, i32::from(fails));
        prop_assert_eq!(r.nothing_checked.is_some(), c.total == 0);
        // Rows come in priority order, then line order.
        prop_assert!(r
            .rows
            .to_vec()
            .windows(2)
            .all(|w| (w[0].status, w[0].line) < (w[1].status, w[1].line)));
        // Invalid entries name a line that exists.
        prop_assert!(r
            .invalid
            .iter()
            .all(|e| e.line >= 1 && e.line <= c.lines && !e.error.is_empty()));
    }
}

proptest! {
    #![proptest_config(proptest_config(1000))]
    #[test]
    fn any_chunking_gives_the_same_report(input in input(), sizes in chunk_sizes(64)) {
        let whole = check_bytes(&input, CheckOptions::default());
        let mut checker = Checker::new(CheckOptions::default());
        for chunk in chunked(&input, &sizes) {
            checker.push(chunk);
        }
        prop_assert_eq!(checker.bytes_read(), input.len() as u64);
        prop_assert_eq!(checker.finish(), whole);
    }
}

proptest! {
    #![proptest_config(proptest_config(500))]
    #[test]
    fn flagged_only_keeps_counts_and_drops_only_ok_rows(input in input()) {
        let all = check_bytes(&input, CheckOptions::default());
        let flagged = check_bytes(
            &input,
            CheckOptions {
                flagged_only: true,
                ..CheckOptions::default()
            },
        );
        prop_assert_eq!(&all.counts, &flagged.counts);
        prop_assert_eq!(&all.rollup, &flagged.rollup);
        prop_assert_eq!(&all.tools, &flagged.tools);
        let want: Vec<_> = all
            .rows
            .iter()
            .filter(|r| r.status != Status::Ok || !r.warnings.is_empty())
            .map(|r| r.to_row())
            .collect();
        prop_assert_eq!(flagged.rows, want);
    }
}

proptest! {
    #![proptest_config(proptest_config(3000))]
    /// Random bytes, a quarter of them JSON punctuation so some inputs get deep into the
    /// parser.
    #[test]
    fn arbitrary_bytes_never_panic(
        bytes in prop::collection::vec(
            prop_oneof![3 => any::<u8>(), 1 => select(&b"{}\":,\n[1\\"[..])],
            0..300,
        )
    ) {
        let r = check_bytes(&bytes, CheckOptions::default());
        // An input that opens like a multi-line JSON document (`[{`, a lone `{`) is read as
        // one document, whose entries are its spans; span JSONL is counted by line.
        if r.read_as.is_none() {
            prop_assert_eq!(r.counts.lines, line_count(&bytes));
        }
        let c = &r.counts;
        prop_assert_eq!(c.lines, c.total + c.invalid + c.skipped + c.blank);
        let _ = (render::table(&r), render::json(&r), render::jsonl(&r));
    }
}

#[test]
fn rollup_names_fine_parents_of_failing_children() {
    let input = br#"{"span_id":"agent","name":"delegate","observed_bytes":5,"injected_bytes":5,"injected_tokens":2}
{"span_id":"child","parent_id":"agent","name":"sub_agent","observed_bytes":5,"injected_bytes":5,"injected_tokens":2}
{"span_id":"read","parent_id":"child","name":"read_file","observed_bytes":900,"injected_bytes":100,"injected_tokens":30}
{"span_id":"open","parent_id":"turn-9","name":"grep","status":"running","observed_bytes":1,"injected_bytes":1,"injected_tokens":1}
{"span_id":"loop-a","parent_id":"loop-b","name":"x","observed_bytes":2,"injected_bytes":1,"injected_tokens":1}
{"span_id":"loop-b","parent_id":"loop-a","name":"y","observed_bytes":1,"injected_bytes":1,"injected_tokens":1}
"#;
    let r = check_bytes(input, CheckOptions::default());
    let rollup = r.rollup.to_vec();
    let ids: Vec<_> = rollup.iter().map(|e| e.span_id.as_str()).collect();
    // Both ancestors of the silent clip; the absent turn of the open span; the cycle ends.
    assert_eq!(ids, ["agent", "child", "loop-b", "turn-9"]);
    assert_eq!(rollup[0].silent_clip, 1);
    assert_eq!(rollup[0].flagged, ["read"]);
    assert_eq!(rollup[0].own_status, Some(Status::Ok));
    assert_eq!(rollup[3].own_status, None);
    assert_eq!(rollup[3].incomplete, 1);
}

#[test]
fn listing_is_capped_but_counts_are_not() {
    let mut input = Vec::new();
    for _ in 0..(MAX_LISTED + 5) {
        input.extend_from_slice(b"not json\n{\"span_id\":\"x\"}\n");
    }
    let r = check_bytes(&input, CheckOptions::default());
    assert_eq!(r.counts.invalid, MAX_LISTED as u64 + 5);
    assert_eq!(r.invalid.len(), MAX_LISTED);
    assert_eq!(r.skipped.len(), MAX_LISTED);
    let table = render::table(&r);
    assert!(table.contains("# ... and 5 more invalid lines\n"));
    assert!(table.contains("# ... and 5 more skipped lines\n"));
}

#[test]
fn clip_histogram_bins() {
    let input = br#"{"name":"a","observed_bytes":100,"injected_bytes":100,"injected_tokens":1}
{"name":"a","observed_bytes":100,"injected_bytes":90,"injected_tokens":1}
{"name":"a","observed_bytes":100,"injected_bytes":89,"injected_tokens":1}
{"name":"a","observed_bytes":100,"injected_bytes":0,"injected_tokens":1}
{"name":"a","observed_bytes":100,"injected_bytes":120,"injected_tokens":1}
{"name":"a","observed_bytes":100,"injected_tokens":1}
"#;
    let h = check_bytes(
        input,
        CheckOptions {
            flagged_only: true,
            ..CheckOptions::default()
        },
    )
    .clip_histogram;
    assert_eq!(h.not_cut, 2);
    assert_eq!(h.bins, [1, 1, 0, 0, 0, 0, 0, 0, 0, 1]);
}

#[test]
fn summaries_medians_rates() {
    let input = br#"{"name":"read_file","observed_bytes":100,"injected_bytes":10,"injected_tokens":3,"prompt_builder_version":"cap-v3"}
{"name":"read_file","observed_bytes":300,"injected_bytes":300,"injected_tokens":3,"prompt_builder_version":"cap-v3"}
{"name":"read_file","observed_bytes":200,"injected_bytes":200,"injected_tokens":3,"prompt_builder_version":"cap-v2"}
{"name":"ls","observed_bytes":7,"injected_bytes":7,"injected_tokens":3}
"#;
    let r = check_bytes(input, CheckOptions::default());
    assert_eq!(r.silent_clips_per_100, 25.0);
    let read = r.tools.iter().find(|t| t.name == "read_file").unwrap();
    assert_eq!(
        (
            read.spans,
            read.median_observed_bytes,
            read.median_injected_bytes
        ),
        (3, Some(200.0), Some(200.0))
    );
    let v3 = r
        .builders
        .iter()
        .find(|b| b.prompt_builder_version.as_deref() == Some("cap-v3"))
        .unwrap();
    assert_eq!(
        (v3.spans, v3.silent_clip, v3.silent_clip_rate),
        (2, 1, 50.0)
    );
    assert!(r
        .builders
        .iter()
        .any(|b| b.prompt_builder_version.is_none() && b.spans == 1));
}
