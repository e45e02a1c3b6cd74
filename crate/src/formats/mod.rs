//! **Formats**: read the traces people already have, and check them like seed-000 spans.
//!
//! Tracers record the tool result on the tool span and, separately, the messages the next
//! model call was sent; none records whether the second is a cut of the first. These readers
//! find out: each tool result is joined with what a later model call actually received
//! ([`join`]), both strings are measured in the module (UTF-8 bytes, SHA-256, cut and
//! redaction markers), and the result is a seed-000 [`SpanRecord`] per tool call that the
//! span classifier judges, so every format gets the same verdicts.
//!
//! | format          | input                                                               |
//! |-----------------|---------------------------------------------------------------------|
//! | `spans`         | seed-000 span JSONL (one clip-aware span record per line)            |
//! | `otlp`          | OTLP JSON traces, one document or the Collector file exporter's one request per line, with OpenTelemetry GenAI or OpenInference attributes |
//! | `langfuse`      | Langfuse observation exports, JSON or JSONL                           |
//! | `openai_agents` | OpenAI Agents SDK trace exports (`span_data`), JSON or JSONL          |
//!
//! The format is detected from the first non-blank line ([`detect`]), or forced with
//! [`FormatOption`]. Line layouts stream: each line is read when it is complete, and only the
//! measures of each tool result and tool message are kept for the join at the end. A
//! single JSON document is buffered and read whole.
//!
//! What the rows say beyond the seed's fields: `join` (how the result was matched:
//! `tool_call_id`, `order`, `unmatched`), `notes` (why a side was not captured, which marker
//! declared a cut, a result that no later model call received), `injected_tokens_estimated`
//! (traces count tokens per model call, so the per-message count is bytes / 4), and warnings
//! for lengths equal to a common SDK attribute limit (4096, 12000, 32000: a likely silent cut
//! by the exporter).
//!
//! - Content that was not captured (an opt-in attribute absent, a value hidden as
//!   `__REDACTED__`) leaves the length missing: the row is `incomplete`, never `ok`.
//! - A result that no later captured model input carried is a silent clip of all of it
//!   (`injected_bytes = 0`); with no later model call at all, it is `incomplete`.
//! - A cut marker (`...[truncated 120 chars]`, `[... 4000 bytes omitted ...]`) in what the
//!   model received, and not in the result, declares the cut (`tool_result_char_limit`); a
//!   redaction marker (`[REDACTED]`, `__REDACTED__` inside the text) declares `redaction`.
//!
//! ```
//! use toolslice::check::{check_bytes, CheckOptions};
//!
//! let otlp = br#"{"resourceSpans":[{"scopeSpans":[{"spans":[
//!  {"traceId":"t","spanId":"a","name":"execute_tool ls","startTimeUnixNano":"1","endTimeUnixNano":"2",
//!   "attributes":[{"key":"gen_ai.operation.name","value":{"stringValue":"execute_tool"}},
//!                 {"key":"gen_ai.tool.call.id","value":{"stringValue":"call_1"}},
//!                 {"key":"gen_ai.tool.call.result","value":{"stringValue":"a.txt b.txt c.txt"}}]},
//!  {"traceId":"t","spanId":"b","name":"chat","startTimeUnixNano":"3","endTimeUnixNano":"4",
//!   "attributes":[{"key":"gen_ai.operation.name","value":{"stringValue":"chat"}},
//!                 {"key":"gen_ai.input.messages","value":{"stringValue":
//!    "[{\"role\":\"tool\",\"parts\":[{\"type\":\"tool_call_response\",\"id\":\"call_1\",\"response\":\"a.txt\"}]}]"}}]}
//! ]}]}]}"#;
//! let report = check_bytes(otlp, CheckOptions::default());
//! assert_eq!(report.format, "otlp");
//! assert_eq!(report.counts.silent_clip, 1);
//! assert_eq!(report.rows[0].observed_bytes, Some(17));
//! assert_eq!(report.rows[0].injected_bytes, Some(5));
//! ```

