//! Parts: the later lines of a trace-format file read apart (by another thread, in its own
//! module instance) and then taken into the [`Reader`] that read the lines before them,
//! with the same report as reading every line in order.
//!
//! In a line layout (OTLP's Collector file, Langfuse and Agents SDK JSONL) each line is
//! read on its own: what it gives is calls to the sink (context spans, skips, invalid lines,
//! blanks) and tool and model calls for the collector, numbered by line and by read order.
//! A [`PartReader`] reads a range of whole lines and records exactly that, numbered from its
//! own start; [`super::Reader::absorb`] replays it after the lines read so far, with the numbers
//! moved on by what was read before. The sink sees the same calls with the same arguments
//! in the same order as it would have, so every decision it makes (counts, rollups, memory
//! limits) is the one it would have made; the join runs once, at the end, over all calls.
//!
//! A part travels as bytes (a structured clone between threads is no cheaper, and the
//! module instances share no memory): a compact encoding ([`super::codec`]), not JSON,
//! because a model call's input re-lists every earlier tool result, and half a 50 MB export
//! is some megabytes of measures that JSON would spell out and parse again.

use super::codec::{Damaged, Decoder, Encoder};
use super::reader::{finish_json_lines, push_json_lines};
use super::{Collector, Format, Sink};
use crate::lines::LineSplitter;
use crate::record::{Provenance, ReadAs};
use crate::span::{InvalidKind, SpanView};

/// Why a part was not taken: nothing of it was applied.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PartError(pub String);

impl crate::error::Coded for PartError {
    fn code(&self) -> &'static str {
        "part_refused"
    }
}

impl From<Damaged> for PartError {
    fn from(d: Damaged) -> PartError {
        PartError(format!("a damaged part: {d}"))
    }
}

impl std::fmt::Display for PartError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// Reads a range of whole lines of one trace format (the range starts at a line start: the
/// first byte of the file, or the byte after a newline) into an encoded part.
pub struct PartReader {
    format: Format,
    lines: LineSplitter,
    /// Lines of the part, numbered from 2: no line of a part is the input's first, whose
    /// byte-order mark is stripped (see `reader::json_line`). [`Part::replay`] takes the 1
    /// back.
    line_no: u64,
    collector: Collector,
    events: Recording,
    calls: Calls,
    /// Bytes pushed.
    bytes: u64,
}

/// The tool and model calls of a part, encoded as each chunk's lines give them, not all at
/// the end: each call is written while it is still in cache and freed at once (its memory
/// reused by the next chunk's calls), where encoding half a 300 MB export at the end took a
/// quarter of a second in wasm, then as long again to free, while the checker waited for it.
#[derive(Default)]
struct Calls {
    tools: Encoder,
    tool_count: u64,
    models: Encoder,
    model_count: u64,
}

impl Calls {
    /// Encodes the calls the collector holds and empties it (its capacity stays).
    fn take(&mut self, collector: &mut Collector) {
        self.tool_count += collector.tools.len() as u64;
        for tool in collector.tools.drain(..) {
            self.tools.tool_call(&tool);
        }
        self.model_count += collector.models.len() as u64;
        for model in collector.models.drain(..) {
            self.models.model_call(&model);
        }
    }
}

impl PartReader {
    /// `line_limit`: the longest line held, as the main reader's (the check's `line_bytes`).
    pub fn new(format: Format, line_limit: usize) -> PartReader {
        PartReader {
            format,
            lines: LineSplitter::with_limit(line_limit),
            line_no: 1,
            collector: Collector::default(),
            events: Recording::default(),
            calls: Calls::default(),
            bytes: 0,
        }
    }

    pub fn push(&mut self, chunk: &[u8]) {
        self.bytes += chunk.len() as u64;
        push_json_lines(
            &mut self.lines,
            self.format,
            &mut self.line_no,
            chunk,
            &mut self.collector,
            &mut self.events,
        );
        self.calls.take(&mut self.collector);
    }

    /// The encoded part: every line read, the last one even without a newline.
    pub fn finish(mut self) -> Vec<u8> {
        finish_json_lines(
            std::mem::take(&mut self.lines),
            self.format,
            &mut self.line_no,
            &mut self.collector,
            &mut self.events,
        );
        self.calls.take(&mut self.collector);
        let (events, calls) = (&self.events.events.0, &self.calls);
        let mut w = Encoder(Vec::with_capacity(
            64 + events.len() + calls.tools.0.len() + calls.models.0.len(),
        ));
        w.0.extend_from_slice(MAGIC);
        w.u64(
            Format::ALL
                .iter()
                .position(|f| *f == self.format)
                .unwrap_or(0) as u64,
        );
        w.u64(self.line_no - 1);
        w.u64(self.bytes);
        w.u64(self.collector.seq);
        w.bool(self.events.unexpected);
        w.u64(self.collector.conventions.len() as u64);
        for c in &self.collector.conventions {
            w.static_name(c);
        }
        w.u64(self.events.count);
        w.u64(events.len() as u64);
        w.0.extend_from_slice(events);
        w.u64(calls.tool_count);
        w.0.extend_from_slice(&calls.tools.0);
        w.u64(calls.model_count);
        w.0.extend_from_slice(&calls.models.0);
        w.0
    }
}

