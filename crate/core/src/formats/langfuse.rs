//! Langfuse observation exports, as JSON (the public API's `{"data": [...]}`, a trace with
//! its `observations`, or a plain array) or JSONL (one observation per line).
//!
//! ```text
//! {"id": "obs-3", "traceId": "tr-1", "type": "TOOL", "name": "read_file",
//!  "parentObservationId": "obs-1", "startTime": "2025-05-01T10:00:02.000Z",
//!  "endTime": "...", "input": {...}, "output": "...", "metadata": {...}, "level": "DEFAULT"}
//! ```
//!
//! A `TOOL` observation's `output` is the tool result; the following `GENERATION`'s `input`
//! (a message list in the provider's shape) is what the model received. Langfuse has no
//! standard field for the model's call id: it is taken from `metadata` (`tool_call_id`,
//! `toolCallId`, `call_id`, `gen_ai.tool.call.id`, also under `metadata.attributes`) or from
//! an output that is a serialized tool message; without one the join falls back to order.
//! Every other type (`SPAN`, `AGENT`, `CHAIN`, `EVENT` ...) is context. Field names are
//! camelCase as the API writes them; snake_case is accepted too.

use std::borrow::Cow;

use serde_json::{Map, Value};

use super::fields::{Fields, Line, Object};
use super::message_list::Input;
use super::messages;
use super::model::{clean_id, parse_iso8601, Captured, ModelCall, Times, ToolCall};
use super::otel::as_text;
use super::{describe, Collector, Entries, Sink};
use crate::span::InvalidKind;

const TYPES: [&str; 10] = [
    "SPAN",
    "GENERATION",
    "EVENT",
    "TOOL",
    "AGENT",
    "CHAIN",
    "RETRIEVER",
    "EMBEDDING",
    "EVALUATOR",
    "GUARDRAIL",
];

/// Why an observation of a type but TOOL and GENERATION is skipped, named upper-cased: the
/// types as fixed texts rather than formatted for each observation (most of an agent's
/// export), another type formatted.
fn context_reason(kind: &str) -> Cow<'static, str> {
    // Exports spell the types upper-cased: only another spelling is copied to be upper-cased.
    let upper = match kind.bytes().any(|b| b.is_ascii_lowercase()) {
        true => Cow::Owned(kind.to_ascii_uppercase()),
        false => Cow::Borrowed(kind),
    };
    fixed_reason!(&*upper, "Langfuse ", " observation, not a tool call or generation",
        "SPAN" "EVENT" "AGENT" "CHAIN" "RETRIEVER" "EMBEDDING" "EVALUATOR" "GUARDRAIL")
}

/// The field spelled `camel`, or `snake` when there is no `camel` (a null `camel` is taken:
/// the field is then absent, whatever `snake` holds).
fn key<'k, O: Object + ?Sized>(obj: &O, camel: &'k str, snake: &'k str) -> &'k str {
    if obj.contains_key(camel) {
        camel
    } else {
        snake
    }
}

fn get<'a, O: Object + ?Sized>(obj: &'a O, camel: &str, snake: &str) -> Option<&'a Value> {
    obj.get(key(obj, camel, snake)).filter(|v| !v.is_null())
}

fn text<O: Object + ?Sized>(obj: &O, camel: &str, snake: &str) -> Option<String> {
    obj.text(key(obj, camel, snake))
}

/// [`text`], borrowed from the line when the field is a string (as most ids are).
fn text_ref<'a, O: Object + ?Sized>(obj: &'a O, camel: &str, snake: &str) -> Option<Cow<'a, str>> {
    obj.text_ref(key(obj, camel, snake))
}

/// An object that looks like one observation: a known `type` and a trace id or start time.
pub(crate) fn is_observation<O: Object + ?Sized>(obj: &O) -> bool {
    let typed = obj
        .str("type")
        .is_some_and(|t| TYPES.iter().any(|ty| ty.eq_ignore_ascii_case(t)));
    typed
        && [
            "traceId",
            "trace_id",
            "startTime",
            "start_time",
            "parentObservationId",
        ]
        .iter()
        .any(|k| obj.contains_key(k))
}

