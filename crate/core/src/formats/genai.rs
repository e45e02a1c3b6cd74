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

use std::borrow::Cow;

use serde_json::{json, Map, Value};

use super::messages::{self, Message, Reading};
use super::model::{clean_id, Captured, ToolMessage};
use super::otel::{as_text, indexed, AttrValue, Attrs, Group, OtelSpan, Read};

const NOT_RECORDED: &str = "is not recorded (an opt-in attribute: turn on content capture in the \
     instrumentation, e.g. OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true)";

// Never inlined: see `semconv::interpret` (V8 optimizes a smaller function sooner).
#[inline(never)]
pub(crate) fn read(span: &OtelSpan<'_>) -> Option<Read> {
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
        let (result, wrapped_id) = match span.attr_value("gen_ai.tool.call.result") {
            Some(AttrValue::Text(text, _)) => messages::tool_result_text(text),
            Some(v) => messages::tool_result(v.value()),
            None => (
                Captured::Missing(format!("gen_ai.tool.call.result {NOT_RECORDED}")),
                None,
            ),
        };
        return Some(Read::Tool {
            name,
            call_id: span
                .attr_value("gen_ai.tool.call.id")
                .and_then(AttrValue::as_text)
                .and_then(|s| clean_id(&s))
                .or(wrapped_id),
            result,
        });
    }
    let inference = matches!(op, Some("chat" | "text_completion" | "generate_content"));
    if let Some(op) = op.filter(|_| !inference) {
        return Some(Read::Context(other_operation(op)));
    }
    if let Some(value) = span.attr_value("gen_ai.input.messages") {
        return Some(Read::Model(
            messages::tool_messages_of(value).map_err(|e| format!("gen_ai.input.messages: {e}")),
        ));
    }
    if let Some(messages) = from_events(span) {
        return Some(Read::Model(Ok(messages)));
    }
    let prompt = indexed(span.attrs.prefixed("gen_ai.prompt."), "gen_ai.prompt.");
    if !prompt.is_empty() {
        return Some(Read::Model(Ok(messages::read_list(&from_prompt(prompt)))));
    }
    if inference || span.attrs.prefixed("gen_ai.").next().is_some() {
        return Some(Read::Model(Err(format!(
            "gen_ai.input.messages {NOT_RECORDED}"
        ))));
    }
    None
}

