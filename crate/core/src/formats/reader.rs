//! The streaming reader: bytes in, in chunks split anywhere; the reader chosen from the
//! first non-blank line ([`super::detect`]); records, skips and invalid entries out to a
//! [`Sink`].

use serde_json::Value;

use super::detect::{self, Detector, FirstLine};
use super::part::{Part, PartError};
use super::{
    describe, langfuse, openai_agents, otlp, otlp_json, phoenix, Collector, Entries, Format,
    FormatOption, Layout, Sink,
};
use crate::lines::{LineSplitter, Piece};
use crate::record::ReadAs;
use crate::span::{parse_view, InvalidKind, KeyOrder, SpanView};

/// What was expected of an input no reader understood.
const EXPECTED: &str = "expected seed-000 span JSONL (one {\"name\", \"observed_bytes\", \
    \"injected_bytes\", ...} object per line), OTLP JSON ({\"resourceSpans\": [...]}, one \
    document or one export request per line), Langfuse observations ({\"type\": \"TOOL\", \
    \"traceId\": ...} items, JSON or JSONL), OpenAI Agents SDK trace items \
    ({\"object\": \"trace.span\", \"span_data\": {...}}), or Phoenix spans \
    ({\"data\": [{\"context\": {\"span_id\": ...}, ...}]})";

fn read_value(
    format: Format,
    value: &Value,
    entries: &mut Entries,
    collector: &mut Collector,
    sink: &mut dyn Sink,
) -> Result<(), String> {
    match format {
        Format::Otlp => match value {
            // Some tools write several requests as one array.
            Value::Array(list) if list.iter().all(Value::is_object) && !list.is_empty() => {
                for request in list {
                    otlp::read_request(request, entries, collector, sink)?;
                }
                Ok(())
            }
            _ => otlp::read_request(value, entries, collector, sink),
        },
        Format::Langfuse => langfuse::read_value(value, entries, collector, sink),
        Format::OpenaiAgents => openai_agents::read_value(value, entries, collector, sink),
        Format::Phoenix => phoenix::read_value(value, entries, collector, sink),
        Format::Spans => Err("seed-000 spans are read line by line".into()),
    }
}

/// The state of a [`Reader`].
enum State {
    /// Waiting for the first non-blank lines to choose the reader.
    Start {
        head: Vec<u8>,
        line_start: usize,
        searched: usize,
        detector: Detector,
    },
    /// Seed-000 span JSONL: the fast path, one record per line.
    Spans {
        lines: LineSplitter,
        order: KeyOrder,
    },
    /// One JSON value of a trace format per line.
    Lines {
        lines: LineSplitter,
        format: Format,
        collector: Collector,
    },
    /// One JSON document, buffered (at most `document_limit` bytes; past it, only its
    /// length is counted).
    Document { buf: Vec<u8>, dropped: Option<u64> },
}

/// The largest single JSON document a reader buffers by default (256 MiB): parsed whole, it
/// takes several times that, and a wasm32 module has 4 GiB at most.
pub const MAX_DOCUMENT: usize = 256 << 20;

/// The streaming reader behind `check::Checker` and [`convert_to_spans`]: bytes in,
/// in chunks split anywhere; records, skips and invalid entries out to a [`Sink`].
pub(crate) struct Reader {
    option: FormatOption,
    state: State,
    line_no: u64,
    line_limit: usize,
    document_limit: usize,
}

impl Reader {
    pub fn new(option: FormatOption) -> Reader {
        Reader::with_limits(option, crate::lines::MAX_LINE, MAX_DOCUMENT)
    }

    /// A reader that holds lines of at most `line_limit` bytes and a document of at most
    /// `document_limit`; longer ones are reported as `too_large`, never buffered.
    pub fn with_limits(option: FormatOption, line_limit: usize, document_limit: usize) -> Reader {
        let state = match option {
            FormatOption::Spans => State::Spans {
                lines: LineSplitter::with_limit(line_limit),
                order: KeyOrder::default(),
            },
            _ => State::Start {
                head: Vec::new(),
                line_start: 0,
                searched: 0,
                detector: Detector::default(),
            },
        };
        Reader {
            option,
            state,
            line_no: 0,
            line_limit,
            document_limit,
        }
    }