/// The fields of an observation that [`is_observation`] and [`read_item`] look at; every
/// other field of a line is parsed and dropped by [`observation_line`]. `input` is read
/// into its tool messages, and only for a generation; `output` and `metadata` (where a
/// tool's call id may be) only for a tool: a generation's metadata, often the framework's
/// whole run configuration, is not built into a tree to be dropped. A tool's metadata is
/// read for its call id fields alone ([`METADATA_FIELDS`]).
static FIELDS: Fields = Fields::new(
    &[
        "type",
        "id",
        "traceId",
        "trace_id",
        "name",
        "startTime",
        "start_time",
        "endTime",
        "end_time",
        "parentObservationId",
        "parent_observation_id",
        "level",
        "output",
        "metadata",
    ],
    Some(("metadata", &METADATA_FIELDS)),
    Some("input"),
    &[
        ("input", |t| t.eq_ignore_ascii_case("GENERATION")),
        ("output", |t| t.eq_ignore_ascii_case("TOOL")),
        ("metadata", |t| t.eq_ignore_ascii_case("TOOL")),
    ],
    "type",
);

/// The keys a tool's call id may be under ([`call_id`]).
const CALL_ID_KEYS: [&str; 4] = [
    "tool_call_id",
    "toolCallId",
    "call_id",
    "gen_ai.tool.call.id",
];

/// The fields of a tool's `metadata` that [`call_id`] reads: the call id keys, and
/// `attributes` (kept as a tree), where observations ingested over OpenTelemetry have them.
/// Every tool line has a metadata object, mostly `{"tool_call_id": ...}`, and building it
/// into a tree cost a map, a SipHash and two allocations per tool call.
static METADATA_FIELDS: Fields = Fields::new(
    &[
        CALL_ID_KEYS[0],
        CALL_ID_KEYS[1],
        CALL_ID_KEYS[2],
        CALL_ID_KEYS[3],
        "attributes",
    ],
    None,
    None,
    &[],
    "",
);

/// One JSONL line that is a single observation, as the fields read, or `None` for anything
/// else (an array, `{"data": [...]}`, not an observation, not JSON): then the line is read
/// as a whole tree, which gives any message. An observation line has some twenty fields
/// (usage, model parameters, environment ...) and the reading needs fifteen at most: a tree
/// of all of them cost an allocation per value and a SipHash per key, and a generation's
/// input, the conversation so far, is most of the line.
///
/// `is_observation` and `read_item` only look at these fields, so they read the object made
/// by [`Fields`] as they read the whole tree.
pub(crate) fn observation_line(text: &str) -> Option<Line<'_>> {
    let line = FIELDS.line(text)?;
    is_observation(&line.obj).then_some(line)
}

/// Reads a line that [`observation_line`] accepted.
pub(crate) fn read_line(
    line: Line,
    entries: &mut Entries,
    collector: &mut Collector,
    sink: &mut dyn Sink,
) {
    read_observation(&line.obj, Some(line.input), entries.next(), collector, sink);
}

/// A trace with its observations (`GET /api/public/traces/{id}`).
pub(crate) fn is_trace(obj: &Map<String, Value>) -> bool {
    obj.get("observations").is_some_and(Value::is_array)
}

pub(crate) fn read_value(
    value: &Value,
    entries: &mut Entries,
    collector: &mut Collector,
    sink: &mut dyn Sink,
) -> Result<(), String> {
    let items = match value {
        Value::Array(items) => items.as_slice(),
        Value::Object(obj) if is_observation(obj) => std::slice::from_ref(value),
        Value::Object(obj) => match obj
            .get("data")
            .or_else(|| obj.get("observations"))
            .and_then(Value::as_array)
        {
            Some(items) => items.as_slice(),
            None => return Err(expected(value)),
        },
        _ => return Err(expected(value)),
    };
    if items.is_empty() {
        sink.skipped(entries.next(), None, "no Langfuse observations".into());
    }
    for item in items {
        read_item(item, entries, collector, sink);
    }
    Ok(())
}

fn expected(found: &Value) -> String {
    format!(
        "expected a Langfuse observation ({{\"type\": \"TOOL\" | \"GENERATION\" | ..., \
         \"traceId\": ...}}), a trace with \"observations\", or {{\"data\": [...]}}; found {}",
        describe(found)
    )
}

