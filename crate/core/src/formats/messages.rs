//! The tool messages in a model call's input, whatever dialect the trace recorded it in.
//!
//! Traces store the input of a model call as the list of messages sent to the provider, in
//! the provider's or the convention's shape. The ones that carry tool results:
//!
//! - OpenTelemetry GenAI (`gen_ai.input.messages`): a part `{"type": "tool_call_response",
//!   "id": ..., "response": ...}` (some instrumentations write `result`);
//! - OpenAI Chat Completions (also OpenInference, Langfuse, Agents SDK generations):
//!   `{"role": "tool", "tool_call_id": ..., "content": ...}` (`"function"` for the old API);
//! - Anthropic Messages: a block `{"type": "tool_result", "tool_use_id": ..., "content": ...}`
//!   inside a user message;
//! - OpenAI Responses: an item `{"type": "function_call_output", "call_id": ..., "output": ...}`.
//!
//! Tool names come from the assistant turn that made the calls (`tool_calls`, `tool_call`
//! parts, `tool_use` blocks, `function_call` items), matched by id.

use std::collections::HashMap;

use serde_json::{Map, Value};

use super::content::{text_of, Content, OPENINFERENCE_REDACTED};
use super::model::{clean_id, Captured, ToolMessage};

/// Reads the tool messages of a model call's input. The input may be a list of messages, an
/// object holding one (`messages`, `input`), or a string of JSON for either. `Err` says why
/// it is not a message list.
pub(crate) fn tool_messages(input: &Value) -> Result<Vec<ToolMessage>, String> {
    let parsed;
    let input = match input {
        Value::String(text) => {
            parsed = serde_json::from_str::<Value>(text)
                .map_err(|_| "the input is a string that is not JSON".to_string())?;
            &parsed
        }
        other => other,
    };
    let list = match input {
        Value::Array(list) => list,
        Value::Object(obj) => match ["messages", "input", "contents"]
            .iter()
            .find_map(|k| obj.get(*k).and_then(Value::as_array))
        {
            Some(list) => list,
            None => return Err("the input holds no list of messages".to_string()),
        },
        _ => return Err("the input is not a list of messages".to_string()),
    };
    Ok(read_list(list))
}

/// Reads the tool messages of already-structured messages (OpenInference's flattened
/// attributes are rebuilt into this shape).
pub(crate) fn read_list(list: &[Value]) -> Vec<ToolMessage> {
    let mut names: HashMap<String, String> = HashMap::new();
    let mut out: Vec<(usize, ToolMessage)> = Vec::new();
    let mut last_assistant: Option<usize> = None;
    for (index, message) in list.iter().enumerate() {
        let Some(obj) = message.as_object() else {
            continue;
        };
        if is_assistant(obj) {
            last_assistant = Some(index);
            collect_call_names(obj, &mut names);
        }
        for tm in tool_results_of(obj) {
            out.push((index, tm));
        }
    }
    out.into_iter()
        .map(|(index, mut tm)| {
            tm.trailing = last_assistant.is_none_or(|a| index > a);
            if tm.name.is_none() {
                tm.name = tm.call_id.as_ref().and_then(|id| names.get(id).cloned());
            }
            tm
        })
        .collect()
}

fn str_field<'a>(obj: &'a Map<String, Value>, keys: &[&str]) -> Option<&'a str> {
    keys.iter()
        .find_map(|k| obj.get(*k).and_then(Value::as_str))
}

fn role(obj: &Map<String, Value>) -> Option<&str> {
    str_field(obj, &["role"])
}

/// A message written by the model: it may hold tool calls; tool results after it answer them.
fn is_assistant(obj: &Map<String, Value>) -> bool {
    matches!(role(obj), Some("assistant" | "model" | "ai"))
        || matches!(str_field(obj, &["type"]), Some("function_call" | "ai"))
}

