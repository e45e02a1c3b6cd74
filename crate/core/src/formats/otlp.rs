//! OTLP JSON traces: the export request of the OpenTelemetry protocol in its JSON encoding.
//!
//! ```text
//! {"resourceSpans": [{"resource": {...}, "scopeSpans": [{"scope": {...}, "spans": [
//!   {"traceId": "5b8efff7...", "spanId": "eee19b7e...", "parentSpanId": "...",
//!    "name": "execute_tool get_weather", "startTimeUnixNano": "1544712660000000000",
//!    "endTimeUnixNano": "...", "status": {"code": 2},
//!    "attributes": [{"key": "gen_ai.tool.name", "value": {"stringValue": "get_weather"}}],
//!    "events": [{"name": "...", "timeUnixNano": "...", "attributes": [...]}]}]}]}]}
//! ```
//!
//! Ids are hex strings; 64-bit integers (`intValue`, times) are decimal strings, though
//! numbers are accepted too; enums are integers (or their names). Field names are lowerCamelCase
//! as the OTLP spec requires; the protobuf JSON mapping's snake_case names are accepted as
//! well. The same document is read whether it is the whole input or one line of the
//! Collector's file exporter (one export request per line).
//!
//! Attribute values (`AnyValue`) become plain JSON values; the spans are then interpreted by
//! the conventions they follow ([`super::genai`], [`super::openinference`]).

use std::borrow::Cow;

use serde_json::{Map, Value};

use super::model::Times;
use super::otel::{AttrValue, Attrs, OtelEvent, OtelSpan};
use super::{describe, Collector, Entries, Sink};
use crate::span::InvalidKind;

/// The one key that says a JSON object is an OTLP export request.
pub(crate) fn is_request(obj: &Map<String, Value>) -> bool {
    obj.contains_key("resourceSpans") || obj.contains_key("resource_spans")
}

fn get<'a>(obj: &'a Map<String, Value>, camel: &str, snake: &str) -> Option<&'a Value> {
    obj.get(camel)
        .or_else(|| obj.get(snake))
        .filter(|v| !v.is_null())
}

fn array<'a>(obj: &'a Map<String, Value>, camel: &str, snake: &str) -> &'a [Value] {
    get(obj, camel, snake)
        .and_then(Value::as_array)
        .map_or(&[], Vec::as_slice)
}

fn id<'a>(obj: &'a Map<String, Value>, camel: &str, snake: &str) -> Option<Cow<'a, str>> {
    get(obj, camel, snake)
        .and_then(Value::as_str)
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(Cow::Borrowed)
}

/// Reads one export request: every span is a tool call, a model call, or a context span.
pub(crate) fn read_request(
    value: &Value,
    entries: &mut Entries,
    collector: &mut Collector,
    sink: &mut dyn Sink,
) -> Result<(), String> {
    let obj = match value.as_object() {
        Some(obj) if is_request(obj) => obj,
        _ => {
            return Err(format!(
                "expected an OTLP export request ({{\"resourceSpans\": [...]}}), found {}",
                describe(value)
            ))
        }
    };
    let mut spans = 0u64;
    for resource in array(obj, "resourceSpans", "resource_spans") {
        let Some(resource) = resource.as_object() else {
            sink.invalid(
                entries.next(),
                InvalidKind::NotAnObject,
                "a resourceSpans entry is not an object".into(),
            );
            continue;
        };
        let mut scopes = array(resource, "scopeSpans", "scope_spans");
        if scopes.is_empty() {
            // OTLP before 0.19 called them instrumentationLibrarySpans.
            scopes = array(
                resource,
                "instrumentationLibrarySpans",
                "instrumentation_library_spans",
            );
        }
        for scope in scopes {
            let Some(scope) = scope.as_object() else {
                let why = "a scopeSpans entry is not an object".into();
                sink.invalid(entries.next(), InvalidKind::NotAnObject, why);
                continue;
            };
            for span in array(scope, "spans", "spans") {
                spans += 1;
                let entry = entries.next();
                match span.as_object() {
                    Some(span) => {
                        super::semconv::interpret(read_span(span), entry, collector, sink)
                    }
                    None => {
                        let why = format!("a span is {}", describe(span));
                        sink.invalid(entry, InvalidKind::NotAnObject, why);
                    }
                }
            }
        }
    }
    if spans == 0 {
        sink.skipped(
            entries.next(),
            None,
            "OTLP export request with no spans".into(),
        );
    }
    Ok(())
}

