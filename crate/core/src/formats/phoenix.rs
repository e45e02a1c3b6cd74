//! What Arize Phoenix gives its users back: its REST span export.
//!
//! - `GET /v1/projects/{project}/spans` returns `{"data": [span, ...], "next_cursor": ...}`
//!   with Phoenix's own span objects:
//!   ```text
//!   {"name": "ls", "context": {"trace_id": "...", "span_id": "..."}, "span_kind": "TOOL",
//!    "parent_id": "...", "start_time": "2025-01-01T00:00:00.1+00:00", "end_time": "...",
//!    "status_code": "OK", "attributes": {"tool.name": "ls", "output.value": "..."}}
//!   ```
//!   The attributes are OpenInference's, flattened; the span kind is a field of its own.
//! - `GET /v1/projects/{project}/spans/otlpv1` returns `{"data": [...]}` of OTLP span objects
//!   (snake_case names, `{"string_value": ...}` values), read as OTLP spans are.
//!
//! A JSON array of either, or one span, is read too. Each span is then interpreted by its
//! conventions ([`super::semconv`]), like a span of an OTLP export.

use std::borrow::Cow;
use std::collections::BTreeMap;

use serde_json::{Map, Value};

use super::model::{parse_iso8601, Times};
use super::openinference::SPAN_KIND;
use super::otel::OtelSpan;
use super::otlp;
use super::{describe, Collector, Entries, Sink};
use crate::span::InvalidKind;

/// A span of Phoenix's `/spans` route: `context.span_id` and a `span_kind` or `attributes`.
pub(crate) fn is_span(obj: &Map<String, Value>) -> bool {
    obj.get("context")
        .and_then(Value::as_object)
        .is_some_and(|c| c.contains_key("span_id"))
        && (obj.contains_key("span_kind") || obj.get("attributes").is_some_and(Value::is_object))
}

/// An OTLP span object (not an export request): ids and a list of attributes.
pub(crate) fn is_otlp_span(obj: &Map<String, Value>) -> bool {
    ["span_id", "spanId"].iter().any(|k| obj.contains_key(*k))
        && ["trace_id", "traceId"].iter().any(|k| obj.contains_key(*k))
        && obj.get("attributes").is_some_and(Value::is_array)
}

pub(crate) fn read_value(
    value: &Value,
    entries: &mut Entries,
    collector: &mut Collector,
    sink: &mut dyn Sink,
) -> Result<(), String> {
    let items = match value {
        Value::Array(items) => items.as_slice(),
        Value::Object(obj) if is_span(obj) || is_otlp_span(obj) => std::slice::from_ref(value),
        Value::Object(obj) => match obj.get("data").and_then(Value::as_array) {
            Some(items) => items.as_slice(),
            None => return Err(expected(value)),
        },
        _ => return Err(expected(value)),
    };
    if items.is_empty() {
        sink.skipped(entries.next(), None, "no Phoenix spans".into());
    }
    for item in items {
        let entry = entries.next();
        let span = match item.as_object() {
            Some(obj) if is_span(obj) => phoenix_span(obj),
            Some(obj) if is_otlp_span(obj) => otlp::read_span(obj),
            _ => {
                sink.invalid(entry, InvalidKind::UnknownFormat, expected(item));
                continue;
            }
        };
        super::semconv::interpret(span, entry, collector, sink);
    }
    Ok(())
}

fn expected(found: &Value) -> String {
    format!(
        "expected a Phoenix span ({{\"context\": {{\"span_id\": ...}}, \"span_kind\": ..., \
         \"attributes\": {{...}}}}), an OTLP span, or {{\"data\": [...]}}; found {}",
        describe(found)
    )
}

fn text(obj: &Map<String, Value>, key: &str) -> Option<String> {
    obj.get(key)
        .and_then(Value::as_str)
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_string)
}

fn phoenix_span(obj: &Map<String, Value>) -> OtelSpan<'static> {
    let context = obj.get("context").and_then(Value::as_object);
    let time = |k: &str| obj.get(k).and_then(Value::as_str).and_then(parse_iso8601);
    let end = time("end_time");
    let status = match obj.get("status_code").and_then(Value::as_str) {
        _ if end.is_none() => Some("unfinished"),
        Some("OK") => Some("ok"),
        Some("ERROR") => Some("error"),
        _ => None,
    };
    let mut attrs: BTreeMap<String, Value> = BTreeMap::new();
    if let Some(Value::Object(a)) = obj.get("attributes") {
        flatten("", a, &mut attrs);
    }
    if let Some(kind) = obj.get("span_kind").and_then(Value::as_str) {
        attrs
            .entry(SPAN_KIND.to_string())
            .or_insert_with(|| Value::String(kind.to_string()));
    }
    OtelSpan {
        trace_id: context.and_then(|c| text(c, "trace_id")).map(Cow::Owned),
        span_id: context.and_then(|c| text(c, "span_id")).map(Cow::Owned),
        parent_id: text(obj, "parent_id").map(Cow::Owned),
        name: text(obj, "name").map(Cow::Owned),
        times: Times {
            start: time("start_time"),
            end,
        },
        status,
        attrs: attrs.into_iter().collect(),
        events: Vec::new(),
    }
}

/// Phoenix keeps attributes flat (`llm.input_messages.0.message.role`); a nested object
/// (`{"llm": {"input_messages": ...}}`, as some of its clients write) is flattened to the
/// same keys. Lists stay values.
fn flatten(prefix: &str, obj: &Map<String, Value>, out: &mut BTreeMap<String, Value>) {
    for (k, v) in obj {
        let key = if prefix.is_empty() {
            k.clone()
        } else {
            format!("{prefix}.{k}")
        };
        match v {
            Value::Object(inner) if !inner.is_empty() => flatten(&key, inner, out),
            other => {
                out.insert(key, other.clone());
            }
        }
    }
}