fn collect_call_names(obj: &Map<String, Value>, names: &mut HashMap<String, String>) {
    let mut add = |id: Option<&str>, name: Option<&str>| {
        if let (Some(id), Some(name)) = (id.and_then(clean_id), name) {
            names.insert(id, name.to_string());
        }
    };
    // OpenAI chat: tool_calls[].{id, function.name}
    for call in obj
        .get("tool_calls")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let Some(call) = call.as_object() else {
            continue;
        };
        let name = call
            .get("function")
            .and_then(Value::as_object)
            .and_then(|f| str_field(f, &["name"]))
            .or_else(|| str_field(call, &["name"]));
        add(str_field(call, &["id"]), name);
    }
    // Responses: a function_call item.
    if str_field(obj, &["type"]) == Some("function_call") {
        add(
            str_field(obj, &["call_id", "id"]),
            str_field(obj, &["name"]),
        );
    }
    // GenAI parts and Anthropic blocks.
    for block in blocks(obj) {
        if let Some("tool_call" | "tool_use" | "function_call") = str_field(block, &["type"]) {
            add(
                str_field(block, &["id", "call_id"]),
                str_field(block, &["name"]),
            );
        }
    }
}

/// The parts (GenAI) or content blocks (Anthropic, OpenAI) of a message.
fn blocks(obj: &Map<String, Value>) -> impl Iterator<Item = &Map<String, Value>> {
    ["parts", "content"]
        .into_iter()
        .filter_map(|k| obj.get(k).and_then(Value::as_array))
        .flatten()
        .filter_map(Value::as_object)
}

fn tool_results_of(obj: &Map<String, Value>) -> Vec<ToolMessage> {
    let mut out = Vec::new();
    // Responses item.
    if str_field(obj, &["type"]) == Some("function_call_output") {
        out.push(message(
            str_field(obj, &["call_id", "id"]),
            None,
            obj.get("output"),
            "output",
        ));
        return out;
    }
    // GenAI parts / Anthropic blocks, in any message.
    for block in blocks(obj) {
        match str_field(block, &["type"]) {
            Some("tool_call_response") => {
                let (value, field) = match block.get("response") {
                    Some(v) => (Some(v), "response"),
                    None => (block.get("result"), "response"),
                };
                out.push(message(
                    str_field(block, &["id", "call_id"]),
                    str_field(block, &["name"]),
                    value,
                    field,
                ));
            }
            Some("tool_result") => out.push(message(
                str_field(block, &["tool_use_id", "id"]),
                str_field(block, &["name"]),
                block.get("content"),
                "content",
            )),
            _ => {}
        }
    }
    if !out.is_empty() {
        return out;
    }
    // OpenAI chat tool / function message (LangChain: type "tool").
    if matches!(role(obj), Some("tool" | "function")) || str_field(obj, &["type"]) == Some("tool") {
        out.push(message(
            str_field(obj, &["tool_call_id", "id"]),
            str_field(obj, &["name"]),
            obj.get("content"),
            "content",
        ));
    }
    out
}

fn message(
    id: Option<&str>,
    name: Option<&str>,
    value: Option<&Value>,
    field: &str,
) -> ToolMessage {
    ToolMessage {
        call_id: id.and_then(clean_id),
        name: name.map(str::to_string),
        content: captured(value, field),
        trailing: false,
    }
}

/// The content of a tool message as the model received it: a string as is; a list of text
/// blocks as their texts joined; anything else as compact JSON.
pub(crate) fn captured(value: Option<&Value>, field: &str) -> Captured {
    let value = match value {
        None | Some(Value::Null) => {
            return Captured::Missing(format!("the tool message has no {field}"));
        }
        Some(v) => v,
    };
    if let Value::Array(items) = value {
        let texts: Option<Vec<&str>> = items
            .iter()
            .map(|item| {
                let block = item.as_object()?;
                match str_field(block, &["type"]) {
                    Some("text" | "input_text" | "output_text") | None => {
                        str_field(block, &["text", "content"])
                    }
                    _ => None,
                }
            })
            .collect();
        if let Some(texts) = texts.filter(|t| !t.is_empty()) {
            return hidden_or(&texts.concat());
        }
    }
    match value {
        Value::String(s) => hidden_or(s),
        other => Captured::Text(Content::of_value(other)),
    }
}

/// A value that is exactly OpenInference's placeholder was hidden by the tracer: what the
/// model received is unknown, so it is not captured (never a clip of ours to report).
pub(crate) fn hidden_or(text: &str) -> Captured {
    if text == OPENINFERENCE_REDACTED {
        Captured::Missing(format!(
            "hidden by the tracer ({OPENINFERENCE_REDACTED}: OpenInference hide-inputs/outputs)"
        ))
    } else {
        Captured::Text(Content::of_text(text))
    }
}