impl Part<'_> {
    /// Hands the part to a reader's collector and sink after `lines` lines (see
    /// [`super::Reader::absorb`]).
    /// The tool and model calls are decoded first, straight into the collector: should
    /// they be damaged, the collector is put back as it was and nothing reached the sink.
    pub(super) fn replay(
        self,
        lines: u64,
        collector: &mut Collector,
        sink: &mut dyn Sink,
    ) -> Result<(), PartError> {
        // Part lines are numbered from 2 (see PartReader::line_no).
        let base = lines - 1;
        let seq = collector.seq;
        let kept = (collector.tools.len(), collector.models.len());
        if let Err(err) = self.calls_into(base, seq, collector) {
            collector.tools.truncate(kept.0);
            collector.models.truncate(kept.1);
            return Err(err);
        }
        // The events were read through once by `decode`: these reads cannot fail.
        let mut d = Decoder::new(self.events);
        for _ in 0..self.event_count {
            let Ok(event) = event(&mut d) else { break };
            match event {
                EventRef::Context {
                    line,
                    span_id,
                    parent_id,
                    name,
                    reason,
                } => sink.context(line + base, span_id, parent_id, name, reason),
                EventRef::Skipped {
                    line,
                    span_id,
                    reason,
                } => sink.skipped(line + base, span_id.map(str::to_string), reason.to_string()),
                EventRef::Invalid { line, kind, error } => {
                    sink.invalid(line + base, kind, error.to_string())
                }
                EventRef::Blank => sink.blank(),
            }
        }
        for convention in self.conventions {
            collector.saw(convention);
        }
        collector.seq += self.seq;
        Ok(())
    }

    /// Decodes the calls into the collector, numbered after its own. Not through a vector of
    /// their own first: each call is some 300 bytes, and half a 300 MB export has 140,000
    /// of them, which filled fresh memory and were then moved again one by one.
    fn calls_into(&self, base: u64, seq: u64, collector: &mut Collector) -> Result<(), PartError> {
        let mut r = Decoder::new(self.encoded);
        r.at = self.calls_at;
        // Room for the calls the part can hold (a damaged count must not reserve gigabytes):
        // each call takes at least 8 encoded bytes, each tool message 5.
        let n = r.len()?;
        collector.tools.reserve(n.min(r.left() / 8));
        for _ in 0..n {
            let mut tool = r.tool_call()?;
            tool.at.entry += base;
            tool.at.seq += seq;
            collector.tools.push(tool);
        }
        let n = r.len()?;
        collector.models.reserve(n.min(r.left() / 8));
        for _ in 0..n {
            let mut model = r.model_call()?;
            model.at.entry += base;
            model.at.seq += seq;
            collector.models.push(model);
        }
        if r.at != self.encoded.len() {
            return Err(r.bad("end").into());
        }
        Ok(())
    }
}

/// One call of a line to the sink, read back from a part.
enum EventRef<'a> {
    Context {
        line: u64,
        span_id: Option<&'a str>,
        parent_id: Option<&'a str>,
        name: Option<&'a str>,
        reason: &'a str,
    },
    Skipped {
        line: u64,
        span_id: Option<&'a str>,
        reason: &'a str,
    },
    Invalid {
        line: u64,
        kind: InvalidKind,
        error: &'a str,
    },
    Blank,
}

/// The sink of a [`PartReader`]: writes down the calls a line makes, encoded at once (they
/// are read back borrowed, and the sink copies what it keeps).
#[derive(Default)]
struct Recording {
    events: Encoder,
    count: u64,
    /// A call no line of a trace format makes (a span record, a joined row, the format):
    /// the part is refused rather than replayed without it.
    unexpected: bool,
}

