//! Property tests of the truncators over generated inputs: every pattern, every budget unit,
//! budgets from "too small for the marker" to "fits", inputs from empty to 200 KB, with
//! CRLF, progress redraws, repeats, combining marks, ZWJ emoji, flags, huge single lines,
//! random bytes decoded lossily, and JSON documents.
//!
//! `TOOLSLICE_PROPTEST_CASES` scales the case counts; a failing case is shrunk by proptest
//! and printed (see tests/common for the seed and the persisted regressions).

// proptest is a native-only dev-dependency (see Cargo.toml).
#![cfg(not(target_arch = "wasm32"))]

mod common;

use common::proptest_config;
use proptest::prelude::*;
use proptest::sample::{select, Index};
use toolslice::error::Coded;
use toolslice::truncate::{
    estimate_tokens, is_error_line, truncate, truncate_with, Budget, Fetch, Options, Pattern,
    SegmentKind, TruncateError, Truncation, Unit,
};

// ---------------------------------------------------------------- generators

const WORDS: &[&str] = &[
    "compiling",
    "src/main.rs",
    "ok",
    "test",
    "Downloading",
    "build",
    "warning:",
    "info",
    "=>",
    "{",
    "}",
    "fn",
    "main()",
    "42",
    "0x7ff",
    "--release",
    "npm",
    "cargo",
    "the",
    "a",
];
const ERRORS: &[&str] = &[
    "error: could not compile `app`",
    "error[E0308]: mismatched types",
    "thread 'main' panicked at src/lib.rs:3:5",
    "npm ERR! code ELIFECYCLE",
    "FAILED tests/test_api.py::test_login - AssertionError",
    "Traceback (most recent call last):",
    "Segmentation fault (core dumped)",
    "exit status 2",
    "fatal: not a git repository",
    "Permission denied",
];
const UNICODE: &[&str] = &[
    "e\u{301}",
    "\u{1F468}\u{200D}\u{1F469}\u{200D}\u{1F467}",
    "\u{1F1E9}\u{1F1EA}",
    "\u{1F44D}\u{1F3FD}",
    "\u{2764}\u{FE0F}",
    "日本語",
    "é",
    "Ω",
    "\t",
];

/// Words joined by spaces until the line is `n` bytes long, cycling through `words` (each
/// a word, a fifth of them followed by a grapheme cluster from UNICODE).
fn words_up_to(n: usize, words: &[(&str, Option<&str>)]) -> String {
    let mut s = String::new();
    for (word, cluster) in words.iter().cycle() {
        if s.len() >= n {
            break;
        }
        s.push_str(word);
        if let Some(c) = cluster {
            s.push_str(c);
        }
        s.push(' ');
    }
    s
}

fn word_with_cluster() -> impl Strategy<Value = (&'static str, Option<&'static str>)> {
    (select(WORDS), prop::option::weighted(0.2, select(UNICODE)))
}

/// One line (without terminator): an error line, a long line (sometimes huge), progress
/// redraws joined by `\r`, an empty line, grapheme clusters, or (three in four) a few words.
fn line() -> impl Strategy<Value = String> {
    prop_oneof![
        1 => select(ERRORS).prop_map(str::to_string),
        1 => (
            prop_oneof![3 => 100..500usize, 1 => 2000..22_000usize],
            prop::collection::vec(word_with_cluster(), 1..32),
        )
            .prop_map(|(n, words)| words_up_to(n, &words)),
        1 => (1..=30u64).prop_map(|frames| {
            (0..frames)
                .map(|i| format!("Downloading {}%", i * 3))
                .collect::<Vec<_>>()
                .join("\r")
        }),
        1 => Just(String::new()),
        1 => prop::collection::vec(select(UNICODE), 1..=6).prop_map(|c| c.concat()),
        15 => prop::collection::vec(select(WORDS), 1..=10).prop_map(|w| w.join(" ")),
    ]
}