/// The text of a value for a tool result (strings as is, other values as compact JSON).
pub(crate) fn result_text(value: &Value) -> Captured {
    match value {
        Value::String(s) => hidden_or(s),
        other => hidden_or(&text_of(other)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn text(c: &Captured) -> u64 {
        match c {
            Captured::Text(c) => c.bytes,
            Captured::Missing(why) => panic!("missing: {why}"),
        }
    }

    #[test]
    fn genai_parts() {
        let input = json!([
            {"role": "user", "parts": [{"type": "text", "content": "weather?"}]},
            {"role": "assistant", "parts": [{"type": "tool_call", "id": "call_1", "name": "get_weather", "arguments": {"city": "Paris"}}]},
            {"role": "tool", "parts": [{"type": "tool_call_response", "id": " call_1 ", "response": "rainy, 57F"}]}
        ]);
        let ms = tool_messages(&json!(input.to_string())).unwrap();
        assert_eq!(ms.len(), 1);
        assert_eq!(ms[0].call_id.as_deref(), Some("call_1"));
        assert_eq!(ms[0].name.as_deref(), Some("get_weather"));
        assert!(ms[0].trailing);
        assert_eq!(text(&ms[0].content), 10);
        // `result` instead of `response`.
        let ms = read_list(&[
            json!({"role": "tool", "parts": [{"type": "tool_call_response", "id": "c", "result": {"t": 1}}]}),
        ]);
        assert_eq!(text(&ms[0].content), 7);
    }

    #[test]
    fn openai_chat_with_history() {
        let ms = tool_messages(&json!({"messages": [
            {"role": "assistant", "tool_calls": [{"id": "a", "type": "function", "function": {"name": "ls", "arguments": "{}"}}]},
            {"role": "tool", "tool_call_id": "a", "content": "old"},
            {"role": "assistant", "tool_calls": [{"id": "b", "function": {"name": "cat"}}, {"id": "c", "function": {"name": "cat"}}]},
            {"role": "tool", "tool_call_id": "b", "content": [{"type": "text", "text": "x"}, {"type": "text", "text": "yz"}]},
            {"role": "tool", "tool_call_id": "c", "content": "__REDACTED__"},
            {"role": "user", "content": "go on"}
        ]}))
        .unwrap();
        let summary: Vec<_> = ms
            .iter()
            .map(|m| (m.call_id.as_deref(), m.name.as_deref(), m.trailing))
            .collect();
        assert_eq!(
            summary,
            [
                (Some("a"), Some("ls"), false),
                (Some("b"), Some("cat"), true),
                (Some("c"), Some("cat"), true)
            ]
        );
        assert_eq!(text(&ms[1].content), 3);
        assert!(matches!(&ms[2].content, Captured::Missing(w) if w.contains("hidden")));
    }

    #[test]
    fn anthropic_and_responses() {
        let ms = read_list(&[
            json!({"role": "assistant", "content": [{"type": "tool_use", "id": "tu1", "name": "grep", "input": {}}]}),
            json!({"role": "user", "content": [{"type": "tool_result", "tool_use_id": "tu1", "content": "found"}]}),
        ]);
        assert_eq!(ms[0].name.as_deref(), Some("grep"));
        assert_eq!(text(&ms[0].content), 5);
        let ms = tool_messages(&json!({"input": [
            {"type": "function_call", "call_id": "fc1", "name": "search", "arguments": "{}"},
            {"type": "function_call_output", "call_id": "fc1", "output": "hits"}
        ]}))
        .unwrap();
        assert_eq!(
            (ms[0].name.as_deref(), ms[0].trailing),
            (Some("search"), true)
        );
    }

    #[test]
    fn not_a_list() {
        assert!(tool_messages(&json!("plain text")).is_err());
        assert!(tool_messages(&json!({"model": "x"})).is_err());
        assert!(tool_messages(&json!(3)).is_err());
        assert!(matches!(
            read_list(&[json!({"role": "tool", "tool_call_id": "a"})])[0].content,
            Captured::Missing(_)
        ));
    }
}
