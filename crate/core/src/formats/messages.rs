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
//! - OpenAI Responses: an item `{"type": "function_call_output", "call_id": ..., "output": ...}`;
//! - Vercel AI SDK (`ai.prompt.messages`): a part `{"type": "tool-result", "toolCallId": ...,
//!   "toolName": ..., "output": {"type": "text" | "json" | ..., "value": ...}}` (`result` before
//!   AI SDK 5) inside a `tool` message;
//! - LangChain's serialised messages, wherever a message can appear: the `lc` constructor form
//!   `{"lc": 1, "type": "constructor", "id": [..., "ToolMessage"], "kwargs": {...}}` (what
//!   `dumpd` writes, and OpenLLMetry records) and `message_to_dict`'s `{"type": "tool",
//!   "data": {...}}` (what OpenInference records) are read as the plain message they hold.
//!
//! Tool names come from the assistant turn that made the calls (`tool_calls`, `tool_call`
//! parts, `tool_use` blocks, `function_call` items), matched by id.

use serde_json::{Map, Value};

use super::content::{text_of, Content, OPENINFERENCE_REDACTED};
use super::model::{clean_id, Captured, ToolMessage};
use super::otel::AttrValue;

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
    // LangChain's chat model callbacks batch prompts: `{"messages": [[...]]}`, one list per
    // prompt; a model call has one.
    if let [Value::Array(inner)] = list.as_slice() {
        return Ok(read_list(inner));
    }
    Ok(read_list(list))
}

/// [`tool_messages`] of an attribute: a string holding the input's JSON is read straight
/// from its text ([`super::message_list::read_string`]) where it can be, without a tree of
/// the conversation; anything else, and what that reader leaves, as a tree.
pub(crate) fn tool_messages_of(value: &AttrValue<'_>) -> Result<Vec<ToolMessage>, String> {
    if let Some(read) = value.as_str().and_then(super::message_list::read_string) {
        return read;
    }
    tool_messages(value.value())
}

/// Reads the tool messages of already-structured messages (OpenInference's flattened
/// attributes are rebuilt into this shape).
pub(crate) fn read_list(list: &[Value]) -> Vec<ToolMessage> {
    let mut reading = Reading::new();
    for message in list {
        let plain = langchain_message(message);
        match plain.as_ref().unwrap_or(message).as_object() {
            Some(obj) => reading.message(obj),
            None => reading.skip(),
        }
    }
    reading.finish()
}

/// The fields of one chat message that reading its tool results looks at. A JSON object is
/// one; a convention that keeps a message's fields elsewhere (GenAI's span events) gives
/// them through this, rather than building an object of them to be read back.
pub(crate) trait Message {
    /// The value of a field (`content`, `tool_calls`, `parts`, `output` ...).
    fn field(&self, key: &str) -> Option<&Value>;
    /// A field that is a string (`role`, `type`, `tool_call_id`, `name` ...).
    fn text(&self, key: &str) -> Option<&str> {
        self.field(key).and_then(Value::as_str)
    }
    /// The field `key` (`content`, `output`) as the content of a tool message ([`captured`]).
    /// A message read from JSON text keeps a string field as the text it is, not as a value.
    fn captured(&self, key: &str, what: &str) -> Captured {
        captured(self.field(key), what)
    }
    /// The `(id, name)` of each call in `tool_calls` (OpenAI chat: `[{"id", "function":
    /// {"name"}}]`, or a `name` beside the id), in order.
    fn tool_calls(&self, add: &mut dyn FnMut(Option<&str>, Option<&str>)) {
        for call in self
            .field("tool_calls")
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
    }
}

impl Message for Map<String, Value> {
    fn field(&self, key: &str) -> Option<&Value> {
        self.get(key)
    }
}

/// The tool messages of an input read so far, one message at a time and in input order.
/// Cloned to be kept for a later input that re-lists this one ([`super::relist`]).
#[derive(Clone)]
pub(crate) struct Reading {
    names: CallNames,
    out: Vec<(usize, ToolMessage)>,
    last_assistant: Option<usize>,
    index: usize,
}

/// Up to this many calls in an input, a tool message's name is found by scanning them (see
/// [`CallNames::find`]); sorting them for bisection first cost more than it spared there
/// (most inputs name a few calls): a warm pass over 5 MB of Agents SDK export took 2.4%
/// fewer instructions scanning, Langfuse 1.8% (`scripts/count-instructions`). At 16 calls
/// a scan and a sort with bisections compare about as often; past it the sort wins.
const SCAN_CALLS: usize = 16;

