//! OpenAI Agents SDK traces: the items its tracing exports (`Trace.export()`,
//! `Span.export()`), one per line (a file processor), as a JSON array, as the ingest payload
//! `{"data": [...]}`, or as `{"trace": {...}, "spans": [...]}`.
//!
//! ```text
//! {"object": "trace.span", "id": "span_...", "trace_id": "trace_...", "parent_id": "span_...",
//!  "started_at": "2025-03-13T12:00:00.123456+00:00", "ended_at": "...",
//!  "span_data": {"type": "function", "name": "read_file", "input": "{...}", "output": "..."},
//!  "error": null}
//! ```
//!
//! - `function` spans are tool calls (`name`, `output`). The SDK exports no call id for
//!   them, so the join is by order: the function spans before a model call are paired with
//!   the tool messages after that call's last assistant message, by tool name.
//! - `generation` spans are model calls whose `input` is the Chat Completions message list.
//! - `response` spans are model calls too, but the SDK exports only `response_id`: what the
//!   model received is not in the trace, so the tool results before one are `incomplete`
//!   (unless a custom processor exported `input`, which is then read).
//! - With `trace_include_sensitive_data` off, `input` and `output` are null: not captured.
//! - `agent`, `handoff`, `guardrail`, `custom` ... spans are context; `trace` records are
//!   skipped.

use std::borrow::Cow;

use serde_json::{Map, Value};

use super::fields::{Fields, Line, Object};
use super::message_list::Input;
use super::messages;
use super::model::{clean_id, parse_iso8601, Captured, ModelCall, Times, ToolCall};
use super::{describe, Collector, Entries, Sink};
use crate::span::InvalidKind;

/// An exported trace or span item.
pub(crate) fn is_item<O: Object + ?Sized>(obj: &O) -> bool {
    matches!(obj.str("object"), Some("trace" | "trace.span")) || obj.object("span_data").is_some()
}

/// The fields of an item that [`is_item`] and [`read_item`] look at, and those of its
/// `span_data`; every other field of a line is parsed and dropped by [`item_line`]. A
/// model call's `input` is read into its tool messages, and only for a model call; `output`
/// only for a function (a generation's output, usage and model configuration are dropped).
static FIELDS: Fields = Fields::new(
    &[
        "object",
        "id",
        "span_id",
        "workflow_name",
        "trace_id",
        "parent_id",
        "started_at",
        "ended_at",
        "error",
        "span_data",
    ],
    Some(("span_data", &DATA_FIELDS)),
    None,
    &[],
    "object",
);
static DATA_FIELDS: Fields = Fields::new(
    &["type", "name", "model", "output", "call_id", "tool_call_id"],
    None,
    Some("input"),
    &[
        ("input", |t| matches!(t, "generation" | "response")),
        ("output", |t| t == "function"),
    ],
    "type",
);

/// One JSONL line that is a single item, as the fields read, or `None` for anything else,
/// which is then read as a whole tree. `is_item` and `read_item` only look at these
/// fields, so they read the object made by [`Fields`] as they read the whole tree.
pub(crate) fn item_line(text: &str) -> Option<Line<'_>> {
    let line = FIELDS.line(text)?;
    is_item(&line.obj).then_some(line)
}

/// Reads a line that [`item_line`] accepted.
pub(crate) fn read_line(
    line: Line,
    entries: &mut Entries,
    collector: &mut Collector,
    sink: &mut dyn Sink,
) {
    read_span(&line.obj, Some(line.input), entries.next(), collector, sink);
}

pub(crate) fn read_value(
    value: &Value,
    entries: &mut Entries,
    collector: &mut Collector,
    sink: &mut dyn Sink,
) -> Result<(), String> {
    let mut items: Vec<&Value> = Vec::new();
    match value {
        Value::Array(list) => items.extend(list),
        Value::Object(obj) if is_item(obj) => items.push(value),
        Value::Object(obj) => {
            let list = obj.get("data").or_else(|| obj.get("spans"));
            match list.and_then(Value::as_array) {
                Some(list) => {
                    items.extend(obj.get("trace").filter(|t| t.is_object()));
                    items.extend(list);
                }
                None => return Err(expected(value)),
            }
        }
        _ => return Err(expected(value)),
    }
    if items.is_empty() {
        sink.skipped(entries.next(), None, "no OpenAI Agents SDK items".into());
    }
    for item in items {
        read_item(item, entries, collector, sink);
    }
    Ok(())
}

