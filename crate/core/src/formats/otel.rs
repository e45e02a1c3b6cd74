//! An OpenTelemetry span as the semantic conventions read it, and what a convention makes of
//! it: the layer below the OTLP reader ([`super::otlp`], which builds [`OtelSpan`]s), the
//! dispatcher ([`super::semconv`]) and the conventions ([`super::genai`],
//! [`super::openinference`]), so none of those four needs another that needs it back.

use std::collections::BTreeMap;

use serde_json::Value;

use super::model::{Captured, Times, ToolMessage};

/// A span of an OTLP export, with its attributes as plain JSON values.
#[derive(Debug, Clone, Default)]
pub(crate) struct OtelSpan {
    pub trace_id: Option<String>,
    pub span_id: Option<String>,
    pub parent_id: Option<String>,
    pub name: Option<String>,
    pub times: Times,
    /// `ok`, `error`, `unfinished` (no end time), or `None` when unset.
    pub status: Option<String>,
    pub attrs: BTreeMap<String, Value>,
    pub events: Vec<OtelEvent>,
}

#[derive(Debug, Clone, Default)]
pub(crate) struct OtelEvent {
    pub name: String,
    pub attrs: BTreeMap<String, Value>,
}

impl OtelSpan {
    pub fn attr(&self, key: &str) -> Option<&Value> {
        self.attrs.get(key).filter(|v| !v.is_null())
    }
    pub fn attr_str(&self, key: &str) -> Option<&str> {
        self.attr(key).and_then(Value::as_str)
    }
}

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