/// A text: empty, newlines only, random bytes decoded lossily, one huge line, a JSON
/// document, or (most often) lines with repeats, CRLF and an optional last terminator.
fn text() -> impl Strategy<Value = String> {
    prop_oneof![
        1 => Just(String::new()),
        1 => (0..50usize).prop_map(|n| "\n".repeat(n)),
        1 => prop::collection::vec(any::<u8>(), 0..3000)
            .prop_map(|b| String::from_utf8_lossy(&b).into_owned()),
        1 => (prop::collection::vec(line(), 1..8), any::<bool>()).prop_map(|(lines, ended)| {
            // One huge line, maybe without newline.
            let mut s = lines[0].clone();
            for l in lines.iter().cycle().skip(1) {
                if s.len() >= 5000 {
                    break;
                }
                s.push_str(l);
                s.push(' ');
            }
            if ended {
                s.push('\n');
            }
            s
        }),
        2 => json_doc(),
        8 => lines_text(),
    ]
}

/// At least `n` lines (1 in 10 texts 2000-5000, 3 in 10 200-700, else up to 60), cycling
/// through up to 100 generated lines, one in 15 repeated 2-41 times.
fn lines_text() -> impl Strategy<Value = String> {
    (
        prop_oneof![1 => 2000..5000usize, 3 => 200..700usize, 6 => 0..60usize],
        prop::collection::vec(
            (line(), prop_oneof![14 => Just(1usize), 1 => 2..42usize]),
            1..100,
        ),
        prop::bool::weighted(0.25),
        prop::bool::weighted(1.0 / 3.0),
    )
        .prop_map(|(n, lines, crlf, unterminated)| {
            let mut s = String::new();
            let mut i = 0;
            for (l, reps) in lines.iter().cycle() {
                if i >= n {
                    break;
                }
                for _ in 0..*reps {
                    s.push_str(l);
                    s.push_str(if crlf { "\r\n" } else { "\n" });
                    i += 1;
                }
            }
            if unterminated {
                s.pop();
                if crlf {
                    s.pop();
                }
            }
            s
        })
}

/// A JSON string literal: up to 30 characters, or (one in six) 500-3500, of clusters,
/// error lines, newlines and words, each followed by a space.
fn json_string() -> impl Strategy<Value = String> {
    let piece = prop_oneof![
        1 => select(UNICODE),
        1 => select(ERRORS),
        1 => Just("\n"),
        5 => select(WORDS),
    ];
    (
        prop_oneof![5 => 0..30usize, 1 => 500..3500usize],
        prop::collection::vec(piece, 1..16),
    )
        .prop_map(|(n, pieces)| {
            let mut s = String::new();
            for p in pieces.iter().cycle() {
                if s.chars().count() >= n {
                    break;
                }
                s.push_str(p);
                s.push(' ');
            }
            serde_json::to_string(&s).unwrap()
        })
}

/// A generated JSON value, rendered by [`Json::render`].
#[derive(Clone, Debug)]
enum Json {
    Leaf(String),
    /// Items, pretty-printed or not.
    Array(Vec<Json>, bool),
    /// Members (a key index: below 10 the fixed key of the member's position, else `k{n}`),
    /// pretty-printed or not.
    Object(Vec<(u8, Json)>, bool),
}

const KEYS: [&str; 10] = [
    "status",
    "ok",
    "id",
    "receipt_id",
    "data",
    "log",
    "items",
    "meta",
    "error",
    "x",
];

