//! The streaming checker: bytes in, in chunks split anywhere, one report out.
//!
//! Chunks may split a line or a UTF-8 sequence; the reader holds the partial line until its
//! newline arrives (up to [`Limits::line_bytes`](super::Limits); a longer line is reported
//! `too_large`), so memory is bounded by the limits of [`super::Limits`] (plus, for trace
//! formats, the measures of each tool call awaiting its join, and a single-document input
//! while it is buffered). The report is identical to a one-shot check of the whole input,
//! whatever the chunking.
//!
//! The reader is chosen from the first non-blank lines (or forced with
//! [`CheckOptions::format`]): seed-000 span JSONL, or any trace format of
//! [`crate::formats`].

use super::report::{CheckOptions, Report, ReportBuilder};
use crate::formats::{Format, PartError, PartReader, Reader};

/// A check in progress.
pub struct Checker {
    reader: Reader,
    builder: ReportBuilder,
    bytes: u64,
}

impl Checker {
    pub fn new(options: CheckOptions) -> Self {
        Checker {
            reader: Reader::with_limits(
                options.format,
                usize::try_from(options.limits.line_bytes).unwrap_or(usize::MAX),
                usize::try_from(options.limits.document_bytes).unwrap_or(usize::MAX),
            ),
            builder: ReportBuilder::new(options.format.as_str(), options),
            bytes: 0,
        }
    }

    /// Feeds the next chunk of the input.
    pub fn push(&mut self, chunk: &[u8]) {
        self.bytes += chunk.len() as u64;
        self.reader.push(chunk, &mut self.builder);
    }

    /// Bytes fed so far (for progress bars).
    /// Takes in the lines that follow, read apart by a [`PartReader`] (in another thread):
    /// the report is the one pushing those lines here would give. The input pushed so far
    /// must end with a newline, and be a trace format in a line layout ([`Self::line_format`])
    /// of the part's format; otherwise nothing changes, and the error says why.
    pub fn absorb(&mut self, part: &[u8]) -> Result<(), PartError> {
        let bytes = self.reader.absorb(part, &mut self.builder)?;
        self.bytes += bytes;
        Ok(())
    }

    /// The trace format of the input, once its first lines showed it is one in a line layout
    /// (one value per line): the inputs whose later lines a [`PartReader`] can read apart.
    pub fn line_format(&self) -> Option<Format> {
        self.reader.line_format()
    }

    /// Whether the first lines have chosen how the input is read; until then
    /// [`Self::line_format`] is `None` whatever the input turns out to be.
    pub fn format_decided(&self) -> bool {
        self.reader.decided()
    }

    pub fn bytes_read(&self) -> u64 {
        self.bytes
    }

    /// Complete lines seen so far.
    pub fn lines_read(&self) -> u64 {
        self.reader.lines_read()
    }

    /// Tool spans classified so far (for trace formats, rows are classified at the end,
    /// once every tool call is joined).
    pub fn spans_read(&self) -> u64 {
        self.builder.counts().total
    }

    /// The bytes the check holds so far, by structure (capacities): for
    /// `examples/check_memory.rs`, which accounts for the checker's memory (issue 17).
    #[doc(hidden)]
    pub fn held_bytes(&self) -> Vec<(&'static str, usize)> {
        self.builder.held_bytes()
    }

    /// Ends the input (a last line without a newline counts) and returns the report.
    pub fn finish(mut self) -> Report {
        self.reader.finish(&mut self.builder);
        self.builder.finish()
    }

    /// [`finish`](Self::finish), for a process that exits once the report is out: the same
    /// report, but what the join worked on (a trace's tool and model calls, the measures
    /// kept for re-listed inputs) is left allocated rather than freed block by block, as a
    /// compiler's `-disable-free` leaves its trees. That freeing was 15% of the join of 50 MB
    /// of an Agents SDK export (its model inputs' tool messages, a few blocks each). The
    /// memory stays taken for the life of the process (or of a wasm instance): never for a
    /// checker in a process that goes on to other work.
    pub fn finish_for_exit(mut self) -> Report {
        self.reader.finish_for_exit(&mut self.builder);
        self.builder.finish()
    }
}

impl PartReader {
    /// A part reader for a check with these options (the longest line it holds is theirs).
    pub fn for_check(format: Format, options: &CheckOptions) -> PartReader {
        let line_limit = usize::try_from(options.limits.line_bytes).unwrap_or(usize::MAX);
        PartReader::new(format, line_limit)
    }
}

/// Checks a whole input at once.
pub fn check_bytes(input: &[u8], options: CheckOptions) -> Report {
    let mut checker = Checker::new(options);
    checker.push(input);
    checker.finish()
}