mod content;
mod detect;
mod genai;
mod join;
mod langfuse;
mod messages;
mod model;
mod openai_agents;
mod openinference;
mod otlp;
mod semconv;

use std::fmt;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::check::{Invalid, Provenance, ReadAs, ReportBuilder, Skipped};
use crate::error::Coded;
use crate::lines::LineSplitter;
use crate::span::{parse_line, SpanRecord};
use detect::FirstLine;
use model::{ModelCall, SpanRef, Times, ToolCall};

/// A reader of one input format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Format {
    /// Seed-000 span JSONL.
    Spans,
    /// OTLP JSON traces (GenAI or OpenInference conventions).
    Otlp,
    /// Langfuse observation exports.
    Langfuse,
    /// OpenAI Agents SDK trace exports.
    OpenaiAgents,
}

impl Format {
    pub const ALL: [Format; 4] = [
        Format::Spans,
        Format::Otlp,
        Format::Langfuse,
        Format::OpenaiAgents,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Format::Spans => "spans",
            Format::Otlp => "otlp",
            Format::Langfuse => "langfuse",
            Format::OpenaiAgents => "openai_agents",
        }
    }
}

impl fmt::Display for Format {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Which reader to use: detect it (`auto`), or force one.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FormatOption {
    #[default]
    Auto,
    Spans,
    Otlp,
    Langfuse,
    OpenaiAgents,
}

impl FormatOption {
    pub fn as_str(self) -> &'static str {
        match self.forced() {
            None => "auto",
            Some(f) => f.as_str(),
        }
    }

    /// The forced format, or `None` for `auto`.
    pub fn forced(self) -> Option<Format> {
        match self {
            FormatOption::Auto => None,
            FormatOption::Spans => Some(Format::Spans),
            FormatOption::Otlp => Some(Format::Otlp),
            FormatOption::Langfuse => Some(Format::Langfuse),
            FormatOption::OpenaiAgents => Some(Format::OpenaiAgents),
        }
    }

    /// Parses `auto`, `spans`, `otlp`, `langfuse` or `openai_agents`.
    pub fn parse(text: &str) -> Result<FormatOption, UnknownFormat> {
        match text {
            "auto" => Ok(FormatOption::Auto),
            "spans" => Ok(FormatOption::Spans),
            "otlp" => Ok(FormatOption::Otlp),
            "langfuse" => Ok(FormatOption::Langfuse),
            "openai_agents" => Ok(FormatOption::OpenaiAgents),
            other => Err(UnknownFormat(other.to_string())),
        }
    }
}

/// A format name that is not one of ours.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownFormat(pub String);

impl fmt::Display for UnknownFormat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "unknown format {:?} (expected one of: auto, {})",
            self.0,
            Format::ALL.map(Format::as_str).join(", ")
        )
    }
}

impl Coded for UnknownFormat {
    fn code(&self) -> &'static str {
        "unknown_format"
    }
}

/// How a trace-format input is laid out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Layout {
    /// One JSON value per line, read as the lines stream in.
    Lines,
    /// One JSON document, read whole.
    Document,
}

impl Layout {
    pub fn as_str(self) -> &'static str {
        match self {
            Layout::Lines => "lines",
            Layout::Document => "document",
        }
    }
}

/// Where readers send what they read: the report builder (check) or the converter.
pub(crate) trait Sink {
    /// A seed-000 span record, as read from a span JSONL line.
    fn span(&mut self, line: u64, record: SpanRecord);
    /// A tool call of a trace format, joined and measured.
    fn row(&mut self, line: u64, record: SpanRecord, provenance: Provenance);
    /// A span that is not a tool call (kept for the parent rollup).
    fn context(
        &mut self,
        line: u64,
        span_id: Option<String>,
        parent_id: Option<String>,
        name: Option<String>,
        reason: String,
    );
    fn skipped(&mut self, line: u64, span_id: Option<String>, reason: String);
    fn invalid(&mut self, line: u64, error: String);
    fn blank(&mut self);
    fn set_format(&mut self, format: &str, read_as: Option<ReadAs>);
}