impl Json {
    fn render(&self) -> String {
        let seps = |pretty: bool| if pretty { (",\n  ", "\n  ") } else { (",", "") };
        match self {
            Json::Leaf(s) => s.clone(),
            Json::Array(items, pretty) => {
                let (sep, ind) = seps(*pretty);
                let items: Vec<String> = items.iter().map(Json::render).collect();
                format!("[{ind}{}]", items.join(sep))
            }
            Json::Object(members, pretty) => {
                let (sep, ind) = seps(*pretty);
                let members: Vec<String> = members
                    .iter()
                    .enumerate()
                    .map(|(i, (key, value))| {
                        let key = if *key < 10 {
                            KEYS[i % KEYS.len()].to_string()
                        } else {
                            format!("k{}", key - 10)
                        };
                        format!("\"{key}\": {}", value.render())
                    })
                    .collect();
                format!("{{{ind}{}}}", members.join(sep))
            }
        }
    }
}

fn json_leaf() -> impl Strategy<Value = Json> {
    prop_oneof![
        1 => Just("null".to_string()),
        1 => Just("true".to_string()),
        1 => any::<i64>().prop_map(|n| n.to_string()),
        1 => Just("12345678901234567890123.5e-7".to_string()),
        2 => json_string(),
    ]
    .prop_map(Json::Leaf)
}

/// An array (of up to 5 values, or one in four of 50-350 leaves only, so documents stay
/// small enough to test quickly) or an object of up to 6 members, two in three of them
/// under the fixed keys; `value` is what they hold.
fn json_container(value: BoxedStrategy<Json>) -> impl Strategy<Value = Json> {
    let key = prop_oneof![2 => 0..10u8, 1 => 10..109u8];
    prop_oneof![
        3 => (prop::collection::vec(value.clone(), 0..6), prop::bool::weighted(1.0 / 3.0))
            .prop_map(|(items, pretty)| Json::Array(items, pretty)),
        1 => (prop::collection::vec(json_leaf(), 50..350), prop::bool::weighted(1.0 / 3.0))
            .prop_map(|(items, pretty)| Json::Array(items, pretty)),
        4 => (prop::collection::vec((key, value), 0..7), prop::bool::weighted(1.0 / 3.0))
            .prop_map(|(members, pretty)| Json::Object(members, pretty)),
    ]
}

/// A JSON document: a container at the top, nested up to five levels.
fn json_doc() -> impl Strategy<Value = String> {
    let value = json_leaf().prop_recursive(
        4,
        64,
        6,
        |inner| prop_oneof![1 => json_leaf(), 1 => json_container(inner.boxed())],
    );
    json_container(value.boxed()).prop_map(|doc| doc.render())
}

/// How a budget's limit relates to the text's size.
#[derive(Clone, Copy, Debug)]
enum Limit {
    /// Below 60: often too small for the marker.
    Tiny(u64),
    /// Below 400.
    Small(u64),
    /// The size plus up to 99: fits.
    Fits(u64),
    /// `cut % (size + 1)` plus up to 2999.
    Around(u64, u64),
}

impl Limit {
    fn of(self, size: u64) -> usize {
        (match self {
            Limit::Tiny(n) | Limit::Small(n) => n,
            Limit::Fits(extra) => size + extra,
            Limit::Around(cut, extra) => cut % (size + 1) + extra,
        }) as usize
    }
}

/// Options without the limit, which depends on the text: [`options`] puts them together.
#[derive(Clone, Debug)]
struct Drawn {
    options: Options,
    unit: Unit,
    limit: Limit,
}

