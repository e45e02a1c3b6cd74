//! Which reader an input needs, from a cheap look at its first non-blank lines.
//!
//! The seed's span JSONL is the common case and is benchmarked at ~100 MB, so detection never
//! re-reads the input: it looks at up to [`DETECT_LINES`] non-blank lines at the start (at
//! most [`DETECT_BYTES`] of them once one line is complete), and every later line goes
//! straight to the chosen reader.
//!
//! - A line that is a complete JSON value of a trace format (an OTLP export request as the
//!   Collector's file exporter writes it, a Langfuse observation, an OpenAI Agents SDK item,
//!   or a list of them) decides a line layout of that format, whichever of the first lines
//!   it is. Lines no format claims are seed-000 span JSONL, as before.
//! - The opening of a multi-line document on the first non-blank line (`{` or `[` alone,
//!   `[{...`, or `{"resourceSpans": [` and the like) means one JSON document, buffered and
//!   read whole at the end.
//! - Anything else is span JSONL, whose reader reports each bad line.
//!
//! Detection must not be steerable by one line (issue 13): a line is sniffed with a parse that
//! keeps only the top levels (nesting deeper than serde_json's 128 levels is skipped, not an
//! error) and reads lone UTF-16 surrogate escapes as U+FFFD, so an OTLP export whose first
//! line holds `"\ud83d"` or a deeply nested attribute is still recognised as OTLP (whose
//! reader then reports that line). A line that fails to parse decides nothing: the next
//! lines are looked at. And once span JSONL is chosen, a later line that is a trace-format
//! record is reported as invalid rather than skipped ([`foreign_record`]).

use std::borrow::Cow;
use std::fmt;

use serde::de::{DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Number, Value};

use super::{langfuse, openai_agents, otlp, phoenix, Format};

/// At most this many non-blank lines are looked at before span JSONL is chosen.
pub(crate) const DETECT_LINES: usize = 8;
/// Past this many buffered bytes (and one complete line), detection stops waiting for more
/// lines: a span JSONL file with huge lines is not held in memory to look at eight of them.
pub(crate) const DETECT_BYTES: usize = 1 << 20;

/// What the first non-blank lines say about the input.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum FirstLine {
    /// Not JSON that any trace format starts with: read as seed-000 span JSONL.
    Spans,
    /// A complete JSON value: one value per line, of this format when recognised.
    Lines(Option<Format>),
    /// The start of a multi-line JSON document.
    Document,
}

/// Looks at the first non-blank lines one at a time until they decide the reader.
#[derive(Debug, Clone, Default)]
pub(crate) struct Detector {
    seen: usize,
}

impl Detector {
    /// The next non-blank line; `Some` once the lines so far decide the reader.
    pub fn line(&mut self, line: &[u8]) -> Option<FirstLine> {
        let first = self.seen == 0;
        self.seen += 1;
        match first_line(line) {
            decided @ FirstLine::Lines(Some(_)) => return Some(decided),
            FirstLine::Document if first => return Some(FirstLine::Document),
            _ => {}
        }
        (self.seen >= DETECT_LINES).then_some(FirstLine::Spans)
    }

    /// Non-blank lines looked at so far.
    pub fn seen(&self) -> usize {
        self.seen
    }

    /// The decision when the input (or the detection window) ends undecided.
    pub fn end(&self) -> FirstLine {
        FirstLine::Spans
    }
}

/// Top-level keys of the document formats, when written across lines.
const DOCUMENT_KEYS: [&str; 7] = [
    "resourceSpans",
    "resource_spans",
    "data",
    "observations",
    "spans",
    "trace",
    "items",
];

/// What one line says on its own.
pub(crate) fn first_line(line: &[u8]) -> FirstLine {
    let t = line.trim_ascii();
    let Some(&open @ (b'{' | b'[')) = t.first() else {
        return FirstLine::Spans;
    };
    match sniff(t) {
        Ok(value) => FirstLine::Lines(format_of(&value)),
        Err(e) if e.is_eof() => {
            let rest = t[1..].trim_ascii_start();
            let opens_document = if open == b'[' {
                matches!(rest.first(), None | Some(b'{'))
            } else {
                rest.is_empty() || first_key(rest).is_some_and(|k| DOCUMENT_KEYS.contains(&k))
            };
            if opens_document {
                FirstLine::Document
            } else {
                FirstLine::Spans
            }
        }
        Err(_) => FirstLine::Spans,
    }
}

/// The trace format of a line that the span JSONL reader found no tool name in: an input
/// read as span JSONL whose later lines are OTLP (say) is not span JSONL with skipped lines.
pub(crate) fn foreign_record(line: &[u8]) -> Option<Format> {
    match first_line(line) {
        FirstLine::Lines(format) => format,
        _ => None,
    }
}

/// Containers deeper than this are read as empty ones: [`format_of`] looks four levels down
/// at most (a list, a wrapper's `data`, an item, its `span_data`).
const KEEP_DEPTH: usize = 6;
/// Elements of an array kept for [`format_of`], which looks for the first object.
const KEEP_ITEMS: usize = 8;

/// Parses one line for detection only: the top levels as a [`Value`], deeper containers
/// skipped (serde_json skips without recursing, so no depth limit applies), and lone
/// surrogate escapes read as U+FFFD.
fn sniff(bytes: &[u8]) -> Result<Value, serde_json::Error> {
    let bytes = without_lone_surrogates(bytes);
    let mut de = serde_json::Deserializer::from_slice(&bytes);
    let value = Shallow { depth: 0 }.deserialize(&mut de)?;
    de.end()?;
    Ok(value)
}

