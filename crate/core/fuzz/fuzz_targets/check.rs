//! The checker on arbitrary bytes (issue 13): no panic; every entry accounted for; the
//! report is the same at any chunking; a run that checked nothing never passes; the table
//! carries no raw control character; and with small memory limits the counts, statuses and
//! exit code are those of the unlimited run while rows and facts stay within the budget.
#![no_main]

use libfuzzer_sys::fuzz_target;
use toolslice::check::{check_bytes, render, CheckOptions, Checker, Limits, Status};

fuzz_target!(|data: &[u8]| {
    let (knobs, input) = data.split_at(data.len().min(2));
    let whole = check_bytes(input, CheckOptions::default());
    let c = &whole.counts;
    assert_eq!(c.lines, c.total + c.invalid + c.skipped + c.blank);
    // Every entry skipped or invalid: never a pass (the line is there only when no entry
    // was a tool span).
    if c.total == 0 && c.skipped + c.invalid > 0 {
        assert!(whole.nothing_checked.is_some());
    }
    assert!(whole.nothing_checked.is_none() || c.total == 0);
    let fails = c.silent_clip + c.incomplete + c.invalid > 0 || whole.nothing_checked.is_some();
    assert_eq!(whole.exit_code, i32::from(fails));
    assert!(whole.not_kept.is_empty());
    for ch in render::table(&whole).chars() {
        assert!(ch == '\n' || !ch.is_control(), "raw {ch:?} in the table");
    }
    let _ = (render::json(&whole), render::jsonl(&whole));

    let chunk = 1 + knobs.first().copied().unwrap_or(0) as usize % 64;
    let mut checker = Checker::new(CheckOptions::default());
    for piece in input.chunks(chunk) {
        checker.push(piece);
    }
    assert_eq!(checker.finish(), whole);

    // Small budgets: the verdict is the same, only listing and facts are partial.
    let budget = 200 + 40 * u64::from(knobs.get(1).copied().unwrap_or(0));
    let limits = Limits {
        fact_bytes: budget,
        row_bytes: budget,
        ..Limits::default()
    };
    let small = check_bytes(
        input,
        CheckOptions {
            limits,
            ..CheckOptions::default()
        },
    );
    assert_eq!(small.counts, whole.counts);
    assert_eq!(small.exit_code, whole.exit_code);
    assert_eq!(small.clip_histogram, whole.clip_histogram);
    assert_eq!(
        small.rows.len() as u64 + small.not_kept.rows,
        whole.rows.len() as u64
    );
    let row_cost: u64 = (small.rows.iter())
        .map(|_| toolslice::check::ROW_BYTES)
        .sum();
    assert!(row_cost <= budget);
    // Listed rows are rows of the unlimited report.
    let whole_rows = whole.rows.to_vec();
    for row in &small.rows {
        assert!(whole_rows.contains(&row.to_row()));
    }
    assert!(small.rows.iter().all(|r| Status::ALL.contains(&r.status)));
});
