//! A trace file's later lines read apart by a `PartReader` (another thread, in the CLI) and
//! absorbed by the checker that read the lines before them give the report of reading every
//! line in order: at every line boundary of every line-layout fixture and producer trace,
//! with odd lines (blank, invalid, too long, a byte-order mark mid-file, CRLF, no final
//! newline) and both row modes. A refused part changes nothing.

use std::path::PathBuf;

use toolslice::check::{check_bytes, CheckOptions, Checker, Limits, PartReader, Report};
use toolslice::formats::Format;

mod common;

/// Every line-layout trace of the repository: the format fixtures and the producer corpus.
fn inputs() -> Vec<(String, Vec<u8>)> {
    let out = common::corpus_files(
        &[common::FORMAT_FIXTURES, common::PRODUCER_TRACES],
        |name| name.ends_with(".jsonl") && !name.starts_with("spans"),
    );
    assert!(
        out.len() >= 10,
        "found only {} line-layout traces",
        out.len()
    );
    out
}

fn fixture(name: &str) -> Vec<u8> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/formats");
    std::fs::read(dir.join(name)).unwrap()
}

/// Byte offsets just after each newline.
fn line_ends(input: &[u8]) -> Vec<usize> {
    (0..input.len())
        .filter(|&i| input[i] == b'\n')
        .map(|i| i + 1)
        .collect()
}

/// The report of reading `input[..cut]` here and `input[cut..]` as a part (pushed in chunks
/// of `chunk` bytes); `None` when the lines before `cut` did not yet show a line layout.
fn split(input: &[u8], cut: usize, chunk: usize, options: &CheckOptions) -> Option<Report> {
    let mut checker = Checker::new(options.clone());
    checker.push(&input[..cut]);
    let format = checker.line_format()?;
    let mut part = PartReader::for_check(format, options);
    for piece in input[cut..].chunks(chunk) {
        part.push(piece);
    }
    checker.absorb(&part.finish()).expect("the part is taken");
    Some(checker.finish())
}

fn options() -> Vec<CheckOptions> {
    vec![
        CheckOptions::default(),
        CheckOptions {
            flagged_only: true,
            ..CheckOptions::default()
        },
    ]
}

#[test]
fn a_part_absorbed_at_any_line_gives_the_report_of_reading_in_order() {
    let mut compared = 0;
    for (name, input) in inputs() {
        for options in options() {
            let whole = check_bytes(&input, options.clone());
            for (k, &cut) in line_ends(&input).iter().enumerate() {
                let Some(report) = split(&input, cut, 1 + k % 5 * 331, &options) else {
                    continue;
                };
                assert_eq!(report, whole, "{name}: part from line {}", k + 2);
                compared += 1;
            }
        }
    }
    assert!(compared > 150, "only {compared} splits compared");
}

#[test]
fn odd_lines_in_a_part_are_reported_as_in_order() {
    let otlp = fixture("otlp-collector-events.jsonl");
    let lines: Vec<&[u8]> = otlp
        .split(|&b| b == b'\n')
        .filter(|l| !l.is_empty())
        .collect();
    let long = format!("{{\"pad\":\"{}\"}}", "x".repeat(3000));
    let mut input = Vec::new();
    for (i, line) in lines.iter().cycle().take(16).enumerate() {
        input.extend_from_slice(line);
        input.extend_from_slice(if i % 3 == 0 { b"\r\n" } else { b"\n" });
        match i % 6 {
            1 => input.extend_from_slice(b"\n   \n"),
            2 => input.extend_from_slice(b"{not json\n"),
            3 => input.extend_from_slice(format!("{long}\n").as_bytes()),
            4 => input.extend_from_slice(b"\xef\xbb\xbf{\"resourceSpans\":[]}\n"),
            5 => input.extend_from_slice(b"[1,2]\n\xff\xfe\n"),
            _ => {}
        }
    }
    // The last line without its newline.
    input.extend_from_slice(lines[0]);
    let limited = CheckOptions {
        limits: Limits {
            line_bytes: 2048,
            ..Limits::default()
        },
        ..CheckOptions::default()
    };
    for options in [CheckOptions::default(), limited] {
        let whole = check_bytes(&input, options.clone());
        assert!(whole.counts.invalid >= 5, "{:?}", whole.counts);
        for (k, &cut) in line_ends(&input).iter().enumerate() {
            if let Some(report) = split(&input, cut, 1 + k * 97 % 4096, &options) {
                assert_eq!(report, whole, "part from line {}", k + 2);
            }
        }
    }
}