/// The tool names of the assistant calls of an input, by call id, the last of an id winning.
/// The ids and names are kept end to end in one string, and looked up by bisection once the
/// input is read: an input re-lists every earlier call of its run, and a map of owned strings
/// cost two allocations and a SipHash per call.
#[derive(Default, Clone)]
struct CallNames {
    text: String,
    /// Per call, where its id ends and its name ends in `text` (each starts where the one
    /// before ends).
    ends: Vec<(u32, u32)>,
}

impl CallNames {
    fn add(&mut self, id: &str, name: &str) {
        self.text.push_str(id);
        let id_end = self.text.len() as u32;
        self.text.push_str(name);
        self.ends.push((id_end, self.text.len() as u32));
    }

    /// The `(id, name)` of call `i`.
    fn get(&self, i: usize) -> (&str, &str) {
        let start = if i == 0 {
            0
        } else {
            self.ends[i - 1].1 as usize
        };
        let (id_end, end) = self.ends[i];
        (
            &self.text[start..id_end as usize],
            &self.text[id_end as usize..end as usize],
        )
    }

    /// Call indexes sorted by id, stably: the last of equal ids is the last added. Ids are
    /// compared a word at a time ([`crate::bytes::cmp`], `str` order): `str::cmp` is a
    /// byte-by-byte `memcmp` in wasm32, and every tool message without a name is looked up.
    fn by_id(&self) -> Vec<usize> {
        let mut order: Vec<usize> = (0..self.ends.len()).collect();
        crate::sort::sort_by(&mut order, |&a, &b| {
            crate::bytes::cmp(self.get(a).0.as_bytes(), self.get(b).0.as_bytes())
        });
        order
    }

    /// The name of the last call added with `id`: found in `order` (from [`by_id`](Self::by_id))
    /// by bisection, or, with no order, by scanning the calls from the last.
    fn find(&self, order: &[usize], id: &str) -> Option<&str> {
        if order.is_empty() {
            return (0..self.ends.len())
                .rev()
                .map(|i| self.get(i))
                .find(|(found, _)| crate::bytes::eq(found.as_bytes(), id.as_bytes()))
                .map(|(_, name)| name);
        }
        let after = order.partition_point(|&i| {
            crate::bytes::cmp(self.get(i).0.as_bytes(), id.as_bytes()).is_le()
        });
        let i = *order.get(after.checked_sub(1)?)?;
        let (found, name) = self.get(i);
        crate::bytes::eq(found.as_bytes(), id.as_bytes()).then_some(name)
    }
}

impl Reading {
    /// A model input starts: its tool messages are measured anew only when they were not
    /// measured since the previous input began ([`super::memo`]).
    pub fn new() -> Reading {
        super::memo::next_input();
        Reading {
            names: CallNames::default(),
            out: Vec::new(),
            last_assistant: None,
            index: 0,
        }
    }

    /// A model input starts with the entries another input's reading read: that reading
    /// goes on (see [`super::relist`]).
    pub fn resume(reading: Reading) -> Reading {
        super::memo::next_input();
        reading
    }

    /// The tool messages read so far.
    pub fn tool_messages(&self) -> usize {
        self.out.len()
    }

    /// Reads the next message of the input.
    pub fn message<M: Message + ?Sized>(&mut self, m: &M) {
        let index = self.index;
        self.index += 1;
        if is_assistant(m) {
            self.last_assistant = Some(index);
            collect_call_names(m, &mut self.names);
        }
        for tm in tool_results_of(m) {
            self.out.push((index, tm));
        }
    }

    /// Counts an entry of the input that is not a message (it holds no tool result).
    pub fn skip(&mut self) {
        self.index += 1;
    }

    /// The tool messages, each marked trailing when it comes after the last assistant
    /// message, and named from the assistant call with its id when it has no name.
    pub fn finish(self) -> Vec<ToolMessage> {
        let Reading {
            names,
            out,
            last_assistant,
            ..
        } = self;
        let unnamed = out
            .iter()
            .any(|(_, tm)| tm.name.is_none() && tm.call_id.is_some());
        // Sorted for bisection only when there are many calls: an input names a few most
        // often, and scanning them costs less than sorting them first.
        let order = if unnamed && names.ends.len() > SCAN_CALLS {
            names.by_id()
        } else {
            Vec::new()
        };
        // Exactly as long as the list, not collected in place into `out`'s allocation: that
        // kept `out`'s spare room (four entries at least) with every model call until the
        // check ends, twice the memory the messages take in an OTLP export.
        let mut messages = Vec::with_capacity(out.len());
        messages.extend(out.into_iter().map(|(index, mut tm)| {
            tm.trailing = last_assistant.is_none_or(|a| index > a);
            if tm.name.is_none() {
                let id = tm.call_id.as_deref();
                tm.name = id.and_then(|id| names.find(&order, id)).map(str::to_string);
            }
            tm
        }));
        messages
    }
}