    /// Complete lines read so far (0 while a document is being buffered).
    pub fn lines_read(&self) -> u64 {
        self.line_no
    }

    pub fn push<S: Sink>(&mut self, chunk: &[u8], sink: &mut S) {
        let Reader {
            state,
            line_no,
            line_limit,
            document_limit,
            ..
        } = self;
        let limit = *line_limit;
        let decision = match state {
            State::Spans { lines, order } => {
                let Some(mut rest) = lines.resume(chunk, |piece| {
                    *line_no += 1;
                    match piece {
                        Piece::Line(line) => span_line(sink, *line_no, line),
                        Piece::TooLong(len) => too_large(sink, *line_no, len, limit),
                    }
                }) else {
                    return;
                };
                loop {
                    // The hot path: one pass reads an ordinary line and finds its end.
                    let mut record = SpanView::default();
                    if let Some(end) = crate::span::scan_line(rest, order, &mut record) {
                        *line_no += 1;
                        if end > limit {
                            too_large(sink, *line_no, end as u64, limit);
                        } else if record.name.as_deref().is_none_or(str::is_empty) {
                            nameless(sink, *line_no, &rest[..end], &mut record);
                        } else {
                            sink.span(*line_no, &mut record);
                        }
                        rest = &rest[end + 1..];
                        continue;
                    }
                    let Some(at) = crate::lines::find_newline(rest) else {
                        break;
                    };
                    *line_no += 1;
                    match lines.piece(&rest[..at]) {
                        Piece::Line(line) => span_line(sink, *line_no, line),
                        Piece::TooLong(len) => too_large(sink, *line_no, len, limit),
                    }
                    rest = &rest[at + 1..];
                }
                lines.hold(rest);
                return;
            }
            State::Lines {
                lines,
                format,
                collector,
            } => {
                return push_json_lines(lines, *format, line_no, chunk, collector, sink);
            }
            State::Document { buf, dropped } => {
                if let Some(len) = dropped {
                    *len += chunk.len() as u64;
                } else if buf.len() + chunk.len() > *document_limit {
                    *dropped = Some((buf.len() + chunk.len()) as u64);
                    *buf = Vec::new();
                } else {
                    buf.extend_from_slice(chunk);
                }
                return;
            }
            State::Start {
                head,
                line_start,
                searched,
                detector,
            } => {
                if head.is_empty() {
                    // The common case: the first chunk holds the first lines. Decide on the
                    // chunk itself and hand it to the chosen reader without a copy (a copy
                    // of the detector: undecided, the chunk is looked at again as the head).
                    let (mut start, mut seen, mut trial) = (0, 0, detector.clone());
                    let found = detect_in(chunk, &mut start, &mut seen, &mut trial, limit);
                    if let Some(decision) = found {
                        self.begin(decision, sink);
                        return self.push(chunk, sink);
                    }
                }
                head.extend_from_slice(chunk);
                match detect_in(head, line_start, searched, detector, limit) {
                    Some(decision) => decision,
                    None => return,
                }
            }
        };
        self.begin(decision, sink);
    }

    /// Chooses the reader and replays what was buffered into it.
    fn begin<S: Sink>(&mut self, decision: FirstLine, sink: &mut S) {
        // A forced `spans` never waits in `Start` (see `new`), so `forced` is a trace format.
        let state = match (decision, self.option.forced()) {
            (FirstLine::Document, _) => State::Document {
                buf: Vec::new(),
                dropped: None,
            },
            (_, Some(format)) => lines_state(format, self.line_limit),
            (FirstLine::Lines(Some(format)), None) => lines_state(format, self.line_limit),
            _ => State::Spans {
                lines: LineSplitter::with_limit(self.line_limit),
                order: KeyOrder::default(),
            },
        };
        let State::Start { head, .. } = std::mem::replace(&mut self.state, state) else {
            return;
        };
        self.push(&head, sink);
    }

