//! Property tests of the truncators over generated inputs: every pattern, every budget unit,
//! budgets from "too small for the marker" to "fits", inputs from empty to 200 KB, with
//! CRLF, progress redraws, repeats, combining marks, ZWJ emoji, flags, huge single lines,
//! random bytes decoded lossily, and JSON documents.
//!
//! `TOOLSLICE_PROPTEST_CASES` scales the case counts; a failing case prints its seed.

mod common;

use common::{cases, Rng};
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

fn line(rng: &mut Rng) -> String {
    match rng.below(20) {
        0 => rng.pick(ERRORS).to_string(),
        1 => {
            // A long line, sometimes huge.
            let n = if rng.chance(1, 4) {
                2000 + rng.below(20000)
            } else {
                100 + rng.below(400)
            } as usize;
            let mut s = String::new();
            while s.len() < n {
                s.push_str(rng.pick::<&str>(WORDS));
                if rng.chance(1, 5) {
                    s.push_str(rng.pick::<&str>(UNICODE));
                }
                s.push(' ');
            }
            s
        }
        2 => {
            // Progress redraws.
            let frames = 1 + rng.below(30);
            (0..frames)
                .map(|i| format!("Downloading {}%", i * 3))
                .collect::<Vec<_>>()
                .join("\r")
        }
        3 => String::new(),
        4 => (0..1 + rng.below(6)).map(|_| *rng.pick(UNICODE)).collect(),
        _ => {
            let n = 1 + rng.below(10);
            (0..n)
                .map(|_| *rng.pick(WORDS))
                .collect::<Vec<_>>()
                .join(" ")
        }
    }
}

fn text(rng: &mut Rng) -> String {
    match rng.below(14) {
        0 => String::new(),
        1 => "\n".repeat(rng.below(50) as usize),
        2 => {
            let n = rng.below(3000) as usize;
            String::from_utf8_lossy(&rng.bytes(n)).into_owned()
        }
        3 => {
            // One huge line, maybe without newline.
            let mut s = line(rng);
            while s.len() < 5000 {
                s.push_str(&line(rng));
                s.push(' ');
            }
            if rng.chance(1, 2) {
                s.push('\n');
            }
            s
        }
        4 | 5 => json_doc(rng, 0),
        _ => {
            let n = match rng.below(10) {
                0 => 2000 + rng.below(3000),
                1..=3 => 200 + rng.below(500),
                _ => rng.below(60),
            } as usize;
            let crlf = rng.chance(1, 4);
            let mut s = String::new();
            let mut i = 0;
            while i < n {
                let l = line(rng);
                let reps = if rng.chance(1, 15) {
                    2 + rng.below(40)
                } else {
                    1
                };
                for _ in 0..reps {
                    s.push_str(&l);
                    s.push_str(if crlf { "\r\n" } else { "\n" });
                    i += 1;
                }
            }
            if rng.chance(1, 3) {
                s.pop();
                if crlf {
                    s.pop();
                }
            }
            s
        }
    }
}

fn json_string(rng: &mut Rng) -> String {
    let mut s = String::new();
    let n = if rng.chance(1, 6) {
        500 + rng.below(3000)
    } else {
        rng.below(30)
    } as usize;
    while s.chars().count() < n {
        match rng.below(8) {
            0 => s.push_str(rng.pick::<&str>(UNICODE)),
            1 => s.push_str(rng.pick::<&str>(ERRORS)),
            2 => s.push('\n'),
            _ => s.push_str(rng.pick::<&str>(WORDS)),
        }
        s.push(' ');
    }
    serde_json::to_string(&s).unwrap()
}