pub(crate) fn read_span(obj: &Map<String, Value>) -> OtelSpan<'_> {
    let start = get(obj, "startTimeUnixNano", "start_time_unix_nano").and_then(nanos);
    let end = get(obj, "endTimeUnixNano", "end_time_unix_nano").and_then(nanos);
    let mut status = status_code(get(obj, "status", "status"));
    if end.unwrap_or(0) == 0 {
        status = Some("unfinished");
    }
    OtelSpan {
        trace_id: id(obj, "traceId", "trace_id"),
        span_id: id(obj, "spanId", "span_id"),
        parent_id: id(obj, "parentSpanId", "parent_span_id"),
        name: get(obj, "name", "name")
            .and_then(Value::as_str)
            .map(Cow::Borrowed),
        times: Times {
            start,
            end: end.filter(|&e| e != 0),
        },
        status,
        attrs: attributes(array(obj, "attributes", "attributes")),
        events: array(obj, "events", "events")
            .iter()
            .filter_map(Value::as_object)
            .map(|e| OtelEvent {
                name: Cow::Borrowed(
                    get(e, "name", "name")
                        .and_then(Value::as_str)
                        .unwrap_or_default(),
                ),
                attrs: attributes(array(e, "attributes", "attributes")),
            })
            .collect(),
    }
}

/// A span's `status` object (absent or `null`: `None`) as `ok` or `error` by its `code`, a
/// number or the enum's name; other codes are unset.
pub(super) fn status_code(status: Option<&Value>) -> Option<&'static str> {
    match status
        .and_then(Value::as_object)
        .and_then(|s| s.get("code"))
    {
        Some(Value::Number(n)) if n.as_u64() == Some(2) => Some("error"),
        Some(Value::Number(n)) if n.as_u64() == Some(1) => Some("ok"),
        Some(Value::String(s)) if s == "STATUS_CODE_ERROR" => Some("error"),
        Some(Value::String(s)) if s == "STATUS_CODE_OK" => Some("ok"),
        _ => None,
    }
}

/// A 64-bit time: a decimal string (as OTLP JSON writes it) or a number.
pub(super) fn nanos(value: &Value) -> Option<i128> {
    match value {
        Value::String(s) => nanos_text(s),
        Value::Number(n) => n.as_u64().map(i128::from),
        _ => None,
    }
}

/// A time written as a decimal string, trimmed. Up to 19 plain digits (every OTLP time: the
/// nanoseconds since 1970 have 19) are read without overflow checks, which they cannot need
/// (10^19 - 1 fits a `u64`): a checked 64-bit multiplication per digit, as `str::parse`
/// does, is a 128-bit multiplication call in wasm32 (1% of reading OTLP). Anything else (a
/// sign, more digits) is read as a `u64`, then as an `i128`.
pub(super) fn nanos_text(text: &str) -> Option<i128> {
    let text = super::model::trimmed(text);
    let digits = text.as_bytes();
    if (1..=19).contains(&digits.len()) {
        if let Some(n) = plain_decimal(digits) {
            return Some(i128::from(n));
        }
    }
    match text.parse::<u64>() {
        Ok(n) => Some(i128::from(n)),
        Err(_) => text.parse().ok(),
    }
}