    /// Takes in the lines a [`super::PartReader`] read apart: they come next, and the
    /// report is the one reading them here would give. The reader must be in a line layout
    /// of the part's format, at a line start (its input so far ended with a newline);
    /// otherwise, or when the bytes are not a whole part, nothing changes and the error says
    /// why. Returns the bytes of input the part read.
    pub fn absorb<S: Sink>(&mut self, bytes: &[u8], sink: &mut S) -> Result<u64, PartError> {
        let State::Lines {
            lines,
            format,
            collector,
        } = &mut self.state
        else {
            return Err(PartError(
                "the input so far is not a trace format in a line layout".into(),
            ));
        };
        if !lines.at_line_start() {
            return Err(PartError(
                "the input so far ends inside a line; a part starts at a line start".into(),
            ));
        }
        let part = Part::decode(bytes)?;
        if part.format != *format {
            return Err(PartError(format!(
                "the part was read as {}, the input is {}",
                part.format.as_str(),
                format.as_str()
            )));
        }
        if part.unexpected {
            return Err(PartError(
                "the part's lines called the sink as no line of a trace format does".into(),
            ));
        }
        let (lines, bytes) = (part.lines, part.bytes);
        part.replay(self.line_no, collector, sink)?;
        self.line_no += lines;
        Ok(bytes)
    }

    /// Whether the first lines have chosen how the input is read (span JSONL, a trace format
    /// in a line layout, one document): before that, [`Self::line_format`] is `None` too.
    pub fn decided(&self) -> bool {
        !matches!(self.state, State::Start { .. })
    }

    /// The trace format being read in a line layout, once the first lines decided it.
    pub fn line_format(&self) -> Option<Format> {
        match &self.state {
            State::Lines { format, .. } => Some(*format),
            _ => None,
        }
    }

    /// [`finish`](Self::finish), leaving the trace's tool and model calls, and the measures
    /// kept for re-listed inputs, unfreed (see [`super::End::Leave`]).
    pub fn finish_for_exit<S: Sink>(self, sink: &mut S) {
        self.finish_with(sink, super::End::Leave)
    }

    pub fn finish<S: Sink>(self, sink: &mut S) {
        self.finish_with(sink, super::End::Free)
    }

    fn finish_with<S: Sink>(mut self, sink: &mut S, end: super::End) {
        if let State::Start {
            head,
            line_start,
            detector,
            ..
        } = &mut self.state
        {
            // The input ended before the lines decided: the last line (no newline) has a say.
            let last = &head[*line_start..];
            let last = if *line_start == 0 {
                strip_bom(last)
            } else {
                last
            };
            let decision = if last.iter().all(u8::is_ascii_whitespace) {
                None
            } else {
                detector.line(last)
            };
            let decision = decision.unwrap_or_else(|| detector.end());
            self.begin(decision, sink);
        }
        match self.state {
            State::Start { .. } => {}
            State::Spans { lines, .. } => {
                if let Some(last) = lines.finish() {
                    self.line_no += 1;
                    match last {
                        Ok(last) => span_line(sink, self.line_no, &last),
                        Err(len) => too_large(sink, self.line_no, len, self.line_limit),
                    }
                }
                sink.set_format(Format::Spans.as_str(), None);
            }
            State::Lines {
                lines,
                format,
                mut collector,
            } => {
                finish_json_lines(lines, format, &mut self.line_no, &mut collector, sink);
                let conventions = collector.finish(sink, end);
                sink.set_format(
                    format.as_str(),
                    Some(ReadAs {
                        layout: Layout::Lines,
                        conventions,
                    }),
                );
            }
            State::Document {
                dropped: Some(len), ..
            } => {
                let name = self.option.forced().map_or("unknown", Format::as_str);
                let why = format!(
                    "the JSON document is {len} bytes, more than the {} bytes a document may \
                     hold; it was not read (a JSONL export, one value per line, streams)",
                    self.document_limit
                );
                sink.invalid(1, InvalidKind::TooLarge, why);
                sink.set_format(
                    name,
                    Some(ReadAs {
                        layout: Layout::Document,
                        conventions: Vec::new(),
                    }),
                );
            }
            State::Document { buf, .. } => {
                read_document_as(self.option, strip_bom(&buf), sink, true, end)
            }
        }
    }
}

fn lines_state(format: Format, line_limit: usize) -> State {
    State::Lines {
        lines: LineSplitter::with_limit(line_limit),
        format,
        collector: Collector::default(),
    }
}