/// The older convention: one span event per input message (`gen_ai.system.message`,
/// `gen_ai.user.message`, `gen_ai.assistant.message`, `gen_ai.tool.message`). Returns the
/// tool messages of that input, or `None` when the span has no such events.
///
/// Each event is read as the OpenAI chat message `{"role", "content", "tool_call_id",
/// "tool_calls"}` of its body, through [`messages::Message`]: the fields are looked up where
/// the event keeps them, not copied into an object first (a model span of the Collector
/// layout has one event per message of its input, and building those objects was a fifth of
/// the reading time).
fn from_events(span: &OtelSpan<'_>) -> Option<Vec<ToolMessage>> {
    let mut reading = Reading::new();
    let mut any = false;
    for event in &span.events {
        let role = match &*event.name {
            "gen_ai.system.message" => "system",
            "gen_ai.user.message" => "user",
            "gen_ai.assistant.message" => "assistant",
            "gen_ai.tool.message" => "tool",
            _ => continue,
        };
        any = true;
        // The event body travels as attributes on span events: either its fields directly
        // or a JSON string of the body (`gen_ai.event.content`, `body`).
        let own = event_attrs(&event.attrs);
        let parsed: [Option<Cow<'_, Map<String, Value>>>; 2] =
            [own[EVENT_CONTENT], own[BODY]].map(|value| {
                let value = value?;
                match value.as_str() {
                    Some(s) => match serde_json::from_str(s) {
                        Ok(Value::Object(obj)) => Some(Cow::Owned(obj)),
                        _ => None,
                    },
                    None => value.value().as_object().map(Cow::Borrowed),
                }
            });
        let body = EventBody {
            own: &own,
            parsed: &parsed,
        };
        let call_id = [ID, TOOL_CALL_ID, TOOL_CALL_ID_FLAT]
            .into_iter()
            .find_map(|k| as_text(body.get(k)));
        reading.message(&EventMessage {
            role,
            content: body.field(CONTENT),
            call_id,
            tool_calls: body.get(TOOL_CALLS),
        });
    }
    any.then(|| reading.finish())
}

/// The attributes of an event that a message is read from, by their index in
/// [`EVENT_KEYS`]: the fields of its body, then the two that may hold the body as an object.
const CONTENT: usize = 0;
const TOOL_CALLS: usize = 1;
const ID: usize = 2;
const TOOL_CALL_ID: usize = 3;
const TOOL_CALL_ID_FLAT: usize = 4;
const EVENT_CONTENT: usize = 5;
const BODY: usize = 6;
const EVENT_KEYS: [&str; 7] = [
    "content",
    "tool_calls",
    "id",
    "gen_ai.tool.call.id",
    "tool_call_id",
    "gen_ai.event.content",
    "body",
];

/// The attributes of an event named in [`EVENT_KEYS`], found in one pass over them: a model
/// span of the Collector layout has an event per message of its input, and each of the nine
/// look-ups of a message scanned every attribute of its event (2.5% of reading an export).
/// An event's keys are distinct ([`Attrs::from_list`]), so the one found is the one a
/// look-up finds.
fn event_attrs<'e, 'a>(attrs: &'e Attrs<'a>) -> [Option<&'e AttrValue<'a>>; EVENT_KEYS.len()] {
    let mut found = [None; EVENT_KEYS.len()];
    for (key, value) in attrs.iter() {
        if let Some(i) = EVENT_KEYS.iter().position(|&k| k == key) {
            found[i] = Some(value);
        }
    }
    found
}

/// An event's body: the objects its `gen_ai.event.content` and `body` attributes hold (the
/// latter's fields first), then the event's own attributes.
struct EventBody<'e, 'a> {
    own: &'e [Option<&'e AttrValue<'a>>; EVENT_KEYS.len()],
    parsed: &'e [Option<Cow<'e, Map<String, Value>>>; 2],
}

impl<'e> EventBody<'e, '_> {
    /// The body's field of [`EVENT_KEYS`] at `field` (one of the first five).
    fn get(&self, field: usize) -> Option<&'e Value> {
        match self.field(field)? {
            EventField::Value(v) => Some(v),
            EventField::Text(_) => self.own[field].map(AttrValue::value),
        }
    }

    /// [`EventBody::get`], with an attribute that is a borrowed string kept as the text it
    /// is: the `content` of every message of a model call's input, which a `Value` would
    /// copy whole only to be read as text.
    fn field(&self, field: usize) -> Option<EventField<'e>> {
        let [content, body] = self.parsed;
        let key = EVENT_KEYS[field];
        let parsed = body
            .as_deref()
            .and_then(|o| o.get(key))
            .or_else(|| content.as_deref().and_then(|o| o.get(key)));
        if let Some(v) = parsed {
            return Some(EventField::Value(v));
        }
        match self.own[field]? {
            AttrValue::Text(text, _) => Some(EventField::Text(text)),
            other => Some(EventField::Value(other.value())),
        }
    }
}

/// A field of an event's body: a JSON value, or a string attribute as its text.
#[derive(Clone, Copy)]
enum EventField<'a> {
    Value(&'a Value),
    Text(&'a str),
}

/// A message made of an event: its role, and the body's `content`, id and `tool_calls`.
struct EventMessage<'a> {
    role: &'static str,
    content: Option<EventField<'a>>,
    call_id: Option<String>,
    tool_calls: Option<&'a Value>,
}