fn drawn() -> impl Strategy<Value = Drawn> {
    let pattern = select(
        &[
            Pattern::Auto,
            Pattern::Head,
            Pattern::Tail,
            Pattern::HeadTail,
            Pattern::Terminal,
            Pattern::Terminal,
            Pattern::Search,
            Pattern::File,
            Pattern::Json,
            Pattern::Csv,
            Pattern::Yaml,
        ][..],
    );
    let unit = select(
        &[
            Unit::Bytes,
            Unit::Bytes,
            Unit::Chars,
            Unit::Utf16,
            Unit::Tokens,
        ][..],
    );
    let limit = prop_oneof![
        1 => (0..60u64).prop_map(Limit::Tiny),
        1 => (0..400u64).prop_map(Limit::Small),
        1 => (0..100u64).prop_map(Limit::Fits),
        3 => (any::<u64>(), 0..3000u64).prop_map(|(c, e)| Limit::Around(c, e)),
    ];
    let header = prop::option::weighted(0.25, (any::<bool>(), prop::bool::weighted(0.2)));
    let fetch = prop::option::weighted(1.0 / 3.0, (0..1000u64, 0..100_000u64));
    let tool = prop::option::weighted(
        0.25,
        select(&["terminal", "web_search", "read_file", "grep", "fetch"][..]),
    );
    let terminal = prop::option::weighted(0.2, (0..3usize, 0..3usize, any::<bool>()));
    let range = prop::option::weighted(0.25, (1..=200usize, 0..100usize));
    (
        (pattern, unit, limit),
        prop::option::weighted(1.0 / 3.0, 0..3i64),
        header,
        fetch,
        tool,
        prop::option::weighted(0.2, 0..=10u32),
        terminal,
        range,
    )
        .prop_map(
            |(
                (pattern, unit, limit),
                exit_code,
                header,
                fetch,
                tool,
                head_share,
                terminal,
                range,
            )| {
                let mut o = Options::new(pattern, Budget::new(unit, 0));
                o.exit_code = exit_code;
                if let Some((command, timed_out)) = header {
                    o.header = true;
                    o.command = command.then(|| "npm run build".to_string());
                    o.timed_out = timed_out;
                }
                o.fetch = fetch.map(|(id, offset)| Fetch {
                    id: format!("call_{id}"),
                    offset,
                    ..Fetch::default()
                });
                o.tool = tool.map(str::to_string);
                if let Some(tenths) = head_share {
                    o.head_share = f64::from(tenths) / 10.0;
                }
                if let Some((before, after, collapse)) = terminal {
                    o.terminal.context_before = before;
                    o.terminal.context_after = after;
                    o.terminal.collapse = collapse;
                }
                o.file.range = range.map(|(a, len)| [a, a + len]);
                Drawn {
                    options: o,
                    unit,
                    limit,
                }
            },
        )
}

/// The drawn options with their limit for `text`.
fn options(drawn: &Drawn, text: &str) -> Options {
    let mut o = drawn.options.clone();
    o.budget = Budget::new(drawn.unit, drawn.limit.of(text.len().max(1) as u64));
    o
}

// ---------------------------------------------------------------- checks

fn measure(unit: Unit, s: &str) -> usize {
    match unit {
        Unit::Bytes => s.len(),
        Unit::Chars => s.chars().count(),
        Unit::Utf16 => s.encode_utf16().count(),
        Unit::Tokens => estimate_tokens(s),
    }
}

/// Lines as the module defines them: tiles of the text, terminator included.
fn lines_of(s: &str) -> Vec<(usize, usize)> {
    let mut v = Vec::new();
    let mut start = 0;
    for (i, b) in s.bytes().enumerate() {
        if b == b'\n' {
            v.push((start, i + 1));
            start = i + 1;
        }
    }
    if start < s.len() {
        v.push((start, s.len()));
    }
    v
}

fn content(s: &str, (a, b): (usize, usize)) -> &str {
    s[a..b].trim_end_matches('\n').trim_end_matches('\r')
}

/// A cut inside the characters our generators use for clusters.
fn splits_cluster(s: &str, at: usize) -> bool {
    if at == 0 || at >= s.len() {
        return false;
    }
    let prev = s[..at].chars().next_back().unwrap();
    let next = s[at..].chars().next().unwrap();
    let ri = |c: char| ('\u{1F1E6}'..='\u{1F1FF}').contains(&c);
    if matches!(next, '\u{301}' | '\u{200D}' | '\u{1F3FD}' | '\u{FE0F}') || prev == '\u{200D}' {
        return true;
    }
    if prev == '\r' && next == '\n' {
        return true;
    }
    ri(prev) && ri(next) && s[..at].chars().rev().take_while(|&c| ri(c)).count() % 2 == 1
}