impl Sink for ReportBuilder {
    fn span(&mut self, line: u64, record: SpanRecord) {
        self.record(line, record);
    }
    fn row(&mut self, line: u64, record: SpanRecord, provenance: Provenance) {
        self.record_with(line, record, provenance);
    }
    fn context(
        &mut self,
        line: u64,
        span_id: Option<String>,
        parent_id: Option<String>,
        name: Option<String>,
        reason: String,
    ) {
        self.context_span(line, span_id, parent_id, name, reason);
    }
    fn skipped(&mut self, line: u64, span_id: Option<String>, reason: String) {
        ReportBuilder::skipped(self, line, span_id, reason);
    }
    fn invalid(&mut self, line: u64, error: String) {
        ReportBuilder::invalid(self, line, error);
    }
    fn blank(&mut self) {
        ReportBuilder::blank(self);
    }
    fn set_format(&mut self, format: &str, read_as: Option<ReadAs>) {
        ReportBuilder::set_format(self, format, read_as);
    }
}

/// Tool calls and model calls read so far, waiting for the join.
#[derive(Default)]
pub(crate) struct Collector {
    pub tools: Vec<ToolCall>,
    pub models: Vec<ModelCall>,
    conventions: Vec<&'static str>,
    seq: u64,
}

impl Collector {
    pub fn span_ref(
        &mut self,
        entry: u64,
        trace_id: Option<String>,
        span_id: Option<String>,
        parent_id: Option<String>,
        times: Times,
    ) -> SpanRef {
        self.seq += 1;
        SpanRef {
            entry,
            seq: self.seq,
            trace_id,
            span_id,
            parent_id,
            times,
        }
    }

    pub fn saw(&mut self, convention: &'static str) {
        if !self.conventions.contains(&convention) {
            self.conventions.push(convention);
        }
    }

    /// Joins and hands every tool call to the sink, in read order.
    fn finish<S: Sink>(self, sink: &mut S) -> Vec<String> {
        for row in join::join(&self.tools, &self.models) {
            sink.row(row.entry, row.record, row.provenance);
        }
        ["gen_ai", "openinference"]
            .into_iter()
            .filter(|c| self.conventions.contains(c))
            .map(str::to_string)
            .collect()
    }
}

/// Numbers the entries of one read value: every entry of a line gets the line's number; the
/// entries of a document are numbered 1, 2, 3 ... in document order.
pub(crate) struct Entries {
    line: Option<u64>,
    last: u64,
}

impl Entries {
    fn line(line: u64) -> Entries {
        Entries {
            line: Some(line),
            last: 0,
        }
    }
    fn document() -> Entries {
        Entries {
            line: None,
            last: 0,
        }
    }
    pub fn next(&mut self) -> u64 {
        match self.line {
            Some(n) => n,
            None => {
                self.last += 1;
                self.last
            }
        }
    }
}

/// A short description of a JSON value for error messages: its kind, and an object's keys.
pub(crate) fn describe(value: &Value) -> String {
    match value {
        Value::Null => "null".into(),
        Value::Bool(_) => "a boolean".into(),
        Value::Number(_) => "a number".into(),
        Value::String(_) => "a string".into(),
        Value::Array(a) => format!("an array of {} items", a.len()),
        Value::Object(o) if o.is_empty() => "an empty object".into(),
        Value::Object(o) => {
            let keys: Vec<&str> = o.keys().take(6).map(String::as_str).collect();
            let more = if o.len() > 6 { ", ..." } else { "" };
            format!("an object with keys {}{more}", keys.join(", "))
        }
    }
}

/// What was expected of an input no reader understood.
const EXPECTED: &str = "expected seed-000 span JSONL (one {\"name\", \"observed_bytes\", \
    \"injected_bytes\", ...} object per line), OTLP JSON ({\"resourceSpans\": [...]}, one \
    document or one export request per line), Langfuse observations ({\"type\": \"TOOL\", \
    \"traceId\": ...} items, JSON or JSONL), or OpenAI Agents SDK trace items \
    ({\"object\": \"trace.span\", \"span_data\": {...}})";