fn read_item(item: &Value, entries: &mut Entries, collector: &mut Collector, sink: &mut dyn Sink) {
    let entry = entries.next();
    match item.as_object() {
        Some(obj) if is_observation(obj) => read_observation(obj, None, entry, collector, sink),
        _ => sink.invalid(entry, InvalidKind::UnknownFormat, expected(item)),
    }
}

/// Reads an observation. `input`: the generation's input, when the line's reader read it
/// already; `None` to read it from `obj`.
fn read_observation<O: Object + ?Sized>(
    obj: &O,
    input: Option<Option<Input>>,
    entry: u64,
    collector: &mut Collector,
    sink: &mut dyn Sink,
) {
    // Borrowed from the line: a context observation lends them to the sink, which copies
    // what it keeps; a tool call or generation owns them.
    let id = text_ref(obj, "id", "id");
    let parent = text_ref(obj, "parentObservationId", "parent_observation_id");
    let name = text_ref(obj, "name", "name");
    let owned = |s: Option<Cow<'_, str>>| s.map(Cow::into_owned);
    // The ids move into the span's `SpanRef`, made only for tool calls and generations (a
    // context observation is only counted), rather than being copied for every observation,
    // as the Agents SDK reader does; its times are parsed only then too.
    let at = |collector: &mut Collector, id, parent| {
        let times = Times {
            start: obj
                .str(key(obj, "startTime", "start_time"))
                .and_then(parse_iso8601),
            end: obj
                .str(key(obj, "endTime", "end_time"))
                .and_then(parse_iso8601),
        };
        collector.span_ref(entry, text(obj, "traceId", "trace_id"), id, parent, times)
    };
    // The type in any case, compared without an uppercase copy per observation.
    let kind = obj.str("type").unwrap_or_default();
    match kind {
        _ if kind.eq_ignore_ascii_case("TOOL") => {
            // A string (most outputs) read as it is, with no tree value made of it.
            let output = obj
                .str("output")
                .ok_or_else(|| get(obj, "output", "output"));
            let (result, output_id) = match output {
                Ok(text) => messages::tool_result_text(text),
                Err(None) => (
                    Captured::Missing("output is not recorded on the TOOL observation".into()),
                    None,
                ),
                Err(Some(Value::Object(m))) if is_tool_message(m) => (
                    messages::captured(m.get("content"), "content"),
                    as_text(m.get("tool_call_id")),
                ),
                // Observations ingested over OpenTelemetry keep the tracer's text: LangChain's
                // ToolMessage serialised (`{"type": "tool", "data": ...}`, `lc` constructor).
                Err(Some(v)) => messages::tool_result(v),
            };
            let status = match obj.str("level") {
                Some("ERROR") => Some("error".to_string()),
                _ => None,
            };
            let at = at(collector, owned(id), owned(parent));
            collector.tools.push(ToolCall {
                at,
                name: owned(name),
                call_id: call_id(obj).or(output_id).and_then(|s| clean_id(&s)),
                status,
                result,
                source: "langfuse",
            });
        }
        _ if kind.eq_ignore_ascii_case("GENERATION") => {
            let input =
                input.unwrap_or_else(|| get(obj, "input", "input").map(messages::tool_messages));
            let input = match input {
                None => Err("input is not recorded on the GENERATION observation".to_string()),
                Some(read) => read.map_err(|e| format!("input: {e}")),
            };
            sink.context(
                entry,
                id.as_deref(),
                parent.as_deref(),
                name.as_deref(),
                "model call (GENERATION): read for the join",
            );
            let at = at(collector, owned(id), owned(parent));
            collector.models.push(ModelCall { at, input });
        }
        other => collector.context(
            sink,
            entry,
            id.as_deref(),
            parent.as_deref(),
            name.as_deref(),
            &context_reason(other),
        ),
    }
}

/// A tool result serialized as a LangChain `ToolMessage` (`{"content", "tool_call_id", ...}`).
fn is_tool_message(m: &Map<String, Value>) -> bool {
    m.contains_key("content")
        && (m.contains_key("tool_call_id") || m.get("type").and_then(Value::as_str) == Some("tool"))
}

