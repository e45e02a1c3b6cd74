//! The point of the truncators, on the fixtures: the seed's head-only cut loses the failure
//! of a 12,000-line `npm run build`; head+tail (and the seed's own terminal truncation) lose
//! a root cause buried in the middle of a build; toolslice keeps both, inside the budget,
//! with the exit code outside the cut.
//!
//! Each claim is checked twice where it can be: in pure Rust by construction (what the
//! seed's slice keeps is a prefix we can inspect), and against the seed's reference code
//! (`shared/reference/truncate_seed.py`) when python3 and the reference are present.

mod common;
mod fixtures;

use std::io::Write;
use std::process::{Command, Stdio};

use common::{reference_dir, Draw};
use fixtures::*;
use toolslice::truncate::{
    aggregate, is_error_line, truncate, Budget, Fetch, Options, Pattern, TruncateError, Unit,
};

/// Runs `truncate_seed.<func>(text, max_chars)` from the reference; `None` when absent.
fn seed(func: &str, text: &str, max_chars: usize) -> Option<String> {
    let Some(dir) = reference_dir() else {
        eprintln!("skipping the reference run of {func}: shared/reference or python3 not found");
        return None;
    };
    let script = format!(
        "import sys; sys.path.insert(0, {dir:?}); import truncate_seed as t\n\
         text = sys.stdin.buffer.read().decode('utf-8')\n\
         sys.stdout.buffer.write(t.{func}(text, {max_chars}).encode('utf-8'))\n",
        dir = dir.to_string_lossy()
    );
    let mut child = Command::new("python3")
        .args(["-c", &script])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("python3 runs");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(text.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "reference {func} failed");
    Some(String::from_utf8(out.stdout).unwrap())
}

fn terminal(limit: Budget, exit: i64, command: &str) -> Options {
    let mut o = Options::new(Pattern::Terminal, limit);
    o.exit_code = Some(exit);
    o.command = Some(command.into());
    o.header = true;
    o
}

#[test]
fn npm_fixture_has_the_seed_shape() {
    let log = npm_build_failure();
    let lines: Vec<&str> = log.lines().collect();
    assert_eq!(lines.len(), 12_000);
    assert_eq!(lines[11_998], NPM_FAILURE);
    assert_eq!(lines[11_999], NPM_EXIT);
    // The only error lines are the last two: the failure is the tail.
    let errors: Vec<usize> = (0..lines.len())
        .filter(|&i| is_error_line(lines[i]))
        .collect();
    assert_eq!(errors, vec![11_998, 11_999]);
}

#[test]
fn seed_head_only_loses_the_npm_failure() {
    let log = npm_build_failure();
    // By construction: the seed keeps `text[:2000]` (Python slices by code point).
    let prefix: String = log.chars().take(2000).collect();
    assert!(!prefix.contains(NPM_FAILURE) && !prefix.contains("exit code"));
    if let Some(out) = seed("truncate_head", &log, 2000) {
        assert!(out.starts_with(&prefix));
        assert!(
            !out.contains(NPM_FAILURE) && !out.contains(NPM_EXIT),
            "the seed's head cut kept the failure?"
        );
        // Its flaws, for the record: a literal N, and an overrun by the marker.
        assert!(out.ends_with("[truncated, N lines omitted]"));
        assert!(out.chars().count() > 2000);
    }
    // toolslice's own head pattern is honest about the same loss.
    let t = truncate(&log, &Options::new(Pattern::Head, Budget::Chars(2000))).unwrap();
    assert!(!t.text.contains(NPM_FAILURE));
    assert_eq!(t.error_lines.dropped, 2);
    assert!(t.audit.errors_in_dropped_region);
    assert!(t.text.contains(&format!(
        "{} bytes ({} lines) omitted from the end",
        t.omitted_bytes, t.omitted_lines
    )));
}

#[test]
fn toolslice_terminal_keeps_the_npm_failure() {
    let log = npm_build_failure();
    for budget in [
        Budget::Chars(2000),
        Budget::Bytes(2000),
        Budget::Utf16(2000),
        Budget::Chars(6000),
        Budget::Tokens(600),
    ] {
        let t = truncate(&log, &terminal(budget, 1, "npm run build")).unwrap();
        assert!(t.size <= budget.limit(), "{budget:?}");
        assert!(t.text.starts_with(
            "Tool: terminal\nCommand: npm run build\nExit code: 1\nOutput:\n$ npm run build\n"
        ));
        assert!(
            t.text.ends_with(&format!("{NPM_FAILURE}\n{NPM_EXIT}\n")),
            "{budget:?}:\n{}",
            t.text
        );
        assert_eq!(t.error_lines.dropped, 0);
        assert_eq!(t.exit_code, Some(1));
        let marker = t.marker.as_deref().unwrap();
        assert!(marker.contains("omitted from the middle"), "{marker}");
        assert!(marker.contains("xit code reported separately") || budget.unit() == Unit::Tokens);
        assert!(t.audit.exit_code_preserved && !t.audit.errors_in_dropped_region);
    }
    // auto picks the terminal pattern from the tool name or the exit code.
    let mut o = Options::new(Pattern::Auto, Budget::Chars(2000));
    o.tool = Some("run_command".into());
    let t = truncate(&log, &o).unwrap();
    assert_eq!(t.pattern.name(), "terminal");
    assert!(t.text.contains(NPM_EXIT));
}