fn strip_bom(bytes: &[u8]) -> &[u8] {
    bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes)
}

/// Hands the complete non-blank lines of `head` to the detector until it decides. Past
/// [`detect::DETECT_BYTES`] with a line looked at, the detector's default decides: detection
/// never holds more than that beyond the first line.
fn detect_in(
    head: &[u8],
    line_start: &mut usize,
    searched: &mut usize,
    detector: &mut Detector,
    line_limit: usize,
) -> Option<FirstLine> {
    while let Some(line) = first_nonblank_line(head, line_start, searched) {
        if let Some(decision) = detector.line(line) {
            return Some(decision);
        }
    }
    // A first line longer than a line may be is not held to look at: the chosen reader
    // reports it as too large.
    let waited = detector.seen() > 0 && head.len() > detect::DETECT_BYTES;
    (waited || head.len() - *line_start > line_limit).then(|| detector.end())
}

/// The next complete non-blank line of `head` (newline-terminated), from `line_start`, which
/// then moves past it. `searched` is how far a newline was looked for, so each byte is
/// scanned once however the input is chunked.
fn first_nonblank_line<'a>(
    head: &'a [u8],
    line_start: &mut usize,
    searched: &mut usize,
) -> Option<&'a [u8]> {
    loop {
        let from = (*searched).max(*line_start);
        let Some(at) = crate::lines::find_newline(&head[from..]).map(|p| from + p) else {
            *searched = head.len();
            return None;
        };
        let line = &head[*line_start..at];
        let line = if *line_start == 0 {
            strip_bom(line)
        } else {
            line
        };
        *line_start = at + 1;
        *searched = at + 1;
        if !line.iter().all(u8::is_ascii_whitespace) {
            return Some(line);
        }
    }
}

/// A line longer than the reader holds: reported, never buffered.
#[cold]
fn too_large<S: Sink + ?Sized>(sink: &mut S, line_no: u64, len: u64, limit: usize) {
    let why = format!(
        "line is {len} bytes, more than the {limit} bytes a line may hold; it was not read"
    );
    sink.invalid(line_no, InvalidKind::TooLarge, why);
}

/// One line of seed-000 span JSONL: the checker's hot path.
#[inline]
fn span_line<S: Sink>(sink: &mut S, line_no: u64, line: &[u8]) {
    // A UTF-8 byte order mark at the start of a file is not part of the first record.
    let line = if line_no == 1 { strip_bom(line) } else { line };
    // Only a line that starts with whitespace can be blank: no scan of ordinary lines.
    if line.first().is_none_or(u8::is_ascii_whitespace) && line.iter().all(u8::is_ascii_whitespace)
    {
        return sink.blank();
    }
    match parse_view(line) {
        Ok(mut rec) if rec.name.as_deref().is_none_or(str::is_empty) => {
            nameless(sink, line_no, line, &mut rec)
        }
        Ok(mut rec) => sink.span(line_no, &mut rec),
        Err(e) => sink.invalid(line_no, e.kind, e.message),
    }
}

/// A span JSONL line with no tool name: skipped by the report builder, unless it is a record
/// of a trace format. Then the input is not span JSONL (its first lines steered detection,
/// or it mixes formats), and the line is invalid, which fails the run: an OTLP export must
/// never pass as span JSONL whose every line was skipped.
#[cold]
#[inline(never)]
fn nameless<S: Sink>(sink: &mut S, line_no: u64, line: &[u8], record: &mut SpanView<'_>) {
    match detect::foreign_record(line) {
        Some(format) => sink.invalid(
            line_no,
            InvalidKind::UnknownFormat,
            format!(
                "a record of the {format} format in an input read as seed-000 span JSONL \
                 (from its first lines); check it with --format {format}"
            ),
        ),
        None => sink.span(line_no, record),
    }
}

/// The lines a chunk completes, one trace-format value each (`line_no` counts them): the
/// line layouts' reading, here and in a [`super::PartReader`].
pub(super) fn push_json_lines(
    lines: &mut LineSplitter,
    format: Format,
    line_no: &mut u64,
    chunk: &[u8],
    collector: &mut Collector,
    sink: &mut dyn Sink,
) {
    let limit = lines.limit();
    lines.push(chunk, |piece| {
        *line_no += 1;
        match piece {
            Piece::Line(line) => json_line(format, *line_no, line, collector, sink),
            Piece::TooLong(len) => too_large(sink, *line_no, len, limit),
        }
    });
}