/// The value of 1 to 19 ASCII digits (`None` if any byte is not one): the digits before a
/// multiple of eight one at a time, then eight at a time as one word, checked and combined
/// with three multiplications (the SWAR method of simdjson and fast_float). An OTLP time,
/// 19 digits, is three steps where it was nineteen (each a check and a multiply-add), and
/// OTLP JSON carries two per span and one per event (2% of reading it in wasm).
fn plain_decimal(digits: &[u8]) -> Option<u64> {
    let (head, words) = digits.split_at(digits.len() % 8);
    let mut n = 0u64;
    for &d in head {
        let d = d.wrapping_sub(b'0');
        if d > 9 {
            return None;
        }
        n = n * 10 + u64::from(d);
    }
    for word in words.chunks_exact(8) {
        let v = u64::from_le_bytes(word.try_into().expect("chunks of eight"));
        // Every byte 0x30..=0x39: its high nibble 3, and still 3 after adding 6.
        const HIGH: u64 = 0xf0f0_f0f0_f0f0_f0f0;
        const ZEROS: u64 = 0x3030_3030_3030_3030;
        if v & HIGH != ZEROS || (v + 0x0606_0606_0606_0606) & HIGH != ZEROS {
            return None;
        }
        // Digit pairs, then quads, then the eight (the first digit is the lowest byte).
        let v = v - ZEROS;
        let v = v * 10 + (v >> 8);
        const MASK: u64 = 0x0000_00ff_0000_00ff;
        const MUL1: u64 = 100 + (1_000_000 << 32);
        const MUL2: u64 = 1 + (10_000 << 32);
        let eight = ((v & MASK).wrapping_mul(MUL1) + ((v >> 16) & MASK).wrapping_mul(MUL2)) >> 32;
        n = n * 100_000_000 + (eight & 0xffff_ffff);
    }
    Some(n)
}

/// `[{"key": k, "value": AnyValue}]` as [`Attrs`] (the first value of a repeated key wins,
/// as the spec leaves duplicates undefined).
fn attributes(list: &[Value]) -> Attrs<'_> {
    let mut out = Vec::with_capacity(list.len());
    for kv in list.iter().filter_map(Value::as_object) {
        if let Some(key) = kv.get("key").and_then(Value::as_str) {
            let value = kv.get("value").map_or(Value::Null, any_value);
            out.push((Cow::Borrowed(key), AttrValue::Json(value)));
        }
    }
    Attrs::from_list(out)
}

