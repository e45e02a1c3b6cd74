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
//! module instances share no memory): a compact encoding of its own, not JSON, because a
//! model call's input re-lists every earlier tool result, and half a 50 MB export is some
//! megabytes of measures that JSON would spell out and parse again.

use super::content::{Content, Syntax};
use super::model::{Captured, ModelCall, SpanRef, Times, ToolCall, ToolMessage};
use super::reader::{finish_json_lines, push_json_lines};
use super::{Collector, Format, Sink};
use crate::hash::Digest;
use crate::lines::LineSplitter;
use crate::record::{Provenance, ReadAs};
use crate::span::{InvalidKind, SpanRecord, SpanView};

/// Why a part was not taken: nothing of it was applied.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PartError(pub String);

impl crate::error::Coded for PartError {
    fn code(&self) -> &'static str {
        "part_refused"
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
        let mut d = Decoder {
            bytes: self.events,
            at: 0,
        };
        for _ in 0..self.event_count {
            let Ok(event) = d.event() else { break };
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
        let mut r = Decoder {
            bytes: self.encoded,
            at: self.calls_at,
        };
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
            return Err(r.bad("end"));
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
    fn row(&mut self, _: u64, _: SpanRecord, _: Provenance) {
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

/// The `&'static str`s a part names (conventions, a tool call's source), by their text.
const STATIC_NAMES: [&str; 6] = [
    "",
    "gen_ai",
    "openinference",
    "ai_sdk",
    "langfuse",
    "openai_agents",
];

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
        let mut r = Decoder { bytes, at: 0 };
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
        let mut check = Decoder {
            bytes: events,
            at: 0,
        };
        for _ in 0..event_count {
            check.event()?;
        }
        if check.at != events.len() {
            return Err(check.bad("events' end"));
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

#[derive(Default)]
struct Encoder(Vec<u8>);

impl Encoder {
    /// LEB128.
    fn u64(&mut self, mut n: u64) {
        while n >= 0x80 {
            self.0.push(n as u8 | 0x80);
            n >>= 7;
        }
        self.0.push(n as u8);
    }
    fn bool(&mut self, b: bool) {
        self.0.push(u8::from(b));
    }
    fn str(&mut self, s: &str) {
        self.u64(s.len() as u64);
        self.0.extend_from_slice(s.as_bytes());
    }
    fn opt_str(&mut self, s: Option<&str>) {
        match s {
            None => self.0.push(0),
            Some(s) => {
                self.0.push(1);
                self.str(s);
            }
        }
    }
    fn static_name(&mut self, s: &str) {
        self.u64(
            STATIC_NAMES
                .iter()
                .position(|n| *n == s)
                .unwrap_or(usize::MAX) as u64,
        );
    }
    fn time(&mut self, t: Option<i128>) {
        match t {
            None => self.0.push(0),
            Some(t) => {
                self.0.push(1);
                self.0.extend_from_slice(&t.to_le_bytes());
            }
        }
    }
    fn span_ref(&mut self, at: &SpanRef) {
        self.u64(at.entry);
        self.u64(at.seq);
        self.opt_str(at.trace_id.as_deref());
        self.opt_str(at.span_id.as_deref());
        self.opt_str(at.parent_id.as_deref());
        self.time(at.times.start);
        self.time(at.times.end);
    }
    fn digest(&mut self, d: &Digest) {
        self.0.extend_from_slice(d.as_bytes());
    }
    fn tool_call(&mut self, t: &ToolCall) {
        self.span_ref(&t.at);
        self.opt_str(t.name.as_deref());
        self.opt_str(t.call_id.as_deref());
        self.opt_str(t.status.as_deref());
        self.captured(&t.result);
        self.static_name(t.source);
    }
    fn model_call(&mut self, m: &ModelCall) {
        self.span_ref(&m.at);
        match &m.input {
            Ok(messages) => {
                self.u64(0);
                self.u64(messages.len() as u64);
                for x in messages {
                    self.opt_str(x.call_id.as_deref());
                    self.opt_str(x.name.as_deref());
                    self.captured(&x.content);
                    self.bool(x.trailing);
                }
            }
            Err(why) => {
                self.u64(1);
                self.str(why);
            }
        }
    }
    fn captured(&mut self, c: &Captured) {
        match c {
            Captured::Missing(why) => {
                self.0.push(0);
                self.str(why);
            }
            Captured::Text(c) => {
                self.0.push(1);
                self.u64(c.bytes);
                self.u64(c.chars);
                self.digest(&c.sha256);
                match &c.value_sha256 {
                    None => self.0.push(0),
                    Some(d) => {
                        self.0.push(1);
                        self.digest(d);
                    }
                }
                self.0.push(match c.syntax {
                    None => 0,
                    Some(Syntax::Json) => 1,
                    Some(Syntax::PythonRepr) => 2,
                });
                self.str(&c.preview);
                self.u64(u64::from(c.cut_markers));
                self.opt_str(c.first_cut_marker.as_deref());
                self.u64(u64::from(c.redactions));
                self.opt_str(c.first_redaction.as_deref());
            }
        }
    }
}

/// Reads an encoded part; every read is checked, so bytes that are not a whole part give an
/// error, never a panic.
struct Decoder<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Decoder<'a> {
    fn bad(&self, what: &str) -> PartError {
        PartError(format!("a damaged part: its {what} at byte {}", self.at))
    }
    /// Bytes not read yet.
    fn left(&self) -> usize {
        self.bytes.len().saturating_sub(self.at)
    }
    fn byte(&mut self) -> Result<u8, PartError> {
        let b = *self.bytes.get(self.at).ok_or_else(|| self.bad("end"))?;
        self.at += 1;
        Ok(b)
    }
    fn u64(&mut self) -> Result<u64, PartError> {
        // Most numbers of a part (lengths, flags, line numbers within a chunk) take one byte.
        if let Some(&b) = self.bytes.get(self.at) {
            if b < 0x80 {
                self.at += 1;
                return Ok(u64::from(b));
            }
        }
        let mut n = 0u64;
        for shift in (0..64).step_by(7) {
            let b = self.byte()?;
            n |= u64::from(b & 0x7f) << shift;
            if b < 0x80 {
                return Ok(n);
            }
        }
        Err(self.bad("number"))
    }
    fn u32(&mut self) -> Result<u32, PartError> {
        u32::try_from(self.u64()?).map_err(|_| self.bad("count"))
    }
    fn len(&mut self) -> Result<usize, PartError> {
        usize::try_from(self.u64()?).map_err(|_| self.bad("length"))
    }
    fn bool(&mut self) -> Result<bool, PartError> {
        match self.byte()? {
            0 => Ok(false),
            1 => Ok(true),
            _ => Err(self.bad("flag")),
        }
    }
    fn take(&mut self, n: usize) -> Result<&'a [u8], PartError> {
        let end = self.at.checked_add(n).filter(|&e| e <= self.bytes.len());
        let end = end.ok_or_else(|| self.bad("text"))?;
        let bytes = &self.bytes[self.at..end];
        self.at = end;
        Ok(bytes)
    }
    fn text(&mut self) -> Result<&'a str, PartError> {
        let n = self.len()?;
        let bytes = self.take(n)?;
        // Ids, names and previews are mostly ASCII: checked 16 bytes a step.
        crate::bytes::utf8(bytes)
            .ok_or_else(|| PartError("a damaged part: text that is not UTF-8".into()))
    }
    fn opt_text(&mut self) -> Result<Option<&'a str>, PartError> {
        Ok(if self.bool()? {
            Some(self.text()?)
        } else {
            None
        })
    }
    fn str(&mut self) -> Result<String, PartError> {
        self.text().map(str::to_string)
    }
    fn opt_str(&mut self) -> Result<Option<String>, PartError> {
        Ok(self.opt_text()?.map(str::to_string))
    }
    fn event(&mut self) -> Result<EventRef<'a>, PartError> {
        Ok(match self.u64()? {
            0 => EventRef::Context {
                line: self.u64()?,
                span_id: self.opt_text()?,
                parent_id: self.opt_text()?,
                name: self.opt_text()?,
                reason: self.text()?,
            },
            1 => EventRef::Skipped {
                line: self.u64()?,
                span_id: self.opt_text()?,
                reason: self.text()?,
            },
            2 => EventRef::Invalid {
                line: self.u64()?,
                kind: *INVALID_KINDS
                    .get(self.len()?)
                    .ok_or_else(|| self.bad("kind"))?,
                error: self.text()?,
            },
            3 => EventRef::Blank,
            _ => return Err(self.bad("event")),
        })
    }
    fn static_name(&mut self) -> Result<&'static str, PartError> {
        let i = self.len()?;
        STATIC_NAMES.get(i).copied().ok_or_else(|| self.bad("name"))
    }
    fn time(&mut self) -> Result<Option<i128>, PartError> {
        Ok(if self.bool()? {
            let b = self.take(16)?;
            Some(i128::from_le_bytes(b.try_into().expect("16 bytes")))
        } else {
            None
        })
    }
    fn span_ref(&mut self) -> Result<SpanRef, PartError> {
        Ok(SpanRef {
            entry: self.u64()?,
            seq: self.u64()?,
            trace_id: self.opt_str()?,
            span_id: self.opt_str()?,
            parent_id: self.opt_str()?,
            times: Times {
                start: self.time()?,
                end: self.time()?,
            },
        })
    }
    fn tool_call(&mut self) -> Result<ToolCall, PartError> {
        Ok(ToolCall {
            at: self.span_ref()?,
            name: self.opt_str()?,
            call_id: self.opt_str()?,
            status: self.opt_str()?,
            result: self.captured()?,
            source: self.static_name()?,
        })
    }
    fn model_call(&mut self) -> Result<ModelCall, PartError> {
        let at = self.span_ref()?;
        let input = match self.u64()? {
            0 => {
                let k = self.len()?;
                let mut messages = Vec::with_capacity(k.min(self.left() / 5));
                for _ in 0..k {
                    messages.push(ToolMessage {
                        call_id: self.opt_str()?,
                        name: self.opt_str()?,
                        content: self.captured()?,
                        trailing: self.bool()?,
                    });
                }
                Ok(messages)
            }
            1 => Err(self.str()?),
            _ => return Err(self.bad("model input")),
        };
        Ok(ModelCall { at, input })
    }
    fn digest(&mut self) -> Result<Digest, PartError> {
        let b = self.take(32)?;
        Ok(Digest(b.try_into().expect("32 bytes")))
    }
    fn captured(&mut self) -> Result<Captured, PartError> {
        Ok(match self.byte()? {
            0 => Captured::Missing(self.str()?),
            1 => Captured::Text(Content {
                bytes: self.u64()?,
                chars: self.u64()?,
                sha256: self.digest()?,
                value_sha256: if self.bool()? {
                    Some(self.digest()?)
                } else {
                    None
                },
                syntax: match self.byte()? {
                    0 => None,
                    1 => Some(Syntax::Json),
                    2 => Some(Syntax::PythonRepr),
                    _ => return Err(self.bad("syntax")),
                },
                preview: self.str()?,
                cut_markers: self.u32()?,
                first_cut_marker: self.opt_str()?,
                redactions: self.u32()?,
                first_redaction: self.opt_str()?,
            }),
            _ => return Err(self.bad("captured")),
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
