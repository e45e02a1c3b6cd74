//! `Checker::finish_for_exit` leaves what the join worked on unfreed, for a process that exits
//! once the report is out; the report must be the one `finish` gives, on every fixture and
//! producer trace, whatever its layout. (That the thread's state between checks is reset
//! either way is held by the memo's and relist's own tests.)

use toolslice::check::{CheckOptions, Checker, Report};

mod common;

/// Every trace and span file of the repository's fixtures and producer corpus, each layout:
/// lines, documents, span JSONL.
fn inputs() -> Vec<(String, Vec<u8>)> {
    let dirs = [
        common::FORMAT_FIXTURES,
        common::PRODUCER_TRACES,
        common::PACKAGE_SPAN_FILES,
    ];
    let out = common::corpus_files(&dirs, |name| {
        (name.ends_with(".jsonl") || name.ends_with(".json")) && !name.ends_with(".truth.json")
    });
    assert!(out.len() >= 30, "found only {} inputs", out.len());
    out
}

fn check(input: &[u8], options: &CheckOptions, for_exit: bool) -> Report {
    let mut checker = Checker::new(options.clone());
    // In pieces, as the command line reads a file: lines split across pushes.
    for piece in input.chunks(4093) {
        checker.push(piece);
    }
    if for_exit {
        checker.finish_for_exit()
    } else {
        checker.finish()
    }
}

#[test]
fn finish_for_exit_reports_what_finish_reports() {
    for flagged_only in [false, true] {
        let options = CheckOptions {
            flagged_only,
            ..CheckOptions::default()
        };
        for (name, input) in inputs() {
            assert_eq!(
                check(&input, &options, true),
                check(&input, &options, false),
                "{name} (flagged_only {flagged_only})"
            );
        }
    }
}
