//! OpenTelemetry GenAI semantic conventions on OTLP spans.
//!
//! - A tool call is an `execute_tool` span (`gen_ai.operation.name`): `gen_ai.tool.name`,
//!   `gen_ai.tool.call.id`, and the result in `gen_ai.tool.call.result` (opt-in: absent unless
//!   the instrumentation captures content).
//! - A model call is an inference span (`chat`, `text_completion`, `generate_content`, or no
//!   operation but recorded input). Its input is, in order of preference:
//!   `gen_ai.input.messages` (opt-in; a JSON string or a structured value) whose parts of
//!   type `tool_call_response` carry `id` and `response`; the older per-message span events
//!   (`gen_ai.tool.message` with `id` and `content`, v1.36 and before); or OpenLLMetry's
//!   flattened `gen_ai.prompt.N.role` / `.content` / `.tool_call_id`.
//! - Other GenAI operations (`invoke_agent`, `create_agent`, `embeddings` ...) are context.

use serde_json::{json, Map, Value};

use super::messages;
use super::model::{clean_id, Captured};
use super::otel::{as_text, indexed, OtelSpan, Read};

const NOT_RECORDED: &str = "is not recorded (an opt-in attribute: turn on content capture in the \
     instrumentation, e.g. OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true)";

pub(crate) fn read(span: &OtelSpan) -> Option<Read> {
    let op = span.attr_str("gen_ai.operation.name");
    if op == Some("execute_tool") {
        let name = span
            .attr_str("gen_ai.tool.name")
            .map(str::to_string)
            .or_else(|| {
                span.name
                    .as_deref()
                    .and_then(|n| n.strip_prefix("execute_tool "))
                    .map(str::to_string)
            });
        // OpenLLMetry records LangChain's ToolMessage serialised, call id inside.
        let (result, wrapped_id) = match span.attr("gen_ai.tool.call.result") {
            Some(v) => messages::tool_result(v),
            None => (
                Captured::Missing(format!("gen_ai.tool.call.result {NOT_RECORDED}")),
                None,
            ),
        };
        return Some(Read::Tool {
            name,
            call_id: as_text(span.attr("gen_ai.tool.call.id"))
                .and_then(|s| clean_id(&s))
                .or(wrapped_id),
            result,
        });
    }
    let inference = matches!(op, Some("chat" | "text_completion" | "generate_content"));
    if op.is_some() && !inference {
        return Some(Read::Context(format!(
            "GenAI {} span, not a tool or model call",
            op.unwrap_or_default()
        )));
    }
    if let Some(value) = span.attr("gen_ai.input.messages") {
        return Some(Read::Model(
            messages::tool_messages(value).map_err(|e| format!("gen_ai.input.messages: {e}")),
        ));
    }
    if let Some(list) = from_events(span) {
        return Some(Read::Model(Ok(messages::read_list(&list))));
    }
    let prompt = indexed(&span.attrs, "gen_ai.prompt.");
    if !prompt.is_empty() {
        return Some(Read::Model(Ok(messages::read_list(&from_prompt(prompt)))));
    }
    if inference || span.attrs.keys().any(|k| k.starts_with("gen_ai.")) {
        return Some(Read::Model(Err(format!(
            "gen_ai.input.messages {NOT_RECORDED}"
        ))));
    }
    None
}

/// The older convention: one span event per input message (`gen_ai.system.message`,
/// `gen_ai.user.message`, `gen_ai.assistant.message`, `gen_ai.tool.message`). Returns the
/// messages in OpenAI chat shape, or `None` when the span has no such events.
fn from_events(span: &OtelSpan) -> Option<Vec<Value>> {
    let mut list = Vec::new();
    for event in &span.events {
        let role = match event.name.as_str() {
            "gen_ai.system.message" => "system",
            "gen_ai.user.message" => "user",
            "gen_ai.assistant.message" => "assistant",
            "gen_ai.tool.message" => "tool",
            _ => continue,
        };
        // The event body travels as attributes on span events: either its fields directly
        // or a JSON string of the body (`gen_ai.event.content`, `body`).
        let mut body = Map::new();
        for key in ["gen_ai.event.content", "body"] {
            if let Some(Value::Object(obj)) = event.attrs.get(key).map(|v| match v {
                Value::String(s) => serde_json::from_str(s).unwrap_or(Value::Null),
                other => other.clone(),
            }) {
                body.extend(obj);
            }
        }
        for (key, value) in &event.attrs {
            body.entry(key.clone()).or_insert_with(|| value.clone());
        }
        let mut message = json!({"role": role});
        if let Some(content) = body.get("content") {
            message["content"] = content.clone();
        }
        let id = ["id", "gen_ai.tool.call.id", "tool_call_id"]
            .iter()
            .find_map(|k| as_text(body.get(*k)));
        if let Some(id) = id {
            message["tool_call_id"] = Value::String(id);
        }
        if let Some(calls) = body.get("tool_calls") {
            message["tool_calls"] = calls.clone();
        }
        list.push(message);
    }
    (!list.is_empty()).then_some(list)
}

/// OpenLLMetry's flattened prompt: `gen_ai.prompt.N.role`, `.content`, `.tool_call_id`, and
/// the assistant's `.tool_calls.K.id` / `.tool_calls.K.name`.
fn from_prompt(groups: Vec<std::collections::BTreeMap<String, Value>>) -> Vec<Value> {
    groups
        .into_iter()
        .map(|g| {
            let mut message = json!({});
            for (field, key) in [
                ("role", "role"),
                ("content", "content"),
                ("tool_call_id", "tool_call_id"),
                ("name", "name"),
            ] {
                if let Some(v) = g.get(key) {
                    message[field] = v.clone();
                }
            }
            let calls: Vec<Value> = indexed(&g, "tool_calls.")
                .into_iter()
                .map(|c| json!({"id": c.get("id"), "function": {"name": c.get("name")}}))
                .collect();
            if !calls.is_empty() {
                message["tool_calls"] = Value::Array(calls);
            }
            message
        })
        .collect()
}