fn json_doc(rng: &mut Rng, depth: u32) -> String {
    let leaf = |rng: &mut Rng| match rng.below(6) {
        0 => "null".to_string(),
        1 => "true".to_string(),
        2 => format!("{}", rng.next_u64() as i64),
        3 => "12345678901234567890123.5e-7".to_string(),
        _ => json_string(rng),
    };
    if depth > 4 || (depth > 0 && rng.chance(1, 2)) {
        return leaf(rng);
    }
    let pretty = rng.chance(1, 3);
    let (sep, ind) = if pretty { (",\n  ", "\n  ") } else { (",", "") };
    if rng.chance(1, 2) {
        // Long arrays hold leaves only, so documents stay small enough to test quickly.
        let long = rng.chance(1, 4);
        let n = if long {
            50 + rng.below(300)
        } else {
            rng.below(6)
        };
        let items: Vec<String> = (0..n)
            .map(|_| {
                if long {
                    leaf(rng)
                } else {
                    json_doc(rng, depth + 1)
                }
            })
            .collect();
        format!("[{ind}{}]", items.join(sep))
    } else {
        let keys = [
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
        let n = rng.below(7);
        let members: Vec<String> = (0..n)
            .map(|i| {
                let key = if rng.chance(2, 3) {
                    keys[i as usize % keys.len()].to_string()
                } else {
                    format!("k{}", rng.below(99))
                };
                format!("\"{key}\": {}", json_doc(rng, depth + 1))
            })
            .collect();
        format!("{{{ind}{}}}", members.join(sep))
    }
}

fn options(rng: &mut Rng, text: &str) -> Options {
    let pattern = *rng.pick(&[
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
    ]);
    let unit = *rng.pick(&[
        Unit::Bytes,
        Unit::Bytes,
        Unit::Chars,
        Unit::Utf16,
        Unit::Tokens,
    ]);
    let size = text.len().max(1) as u64;
    let limit = match rng.below(6) {
        0 => rng.below(60),
        1 => rng.below(400),
        2 => size + rng.below(100),
        _ => rng.below(size + 1) + rng.below(3000),
    } as usize;
    let mut o = Options::new(pattern, Budget::new(unit, limit));
    if rng.chance(1, 3) {
        o.exit_code = Some(rng.below(3) as i64);
    }
    if rng.chance(1, 4) {
        o.header = true;
        o.command = rng.chance(1, 2).then(|| "npm run build".to_string());
        o.timed_out = rng.chance(1, 5);
    }
    if rng.chance(1, 3) {
        o.fetch = Some(Fetch {
            id: format!("call_{}", rng.below(1000)),
            offset: rng.below(100000),
            ..Fetch::default()
        });
    }
    if rng.chance(1, 4) {
        o.tool = Some(
            rng.pick(&["terminal", "web_search", "read_file", "grep", "fetch"])
                .to_string(),
        );
    }
    if rng.chance(1, 5) {
        o.head_share = rng.below(11) as f64 / 10.0;
    }
    if rng.chance(1, 5) {
        o.terminal.context_before = rng.below(3) as usize;
        o.terminal.context_after = rng.below(3) as usize;
        o.terminal.collapse = rng.chance(1, 2);
    }
    if rng.chance(1, 4) {
        let a = 1 + rng.below(200) as usize;
        o.file.range = Some([a, a + rng.below(100) as usize]);
    }
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

fn check(seed: u64, input: &str, o: &Options) {
    let ctx = || format!("seed {seed}, options {o:?}, input {} bytes", input.len());
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

/// Runs `case` for every seed, naming the seed of a failure (also when the library's own
/// debug assertions fire). `TOOLSLICE_TRUNCATE_SEED` runs one seed.
fn for_seeds(first: u64, n: usize, case: impl Fn(u64) + std::panic::RefUnwindSafe) {
    let only = std::env::var("TOOLSLICE_TRUNCATE_SEED")
        .ok()
        .and_then(|s| s.parse::<u64>().ok());
    for seed in first..first + n as u64 {
        if only.is_some_and(|o| o != seed) {
            continue;
        }
        if std::panic::catch_unwind(|| case(seed)).is_err() {
            panic!("failed at seed {seed} (rerun with TOOLSLICE_TRUNCATE_SEED={seed})");
        }
    }
}

#[test]
fn every_pattern_every_unit_holds_its_invariants() {
    for_seeds(0, cases(1500), |seed| {
        let mut rng = Rng::new(seed);
        let input = text(&mut rng);
        let o = options(&mut rng, &input);
        check(seed, &input, &o);
    });
}

#[test]
fn terminal_logs_keep_errors_and_tail() {
    let n = cases(400);
    for case in 0..n as u64 {
        let mut rng = Rng::new(10_000 + case);
        let mut input = String::new();
        let lines = 50 + rng.below(3000);
        for _ in 0..lines {
            if rng.chance(1, 200) {
                input.push_str(rng.pick::<&str>(ERRORS));
            } else {
                let k = 1 + rng.below(8);
                input.push_str(
                    &(0..k)
                        .map(|_| *rng.pick(&WORDS[..14]))
                        .collect::<Vec<_>>()
                        .join(" "),
                );
            }
            input.push('\n');
        }
        input.push_str("Process finished with exit code 1\n");
        let mut o = Options::new(
            Pattern::Terminal,
            Budget::new(
                *rng.pick(&[Unit::Bytes, Unit::Chars, Unit::Utf16]),
                2000 + rng.below(6000) as usize,
            ),
        );
        o.exit_code = Some(1);
        o.header = rng.chance(1, 2);
        check(10_000 + case, &input, &o);
        let t = truncate(&input, &o).unwrap();
        assert!(t.text.ends_with("Process finished with exit code 1\n"));
    }
}

#[test]
fn token_budgets_hold_under_a_non_additive_counter() {
    // Words count once, long words cost extra: merging pieces changes the count.
    let counter = |s: &str| -> usize {
        s.split_whitespace().map(|w| 1 + w.len() / 6).sum::<usize>() + s.matches('\n').count()
    };
    let n = cases(300);
    for case in 0..n as u64 {
        let mut rng = Rng::new(20_000 + case);
        let input = text(&mut rng);
        let mut o = options(&mut rng, &input);
        o.budget = Budget::Tokens(rng.below(2000) as usize);
        match truncate_with(&input, &o, &counter) {
            Ok(t) => {
                assert!(counter(&t.text) <= o.budget.limit(), "seed {case}");
                assert_eq!(t.size, counter(&t.text));
            }
            Err(TruncateError::BudgetTooSmall { .. } | TruncateError::InvalidJson(_)) => {}
            Err(e) => panic!("seed {case}: {e}"),
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
                    check(0, input, &Options::new(p, Budget::new(unit, limit)));
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

/// Prints one generated case (for debugging): `TOOLSLICE_TRUNCATE_SEED=N cargo test --test
/// truncate_props show_case -- --ignored --nocapture`.
#[test]
#[ignore]
fn show_case() {
    let seed: u64 = std::env::var("TOOLSLICE_TRUNCATE_SEED")
        .unwrap()
        .parse()
        .unwrap();
    let mut rng = Rng::new(seed);
    let input = text(&mut rng);
    let o = options(&mut rng, &input);
    eprintln!(
        "options: {o:?}\ninput ({} bytes): {:?}",
        input.len(),
        &input[..input.len().min(3000)]
    );
}