fn expected(found: &Value) -> String {
    format!(
        "expected an OpenAI Agents SDK export item ({{\"object\": \"trace.span\", \"span_data\": \
         {{...}}}}), a list of them, or {{\"data\": [...]}}; found {}",
        describe(found)
    )
}

fn text<O: Object + ?Sized>(obj: &O, key: &str) -> Option<String> {
    obj.text(key)
}

fn read_item(item: &Value, entries: &mut Entries, collector: &mut Collector, sink: &mut dyn Sink) {
    let entry = entries.next();
    match item.as_object() {
        Some(obj) if is_item(obj) => read_span(obj, None, entry, collector, sink),
        _ => sink.invalid(entry, InvalidKind::UnknownFormat, expected(item)),
    }
}

/// Reads an item. `input`: a model call's `span_data.input`, when the line's reader read it
/// already; `None` to read it from `obj`.
fn read_span<O: Object + ?Sized>(
    obj: &O,
    input: Option<Option<Input>>,
    entry: u64,
    collector: &mut Collector,
    sink: &mut dyn Sink,
) {
    let id = obj.text_ref("id").or_else(|| obj.text_ref("span_id"));
    if obj.str("object") == Some("trace") {
        let workflow = text(obj, "workflow_name").unwrap_or_default();
        return sink.skipped(
            entry,
            id.map(Cow::into_owned),
            format!("trace record ({workflow})"),
        );
    }
    let parent = obj.text_ref("parent_id");
    // Borrowed: a copy of span_data was a copy of the model input it holds.
    match obj.object("span_data") {
        Some(data) => read_span_data(obj, data, id, parent, input, entry, collector, sink),
        None => read_span_data(obj, &Map::new(), id, parent, input, entry, collector, sink),
    }
}

/// [`read_span`] on from the span's `span_data` (an empty one when it has none).
#[allow(clippy::too_many_arguments)]
fn read_span_data<O: Object + ?Sized, D: Object + ?Sized>(
    obj: &O,
    data: &D,
    id: Option<Cow<'_, str>>,
    parent: Option<Cow<'_, str>>,
    input: Option<Option<Input>>,
    entry: u64,
    collector: &mut Collector,
    sink: &mut dyn Sink,
) {
    let kind = data.str("type").unwrap_or("unknown");
    // Borrowed until a call keeps it, as the id and parent are (a fifth of an export's spans,
    // agents and guardrails, only lend them to the sink).
    let name = data.text_ref("name");
    let ended = obj.str("ended_at");
    // The ids move into the span's `SpanRef`, made only for tool and model calls (a context
    // span is only counted), rather than being copied for every span; with the fixed skip
    // texts below, 2% of the instructions of reading an Agents export. Its times are parsed
    // only then too.
    let at = |collector: &mut Collector, id: Option<Cow<str>>, parent: Option<Cow<str>>| {
        let times = Times {
            start: obj.str("started_at").and_then(parse_iso8601),
            end: ended.and_then(parse_iso8601),
        };
        let (id, parent) = (id.map(Cow::into_owned), parent.map(Cow::into_owned));
        collector.span_ref(entry, text(obj, "trace_id"), id, parent, times)
    };
    match kind {
        "function" => {
            let status = if ended.is_none() {
                Some("unfinished")
            } else if obj.present("error") {
                Some("error")
            } else {
                None
            };
            // A string (most outputs) read as it is, with no tree value made of it.
            let output = data.str("output").ok_or_else(|| data.get("output"));
            let result = match output {
                Ok(text) => messages::hidden_or(text),
                Err(Some(v)) if !v.is_null() => messages::result_text(v),
                Err(_) => Captured::Missing(
                    "span_data.output is null: not recorded (trace_include_sensitive_data is \
                     off) or the tool returned nothing"
                        .into(),
                ),
            };
            let call_id = ["call_id", "tool_call_id"]
                .iter()
                .find_map(|k| text(data, k))
                .and_then(|s| clean_id(&s));
            let at = at(collector, id, parent);
            collector.tools.push(ToolCall {
                at,
                name: name.map(Cow::into_owned),
                call_id,
                status: status.map(str::to_string),
                result,
                source: "openai_agents",
            });
        }
        "generation" | "response" => {
            let input = input.unwrap_or_else(|| {
                let value = data.get("input").filter(|v| !v.is_null());
                value.map(messages::tool_messages)
            });
            let input = match input {
                Some(read) => read.map_err(|e| format!("span_data.input: {e}")),
                None if kind == "response" => Err(
                    "a response span exports only response_id: the model input is not in the \
                     trace (export generation spans, or span_data.input from a custom \
                     processor, to check it)"
                        .to_string(),
                ),
                None => Err(
                    "span_data.input is null: not recorded (trace_include_sensitive_data is off)"
                        .to_string(),
                ),
            };
            sink.context(
                entry,
                id.as_deref(),
                parent.as_deref(),
                name.or_else(|| data.text_ref("model")).as_deref(),
                if kind == "response" {
                    "model call (response span): read for the join"
                } else {
                    "model call (generation span): read for the join"
                },
            );
            let at = at(collector, id, parent);
            collector.models.push(ModelCall { at, input });
        }
        other => collector.context(
            sink,
            entry,
            id.as_deref(),
            parent.as_deref(),
            name.as_deref(),
            &other_span(other),
        ),
    }
}

