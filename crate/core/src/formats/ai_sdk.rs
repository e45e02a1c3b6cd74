//! The Vercel AI SDK's telemetry spans (`experimental_telemetry: { isEnabled: true }`), the
//! tracing of most TypeScript agents (and of Mastra, which runs on it).
//!
//! ```text
//! ai.generateText                       the call: ai.prompt is the caller's prompt
//!   ai.generateText.doGenerate          one model call per step: ai.prompt.messages
//!   ai.toolCall                         ai.toolCall.name, ai.toolCall.id, ai.toolCall.result
//!   ai.generateText.doGenerate          the next step, whose messages carry the results
//! ```
//!
//! The kind of span is its `ai.operationId` (also `streamText` / `doStream`, and the object
//! variants). `ai.toolCall.result` is `JSON.stringify` of what the tool returned, so a string
//! result is a JSON string literal, read back to the string; objects stay their JSON text.
//! `ai.prompt.messages` is the provider prompt of that step, whose tool messages hold
//! `tool-result` parts (`output: {type, value}`; read in [`super::messages`]). With
//! `recordInputs: false` or `recordOutputs: false` the attributes are absent: not captured.

use serde_json::Value;

use super::messages;
use super::model::{clean_id, Captured};
use super::otel::{AttrValue, OtelSpan, Read};

pub(crate) const OPERATION: &str = "ai.operationId";

// Never inlined: see `semconv::interpret` (V8 optimizes a smaller function sooner).
#[inline(never)]
pub(crate) fn read(span: &OtelSpan<'_>) -> Read {
    let op = span.attr_str(OPERATION).unwrap_or_default();
    if op == "ai.toolCall" {
        return Read::Tool {
            name: span.attr_str("ai.toolCall.name").map(str::to_string),
            call_id: span
                .attr_value("ai.toolCall.id")
                .and_then(AttrValue::as_text)
                .and_then(|s| clean_id(&s)),
            result: match span.attr("ai.toolCall.result") {
                Some(Value::String(text)) => match serde_json::from_str::<Value>(text) {
                    // JSON.stringify of a string: the string itself is what the tool returned.
                    Ok(Value::String(s)) => messages::result_text(&Value::String(s)),
                    _ => messages::result_text(&Value::String(text.clone())),
                },
                Some(other) => messages::result_text(other),
                None => Captured::Missing(
                    "ai.toolCall.result is not recorded (experimental_telemetry recordOutputs: \
                     false)"
                        .to_string(),
                ),
            },
        };
    }
    let step = [".doGenerate", ".doStream"]
        .iter()
        .any(|suffix| op.ends_with(suffix));
    if step {
        return Read::Model(match span.attr_value("ai.prompt.messages") {
            Some(v) => {
                messages::tool_messages_of(v).map_err(|e| format!("ai.prompt.messages: {e}"))
            }
            None => Err(
                "ai.prompt.messages is not recorded (experimental_telemetry recordInputs: false)"
                    .to_string(),
            ),
        });
    }
    Read::Context(
        format!(
            "AI SDK {op} span, not a tool or model call (its doGenerate / doStream children are)"
        )
        .into(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn span(attrs: Value) -> OtelSpan<'static> {
        let attrs = attrs
            .as_object()
            .unwrap()
            .iter()
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        OtelSpan {
            attrs,
            ..OtelSpan::default()
        }
    }

    #[test]
    fn tool_call_results_are_unstringified() {
        let s = span(
            json!({"ai.operationId": "ai.toolCall", "ai.toolCall.name": "ls",
            "ai.toolCall.id": "c1", "ai.toolCall.result": "\"a.txt\\n\""}),
        );
        match read(&s) {
            Read::Tool {
                name,
                call_id,
                result: Captured::Text(c),
            } => {
                assert_eq!(
                    (name.as_deref(), call_id.as_deref(), c.bytes),
                    (Some("ls"), Some("c1"), 6)
                );
            }
            _ => panic!("not a tool"),
        }
        let s = span(json!({"ai.operationId": "ai.toolCall", "ai.toolCall.result": "{\"a\":1}"}));
        assert!(matches!(read(&s), Read::Tool { result: Captured::Text(c), .. } if c.bytes == 7));
        let s = span(json!({"ai.operationId": "ai.toolCall", "ai.toolCall.name": "ls"}));
        assert!(
            matches!(read(&s), Read::Tool { result: Captured::Missing(w), .. } if w.contains("recordOutputs"))
        );
    }

    #[test]
    fn steps_are_model_calls() {
        let messages = json!([{"role": "tool", "content": [{"type": "tool-result", "toolCallId": "c1",
            "toolName": "ls", "output": {"type": "text", "value": "a.txt"}}]}]);
        let s = span(
            json!({"ai.operationId": "ai.streamText.doStream", "ai.prompt.messages": messages.to_string()}),
        );
        match read(&s) {
            Read::Model(Ok(ms)) => assert_eq!(ms[0].call_id.as_deref(), Some("c1")),
            _ => panic!("not a model call"),
        }
        let s = span(json!({"ai.operationId": "ai.generateText.doGenerate"}));
        assert!(matches!(read(&s), Read::Model(Err(w)) if w.contains("recordInputs")));
        let s = span(json!({"ai.operationId": "ai.generateText", "ai.prompt": "{}"}));
        assert!(matches!(read(&s), Read::Context(_)));
    }
}
