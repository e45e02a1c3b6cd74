//! OpenInference semantic conventions (Arize Phoenix) on OTLP spans.
//!
//! - A tool call is a span with `openinference.span.kind = TOOL`: `tool.name`, the result in
//!   `output.value`, and the model's call id in `tool_call.id` or `tool.id` (often absent:
//!   then the join falls back to order, and the row says so).
//! - A model call is an `LLM` span; its input is the flattened list
//!   `llm.input_messages.N.message.{role, content, tool_call_id, name}` (content may instead be
//!   `message.contents.M.message_content.text`; the assistant's calls are
//!   `message.tool_calls.K.tool_call.{id, function.name}`). When the flattened messages are
//!   absent, a JSON `input.value` holding `messages` is read instead.
//! - The tracer's hide options replace values with `__REDACTED__`: such a value was not
//!   captured, so the row is `incomplete` and says why.
//! - Every other kind (`CHAIN`, `AGENT`, `RETRIEVER` ...) is context.

use std::borrow::Cow;

use serde_json::{json, Value};

use super::messages;
use super::model::{clean_id, Captured, ToolMessage};
use super::otel::{indexed, AttrValue, Group, OtelSpan, Read};

pub(crate) const SPAN_KIND: &str = "openinference.span.kind";

// Never inlined: see `semconv::interpret` (V8 optimizes a smaller function sooner).
#[inline(never)]
pub(crate) fn read(span: &OtelSpan<'_>) -> Read {
    let kind = span
        .attr_str(SPAN_KIND)
        .unwrap_or_default()
        .to_ascii_uppercase();
    match kind.as_str() {
        "TOOL" => {
            // LangChain's ToolMessage arrives serialised: its content is the result, and it
            // carries the call id the span itself lacks.
            let (result, wrapped_id) = match span.attr("output.value") {
                Some(v) => messages::tool_result(v),
                None => (
                    Captured::Missing(
                        "output.value is not recorded (OPENINFERENCE_HIDE_OUTPUTS, or the \
                         instrumentation did not capture it)"
                            .to_string(),
                    ),
                    None,
                ),
            };
            Read::Tool {
                name: span.attr_str("tool.name").map(str::to_string),
                call_id: (span.attr_value("tool_call.id").and_then(AttrValue::as_text))
                    .or_else(|| span.attr_value("tool.id").and_then(AttrValue::as_text))
                    .and_then(|s| clean_id(&s))
                    .or(wrapped_id),
                result,
            }
        }
        "LLM" => Read::Model(input_messages(span)),
        other => Read::Context(other_kind(other)),
    }
}

/// Why a span of another kind is skipped: the convention's kinds as fixed texts, not
/// formatted per span (a LangChain run is mostly CHAIN spans); any other kind is named as it
/// came.
fn other_kind(kind: &str) -> Cow<'static, str> {
    fixed_reason!(kind, "OpenInference ", " span, not a tool or model call",
        "CHAIN" "AGENT" "RETRIEVER" "EMBEDDING" "RERANKER" "GUARDRAIL" "EVALUATOR" "PROMPT" "UNKNOWN")
}

fn input_messages(span: &OtelSpan<'_>) -> Result<Vec<ToolMessage>, String> {
    const PREFIX: &str = "llm.input_messages.";
    let groups = indexed(span.attrs.prefixed(PREFIX), PREFIX);
    if !groups.is_empty() {
        let list: Vec<Value> = groups.iter().map(message).collect();
        return Ok(messages::read_list(&list));
    }
    if let Some(value) = span.attr("input.value") {
        if let Ok(found) = messages::tool_messages(value) {
            return Ok(found);
        }
    }
    Err(
        "llm.input_messages is not recorded (OPENINFERENCE_HIDE_INPUTS or \
         OPENINFERENCE_HIDE_INPUT_MESSAGES, or the instrumentation did not capture it)"
            .to_string(),
    )
}

/// One flattened message as an OpenAI chat message.
fn message(group: &Group<'_, '_>) -> Value {
    let mut m = json!({});
    for (field, key) in [
        ("role", "message.role"),
        ("content", "message.content"),
        ("tool_call_id", "message.tool_call_id"),
        ("name", "message.name"),
    ] {
        if let Some(v) = group.get(key).filter(|v| !v.is_null()) {
            m[field] = v.clone();
        }
    }
    if m.get("content").is_none() {
        let texts: Vec<Value> = indexed(group.iter(), "message.contents.")
            .into_iter()
            .filter(|c| {
                matches!(
                    c.get("message_content.type").and_then(Value::as_str),
                    None | Some("text")
                )
            })
            .filter_map(|c| c.get("message_content.text").cloned())
            .map(|t| json!({"type": "text", "text": t}))
            .collect();
        if !texts.is_empty() {
            m["content"] = Value::Array(texts);
        }
    }
    let calls: Vec<Value> = indexed(group.iter(), "message.tool_calls.")
        .into_iter()
        .map(|c| {
            json!({
                "id": c.get("tool_call.id"),
                "function": {"name": c.get("tool_call.function.name")}
            })
        })
        .collect();
    if !calls.is_empty() {
        m["tool_calls"] = Value::Array(calls);
    }
    m
}