/// The last line of a line layout, when the input did not end with a newline.
pub(super) fn finish_json_lines(
    lines: LineSplitter,
    format: Format,
    line_no: &mut u64,
    collector: &mut Collector,
    sink: &mut dyn Sink,
) {
    let limit = lines.limit();
    if let Some(last) = lines.finish() {
        *line_no += 1;
        match last {
            Ok(last) => json_line(format, *line_no, &last, collector, sink),
            Err(len) => too_large(sink, *line_no, len, limit),
        }
    }
}

fn json_line(
    format: Format,
    line_no: u64,
    line: &[u8],
    collector: &mut Collector,
    sink: &mut dyn Sink,
) {
    json_line_as(format, line_no, line, collector, sink, true)
}

/// [`json_line`], with the fast paths or (`fast` false, for the tests that compare the two)
/// without them: the tree-free OTLP reader ([`otlp_json`]) for an ordinary OTLP request,
/// and [`super::fields`] for a line that is one Langfuse observation or one Agents SDK item.
/// Every other line, and every line a fast path gives up on, is read through a
/// `serde_json::Value` tree, so odd input gets the tree reader's messages.
pub(super) fn json_line_as(
    format: Format,
    line_no: u64,
    line: &[u8],
    collector: &mut Collector,
    sink: &mut dyn Sink,
    fast: bool,
) {
    let line = if line_no == 1 { strip_bom(line) } else { line };
    if line.iter().all(u8::is_ascii_whitespace) {
        return sink.blank();
    }
    if fast && format == Format::Otlp {
        if let Some(request) = otlp_json::Request::parse(line) {
            return request.deliver(&mut Entries::line(line_no), collector, sink);
        }
    }
    // A Langfuse observation or Agents SDK item alone on its line: only the fields read
    // (see formats::fields); any other line is read as a tree.
    if fast && matches!(format, Format::Langfuse | Format::OpenaiAgents) {
        let text = crate::bytes::utf8(line);
        let mut entries = Entries::line(line_no);
        if format == Format::Langfuse {
            if let Some(item) = text.and_then(langfuse::observation_line) {
                return langfuse::read_line(item, &mut entries, collector, sink);
            }
        } else if let Some(item) = text.and_then(openai_agents::item_line) {
            return openai_agents::read_line(item, &mut entries, collector, sink);
        }
    }
    let value = match parse_value(line) {
        Ok(v) => v,
        Err(e) => {
            let why = format!("not valid JSON: {}", json_error(&e));
            return sink.invalid(line_no, json_kind(line), why);
        }
    };
    let mut entries = Entries::line(line_no);
    if let Err(error) = read_value(format, &value, &mut entries, collector, sink) {
        sink.invalid(line_no, InvalidKind::UnknownFormat, error);
    }
}

/// Reads a whole document, with the fast OTLP reader or (`fast` false, for the tests that
/// compare the two) without it; `end`: what the join does with the calls it joined.
pub(super) fn read_document_as(
    option: FormatOption,
    buf: &[u8],
    sink: &mut dyn Sink,
    fast: bool,
    end: super::End,
) {
    let mut collector = Collector::default();
    let mut entries = Entries::document();
    // An ordinary OTLP request is read without a tree; whatever it read as, detection would
    // have said `otlp` (it has `resourceSpans`).
    let fast = match option.forced() {
        None | Some(Format::Otlp) if fast => otlp_json::Request::parse(buf),
        _ => None,
    };
    let (format, result) = if let Some(request) = fast {
        request.deliver(&mut entries, &mut collector, sink);
        (Format::Otlp.as_str(), Ok(()))
    } else {
        read_document_tree(option, buf, &mut entries, &mut collector, sink)
    };
    if let Err((kind, why)) = result {
        sink.invalid(entries.next(), kind, why);
    }
    let conventions = collector.finish(sink, end);
    sink.set_format(
        format,
        Some(ReadAs {
            layout: Layout::Document,
            conventions,
        }),
    );
}