fn header_size(o: &Options, t: &Truncation) -> usize {
    t.segments
        .iter()
        .filter(|s| s.kind == SegmentKind::Header)
        .map(|s| measure(o.budget.unit(), &t.text[s.output[0]..s.output[1]]))
        .sum()
}

fn check(input: &str, o: &Options) {
    let ctx = || format!("options {o:?}, input {} bytes", input.len());
    let result = truncate(input, o);
    let again = truncate(input, o);
    assert_eq!(result, again, "not deterministic: {}", ctx());
    let t = match result {
        Ok(t) => t,
        Err(TruncateError::BudgetTooSmall { needed, limit, .. }) => {
            assert!(
                needed > limit,
                "too small but needed {needed} <= {limit}: {}",
                ctx()
            );
            return;
        }
        Err(e @ TruncateError::InvalidJson(_)) => {
            assert_eq!(e.code(), "invalid_json");
            assert_eq!(o.pattern, Pattern::Json, "{}", ctx());
            assert!(
                serde_json::from_str::<serde_json::Value>(input).is_err()
                    || input.contains("[[[[[[[[[[")
            );
            return;
        }
        Err(e) => panic!("unexpected error {e}: {}", ctx()),
    };
    let unit = o.budget.unit();
    let limit = o.budget.limit();

    // Hard budget, measured independently.
    let size = measure(unit, &t.text);
    assert_eq!(size, t.size, "reported size: {}", ctx());
    assert!(
        size <= limit,
        "budget exceeded: {size} > {limit}: {}",
        ctx()
    );

    // Identity when it fits.
    let mut full = String::new();
    if o.header {
        full.push_str(
            &t.text[..t.segments.first().map_or(0, |s| {
                if s.kind == SegmentKind::Header {
                    s.output[1]
                } else {
                    0
                }
            })],
        );
    }
    full.push_str(input);
    if measure(unit, &full) <= limit {
        assert!(!t.truncated, "fit but truncated: {}", ctx());
        assert_eq!(t.text, full, "{}", ctx());
    } else {
        assert!(t.truncated, "did not fit but not truncated: {}", ctx());
    }

    // Segments tile the output; kept ones copy the source, never twice, at safe cuts.
    let mut at = 0;
    let mut kept_sum = 0;
    for s in &t.segments {
        assert_eq!(s.output[0], at, "segments do not tile: {}", ctx());
        at = s.output[1];
        if let Some([a, b]) = s.source {
            assert_eq!(s.kind, SegmentKind::Kept);
            assert_eq!(&t.text[s.output[0]..s.output[1]], &input[a..b], "{}", ctx());
            assert!(
                !splits_cluster(input, a) && !splits_cluster(input, b),
                "cluster split at {a}..{b}: {}",
                ctx()
            );
            kept_sum += b - a;
        }
    }
    assert_eq!(at, t.text.len(), "{}", ctx());
    let merged: usize = t.kept.iter().map(|r| r[1] - r[0]).sum();
    assert_eq!(kept_sum, merged, "a source byte was shown twice: {}", ctx());
    for w in t.kept.windows(2) {
        assert!(
            w[0][1] < w[1][0],
            "kept ranges not sorted and disjoint: {}",
            ctx()
        );
    }

    // The same map in UTF-16 offsets slices UTF-16 strings (what JavaScript gets).
    let u = t.clone().into_utf16_offsets(input);
    let (src16, out16): (Vec<u16>, Vec<u16>) = (
        input.encode_utf16().collect(),
        t.text.encode_utf16().collect(),
    );
    for s in &u.segments {
        if let Some([a, b]) = s.source {
            assert_eq!(
                &out16[s.output[0]..s.output[1]],
                &src16[a..b],
                "utf16 offsets: {}",
                ctx()
            );
        }
    }
    assert_eq!(u.segments.last().map_or(0, |s| s.output[1]), out16.len());

    // Exact counts, recomputed from the kept ranges.
    assert_eq!(t.full_bytes, input.len());
    assert_eq!(t.omitted_bytes, input.len() - merged, "{}", ctx());
    let lines = lines_of(input);
    assert_eq!(t.total_lines, lines.len());
    let (mut omitted, mut partial) = (0, 0);
    for &(a, b) in &lines {
        let covered: usize = t
            .kept
            .iter()
            .map(|r| r[1].min(b).saturating_sub(r[0].max(a)))
            .sum();
        if covered == 0 {
            omitted += 1;
        } else if covered < b - a {
            partial += 1;
        }
    }
    assert_eq!(
        (t.omitted_lines, t.partial_lines),
        (omitted, partial),
        "{}",
        ctx()
    );

    // Outcomes beside the text, and in the header when asked.
    assert_eq!(t.exit_code, o.exit_code);
    assert_eq!(t.timed_out, o.timed_out);
    if o.header {
        let want = match o.exit_code {
            Some(c) => format!("Exit code: {c}\n"),
            None => "Exit code: not reported\n".to_string(),
        };
        assert!(t.text.contains(&want), "{}", ctx());
    }
    assert_eq!(t.audit.exit_code_preserved, o.exit_code.is_some());
    assert_eq!(t.audit.was_truncated, t.truncated);
    assert_eq!(t.audit.errors_in_dropped_region, t.error_lines.dropped > 0);

    if !t.truncated {
        return;
    }
    let body_limit = limit.saturating_sub(header_size(o, &t));
    let pattern = t.pattern.name();

    // JSON stays JSON.
    if pattern == "json" {
        let header_end = t
            .segments
            .first()
            .filter(|s| s.kind == SegmentKind::Header)
            .map_or(0, |s| s.output[1]);
        let body = &t.text[header_end..];
        let v: serde_json::Value = serde_json::from_str(body)
            .unwrap_or_else(|e| panic!("invalid JSON out ({e}): {}\n{body}", ctx()));
        let orig: serde_json::Value = serde_json::from_str(input).unwrap();
        if let (Some(a), Some(b)) = (orig.as_object(), v.as_object()) {
            for k in ["status", "ok", "id", "receipt_id", "error"] {
                if a.contains_key(k) {
                    assert!(b.contains_key(k), "outcome key {k} dropped: {}", ctx());
                }
            }
        }
        return;
    }

    // The marker's counts are the real ones (patterns without collapse or inline cuts).
    if let Some(m) = &t.marker {
        let positional = matches!(pattern, "head" | "tail" | "head_tail" | "search");
        if positional && t.partial_lines == 0 && m.starts_with("[...") && !m.contains("bytes cut") {
            assert!(
                m.contains(&format!("{} bytes", t.omitted_bytes)),
                "marker bytes: {m}: {}",
                ctx()
            );
            if m.contains(" line") {
                assert!(
                    m.contains(&format!("{} line", t.omitted_lines)),
                    "marker lines: {m}: {}",
                    ctx()
                );
            }
        }
        if o.fetch.is_some() && (m.contains("Fetch") || m.contains("more:")) {
            assert!(m.contains("get_more(id=\"call_"), "{}", ctx());
        }
    }

    if unit == Unit::Tokens || lines.is_empty() {
        return;
    }
    // The last line is kept when the budget allows it (tail-keeping patterns).
    if matches!(pattern, "terminal" | "tail" | "head_tail")
        && (pattern != "head_tail" || o.head_share <= 0.6)
    {
        let last = content(input, lines[lines.len() - 1]);
        let frame = last.rsplit('\r').find(|f| !f.is_empty()).unwrap_or("");
        let cost = measure(unit, last) + 60;
        if cost * 4 <= body_limit && !frame.is_empty() {
            assert!(
                t.text.contains(frame),
                "last line lost: {last:?}: {}",
                ctx()
            );
        }
    }
    // Every error line is kept when the budget allows it (terminal).
    if pattern == "terminal" {
        let need: usize = lines
            .iter()
            .enumerate()
            .filter(|(_, &l)| is_error_line(content(input, l)))
            .map(|(i, &l)| {
                let ctx_cost = if i > 0 {
                    measure(unit, content(input, lines[i - 1]))
                } else {
                    0
                };
                measure(unit, content(input, l)) + ctx_cost + 40
            })
            .sum();
        if need > 0
            && need * 6 + 1000 <= body_limit
            && o.terminal.context_before <= 1
            && o.terminal.context_after == 0
        {
            assert_eq!(t.error_lines.dropped, 0, "error line dropped: {}", ctx());
            for &l in &lines {
                let c = content(input, l);
                if is_error_line(c) {
                    let shown =
                        t.kept.iter().any(|r| r[0] < l.1 && r[1] > l.0) || t.text.contains(c);
                    assert!(shown, "error line {c:?} not shown: {}", ctx());
                }
            }
        }
    }
}