fn read_value<S: Sink>(
    format: Format,
    value: &Value,
    entries: &mut Entries,
    collector: &mut Collector,
    sink: &mut S,
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
        Format::Spans => Err("seed-000 spans are read line by line".into()),
    }
}

/// The state of a [`Reader`].
enum State {
    /// Waiting for the first non-blank line to choose the reader.
    Start {
        head: Vec<u8>,
        line_start: usize,
        searched: usize,
    },
    /// Seed-000 span JSONL: the fast path, one record per line.
    Spans { lines: LineSplitter },
    /// One JSON value of a trace format per line.
    Lines {
        lines: LineSplitter,
        format: Format,
        collector: Collector,
    },
    /// One JSON document, buffered.
    Document { buf: Vec<u8> },
}

/// The streaming reader behind [`crate::check::Checker`] and [`convert_to_spans`]: bytes in,
/// in chunks split anywhere; records, skips and invalid entries out to a [`Sink`].
pub(crate) struct Reader {
    option: FormatOption,
    state: State,
    line_no: u64,
}

impl Reader {
    pub fn new(option: FormatOption) -> Reader {
        let state = match option {
            FormatOption::Spans => State::Spans {
                lines: LineSplitter::new(),
            },
            _ => State::Start {
                head: Vec::new(),
                line_start: 0,
                searched: 0,
            },
        };
        Reader {
            option,
            state,
            line_no: 0,
        }
    }

    /// Complete lines read so far (0 while a document is being buffered).
    pub fn lines_read(&self) -> u64 {
        self.line_no
    }

    pub fn push<S: Sink>(&mut self, chunk: &[u8], sink: &mut S) {
        let Reader { state, line_no, .. } = self;
        let decision = match state {
            State::Spans { lines } => {
                lines.push(chunk, |line| {
                    *line_no += 1;
                    span_line(sink, *line_no, line);
                });
                return;
            }
            State::Lines {
                lines,
                format,
                collector,
            } => {
                lines.push(chunk, |line| {
                    *line_no += 1;
                    json_line(*format, *line_no, line, collector, sink);
                });
                return;
            }
            State::Document { buf } => {
                buf.extend_from_slice(chunk);
                return;
            }
            State::Start {
                head,
                line_start,
                searched,
            } => {
                head.extend_from_slice(chunk);
                match first_nonblank_line(head, line_start, searched) {
                    Some(first) => detect::first_line(first),
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
            (FirstLine::Document, _) => State::Document { buf: Vec::new() },
            (_, Some(format)) => lines_state(format),
            (FirstLine::Lines(Some(format)), None) => lines_state(format),
            _ => State::Spans {
                lines: LineSplitter::new(),
            },
        };
        let State::Start { head, .. } = std::mem::replace(&mut self.state, state) else {
            return;
        };
        self.push(&head, sink);
    }

    pub fn finish<S: Sink>(mut self, sink: &mut S) {
        if let State::Start { head, .. } = &self.state {
            // The whole input fit before a newline: decide on its first non-blank line.
            let decision = head
                .split(|&b| b == b'\n')
                .map(strip_bom)
                .find(|l| !l.iter().all(u8::is_ascii_whitespace))
                .map_or(FirstLine::Spans, detect::first_line);
            self.begin(decision, sink);
        }
        match self.state {
            State::Start { .. } => {}
            State::Spans { lines } => {
                if let Some(last) = lines.finish() {
                    self.line_no += 1;
                    span_line(sink, self.line_no, &last);
                }
                sink.set_format(Format::Spans.as_str(), None);
            }
            State::Lines {
                lines,
                format,
                mut collector,
            } => {
                if let Some(last) = lines.finish() {
                    self.line_no += 1;
                    json_line(format, self.line_no, &last, &mut collector, sink);
                }
                let conventions = collector.finish(sink);
                sink.set_format(
                    format.as_str(),
                    Some(ReadAs {
                        layout: Layout::Lines,
                        conventions,
                    }),
                );
            }
            State::Document { buf } => read_document(self.option, strip_bom(&buf), sink),
        }
    }
}

fn lines_state(format: Format) -> State {
    State::Lines {
        lines: LineSplitter::new(),
        format,
        collector: Collector::default(),
    }
}

fn strip_bom(bytes: &[u8]) -> &[u8] {
    bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes)
}

/// The first complete non-blank line of `head` (newline-terminated). `line_start` is where
/// the current line starts and `searched` how far a newline was looked for, so each byte is
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
        if !line.iter().all(u8::is_ascii_whitespace) {
            return Some(line);
        }
        *line_start = at + 1;
        *searched = at + 1;
    }
}