/// A document read through a `serde_json::Value` tree: its format (forced or detected) and
/// whether it read.
fn read_document_tree(
    option: FormatOption,
    buf: &[u8],
    entries: &mut Entries,
    collector: &mut Collector,
    sink: &mut dyn Sink,
) -> (&'static str, Result<(), (InvalidKind, String)>) {
    match parse_value(buf) {
        Err(e) => {
            let name = option.forced().map_or("unknown", Format::as_str);
            let why = format!(
                "not valid JSON (line {} column {}): {}; read as one JSON document because \
                 the input starts like one",
                e.line(),
                e.column(),
                json_error(&e)
            );
            (name, Err((json_kind(buf), why)))
        }
        Ok(value) => match option.forced().or_else(|| detect::format_of(&value)) {
            Some(f) => (
                f.as_str(),
                read_value(f, &value, entries, collector, sink)
                    .map_err(|why| (InvalidKind::UnknownFormat, why)),
            ),
            None => (
                "unknown",
                Err((
                    InvalidKind::UnknownFormat,
                    format!(
                        "not a recognised trace format: {EXPECTED}; found {}",
                        describe(&value)
                    ),
                )),
            ),
        },
    }
}

/// Parses one JSON value as `serde_json::from_slice` does, with the same errors. Valid UTF-8
/// (nearly every input) is checked once, whole, and read as text, so serde_json does not
/// check each string on its own again (a call per string: more than the one pass over the
/// line, in wasm above all); other bytes are read as bytes, for serde_json's own message.
fn parse_value(bytes: &[u8]) -> Result<Value, serde_json::Error> {
    match std::str::from_utf8(bytes) {
        Ok(text) => serde_json::from_str(text),
        Err(_) => serde_json::from_slice(bytes),
    }
}

/// Why bytes that serde_json rejected are not JSON: binary data (a NUL byte), text that is
/// not UTF-8, or malformed JSON.
fn json_kind(bytes: &[u8]) -> InvalidKind {
    if bytes.contains(&0) {
        InvalidKind::Binary
    } else if std::str::from_utf8(bytes).is_err() {
        InvalidKind::NotUtf8
    } else {
        InvalidKind::NotJson
    }
}

/// serde_json's message without its " at line L column C" suffix.
pub(crate) fn json_error(err: &serde_json::Error) -> String {
    let full = err.to_string();
    let suffix = format!(" at line {} column {}", err.line(), err.column());
    full.strip_suffix(&suffix).unwrap_or(&full).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Text or bytes, the same value and the same error, at the same place.
    #[test]
    fn parse_value_reads_as_from_slice() {
        let cases: [&[u8]; 9] = [
            b"{\"a\": [1, \"\xc3\xa9\", {\"b\": null}]}",
            b"{\"a\": \"\xff\"}",
            b"{\"a\": \"x\"}\xff",
            b"{\"a\": 1,}",
            b"{\"a\": \"\\ud800\"}",
            b"[1, 2",
            b"",
            b"\xef\xbb\xbf{}",
            b"{\"a\": \"\x00\"}",
        ];
        for bytes in cases {
            let ours = parse_value(bytes).map_err(|e| e.to_string());
            let theirs = serde_json::from_slice::<Value>(bytes).map_err(|e| e.to_string());
            assert_eq!(ours, theirs, "{}", String::from_utf8_lossy(bytes));
        }
    }

    #[test]
    fn first_nonblank_line_waits_for_the_newline() {
        let (mut start, mut searched) = (0, 0);
        assert_eq!(
            first_nonblank_line(b"\n  \n{\"a\"", &mut start, &mut searched),
            None
        );
        assert_eq!((start, searched), (4, 8));
        let head = b"\n  \n{\"a\":1}\nrest";
        assert_eq!(
            first_nonblank_line(head, &mut start, &mut searched),
            Some(&b"{\"a\":1}"[..])
        );
        assert_eq!((start, searched), (12, 12));
        let (mut start, mut searched) = (0, 0);
        assert_eq!(
            first_nonblank_line(b"\xEF\xBB\xBF{}\n", &mut start, &mut searched),
            Some(&b"{}"[..])
        );
    }
}