impl Message for EventMessage<'_> {
    // A text `content` is no value here (so no list of parts), as a message read from
    // JSON text keeps it (`message_list::Msg`): its text and its capture say what it is.
    fn field(&self, key: &str) -> Option<&Value> {
        match key {
            "content" => match self.content? {
                EventField::Value(v) => Some(v),
                EventField::Text(_) => None,
            },
            "tool_calls" => self.tool_calls,
            _ => None,
        }
    }
    fn text(&self, key: &str) -> Option<&str> {
        match key {
            "role" => Some(self.role),
            "tool_call_id" => self.call_id.as_deref(),
            "content" => match self.content? {
                EventField::Text(text) => Some(text),
                EventField::Value(v) => v.as_str(),
            },
            _ => self.field(key).and_then(Value::as_str),
        }
    }
    fn captured(&self, key: &str, what: &str) -> Captured {
        match (key, self.content) {
            ("content", Some(EventField::Text(text))) => messages::hidden_or(text),
            _ => messages::captured(self.field(key), what),
        }
    }
}

/// OpenLLMetry's flattened prompt: `gen_ai.prompt.N.role`, `.content`, `.tool_call_id`, and
/// the assistant's `.tool_calls.K.id` / `.tool_calls.K.name`.
fn from_prompt(groups: Vec<Group<'_, '_>>) -> Vec<Value> {
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
            let calls: Vec<Value> = indexed(g.iter(), "tool_calls.")
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

/// Why a span of another operation is skipped: the conventions' operations as fixed texts,
/// not formatted per span (an agent's every turn is an `invoke_agent` span); any other
/// operation is named as it came.
fn other_operation(op: &str) -> Cow<'static, str> {
    fixed_reason!(op, "GenAI ", " span, not a tool or model call",
        "invoke_agent" "create_agent" "embeddings" "invoke_workflow")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What a reading says, for comparing two readings.
    fn said(read: Option<Read>) -> String {
        match read {
            Some(Read::Tool {
                name,
                call_id,
                result,
            }) => format!("tool {name:?} {call_id:?} {result:?}"),
            Some(Read::Model(input)) => format!("model {input:?}"),
            Some(Read::Context(why)) => format!("context {why}"),
            None => "none".into(),
        }
    }

    /// A span of `attrs`, with one `gen_ai.tool.message` event of `event`, its strings held
    /// as the fast OTLP reader holds them (`text`: borrowed text) or as the tree reader does.
    fn span<'a>(
        attrs: &[(&'a str, &'a str)],
        event: &[(&'a str, &'a str)],
        text: bool,
    ) -> OtelSpan<'a> {
        let list = |pairs: &[(&'a str, &'a str)]| {
            Attrs::from_list(
                pairs
                    .iter()
                    .map(|&(k, v)| {
                        let value = if text {
                            AttrValue::text(v)
                        } else {
                            AttrValue::Json(Value::String(v.to_string()))
                        };
                        (Cow::Borrowed(k), value)
                    })
                    .collect(),
            )
        };
        OtelSpan {
            attrs: list(attrs),
            events: if event.is_empty() {
                Vec::new()
            } else {
                vec![super::super::otel::OtelEvent {
                    name: Cow::Borrowed("gen_ai.tool.message"),
                    attrs: list(event),
                }]
            },
            ..OtelSpan::default()
        }
    }

    /// A tool result or a tool message's content held as borrowed text reads as the same
    /// string held as a JSON value: plain, padded, hidden, and LangChain's serialised
    /// ToolMessage (whose call id is inside).
    #[cfg_attr(target_arch = "wasm32", wasm_bindgen_test::wasm_bindgen_test)]
    #[test]
    fn text_attributes_read_as_their_values() {
        let texts = [
            "a.txt b.txt",
            "  padded \n",
            "",
            "__REDACTED__",
            " {\"lc\": 1, \"type\": \"constructor\", \"id\": [\"langchain\", \"schema\", \"messages\", \"ToolMessage\"], \"kwargs\": {\"content\": \"port: 8443\", \"tool_call_id\": \"call_9\", \"type\": \"tool\"}}",
            "{\"type\": \"tool\", \"data\": {\"content\": \"x\", \"tool_call_id\": \"call_2\"}}",
            "{not json",
            "[{\"type\": \"text\", \"text\": \"x\"}]",
        ];
        for t in texts {
            let tool = [
                ("gen_ai.operation.name", "execute_tool"),
                ("gen_ai.tool.call.id", "call_1"),
                ("gen_ai.tool.call.result", t),
            ];
            assert_eq!(
                said(read(&span(&tool, &[], true))),
                said(read(&span(&tool, &[], false))),
                "{t:?}"
            );
            let model = [("gen_ai.operation.name", "chat")];
            let event = [("id", "call_1"), ("content", t)];
            let (fast, tree) = (span(&model, &event, true), span(&model, &event, false));
            assert_eq!(said(read(&fast)), said(read(&tree)), "{t:?}");
        }
    }

    /// Where a tool message event's id and content come from: the `body` attribute's object
    /// first, then `gen_ai.event.content`'s, then the event's own attributes; of the ids,
    /// `id`, then `gen_ai.tool.call.id`, then `tool_call_id`; of a key given twice, the
    /// first. Unrelated attributes change nothing.
    #[cfg_attr(target_arch = "wasm32", wasm_bindgen_test::wasm_bindgen_test)]
    #[test]
    fn event_fields_come_from_body_then_content_then_attributes() {
        let model = [("gen_ai.operation.name", "chat")];
        // An event's attributes, and the call id and content read from them.
        type Case<'a> = (&'a [(&'a str, &'a str)], &'a str, &'a str);
        let cases: &[Case] = &[
            (
                &[
                    ("id", "a"),
                    ("gen_ai.tool.call.id", "b"),
                    ("tool_call_id", "c"),
                    ("content", "own"),
                ],
                "a",
                "own",
            ),
            (
                &[
                    ("tool_call_id", "c"),
                    ("gen_ai.tool.call.id", "b"),
                    ("content", "own"),
                ],
                "b",
                "own",
            ),
            (
                &[
                    ("zz", "x"),
                    ("tool_call_id", "c"),
                    ("content", "own"),
                    ("a", "y"),
                ],
                "c",
                "own",
            ),
            (
                &[
                    ("id", "first"),
                    ("content", "one"),
                    ("id", "second"),
                    ("content", "two"),
                ],
                "first",
                "one",
            ),
            (
                &[
                    ("body", r#"{"id":"p","content":"from body"}"#),
                    ("id", "a"),
                    ("content", "own"),
                ],
                "p",
                "from body",
            ),
            (
                &[
                    (
                        "gen_ai.event.content",
                        r#"{"tool_call_id":"q","content":"ec"}"#,
                    ),
                    ("body", r#"{"content":"b"}"#),
                    ("id", "a"),
                ],
                "a",
                "b",
            ),
            (
                &[
                    (
                        "gen_ai.event.content",
                        r#"{"tool_call_id":"q","content":"ec"}"#,
                    ),
                    ("content", "own"),
                ],
                "q",
                "ec",
            ),
            (
                &[
                    ("body", "not an object"),
                    ("tool_call_id", "c"),
                    ("content", "own"),
                ],
                "c",
                "own",
            ),
        ];
        for (i, &(event, id, content)) in cases.iter().enumerate() {
            for text in [true, false] {
                let Some(Read::Model(Ok(messages))) = read(&span(&model, event, text)) else {
                    panic!("case {i}: not a model call's input");
                };
                assert_eq!(messages.len(), 1, "case {i}");
                assert_eq!(messages[0].call_id.as_deref(), Some(id), "case {i}");
                let Captured::Text(got) = &messages[0].content else {
                    panic!("case {i}: no content");
                };
                assert_eq!(&*got.preview, content, "case {i}");
            }
        }
    }
}