/// `bytes` with every `\uD800`..`\uDFFF` escape written as `\uFFFD` (same length): serde_json
/// rejects a lone surrogate in a string, and detection must not be turned off by one.
fn without_lone_surrogates(bytes: &[u8]) -> Cow<'_, [u8]> {
    let mut out: Option<Vec<u8>> = None;
    let mut i = 0;
    while let Some(p) = bytes[i..].iter().position(|&b| b == b'\\') {
        let at = i + p;
        let escape = bytes.get(at + 1..at + 6);
        let surrogate = escape.is_some_and(|e| {
            e[0] == b'u'
                && std::str::from_utf8(&e[1..])
                    .ok()
                    .and_then(|h| u16::from_str_radix(h, 16).ok())
                    .is_some_and(|u| (0xD800..=0xDFFF).contains(&u))
        });
        if surrogate {
            out.get_or_insert_with(|| bytes.to_vec())[at + 2..at + 6].copy_from_slice(b"FFFD");
            i = at + 6;
        } else {
            i = (at + 2).min(bytes.len());
        }
    }
    out.map_or(Cow::Borrowed(bytes), Cow::Owned)
}

/// A [`Value`] of the top [`KEEP_DEPTH`] levels.
struct Shallow {
    depth: usize,
}

impl<'de> DeserializeSeed<'de> for Shallow {
    type Value = Value;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Shallow {
    type Value = Value;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_bool<E>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }
    fn visit_i64<E>(self, v: i64) -> Result<Value, E> {
        Ok(Value::Number(v.into()))
    }
    fn visit_u64<E>(self, v: u64) -> Result<Value, E> {
        Ok(Value::Number(v.into()))
    }
    fn visit_f64<E>(self, v: f64) -> Result<Value, E> {
        Ok(Number::from_f64(v).map_or(Value::Null, Value::Number))
    }
    fn visit_str<E>(self, v: &str) -> Result<Value, E> {
        Ok(Value::String(v.to_string()))
    }
    fn visit_string<E>(self, v: String) -> Result<Value, E> {
        Ok(Value::String(v))
    }
    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_none<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut items = Vec::new();
        if self.depth < KEEP_DEPTH {
            while items.len() < KEEP_ITEMS {
                let seed = Shallow {
                    depth: self.depth + 1,
                };
                match seq.next_element_seed(seed)? {
                    Some(v) => items.push(v),
                    None => return Ok(Value::Array(items)),
                }
            }
        }
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(Value::Array(items))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut obj = Map::new();
        if self.depth < KEEP_DEPTH {
            while let Some(key) = map.next_key::<String>()? {
                let seed = Shallow {
                    depth: self.depth + 1,
                };
                obj.insert(key, map.next_value_seed(seed)?);
            }
        } else {
            while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
        }
        Ok(Value::Object(obj))
    }
}

/// The first key of an object's text after its `{`: `"resourceSpans": [` gives
/// `resourceSpans` (keys with escapes are not document keys, so they need no unescaping).
fn first_key(rest: &[u8]) -> Option<&str> {
    let body = rest.strip_prefix(b"\"")?;
    let end = body.iter().position(|&b| b == b'"' || b == b'\\')?;
    std::str::from_utf8(&body[..end]).ok()
}

/// The format of a parsed value: an item of a format, a list of items, or a known wrapper.
pub(crate) fn format_of(value: &Value) -> Option<Format> {
    match value {
        Value::Array(list) => list.iter().find(|v| v.is_object()).and_then(format_of),
        Value::Object(obj) => {
            if otlp::is_request(obj) {
                Some(Format::Otlp)
            } else if openai_agents::is_item(obj) {
                Some(Format::OpenaiAgents)
            } else if phoenix::is_span(obj) || phoenix::is_otlp_span(obj) {
                Some(Format::Phoenix)
            } else if langfuse::is_observation(obj) || langfuse::is_trace(obj) {
                Some(Format::Langfuse)
            } else {
                ["data", "spans", "items"]
                    .iter()
                    .find_map(|k| obj.get(*k).filter(|v| v.is_array()))
                    .and_then(format_of)
            }
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seed_lines_stay_spans() {
        for line in [
            r#"{"span_id":"t1","name":"read_file","observed_bytes":1}"#,
            r#"{"name":"x","#,
            "[1,2,3]",
            "[1,",
            "hello",
            "",
            r#"{"foo": 1}"#,
        ] {
            let got = first_line(line.as_bytes());
            assert!(
                matches!(got, FirstLine::Spans | FirstLine::Lines(None)),
                "{line}: {got:?}"
            );
        }
    }

    #[test]
    fn trace_formats_are_recognised() {
        let cases: [(&str, FirstLine); 9] = [
            (
                r#"{"resourceSpans":[{"scopeSpans":[]}]}"#,
                FirstLine::Lines(Some(Format::Otlp)),
            ),
            (
                r#"{"object":"trace.span","id":"s","span_data":{"type":"function"}}"#,
                FirstLine::Lines(Some(Format::OpenaiAgents)),
            ),
            (
                r#"[{"object":"trace","id":"trace_1"}]"#,
                FirstLine::Lines(Some(Format::OpenaiAgents)),
            ),
            (
                r#"{"id":"o1","traceId":"t","type":"TOOL","output":"x"}"#,
                FirstLine::Lines(Some(Format::Langfuse)),
            ),
            (
                r#"{"data":[{"id":"o1","type":"GENERATION","startTime":"2025-01-01T00:00:00Z"}],"meta":{}}"#,
                FirstLine::Lines(Some(Format::Langfuse)),
            ),
            ("{", FirstLine::Document),
            ("  [ ", FirstLine::Document),
            (r#"[{"object": "trace.span","#, FirstLine::Document),
            (r#"{"resourceSpans": ["#, FirstLine::Document),
        ];
        for (line, want) in cases {
            assert_eq!(first_line(line.as_bytes()), want, "{line}");
        }
    }
}