/// Why a span of another kind is skipped: the SDK's kinds as fixed texts, not formatted per
/// span; any other kind is named as it came.
fn other_span(kind: &str) -> Cow<'static, str> {
    fixed_reason!(kind, "OpenAI Agents ", " span, not a tool or model call",
        "agent" "handoff" "custom" "guardrail" "mcp_tools" "speech" "speech_group" "transcription")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::check::{check_bytes, CheckOptions};

    /// The SDK's span kinds get fixed texts, each the one the format string writes; any other
    /// kind is named as it came.
    #[test]
    fn other_kinds_are_named_as_the_format_writes_them() {
        for kind in [
            "agent",
            "handoff",
            "custom",
            "guardrail",
            "mcp_tools",
            "speech",
            "speech_group",
            "transcription",
            "task",
            "",
            "odd\u{7}kind",
        ] {
            let want = format!("OpenAI Agents {kind} span, not a tool or model call");
            assert_eq!(other_span(kind), want);
            assert_eq!(
                matches!(other_span(kind), Cow::Borrowed(_)),
                !matches!(kind, "task" | "" | "odd\u{7}kind"),
                "{kind:?}"
            );
        }
    }

    /// What a check of an export says of each span it read for the join or skipped, on our
    /// fixture and on the SDK's own export (pkg-tests/producers): the reason names the
    /// span's own kind.
    #[test]
    fn model_and_other_spans_are_listed_with_their_kind() {
        let mut seen = Vec::new();
        for text in [
            include_str!("../../tests/fixtures/formats/openai-agents.jsonl"),
            include_str!("../../../../pkg-tests/producers/corpus/openai-agents.jsonl"),
        ] {
            let report = check_bytes(text.as_bytes(), CheckOptions::default());
            for (i, line) in text.lines().enumerate() {
                let item: Value = serde_json::from_str(line).unwrap();
                let kind = item["span_data"]["type"].as_str().unwrap_or_default();
                let want = match kind {
                    "generation" | "response" => {
                        format!("model call ({kind} span): read for the join")
                    }
                    "function" | "" => continue,
                    other => format!("OpenAI Agents {other} span, not a tool or model call"),
                };
                let line = i as u64 + 1;
                let got: Vec<&str> = report
                    .skipped
                    .iter()
                    .filter(|s| s.line == line)
                    .map(|s| s.reason.as_str())
                    .collect();
                assert_eq!(got, [want.as_str()], "line {line}");
                seen.push(kind.to_string());
            }
        }
        for kind in ["generation", "response", "agent", "guardrail", "custom"] {
            assert!(
                seen.iter().any(|k| k == kind),
                "the fixture has no {kind} span"
            );
        }
    }
}
