//! The streaming checker: bytes in, in chunks split anywhere, one report out.
//!
//! Chunks may split a line or a UTF-8 sequence; the splitter holds the partial line until
//! its newline arrives, so memory is bounded by the longest line plus the report. The report
//! is identical to a one-shot check of the whole input, whatever the chunking.

use super::report::{CheckOptions, Report, ReportBuilder};
use crate::lines::LineSplitter;
use crate::span::parse_view;

/// A check in progress over seed-000 span JSONL.
pub struct Checker {
    lines: LineSplitter,
    builder: ReportBuilder,
    line_no: u64,
    bytes: u64,
}

impl Checker {
    pub fn new(options: CheckOptions) -> Self {
        Checker {
            lines: LineSplitter::new(),
            builder: ReportBuilder::new("spans", options),
            line_no: 0,
            bytes: 0,
        }
    }

    /// Feeds the next chunk of the input.
    pub fn push(&mut self, chunk: &[u8]) {
        self.bytes += chunk.len() as u64;
        let Checker {
            lines,
            builder,
            line_no,
            ..
        } = self;
        lines.push(chunk, |line| {
            *line_no += 1;
            check_line(builder, *line_no, line);
        });
    }

    /// Bytes fed so far (for progress bars).
    pub fn bytes_read(&self) -> u64 {
        self.bytes
    }

    /// Complete lines seen so far.
    pub fn lines_read(&self) -> u64 {
        self.line_no
    }

    /// Tool spans classified so far.
    pub fn spans_read(&self) -> u64 {
        self.builder.counts().total
    }

    /// Ends the input (a last line without a newline counts) and returns the report.
    pub fn finish(mut self) -> Report {
        if let Some(last) = self.lines.finish() {
            self.line_no += 1;
            check_line(&mut self.builder, self.line_no, &last);
        }
        self.builder.finish()
    }
}

fn check_line(builder: &mut ReportBuilder, line_no: u64, line: &[u8]) {
    // A UTF-8 byte order mark at the start of a file is not part of the first record.
    let line = if line_no == 1 {
        line.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(line)
    } else {
        line
    };
    // Only a line that starts with whitespace can be blank: no scan of ordinary lines.
    if line.first().is_none_or(u8::is_ascii_whitespace) && line.iter().all(u8::is_ascii_whitespace)
    {
        return builder.blank();
    }
    match parse_view(line) {
        Ok(rec) => builder.record(line_no, rec),
        Err(e) => builder.invalid(line_no, e.kind, e.message),
    }
}

/// Checks a whole input at once.
pub fn check_bytes(input: &[u8], options: CheckOptions) -> Report {
    let mut checker = Checker::new(options);
    checker.push(input);
    checker.finish()
}