#[test]
fn a_refused_part_changes_nothing() {
    let input = fixture("otlp-collector-events.jsonl");
    let options = CheckOptions::default();
    let whole = check_bytes(&input, options.clone());
    // After the third line (the second is empty): "inside a line" below is inside the third.
    let cut = line_ends(&input)[2];
    let mut part = PartReader::for_check(Format::Otlp, &options);
    part.push(&input[cut..]);
    let part = part.finish();
    // The checker goes on as if no part had been offered: it reads the rest itself.
    let refuse = |offer: &dyn Fn(&mut Checker) -> bool, rest_from: usize, what: &str| {
        let mut checker = Checker::new(options.clone());
        checker.push(&input[..rest_from]);
        assert!(!offer(&mut checker), "{what} was taken");
        checker.push(&input[rest_from..]);
        assert_eq!(checker.finish(), whole);
    };
    // Every truncation, and a flipped byte in the header, is a damaged part.
    for len in (0..part.len()).step_by(7) {
        refuse(
            &|c| c.absorb(&part[..len]).is_ok(),
            cut,
            &format!("{len} bytes of the part"),
        );
    }
    let mut bad = part.clone();
    bad[4] = 9;
    refuse(&|c| c.absorb(&bad).is_ok(), cut, "another format number");
    // Inside a line.
    refuse(
        &|c| c.absorb(&part).is_ok(),
        cut - 1,
        "a part inside a line",
    );
    // Another format.
    let mut langfuse = PartReader::for_check(Format::Langfuse, &options);
    langfuse.push(b"{\"type\":\"TOOL\"}\n");
    let langfuse = langfuse.finish();
    refuse(&|c| c.absorb(&langfuse).is_ok(), cut, "a Langfuse part");
    // Span JSONL is not a trace format.
    let spans = b"{\"name\":\"t\",\"observed_bytes\":1,\"injected_bytes\":1}\n";
    let mut checker = Checker::new(options.clone());
    checker.push(spans);
    assert_eq!(checker.line_format(), None);
    let err = checker.absorb(&part).unwrap_err();
    assert!(err.to_string().contains("line layout"), "{err}");
}

/// What the CLI asks before it starts workers: whether the first lines have chosen how the
/// input is read, and whether that is a line layout. Undecided, `line_format` is `None` for
/// every input; decided, `None` means span JSONL or a document (no parts).
#[test]
fn the_format_is_decided_by_the_first_lines() {
    let options = CheckOptions::default();
    let otlp = fixture("otlp-collector-events.jsonl");
    let first = line_ends(&otlp)[0];
    let mut checker = Checker::new(options.clone());
    checker.push(&otlp[..first - 1]);
    assert!(
        !checker.format_decided(),
        "a line without its newline decides nothing"
    );
    assert_eq!(checker.line_format(), None);
    checker.push(&otlp[first - 1..first]);
    assert!(checker.format_decided());
    assert_eq!(checker.line_format(), Some(Format::Otlp));

    // Span JSONL: only after the detection window of lines, and with no line format.
    let span = b"{\"name\":\"t\",\"observed_bytes\":1,\"injected_bytes\":1}\n";
    let mut checker = Checker::new(options.clone());
    checker.push(span);
    assert!(
        !checker.format_decided(),
        "one span line could still be a trace's first"
    );
    for _ in 0..16 {
        checker.push(span);
    }
    assert!(checker.format_decided());
    assert_eq!(checker.line_format(), None);

    // One document written across lines: decided by its first line.
    let mut checker = Checker::new(options);
    checker.push(b"{\n  \"resourceSpans\": [\n");
    assert!(checker.format_decided());
    assert_eq!(checker.line_format(), None);
}