// ---------------------------------------------------------------- properties

proptest! {
    #![proptest_config(proptest_config(1500))]
    #[test]
    fn every_pattern_every_unit_holds_its_invariants(input in text(), drawn in drawn()) {
        check(&input, &options(&drawn, &input));
    }
}

/// A build log of 50-3050 lines: filler lines of up to eight words (cycling through up to
/// 64 of them) with up to 15 runs of one to three error lines at generated places (a run
/// puts error lines next to each other, where the one-scan error matcher resumes at the
/// next line after a match), then the exit line.
fn build_log() -> impl Strategy<Value = String> {
    (
        50..3050usize,
        prop::collection::vec(prop::collection::vec(select(&WORDS[..14]), 1..=8), 1..64),
        prop::collection::vec(
            (any::<Index>(), prop::collection::vec(select(ERRORS), 1..=3)),
            0..16,
        ),
    )
        .prop_map(|(n, fillers, runs)| {
            let mut lines: Vec<String> = fillers
                .iter()
                .cycle()
                .take(n)
                .map(|w| w.join(" "))
                .collect();
            for (at, run) in runs {
                for (line, error) in lines[at.index(n)..].iter_mut().zip(run) {
                    *line = error.to_string();
                }
            }
            let mut input = lines.join("\n");
            input.push_str("\nProcess finished with exit code 1\n");
            input
        })
}