#[test]
fn root_cause_in_the_middle_is_lost_by_head_tail_and_kept_by_terminal() {
    let log = root_cause_in_middle();
    let lines: Vec<&str> = log.lines().collect();
    assert_eq!(lines[ROOT_CAUSE_LINE - 1], ROOT_CAUSE);
    let at = log.find(ROOT_CAUSE).unwrap();
    assert!(
        at > 100_000 && log.len() - at > 400_000,
        "root cause is deep in the middle"
    );

    // Head+tail keeps the cascade noise at the end and drops the cause, in the seed (by
    // construction: 3,600 chars of head and 2,400 of tail, nowhere near byte 100,000) ...
    if let Some(out) = seed("truncate_head_tail", &log, 6000) {
        assert!(!out.contains(ROOT_CAUSE));
        assert!(out.contains(MIDDLE_EXIT));
    }
    // ... and in toolslice's positional pattern.
    let t = truncate(&log, &Options::new(Pattern::HeadTail, Budget::Bytes(6000))).unwrap();
    assert!(!t.text.contains(ROOT_CAUSE) && t.text.contains(MIDDLE_EXIT));

    // The seed's own terminal truncation: the error block is unbounded (6,001 lines), the
    // "safety cap" slices the result to a head, and the tail with the exit code is gone.
    if let Some(out) = seed("truncate_terminal_semantic", &log, 6000) {
        assert_eq!(out.chars().count(), 6000);
        assert!(!out.contains(MIDDLE_EXIT) && !out.contains(MIDDLE_SUMMARY));
        // Its line numbers are 0-based: the root cause on line 3,004 is called L3003.
        assert!(out.contains(&format!("> L{}: {ROOT_CAUSE}", ROOT_CAUSE_LINE - 1)));
    }

    // toolslice: root cause with its real line number, the tail with the summary and the
    // exit code, and an exact count of the cascade errors that did not fit.
    for budget in [
        Budget::Bytes(6000),
        Budget::Chars(4000),
        Budget::Bytes(2500),
    ] {
        let t = truncate(&log, &terminal(budget, 2, "npm run build")).unwrap();
        assert!(t.size <= budget.limit());
        assert!(
            t.text
                .contains(&format!("> L{ROOT_CAUSE_LINE}: {ROOT_CAUSE}")),
            "{budget:?}\n{}",
            t.text
        );
        assert!(t
            .text
            .ends_with(&format!("{MIDDLE_SUMMARY}\n{MIDDLE_EXIT}\n")));
        assert_eq!(
            t.error_lines.total,
            CASCADE_COUNT + 3,
            "root cause, cascade, summary, npm ERR!"
        );
        let not_shown = t.error_lines.dropped;
        assert!(not_shown > 0);
        assert!(
            t.text.contains(&format!(
                "[... {not_shown} more error lines not shown, first at line "
            )),
            "{}",
            t.text
        );
        // The root cause comes before any cascade line in the block: original order.
        let cause = t.text.find(ROOT_CAUSE).unwrap();
        let first_cascade = t.text.find("error TS2339").unwrap();
        assert!(cause < first_cascade);
    }
}

#[test]
fn large_build_log_keeps_root_cause_and_outcome() {
    let log = build_log(2 << 20);
    let mut o = terminal(Budget::Bytes(8192), 101, "cargo build --release");
    o.fetch = Some(Fetch {
        id: "call_42".into(),
        ..Fetch::default()
    });
    let t = truncate(&log, &o).unwrap();
    assert!(t.size <= 8192);
    assert!(t
        .text
        .contains("error[E0425]: cannot find value `config` in this scope"));
    assert!(t
        .text
        .ends_with("error: build failed\nProcess exited with status 101\n"));
    assert!(t.text.contains("get_more(id=\"call_42\", offset="));
    assert_eq!(t.next_offset, Some(t.kept[0][1] as u64));
    // Repeated warnings collapse in the kept parts.
    assert!(!t
        .text
        .contains("warning: unused import: `std::fmt::Write`\nwarning: unused import"));
}