/// An OTLP `AnyValue` as a plain JSON value. A value that is already plain (some exporters
/// write them so) is taken as it is.
pub(crate) fn any_value(value: &Value) -> Value {
    let Some(obj) = value.as_object() else {
        return value.clone();
    };
    if let Some(v) = get(obj, "stringValue", "string_value") {
        return v.clone();
    }
    if let Some(v) = get(obj, "boolValue", "bool_value") {
        return v.clone();
    }
    if let Some(v) = get(obj, "intValue", "int_value") {
        return match v {
            Value::String(s) => s
                .trim()
                .parse::<i64>()
                .map(Value::from)
                .unwrap_or_else(|_| v.clone()),
            other => other.clone(),
        };
    }
    if let Some(v) = get(obj, "doubleValue", "double_value") {
        return v.clone();
    }
    if let Some(v) = get(obj, "bytesValue", "bytes_value") {
        return v.clone();
    }
    if let Some(v) = get(obj, "arrayValue", "array_value") {
        let values = v
            .as_object()
            .map_or(&[][..], |a| array(a, "values", "values"));
        return Value::Array(values.iter().map(any_value).collect());
    }
    if let Some(v) = get(obj, "kvlistValue", "kvlist_value") {
        let values = v
            .as_object()
            .map_or(&[][..], |a| array(a, "values", "values"));
        let mut map = Map::new();
        for kv in values.iter().filter_map(Value::as_object) {
            if let Some(key) = kv.get("key").and_then(Value::as_str) {
                map.insert(
                    key.to_string(),
                    kv.get("value").map_or(Value::Null, any_value),
                );
            }
        }
        return Value::Object(map);
    }
    if obj.is_empty() {
        return Value::Null;
    }
    value.clone()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn nanos_text_reads_what_str_parse_reads() {
        let parse = |t: &str| {
            let t = t.trim();
            t.parse::<u64>()
                .map(i128::from)
                .ok()
                .or_else(|| t.parse().ok())
        };
        for text in [
            "0",
            " 1700000000000000000 ",
            "9999999999999999999",
            "18446744073709551615",
            "18446744073709551616",
            "00000000000000000001",
            "000000000000000000001",
            "+5",
            "-5",
            "",
            " ",
            "12a",
            "1_000",
            "１２",
        ] {
            assert_eq!(nanos_text(text), parse(text), "{text:?}");
        }
        assert_eq!(
            nanos_text("9999999999999999999"),
            Some(9_999_999_999_999_999_999)
        );
    }

    /// Eight digits at a time read as one at a time does: every length up to 19, every
    /// digit value at every place, and a byte just outside the digits (`/`, `:`, `0x3f`,
    /// `0xb0`, a space) at every place declines, as `str::parse` does.
    #[test]
    fn plain_decimal_reads_as_str_parse() {
        for len in 1..=19usize {
            for at in 0..len {
                for d in b'0'..=b'9' {
                    let mut text = vec![b'7'; len];
                    text[at] = d;
                    let s = std::str::from_utf8(&text).unwrap();
                    assert_eq!(plain_decimal(&text), s.parse::<u64>().ok(), "{s}");
                }
                for bad in [b'/', b':', 0x3f, 0xb0, b' ', b'+', 0] {
                    let mut text = vec![b'1'; len];
                    text[at] = bad;
                    assert_eq!(plain_decimal(&text), None, "{len} {at} {bad:#x}");
                }
            }
        }
        assert_eq!(
            plain_decimal(b"1700000000123456789"),
            Some(1_700_000_000_123_456_789)
        );
        assert_eq!(plain_decimal(b"0000000000000000001"), Some(1));
    }

    #[test]
    fn any_values() {
        assert_eq!(any_value(&json!({"stringValue": "x"})), json!("x"));
        assert_eq!(any_value(&json!({"intValue": "42"})), json!(42));
        assert_eq!(any_value(&json!({"int_value": 7})), json!(7));
        assert_eq!(any_value(&json!({"doubleValue": 1.5})), json!(1.5));
        assert_eq!(any_value(&json!({"boolValue": true})), json!(true));
        assert_eq!(any_value(&json!({})), Value::Null);
        assert_eq!(
            any_value(
                &json!({"arrayValue": {"values": [{"stringValue": "a"}, {"intValue": "1"}]}})
            ),
            json!(["a", 1])
        );
        assert_eq!(
            any_value(
                &json!({"kvlistValue": {"values": [{"key": "k", "value": {"stringValue": "v"}}]}})
            ),
            json!({"k": "v"})
        );
    }

    #[test]
    fn spans_read_times_status_and_ids() {
        let doc = json!({
            "traceId": "aa", "spanId": "bb", "parentSpanId": "",
            "name": "chat", "startTimeUnixNano": "10", "endTimeUnixNano": 20,
            "status": {"code": 2},
            "attributes": [{"key": "a", "value": {"stringValue": "x"}}, {"key": "a", "value": {"stringValue": "y"}}]
        });
        let span = read_span(doc.as_object().unwrap());
        assert_eq!(span.parent_id, None);
        assert_eq!((span.times.start, span.times.end), (Some(10), Some(20)));
        assert_eq!(span.status, Some("error"));
        assert_eq!(span.attr_str("a"), Some("x"));
        let doc = json!({"name": "x", "startTimeUnixNano": "10"});
        let open = read_span(doc.as_object().unwrap());
        assert_eq!(open.status, Some("unfinished"));
    }
}