fn str_field<'a, M: Message + ?Sized>(obj: &'a M, keys: &[&str]) -> Option<&'a str> {
    keys.iter().find_map(|k| obj.text(k))
}

fn role<M: Message + ?Sized>(obj: &M) -> Option<&str> {
    obj.text("role")
}

/// A message written by the model: it may hold tool calls; tool results after it answer them.
fn is_assistant<M: Message + ?Sized>(obj: &M) -> bool {
    matches!(role(obj), Some("assistant" | "model" | "ai"))
        || matches!(obj.text("type"), Some("function_call" | "ai"))
}

fn collect_call_names<M: Message + ?Sized>(obj: &M, names: &mut CallNames) {
    let mut add = |id: Option<&str>, name: Option<&str>| {
        // An id as `clean_id` makes it, without its copy.
        if let (Some(id), Some(name)) = (id.map(str::trim).filter(|id| !id.is_empty()), name) {
            names.add(id, name);
        }
    };
    // OpenAI chat: tool_calls[].{id, function.name}
    obj.tool_calls(&mut add);
    // Responses: a function_call item.
    if obj.text("type") == Some("function_call") {
        add(
            str_field(obj, &["call_id", "id"]),
            str_field(obj, &["name"]),
        );
    }
    // GenAI parts and Anthropic blocks.
    for block in blocks(obj) {
        if let Some("tool_call" | "tool_use" | "function_call" | "tool-call") =
            str_field(block, &["type"])
        {
            add(
                str_field(block, &["id", "call_id", "toolCallId"]),
                str_field(block, &["name", "toolName"]),
            );
        }
    }
}

/// The parts (GenAI) or content blocks (Anthropic, OpenAI) of a message.
fn blocks<M: Message + ?Sized>(obj: &M) -> impl Iterator<Item = &Map<String, Value>> {
    ["parts", "content"]
        .into_iter()
        .filter_map(|k| obj.field(k).and_then(Value::as_array))
        .flatten()
        .filter_map(Value::as_object)
}