/// The tool's call id from its `metadata`, or from `metadata.attributes` when the metadata
/// has none.
fn call_id<O: Object + ?Sized>(obj: &O) -> Option<String> {
    let metadata = obj.object("metadata")?;
    CALL_ID_KEYS
        .iter()
        .find_map(|k| metadata.text(k))
        .or_else(|| {
            let nested = metadata.get("attributes")?.as_object()?;
            CALL_ID_KEYS.iter().find_map(|k| as_text(nested.get(*k)))
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every type, in any case, is named upper-cased, as the format string writes it; the
    /// context types, in any case, get fixed texts.
    #[test]
    fn context_types_are_named_as_the_format_writes_them() {
        for kind in TYPES
            .iter()
            .copied()
            .chain(["span", "Agent", "TASK", "", "odd\u{7}type"])
        {
            let upper = kind.to_ascii_uppercase();
            let want = format!("Langfuse {upper} observation, not a tool call or generation");
            assert_eq!(context_reason(kind), want);
            let fixed = matches!(context_reason(kind), Cow::Borrowed(_));
            let context = TYPES.contains(&&*upper) && !["TOOL", "GENERATION"].contains(&&*upper);
            assert_eq!(fixed, context, "{kind}");
        }
    }

    /// A tool's call id is read from its metadata under any of the keys, then from
    /// `metadata.attributes`, the metadata's own winning; a number is written out, and
    /// metadata that is not an object has none. From a line's kept fields as from a tree.
    #[test]
    fn call_id_from_metadata_then_its_attributes() {
        let cases = [
            (r#"{"tool_call_id": "call_1"}"#, Some("call_1")),
            (r#"{"toolCallId": "call_2"}"#, Some("call_2")),
            (r#"{"call_id": 7}"#, Some("7")),
            (r#"{"gen_ai.tool.call.id": "call_4"}"#, Some("call_4")),
            (
                r#"{"attributes": {"gen_ai.tool.call.id": "call_5"}}"#,
                Some("call_5"),
            ),
            (
                r#"{"attributes": {"toolCallId": "call_6"}, "call_id": "call_7"}"#,
                Some("call_7"),
            ),
            (
                r#"{"tool_call_id": null, "call_id": "call_8"}"#,
                Some("call_8"),
            ),
            (r#"{"attributes": "call_9", "other": "call_10"}"#, None),
            (
                r#"{"attributes": {"attributes": {"call_id": "call_11"}}}"#,
                None,
            ),
            (r#""call_12""#, None),
            (r#"[{"call_id": "call_13"}]"#, None),
            ("{}", None),
        ];
        for (metadata, want) in cases {
            let line = format!(r#"{{"type": "TOOL", "traceId": "t", "metadata": {metadata}}}"#);
            let tree: Map<String, Value> = serde_json::from_str(&line).unwrap();
            let kept = FIELDS.line(&line).expect("read by the fast path").obj;
            assert_eq!(call_id(&tree).as_deref(), want, "{line}");
            assert_eq!(call_id(&kept).as_deref(), want, "{line}");
        }
    }

    /// Of the two spellings, the one read is the one the tree reader read before the fields
    /// were kept as text (`get(camel).or_else(|| get(snake))`, null as absent), from a tree
    /// and from a line's kept fields, for every mix of absent, null, string and number.
    #[test]
    fn camel_or_snake_as_the_tree_reads_it() {
        let values = [None, Some("null"), Some("\"a\""), Some("7")];
        for camel in values {
            for snake in values {
                let members: Vec<String> = [("traceId", camel), ("trace_id", snake)]
                    .iter()
                    .filter_map(|(k, v)| v.map(|v| format!("\"{k}\": {v}")))
                    .chain(["\"type\": \"TOOL\"".to_string()])
                    .collect();
                let line = format!("{{{}}}", members.join(", "));
                let tree: Map<String, Value> = serde_json::from_str(&line).unwrap();
                let want = tree
                    .get("traceId")
                    .or_else(|| tree.get("trace_id"))
                    .filter(|v| !v.is_null());
                let kept = FIELDS.line(&line).expect("read by the fast path").obj;
                assert_eq!(get(&tree, "traceId", "trace_id"), want, "{line}");
                assert_eq!(get(&kept, "traceId", "trace_id"), want, "{line}");
                assert_eq!(text(&tree, "traceId", "trace_id"), as_text(want), "{line}");
                assert_eq!(text(&kept, "traceId", "trace_id"), as_text(want), "{line}");
            }
        }
    }
}