proptest! {
    #![proptest_config(proptest_config(400))]
    #[test]
    fn terminal_logs_keep_errors_and_tail(
        input in build_log(),
        unit in select(&[Unit::Bytes, Unit::Chars, Unit::Utf16][..]),
        limit in 2000..8000usize,
        header in any::<bool>(),
    ) {
        let mut o = Options::new(Pattern::Terminal, Budget::new(unit, limit));
        o.exit_code = Some(1);
        o.header = header;
        check(&input, &o);
        let t = truncate(&input, &o).unwrap();
        prop_assert!(t.text.ends_with("Process finished with exit code 1\n"));
    }
}

/// Words count once, long words cost extra: merging pieces changes the count.
fn non_additive(s: &str) -> usize {
    s.split_whitespace().map(|w| 1 + w.len() / 6).sum::<usize>() + s.matches('\n').count()
}

proptest! {
    #![proptest_config(proptest_config(300))]
    #[test]
    fn token_budgets_hold_under_a_non_additive_counter(
        input in text(),
        drawn in drawn(),
        tokens in 0..2000usize,
    ) {
        let counter = non_additive;
        let mut o = options(&drawn, &input);
        o.budget = Budget::Tokens(tokens);
        match truncate_with(&input, &o, &counter) {
            Ok(t) => {
                prop_assert!(counter(&t.text) <= o.budget.limit());
                prop_assert_eq!(t.size, counter(&t.text));
            }
            Err(TruncateError::BudgetTooSmall { .. } | TruncateError::InvalidJson(_)) => {}
            Err(e) => prop_assert!(false, "{}", e),
        }
    }
}