#[test]
fn audit_of_the_two_strategies() {
    let logs = [npm_build_failure(), root_cause_in_middle()];
    let mut head = Vec::new();
    let mut ours = Vec::new();
    for log in &logs {
        let mut o = Options::new(Pattern::Head, Budget::Chars(2000));
        o.tool = Some("terminal".into());
        head.push(truncate(log, &o).unwrap().audit);
        let mut o = terminal(Budget::Chars(2000), 1, "npm run build");
        o.tool = Some("terminal".into());
        ours.push(truncate(log, &o).unwrap().audit);
    }
    let h = aggregate(&head);
    assert_eq!(h.share_lost_error_line, Some(1.0));
    assert_eq!(h.share_exit_code_preserved, Some(0.0));
    assert!(h
        .warnings
        .iter()
        .any(|w| w.contains("dropped an error line")));
    assert!(h.warnings.iter().any(|w| w.contains("under 20%")));
    let s = aggregate(&ours);
    assert_eq!(s.share_exit_code_preserved, Some(1.0));
    // The npm log loses nothing; the cascade log cannot fit 6,000 error lines in 2,000
    // chars, and the audit says so rather than pretending.
    assert!(!ours[0].errors_in_dropped_region);
    assert!(ours[1].errors_in_dropped_region);
}

#[test]
fn reference_overruns_its_budgets_and_toolslice_does_not() {
    let log = npm_build_failure();
    for (func, max) in [
        ("truncate_head", 500),
        ("truncate_tail", 500),
        ("truncate_head_tail", 500),
    ] {
        if let Some(out) = seed(func, &log, max) {
            assert!(out.chars().count() > max, "{func} no longer overruns?");
        }
    }
    for p in [
        Pattern::Head,
        Pattern::Tail,
        Pattern::HeadTail,
        Pattern::Terminal,
    ] {
        let t = truncate(&log, &Options::new(p, Budget::Chars(500))).unwrap();
        assert!(t.text.chars().count() <= 500);
    }
    assert!(matches!(
        truncate(&log, &Options::new(Pattern::Terminal, Budget::Chars(12))),
        Err(TruncateError::BudgetTooSmall { .. })
    ));
}

#[test]
fn error_matcher_covers_the_seed_patterns() {
    let mut lines: Vec<String> = Vec::new();
    for l in npm_build_failure()
        .lines()
        .take(300)
        .chain(root_cause_in_middle().lines().skip(2990).take(50))
    {
        lines.push(l.to_string());
    }
    let words = [
        "error",
        "Error",
        "ERROR",
        "errors",
        "error:",
        "failed",
        "FAIL",
        "failure",
        "exception",
        "Traceback",
        "aborted",
        "fatal",
        "denied",
        "not found",
        "no such file",
        "permission",
        "exit code",
        "returned 1",
        "returned",
        "segfault",
        "terror",
        "mirror",
        "error_code",
        "my-error",
        "error.",
        "(error)",
        "xerror",
        "errorx",
        "is not found!",
        "PermissionError",
        "exceptional",
        "code 0",
        "ok",
        "warn",
        "info",
        "_fail",
        "9fatal",
        "exit  code",
        "returned 12x",
        "Denied.",
    ];
    let mut rng = common::Rng::new(7);
    for _ in 0..3000 {
        let n = 1 + rng.below(6);
        let line: Vec<&str> = (0..n).map(|_| *rng.pick(&words)).collect();
        let sep = *rng.pick(&[" ", "", "-", ":", "/"]);
        lines.push(line.join(sep));
    }
    let Some(dir) = reference_dir() else {
        eprintln!("skipping the differential matcher test: shared/reference or python3 not found");
        return;
    };
    let script = format!(
        "import sys, re; sys.path.insert(0, {dir:?}); import truncate_seed as t\n\
         r = re.compile('|'.join(t.ERROR_PATTERNS), re.IGNORECASE)\n\
         for line in sys.stdin.buffer.read().decode('utf-8').split('\\n'):\n    print(1 if r.search(line) else 0)\n",
        dir = dir.to_string_lossy()
    );
    let mut child = Command::new("python3")
        .args(["-c", &script])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(lines.join("\n").as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    let verdicts: Vec<bool> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| l == "1")
        .collect();
    assert_eq!(verdicts.len(), lines.len());
    let mut seed_hits = 0;
    for (line, seed_hit) in lines.iter().zip(verdicts) {
        if seed_hit {
            seed_hits += 1;
            assert!(
                is_error_line(line),
                "the seed matches {line:?}, toolslice does not"
            );
        }
    }
    assert!(
        seed_hits > 1000,
        "differential test exercised too few matches: {seed_hits}"
    );
}
