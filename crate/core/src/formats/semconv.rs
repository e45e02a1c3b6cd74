//! What an OTLP span is, by the semantic conventions it follows: a tool call, a model call,
//! or context (an agent, a chain, an HTTP request ...).
//!
//! A span with `openinference.span.kind` is read by [`super::openinference`]; otherwise one
//! with GenAI attributes by [`super::genai`]. Everything else is a context span: skipped with
//! its reason, and kept in the span graph so a failing tool span charges every ancestor.

use std::collections::BTreeMap;

use serde_json::Value;

use super::model::{Captured, ModelCall, ToolCall, ToolMessage};
use super::otlp::OtelSpan;
use super::{genai, openinference, Collector, Sink};

/// What a convention made of a span.
pub(crate) enum Read {
    Tool {
        name: Option<String>,
        call_id: Option<String>,
        result: Captured,
    },
    Model(Result<Vec<ToolMessage>, String>),
    Context(String),
}

pub(crate) fn interpret(
    span: OtelSpan,
    entry: u64,
    collector: &mut Collector,
    sink: &mut dyn Sink,
) {
    let (read, source) = if span.attrs.contains_key(openinference::SPAN_KIND) {
        (openinference::read(&span), "openinference")
    } else if let Some(read) = genai::read(&span) {
        (read, "gen_ai")
    } else {
        (
            Read::Context("not a GenAI or OpenInference span".to_string()),
            "",
        )
    };
    if !source.is_empty() {
        collector.saw(source);
    }
    let at = collector.span_ref(
        entry,
        span.trace_id.clone(),
        span.span_id.clone(),
        span.parent_id.clone(),
        span.times,
    );
    match read {
        Read::Tool {
            name,
            call_id,
            result,
        } => collector.tools.push(ToolCall {
            at,
            name: name.or(span.name),
            call_id,
            status: span.status,
            result,
            source,
        }),
        Read::Model(input) => {
            sink.context(
                entry,
                span.span_id,
                span.parent_id,
                span.name,
                "model call: read for the join".to_string(),
            );
            collector.models.push(ModelCall { at, input });
        }
        Read::Context(reason) => {
            sink.context(entry, span.span_id, span.parent_id, span.name, reason)
        }
    }
}

/// Groups flattened attributes `{prefix}{i}.{rest}` into one map of `rest -> value` per index
/// `i`, in index order (`llm.input_messages.0.message.role` ...).
pub(crate) fn indexed(
    attrs: &BTreeMap<String, Value>,
    prefix: &str,
) -> Vec<BTreeMap<String, Value>> {
    let mut groups: BTreeMap<u64, BTreeMap<String, Value>> = BTreeMap::new();
    for (key, value) in attrs.range(prefix.to_string()..) {
        let Some(rest) = key.strip_prefix(prefix) else {
            break;
        };
        let Some((index, field)) = rest.split_once('.') else {
            continue;
        };
        if let Ok(i) = index.parse::<u64>() {
            groups
                .entry(i)
                .or_default()
                .insert(field.to_string(), value.clone());
        }
    }
    groups.into_values().collect()
}

/// A string attribute, or a number written as text (some SDKs write ids as integers).
pub(crate) fn as_text(value: Option<&Value>) -> Option<String> {
    match value? {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn indexed_groups_by_number() {
        let attrs: BTreeMap<String, Value> = [
            ("llm.input_messages.10.message.role", json!("tool")),
            ("llm.input_messages.2.message.role", json!("user")),
            ("llm.input_messages.2.message.content", json!("hi")),
            ("llm.input_messagesX", json!(1)),
            ("llm.model_name", json!("m")),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
        .collect();
        let groups = indexed(&attrs, "llm.input_messages.");
        assert_eq!(groups.len(), 2);
        assert_eq!(groups[0]["message.content"], json!("hi"));
        assert_eq!(groups[1]["message.role"], json!("tool"));
    }
}