#[test]
fn failing_token_counter_is_an_error_value() {
    struct Broken;
    impl toolslice::truncate::TokenCounter for Broken {
        fn count(&self, _: &str) -> Result<usize, String> {
            Err("tokenizer not loaded".into())
        }
    }
    let err = truncate_with(
        "x\n".repeat(100).as_str(),
        &Options::new(Pattern::Head, Budget::Tokens(5)),
        &Broken,
    )
    .unwrap_err();
    assert_eq!(err.code(), "token_counter_failed");
    assert!(err.to_string().contains("tokenizer not loaded"));
}

#[test]
fn edge_inputs() {
    for input in [
        "",
        "\n",
        "\n\n\n",
        "\r\n\r\n",
        "x",
        "\r",
        "a\rb\rc",
        "\u{301}\u{301}\u{301}",
    ] {
        for unit in [Unit::Bytes, Unit::Chars, Unit::Utf16, Unit::Tokens] {
            for limit in [0, 1, 2, 5, 50, 500] {
                for p in [
                    Pattern::Auto,
                    Pattern::Head,
                    Pattern::Tail,
                    Pattern::HeadTail,
                    Pattern::Terminal,
                    Pattern::Search,
                    Pattern::File,
                    Pattern::Csv,
                    Pattern::Yaml,
                ] {
                    check(input, &Options::new(p, Budget::new(unit, limit)));
                }
            }
        }
    }
}

#[test]
fn budget_too_small_is_an_error_never_an_overrun() {
    let log = "compiling\n".repeat(1000);
    let err = truncate(&log, &Options::new(Pattern::Terminal, Budget::Bytes(10))).unwrap_err();
    assert_eq!(err.code(), "budget_too_small");
    assert!(matches!(err, TruncateError::BudgetTooSmall { limit: 10, needed, .. } if needed > 10));
    // A header that does not fit is too small too.
    let mut o = Options::new(Pattern::Terminal, Budget::Bytes(40));
    o.header = true;
    o.exit_code = Some(1);
    assert_eq!(truncate(&log, &o).unwrap_err().code(), "budget_too_small");
}

#[test]
fn invalid_options_are_reported() {
    let mut o = Options::new(Pattern::Terminal, Budget::Bytes(100));
    o.terminal.head_share = 0.8;
    o.terminal.tail_share = 0.8;
    assert_eq!(truncate("x", &o).unwrap_err().code(), "invalid_options");
    let mut o = Options::new(Pattern::File, Budget::Bytes(100));
    o.file.range = Some([0, 3]);
    assert_eq!(truncate("x", &o).unwrap_err().code(), "invalid_options");
    let o = Options {
        head_share: f64::NAN,
        ..Options::default()
    };
    assert_eq!(truncate("x", &o).unwrap_err().code(), "invalid_options");
}

#[test]
fn options_read_from_json_with_defaults() {
    let o: Options = serde_json::from_str(
        r#"{"pattern":"terminal","budget":{"tokens":500},"exit_code":1,"fetch":{"id":"c1"},"terminal":{"context_after":1}}"#,
    )
    .unwrap();
    assert_eq!(o.pattern, Pattern::Terminal);
    assert_eq!(o.budget, Budget::Tokens(500));
    assert_eq!(o.fetch.as_ref().unwrap().tool, "get_more");
    assert_eq!(o.terminal.context_before, 1);
    assert_eq!(o.terminal.context_after, 1);
    assert!(serde_json::from_str::<Options>(r#"{"budgte":{"bytes":1}}"#).is_err());
}