fn span_line<S: Sink>(sink: &mut S, line_no: u64, line: &[u8]) {
    // A UTF-8 byte order mark at the start of a file is not part of the first record.
    let line = if line_no == 1 { strip_bom(line) } else { line };
    if line.iter().all(u8::is_ascii_whitespace) {
        return sink.blank();
    }
    match parse_line(line) {
        Ok(rec) => sink.span(line_no, rec),
        Err(e) => sink.invalid(line_no, e.0),
    }
}

fn json_line<S: Sink>(
    format: Format,
    line_no: u64,
    line: &[u8],
    collector: &mut Collector,
    sink: &mut S,
) {
    let line = if line_no == 1 { strip_bom(line) } else { line };
    if line.iter().all(u8::is_ascii_whitespace) {
        return sink.blank();
    }
    let value = match serde_json::from_slice::<Value>(line) {
        Ok(v) => v,
        Err(e) => return sink.invalid(line_no, format!("not valid JSON: {}", json_error(&e))),
    };
    let mut entries = Entries::line(line_no);
    if let Err(error) = read_value(format, &value, &mut entries, collector, sink) {
        sink.invalid(line_no, error);
    }
}

fn read_document<S: Sink>(option: FormatOption, buf: &[u8], sink: &mut S) {
    let mut collector = Collector::default();
    let mut entries = Entries::document();
    let (format, result) = match serde_json::from_slice::<Value>(buf) {
        Err(e) => {
            let name = option.forced().map_or("unknown", Format::as_str);
            (
                name,
                Err(format!(
                    "not valid JSON (line {} column {}): {}; read as one JSON document \
                     because the input starts like one",
                    e.line(),
                    e.column(),
                    json_error(&e)
                )),
            )
        }
        Ok(value) => match option.forced().or_else(|| detect::format_of(&value)) {
            Some(f) => (
                f.as_str(),
                read_value(f, &value, &mut entries, &mut collector, sink),
            ),
            None => (
                "unknown",
                Err(format!(
                    "not a recognised trace format: {EXPECTED}; found {}",
                    describe(&value)
                )),
            ),
        },
    };
    if let Err(error) = result {
        sink.invalid(entries.next(), error);
    }
    let conventions = collector.finish(sink);
    sink.set_format(
        format,
        Some(ReadAs {
            layout: Layout::Document,
            conventions,
        }),
    );
}

/// serde_json's message without its " at line L column C" suffix.
fn json_error(err: &serde_json::Error) -> String {
    let full = err.to_string();
    let suffix = format!(" at line {} column {}", err.line(), err.column());
    full.strip_suffix(&suffix).unwrap_or(&full).to_string()
}

/// Seed-000 span JSONL written from any supported format.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Conversion {
    /// The reader that understood the input (`unknown` when none did).
    pub format: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read_as: Option<ReadAs>,
    /// One seed-000 span record per line, each with a `toolslice` object saying where it came
    /// from (`format`, `line`, `join`, `notes`, `warnings`, `injected_tokens_estimated`),
    /// which the seed's scripts ignore.
    pub jsonl: String,
    /// Records written.
    pub records: u64,
    pub invalid: Vec<Invalid>,
    pub skipped: Vec<Skipped>,
}

