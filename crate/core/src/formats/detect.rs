//! Which reader an input needs, from a cheap look at its first non-blank line.
//!
//! The seed's span JSONL is the common case and is benchmarked at ~100 MB, so detection never
//! re-reads the input: it parses the first non-blank line once (when it starts with `{` or
//! `[`) and decides from its keys; every later line goes straight to the chosen reader.
//!
//! - A complete JSON value on the first line means a line layout: each line is one value
//!   (a span record, an OTLP export request as the Collector's file exporter writes it, a
//!   Langfuse observation, an OpenAI Agents SDK item, or a list of them). Its keys name the
//!   format; a line no other format claims is seed-000 span JSONL, as before.
//! - The opening of a multi-line document (`{` or `[` alone, `[{...`, or `{"resourceSpans": [`
//!   and the like) means one JSON document, buffered and read whole at the end.
//! - Anything else is span JSONL, whose reader reports each bad line.

use serde_json::Value;

use super::{langfuse, openai_agents, otlp, Format};

/// What the first non-blank line says about the input.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum FirstLine {
    /// Not JSON that any trace format starts with: read as seed-000 span JSONL.
    Spans,
    /// A complete JSON value: one value per line, of this format when recognised.
    Lines(Option<Format>),
    /// The start of a multi-line JSON document.
    Document,
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

pub(crate) fn first_line(line: &[u8]) -> FirstLine {
    let t = line.trim_ascii();
    let Some(&open @ (b'{' | b'[')) = t.first() else {
        return FirstLine::Spans;
    };
    match serde_json::from_slice::<Value>(t) {
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