fn tool_results_of<M: Message + ?Sized>(obj: &M) -> Vec<ToolMessage> {
    let mut out = Vec::new();
    // Responses item.
    if obj.text("type") == Some("function_call_output") {
        out.push(ToolMessage {
            call_id: str_field(obj, &["call_id", "id"]).and_then(clean_id),
            name: None,
            content: obj.captured("output", "output"),
            trailing: false,
        });
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
            Some("tool-result") => {
                // AI SDK 5+: `output: {type, value}`; before: `result`.
                let (value, field) = match block.get("output") {
                    Some(Value::Object(o)) if o.contains_key("value") => {
                        (o.get("value"), "output.value")
                    }
                    Some(other) => (Some(other), "output"),
                    None => (block.get("result"), "result"),
                };
                out.push(message(
                    str_field(block, &["toolCallId", "id"]),
                    str_field(block, &["toolName", "name"]),
                    value,
                    field,
                ));
            }
            _ => {}
        }
    }
    if !out.is_empty() {
        return out;
    }
    // OpenAI chat tool / function message (LangChain: type "tool").
    if matches!(role(obj), Some("tool" | "function")) || obj.text("type") == Some("tool") {
        out.push(ToolMessage {
            call_id: str_field(obj, &["tool_call_id", "id"]).and_then(clean_id),
            name: str_field(obj, &["name"]).map(str::to_string),
            content: obj.captured("content", "content"),
            trailing: false,
        });
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

/// The plain chat message a LangChain serialised message holds, or `None` when `value` is not
/// one. Both of LangChain's layouts: the `lc` constructor form (`dumpd`: `{"lc": 1, "type":
/// "constructor", "id": ["langchain", "schema", "messages", "ToolMessage"], "kwargs": {...}}`)
/// and `message_to_dict`'s `{"type": "tool", "data": {...}}`. The message's class or type
/// gives the role; `tool_call_id`, `name` and `content` are kept; an AI message's
/// `tool_calls` (`[{"name", "args", "id"}]`) become `[{"id", "function": {"name"}}]`.
pub(crate) fn langchain_message(value: &Value) -> Option<Value> {
    let obj = value.as_object()?;
    let (kind, fields) =
        if obj.get("lc").is_some() && str_field(obj, &["type"]) == Some("constructor") {
            let class = obj.get("id")?.as_array()?.last()?.as_str()?;
            let kind = match class.strip_suffix("Chunk").unwrap_or(class) {
                "ToolMessage" => "tool",
                "AIMessage" => "ai",
                "HumanMessage" => "human",
                "SystemMessage" => "system",
                "FunctionMessage" => "function",
                "ChatMessage" => "chat",
                _ => return None,
            };
            (kind, obj.get("kwargs")?.as_object()?)
        } else {
            let kind = str_field(obj, &["type"])?;
            let data = obj.get("data")?.as_object()?;
            if obj.len() != 2 || !data.contains_key("content") {
                return None;
            }
            (kind, data)
        };
    let role = match kind {
        "tool" => "tool",
        "ai" | "AIMessageChunk" => "assistant",
        "human" => "user",
        "system" => "system",
        "function" => "function",
        "chat" => str_field(fields, &["role"]).unwrap_or("user"),
        _ => return None,
    };
    let mut m = Map::new();
    m.insert("role".into(), Value::String(role.into()));
    for key in ["content", "tool_call_id", "name"] {
        if let Some(v) = fields.get(key).filter(|v| !v.is_null()) {
            m.insert(key.into(), v.clone());
        }
    }
    let calls: Vec<Value> = fields
        .get("tool_calls")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_object)
        .map(|c| {
            let name = c
                .get("function")
                .and_then(Value::as_object)
                .and_then(|f| f.get("name"))
                .or_else(|| c.get("name"));
            serde_json::json!({"id": c.get("id"), "function": {"name": name}})
        })
        .collect();
    if !calls.is_empty() {
        m.insert("tool_calls".into(), Value::Array(calls));
    }
    Some(Value::Object(m))
}

/// [`tool_result`] of a string attribute read without a `Value` of it: a text that cannot
/// be a serialised message (no `{` first) is the result itself, as `tool_result` finds
/// too; only one that may be is made a value (a tool result can be megabytes, and a copy
/// per result showed in the profile of reading OTLP).
pub(crate) fn tool_result_text(text: &str) -> (Captured, Option<String>) {
    if text.trim_start().starts_with('{') {
        tool_result(&Value::String(text.to_string()))
    } else {
        (hidden_or(text), None)
    }
}