impl Sink for Recording {
    fn span(&mut self, _: u64, _: &mut SpanView<'_>) {
        self.unexpected = true;
    }
    fn row(&mut self, _: u64, _: &mut SpanView<'_>, _: Provenance) {
        self.unexpected = true;
    }
    fn context(
        &mut self,
        line: u64,
        span_id: Option<&str>,
        parent_id: Option<&str>,
        name: Option<&str>,
        reason: &str,
    ) {
        self.count += 1;
        let e = &mut self.events;
        e.u64(0);
        e.u64(line);
        e.opt_str(span_id);
        e.opt_str(parent_id);
        e.opt_str(name);
        e.str(reason);
    }
    fn skipped(&mut self, line: u64, span_id: Option<String>, reason: String) {
        self.count += 1;
        let e = &mut self.events;
        e.u64(1);
        e.u64(line);
        e.opt_str(span_id.as_deref());
        e.str(&reason);
    }
    fn invalid(&mut self, line: u64, kind: InvalidKind, error: String) {
        self.count += 1;
        let e = &mut self.events;
        e.u64(2);
        e.u64(line);
        // By discriminant: a kind added later and missing from INVALID_KINDS makes the part
        // refused when read back, never read as another kind.
        e.u64(kind as u64);
        e.str(&error);
    }
    fn blank(&mut self) {
        self.count += 1;
        self.events.u64(3);
    }
    fn set_format(&mut self, _: &str, _: Option<ReadAs>) {
        self.unexpected = true;
    }
}

/// One encoded call of a line to the sink.
fn event<'a>(d: &mut Decoder<'a>) -> Result<EventRef<'a>, Damaged> {
    Ok(match d.u64()? {
        0 => EventRef::Context {
            line: d.u64()?,
            span_id: d.opt_text()?,
            parent_id: d.opt_text()?,
            name: d.opt_text()?,
            reason: d.text()?,
        },
        1 => EventRef::Skipped {
            line: d.u64()?,
            span_id: d.opt_text()?,
            reason: d.text()?,
        },
        2 => EventRef::Invalid {
            line: d.u64()?,
            kind: *INVALID_KINDS.get(d.len()?).ok_or_else(|| d.bad("kind"))?,
            error: d.text()?,
        },
        3 => EventRef::Blank,
        _ => return Err(d.bad("event")),
    })
}

/// What a part holds: its header read, the sink's calls (`events`) checked but still
/// encoded, and the tool and model calls still encoded (decoded by [`Part::replay`]).
#[derive(Debug, PartialEq)]
pub(super) struct Part<'a> {
    pub format: Format,
    /// Lines read.
    pub lines: u64,
    /// Bytes read.
    pub bytes: u64,
    seq: u64,
    /// See [`Recording::unexpected`].
    pub unexpected: bool,
    conventions: Vec<&'static str>,
    event_count: u64,
    events: &'a [u8],
    /// The whole part, and where in it the calls start.
    encoded: &'a [u8],
    calls_at: usize,
}

/// The first bytes of an encoded part (and its version).
const MAGIC: &[u8; 4] = b"tsp1";

/// Each kind at its discriminant (a test checks the order).
const INVALID_KINDS: [InvalidKind; 7] = [
    InvalidKind::NotUtf8,
    InvalidKind::Binary,
    InvalidKind::NotJson,
    InvalidKind::NotAnObject,
    InvalidKind::BadField,
    InvalidKind::UnknownFormat,
    InvalidKind::TooLarge,
];

impl<'a> Part<'a> {
    /// Reads a whole part, or says what is wrong with it. The sink's calls are read
    /// through (checked) but left encoded, for [`Part::replay`].
    pub(super) fn decode(bytes: &'a [u8]) -> Result<Part<'a>, PartError> {
        let mut r = Decoder::new(bytes);
        if bytes.get(..4) != Some(&MAGIC[..]) {
            return Err(PartError(
                "not an encoded part (or one of another version)".into(),
            ));
        }
        r.at = 4;
        let format = *Format::ALL.get(r.len()?).ok_or_else(|| r.bad("format"))?;
        let lines = r.u64()?;
        let bytes_read = r.u64()?;
        let seq = r.u64()?;
        let unexpected = r.bool()?;
        let mut conventions = Vec::new();
        for _ in 0..r.len()? {
            conventions.push(r.static_name()?);
        }
        let event_count = r.u64()?;
        let n = r.len()?;
        let events = r.take(n)?;
        let mut check = Decoder::new(events);
        for _ in 0..event_count {
            event(&mut check)?;
        }
        if check.at != events.len() {
            return Err(check.bad("events' end").into());
        }
        Ok(Part {
            format,
            lines,
            bytes: bytes_read,
            seq,
            unexpected,
            conventions,
            event_count,
            events,
            encoded: bytes,
            calls_at: r.at,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn invalid_kinds_sit_at_their_discriminants() {
        for (i, kind) in INVALID_KINDS.iter().enumerate() {
            assert_eq!(*kind as usize, i, "{kind:?}");
        }
    }
}