struct ConvertSink {
    out: String,
    records: u64,
    format: String,
    read_as: Option<ReadAs>,
    invalid: Vec<Invalid>,
    skipped: Vec<Skipped>,
    pending: Vec<(u64, SpanRecord, Provenance)>,
}

impl Sink for ConvertSink {
    fn span(&mut self, line: u64, record: SpanRecord) {
        self.pending.push((line, record, Provenance::default()));
    }
    fn row(&mut self, line: u64, record: SpanRecord, provenance: Provenance) {
        self.pending.push((line, record, provenance));
    }
    fn context(
        &mut self,
        line: u64,
        span_id: Option<String>,
        _parent_id: Option<String>,
        _name: Option<String>,
        reason: String,
    ) {
        self.skipped(line, span_id, reason);
    }
    fn skipped(&mut self, line: u64, span_id: Option<String>, reason: String) {
        self.skipped.push(Skipped {
            line,
            span_id,
            reason,
        });
    }
    fn invalid(&mut self, line: u64, error: String) {
        self.invalid.push(Invalid { line, error });
    }
    fn blank(&mut self) {}
    fn set_format(&mut self, format: &str, read_as: Option<ReadAs>) {
        self.format = format.to_string();
        self.read_as = read_as;
    }
}

/// Writes seed-000 span JSONL from any supported format, so the rest of the tooling (and the
/// seeds' scripts) can use it. Records keep the seed's field names; a `toolslice` object
/// beside them says where each came from. Lines no reader understood are listed in
/// `invalid`, spans that are not tool calls in `skipped`.
pub fn convert_to_spans(input: &[u8], format: FormatOption) -> Conversion {
    let mut sink = ConvertSink {
        out: String::new(),
        records: 0,
        format: String::new(),
        read_as: None,
        invalid: Vec::new(),
        skipped: Vec::new(),
        pending: Vec::new(),
    };
    let mut reader = Reader::new(format);
    reader.push(input, &mut sink);
    reader.finish(&mut sink);
    let pending = std::mem::take(&mut sink.pending);
    for (line, record, provenance) in pending {
        let mut object = match serde_json::to_value(&record) {
            Ok(Value::Object(object)) => object,
            _ => continue,
        };
        if sink.read_as.is_some() {
            let mut source = serde_json::Map::new();
            source.insert("format".into(), Value::from(sink.format.clone()));
            source.insert("line".into(), Value::from(line));
            if let Some(join) = provenance.join {
                source.insert("join".into(), Value::from(join.as_str()));
            }
            if provenance.injected_tokens_estimated {
                source.insert("injected_tokens_estimated".into(), Value::Bool(true));
            }
            if !provenance.notes.is_empty() {
                source.insert("notes".into(), Value::from(provenance.notes));
            }
            if !provenance.warnings.is_empty() {
                source.insert("warnings".into(), Value::from(provenance.warnings));
            }
            object.insert("toolslice".into(), Value::Object(source));
        }
        // Serializing a Value cannot fail.
        sink.out
            .push_str(&serde_json::to_string(&object).unwrap_or_default());
        sink.out.push('\n');
        sink.records += 1;
    }
    Conversion {
        format: sink.format,
        read_as: sink.read_as,
        jsonl: sink.out,
        records: sink.records,
        invalid: sink.invalid,
        skipped: sink.skipped,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn format_options_parse() {
        for f in Format::ALL {
            assert_eq!(FormatOption::parse(f.as_str()).unwrap().forced(), Some(f));
        }
        assert_eq!(FormatOption::parse("auto").unwrap(), FormatOption::Auto);
        let err = FormatOption::parse("jaeger").unwrap_err();
        assert_eq!(err.code(), "unknown_format");
        assert!(err.to_string().contains("openai_agents"));
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
        let (mut start, mut searched) = (0, 0);
        assert_eq!(
            first_nonblank_line(b"\xEF\xBB\xBF{}\n", &mut start, &mut searched),
            Some(&b"{}"[..])
        );
    }
}