/// A tool span's result, unwrapped from what a framework wrapped it in, with the call id the
/// wrapper carries. LangChain's tools return a ToolMessage, which tracers record serialised:
/// OpenInference as `{"type": "tool", "data": {"content": ..., "tool_call_id": ...}}`,
/// OpenLLMetry as `{"output": <lc constructor ToolMessage>, "kwargs": {...}}`. Measuring the
/// wrapper would inflate every observed size, so the content is what the tool returned.
/// Anything else is the result as it is ([`result_text`]).
pub(crate) fn tool_result(value: &Value) -> (Captured, Option<String>) {
    let parsed;
    let structured = match value {
        Value::String(s) if s.trim_start().starts_with('{') => {
            match serde_json::from_str::<Value>(s) {
                Ok(v) => {
                    parsed = v;
                    &parsed
                }
                Err(_) => return (result_text(value), None),
            }
        }
        other => other,
    };
    let mut inner = structured;
    // OpenLLMetry's `traceloop.entity.output`: `{"output": ..., "kwargs": {...}}`.
    // Both keys, nothing else: a tool's own `{"output": ...}` result is not a wrapper.
    if let Some(obj) = inner.as_object() {
        if obj.len() == 2 && obj.contains_key("kwargs") {
            if let Some(out) = obj.get("output") {
                inner = out;
            }
        }
    }
    match langchain_message(inner) {
        Some(Value::Object(m)) if m.get("role").and_then(Value::as_str) == Some("tool") => {
            let id = m
                .get("tool_call_id")
                .and_then(Value::as_str)
                .and_then(clean_id);
            (captured(m.get("content"), "content"), id)
        }
        _ if !std::ptr::eq(inner, structured) => (result_text(inner), None),
        _ => (result_text(value), None),
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

    /// A tool message without a name gets the name of the last assistant call with its id,
    /// whether the input's calls are few (scanned) or many (sorted and bisected): inputs of 0
    /// to 40 calls, ids repeated with other names, a message whose id no call has.
    #[test]
    fn unnamed_messages_take_the_last_call_of_their_id() {
        for calls in 0..=40usize {
            // Ids from a pool smaller than the calls, so that later calls repeat ids.
            let id = |i: usize| format!("call_{}", (i * 7) % (calls / 2 + 1));
            let tool_calls: Vec<Value> = (0..calls)
                .map(|i| json!({"id": id(i), "function": {"name": format!("tool_{i}")}}))
                .collect();
            let mut list = vec![json!({"role": "assistant", "tool_calls": tool_calls})];
            let asked: Vec<String> = (0..calls)
                .map(id)
                .chain(["call_none".to_string()])
                .collect();
            for id in &asked {
                list.push(json!({"role": "tool", "tool_call_id": id, "content": "ok"}));
            }
            let ms = read_list(&list);
            for (m, id) in ms.iter().zip(&asked) {
                let last = (0..calls)
                    .rev()
                    .find(|&i| id == &format!("call_{}", (i * 7) % (calls / 2 + 1)));
                assert_eq!(
                    m.name,
                    last.map(|i| format!("tool_{i}")),
                    "{calls} calls, {id}"
                );
            }
        }
    }

    /// A model call keeps its tool messages until the check ends, every call of a run: the
    /// list is as long as it needs, with no spare room (a list collected in place kept four
    /// entries' room for one message).
    #[test]
    fn tool_messages_are_kept_without_spare_room() {
        for n in [1, 2, 3, 5, 9] {
            let list: Vec<Value> = (0..n)
                .map(|i| json!({"role": "tool", "tool_call_id": format!("call_{i}"), "content": "ok"}))
                .collect();
            let ms = read_list(&list);
            assert_eq!(ms.len(), n);
            assert_eq!(ms.capacity(), n, "{n} messages");
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
    fn langchain_layouts() {
        let ctor = json!({"lc": 1, "type": "constructor",
            "id": ["langchain", "schema", "messages", "ToolMessage"],
            "kwargs": {"content": "a.txt", "type": "tool", "name": "ls", "tool_call_id": "call_9"}});
        let (c, id) = tool_result(&json!(
            json!({"output": ctor, "kwargs": {"tags": []}}).to_string()
        ));
        assert_eq!((text(&c), id.as_deref()), (5, Some("call_9")));
        let dict = json!({"type": "tool", "data": {"content": "a.txt", "tool_call_id": "call_9", "id": null}});
        let (c, id) = tool_result(&json!(dict.to_string()));
        assert_eq!((text(&c), id.as_deref()), (5, Some("call_9")));
        // Not a wrapper: measured as it is.
        let (c, id) = tool_result(&json!("{\"type\": \"tool\"}"));
        assert_eq!((text(&c), id), (16, None));
        let (c, id) = tool_result(&json!("{\"output\": \"abc\"}"));
        assert_eq!((text(&c), id), (17, None));
        // A model input of lc constructor messages, batched as LangChain's callbacks do.
        let ai = json!({"lc": 1, "type": "constructor", "id": ["langchain", "schema", "messages", "AIMessage"],
            "kwargs": {"content": "", "tool_calls": [{"name": "ls", "args": {}, "id": "call_9"}]}});
        let ms = tool_messages(&json!({"messages": [[ai, ctor]]})).unwrap();
        assert_eq!(ms.len(), 1);
        assert_eq!(
            (
                ms[0].call_id.as_deref(),
                ms[0].name.as_deref(),
                ms[0].trailing
            ),
            (Some("call_9"), Some("ls"), true)
        );
    }

    #[test]
    fn ai_sdk_parts() {
        let ms = tool_messages(&json!([
            {"role": "assistant", "content": [{"type": "tool-call", "toolCallId": "c1", "toolName": "ls", "input": {}}]},
            {"role": "tool", "content": [{"type": "tool-result", "toolCallId": "c1", "toolName": "ls", "output": {"type": "text", "value": "a.txt"}}]},
            {"role": "tool", "content": [{"type": "tool-result", "toolCallId": "c2", "output": {"type": "json", "value": {"a": 1}}}]}
        ]))
        .unwrap();
        assert_eq!(
            (ms[0].call_id.as_deref(), ms[0].name.as_deref()),
            (Some("c1"), Some("ls"))
        );
        assert_eq!((text(&ms[0].content), text(&ms[1].content)), (5, 7));
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
