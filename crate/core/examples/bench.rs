//! Native side of `scripts/bench`: runs one workload over a file and prints its timings as
//! one JSON object, so the bench can set the native build beside the wasm build and the
//! seeds' Python in the same run.
//!
//!     cargo run --release --example bench -- check FILE [RUNS] [--warm-up]
//!     cargo run --release --example bench -- truncate FILE [RUNS]   (terminal, 6000 chars)

use std::time::Instant;

use toolslice::check::{CheckOptions, Checker};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let usage = "usage: bench (check | truncate) FILE [RUNS]";
    let (workload, file) = match (args.first(), args.get(1)) {
        (Some(w), Some(f)) => (w.as_str(), f.as_str()),
        _ => {
            eprintln!("{usage}");
            std::process::exit(2);
        }
    };
    let runs: usize = args.get(2).and_then(|r| r.parse().ok()).unwrap_or(3);
    // One untimed run first, as the wasm and Python rows of scripts/bench do.
    let warm_up = args.iter().any(|a| a == "--warm-up");
    let input = std::fs::read(file).unwrap_or_else(|e| {
        eprintln!("bench: cannot read {file}: {e}");
        std::process::exit(2);
    });
    match workload {
        "check" => {
            if warm_up {
                check(&input, 1, false);
            }
            check(&input, runs, true)
        }
        "truncate" => truncate(&input, runs),
        _ => {
            eprintln!("{usage}");
            std::process::exit(2);
        }
    }
}

/// The checker fed in 1 MiB chunks, as the CLI and the page feed it; the timings printed
/// unless this is the warm-up.
fn check(input: &[u8], runs: usize, print: bool) {
    let mut times = Vec::new();
    let mut spans = 0;
    for _ in 0..runs {
        let start = Instant::now();
        let mut checker = Checker::new(CheckOptions {
            flagged_only: true,
            ..CheckOptions::default()
        });
        for chunk in input.chunks(1 << 20) {
            checker.push(chunk);
        }
        let report = checker.finish();
        times.push(start.elapsed().as_secs_f64());
        spans = report.counts.total;
    }
    if print {
        print_result(input.len(), spans, &mut times);
    }
}

/// Terminal truncation of a build log to seed 001's default budget (6000 chars).
fn truncate(input: &[u8], runs: usize) {
    use toolslice::truncate::{truncate, Budget, Options, Pattern};
    let text = String::from_utf8_lossy(input);
    let options = Options {
        pattern: Pattern::Terminal,
        budget: Budget::Chars(6000),
        ..Options::default()
    };
    let mut times = Vec::new();
    let mut kept = 0;
    for _ in 0..runs {
        let start = Instant::now();
        let out = truncate(&text, &options).expect("6000 chars fit the marker");
        times.push(start.elapsed().as_secs_f64());
        kept = out.text.len() as u64;
    }
    print_result(input.len(), kept, &mut times);
}

fn print_result(bytes: usize, items: u64, times: &mut [f64]) {
    times.sort_by(f64::total_cmp);
    let median = times[times.len() / 2];
    println!(
        "{{\"bytes\":{bytes},\"items\":{items},\"runs\":{},\"median_s\":{median},\"min_s\":{}}}",
        times.len(),
        times[0]
    );
}
