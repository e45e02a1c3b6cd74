//! OTLP JSON to protobuf, for upstreams that take protobuf only (Arize Phoenix answers JSON
//! with 415): the endpoint can forward every request in protobuf whatever the exporter sent.
//!
//! Every field of the trace messages that OTLP JSON can carry is written, with OTLP's JSON
//! rules read back: ids are hex, 64-bit integers are decimal strings or numbers, enums are
//! integers or their names, field names are lowerCamelCase or snake_case. A member this
//! writer does not know is dropped (protobuf has no place for it).

use std::fmt;

use super::tree::{member, parse_node, Members, Node};

use super::MalformedExport;
use crate::formats::pipeline_parts::proto::{put_bytes_field, put_varint};

type Out = Result<Vec<u8>, MalformedExport>;
type Done = Result<(), MalformedExport>;

/// Where a value is in the request, for an error's message: made into text only when an
/// error is reported (a path built for each span, in case, was an allocation per span).
#[derive(Clone, Copy)]
struct At {
    resource: Option<usize>,
    scope: Option<usize>,
    span: Option<usize>,
}

impl At {
    const REQUEST: At = At {
        resource: None,
        scope: None,
        span: None,
    };
}

impl fmt::Display for At {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let Some(r) = self.resource else {
            return f.write_str("the request");
        };
        write!(f, "resourceSpans[{r}]")?;
        if let Some(s) = self.scope {
            write!(f, ".scopeSpans[{s}]")?;
        }
        if let Some(k) = self.span {
            write!(f, ".spans[{k}]")?;
        }
        Ok(())
    }
}

fn get<'n, 'a>(obj: &'n Members<'a>, camel: &str, snake: &str) -> Option<&'n Node<'a>> {
    member(obj, camel)
        .or_else(|| member(obj, snake))
        .filter(|v| !v.is_null())
}

fn bad(at: At, what: &str) -> MalformedExport {
    MalformedExport(format!("JSON export request: {at}: {what}"))
}

fn list<'n, 'a>(obj: &'n Members<'a>, camel: &str, snake: &str) -> &'n [Node<'a>] {
    get(obj, camel, snake)
        .and_then(Node::as_array)
        .unwrap_or(&[])
}

fn object<'n, 'a>(v: &'n Node<'a>, at: At) -> Result<&'n Members<'a>, MalformedExport> {
    v.as_object().ok_or_else(|| bad(at, "not an object"))
}

/// Field `number`, a message whose bytes `write` appends to `out` itself. A message was a
/// buffer of its own, copied into its parent's, at each of a request's five levels (most of
/// the writer's time was allocation and those copies); now its length goes in front once it
/// is known: one byte kept for it, and the message moved up by the bytes a length over 127
/// takes beyond that one, within `out`.
fn nested(out: &mut Vec<u8>, number: u32, write: impl FnOnce(&mut Vec<u8>) -> Done) -> Done {
    put_varint(out, u64::from(number) << 3 | 2);
    let at = out.len();
    out.push(0);
    write(out)?;
    let len = out.len() - at - 1;
    if len < 0x80 {
        out[at] = len as u8;
        return Ok(());
    }
    let mut head = Vec::with_capacity(10);
    put_varint(&mut head, len as u64);
    let extra = head.len() - 1;
    out.resize(out.len() + extra, 0);
    out.copy_within(at + 1..at + 1 + len, at + 1 + extra);
    out[at..at + head.len()].copy_from_slice(&head);
    Ok(())
}

fn put_varint_field(out: &mut Vec<u8>, number: u32, v: u64) {
    if v != 0 {
        put_varint(out, u64::from(number) << 3);
        put_varint(out, v);
    }
}

fn put_fixed64_field(out: &mut Vec<u8>, number: u32, v: u64) {
    if v != 0 {
        put_varint(out, u64::from(number) << 3 | 1);
        out.extend_from_slice(&v.to_le_bytes());
    }
}

fn put_str(out: &mut Vec<u8>, number: u32, obj: &Members<'_>, camel: &str, snake: &str) {
    if let Some(s) = get(obj, camel, snake).and_then(Node::as_str) {
        if !s.is_empty() {
            put_bytes_field(out, number, s.as_bytes());
        }
    }
}

/// A 64-bit unsigned integer: a decimal string or a number.
fn u64_of(v: Option<&Node<'_>>, at: At) -> Result<u64, MalformedExport> {
    match v {
        None => Ok(0),
        Some(Node::String(s)) => s
            .trim()
            .parse()
            .map_err(|_| bad(at, "not a decimal integer")),
        Some(Node::Number(n)) => n.as_u64().ok_or_else(|| bad(at, "not an unsigned integer")),
        Some(_) => Err(bad(at, "not an integer")),
    }
}

/// An id field (`camel` names it in errors) written as bytes, field `number`; an absent or
/// empty id is written only when `always`. Hex is read byte by byte, so a string with
/// multi-byte characters is refused, never cut inside a character.
fn put_hex(
    out: &mut Vec<u8>,
    number: u32,
    always: bool,
    obj: &Members<'_>,
    (camel, snake): (&str, &str),
    at: At,
) -> Done {
    let s = get(obj, camel, snake).and_then(Node::as_str);
    let s = s.map_or(&[][..], |s| s.trim().as_bytes());
    if s.is_empty() && !always {
        return Ok(());
    }
    if s.len() % 2 != 0 {
        return Err(bad(at, &format!("{camel} is not hex (odd length)")));
    }
    put_varint(out, u64::from(number) << 3 | 2);
    put_varint(out, (s.len() / 2) as u64);
    let nibble = |b: u8| (b as char).to_digit(16);
    for p in s.chunks_exact(2) {
        match (nibble(p[0]), nibble(p[1])) {
            (Some(h), Some(l)) => out.push((h * 16 + l) as u8),
            _ => return Err(bad(at, &format!("{camel} is not hex"))),
        }
    }
    Ok(())
}

/// An enum: its number, or its name from `names` (index = number).
fn enum_of(v: Option<&Node<'_>>, names: &[&str], at: At) -> Result<u64, MalformedExport> {
    match v {
        None => Ok(0),
        Some(Node::Number(n)) => n.as_u64().ok_or_else(|| bad(at, "not an enum number")),
        Some(Node::String(s)) => names
            .iter()
            .position(|n| n == s)
            .map(|i| i as u64)
            .ok_or_else(|| bad(at, "unknown enum name")),
        Some(_) => Err(bad(at, "not an enum")),
    }
}

/// An `AnyValue`'s fields, appended to `out`.
fn any_value(out: &mut Vec<u8>, v: &Node<'_>, at: At) -> Done {
    let Some(obj) = v.as_object() else {
        return Err(bad(at, "an AnyValue is not an object"));
    };
    if let Some(s) = get(obj, "stringValue", "string_value") {
        put_bytes_field(out, 1, s.as_str().unwrap_or_default().as_bytes());
    } else if let Some(b) = get(obj, "boolValue", "bool_value") {
        put_varint(out, 2 << 3);
        put_varint(out, u64::from(b.as_bool().unwrap_or(false)));
    } else if let Some(i) = get(obj, "intValue", "int_value") {
        let n: i64 = match i {
            Node::String(s) => s.trim().parse().map_err(|_| bad(at, "intValue"))?,
            Node::Number(n) => n.as_i64().ok_or_else(|| bad(at, "intValue"))?,
            _ => return Err(bad(at, "intValue")),
        };
        put_varint(out, 3 << 3);
        put_varint(out, n as u64);
    } else if let Some(d) = get(obj, "doubleValue", "double_value") {
        let f = match d {
            Node::Number(n) => n.as_f64().unwrap_or(0.0),
            Node::String(s) => s.trim().parse().map_err(|_| bad(at, "doubleValue"))?,
            _ => return Err(bad(at, "doubleValue")),
        };
        put_varint(out, 4 << 3 | 1);
        out.extend_from_slice(&f.to_bits().to_le_bytes());
    } else if let Some(a) = get(obj, "arrayValue", "array_value") {
        nested(out, 5, |out| {
            values_message(out, a, |out, item| {
                nested(out, 1, |out| any_value(out, item, at))
            })
        })?;
    } else if let Some(kv) = get(obj, "kvlistValue", "kvlist_value") {
        nested(out, 6, |out| {
            values_message(out, kv, |out, item| {
                nested(out, 1, |out| key_value(out, item, at))
            })
        })?;
    } else if let Some(b) = get(obj, "bytesValue", "bytes_value") {
        let text = b.as_str().unwrap_or_default();
        put_bytes_field(
            out,
            7,
            &unbase64(text).ok_or_else(|| bad(at, "bytesValue"))?,
        );
    }
    Ok(())
}

/// `ArrayValue` and `KeyValueList` alike: field 1 repeated, one encoded item per entry of
/// the JSON object's `values` (`item` writes the field).
fn values_message(
    out: &mut Vec<u8>,
    list_obj: &Node<'_>,
    mut item: impl FnMut(&mut Vec<u8>, &Node<'_>) -> Done,
) -> Done {
    for v in list_obj
        .as_object()
        .map_or(&[][..], |o| list(o, "values", "values"))
    {
        item(out, v)?;
    }
    Ok(())
}

fn unbase64(text: &str) -> Option<Vec<u8>> {
    let mut out = Vec::new();
    let (mut acc, mut bits) = (0u32, 0);
    for c in text.bytes().filter(|&c| c != b'=') {
        let v = match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' | b'-' => 62,
            b'/' | b'_' => 63,
            _ => return None,
        };
        acc = acc << 6 | u32::from(v);
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
        }
    }
    Some(out)
}

/// A `KeyValue`'s fields, appended to `out`.
fn key_value(out: &mut Vec<u8>, v: &Node<'_>, at: At) -> Done {
    let obj = object(v, at)?;
    put_str(out, 1, obj, "key", "key");
    if let Some(value) = get(obj, "value", "value") {
        nested(out, 2, |out| any_value(out, value, at))?;
    }
    Ok(())
}

fn attributes(out: &mut Vec<u8>, number: u32, obj: &Members<'_>, at: At) -> Done {
    for kv in list(obj, "attributes", "attributes") {
        nested(out, number, |out| key_value(out, kv, at))?;
    }
    Ok(())
}

fn dropped(
    out: &mut Vec<u8>,
    number: u32,
    obj: &Members<'_>,
    camel: &str,
    snake: &str,
    at: At,
) -> Done {
    put_varint_field(out, number, u64_of(get(obj, camel, snake), at)?);
    Ok(())
}

/// `droppedAttributesCount`, which every message with attributes has, as field `number`.
fn dropped_attributes(out: &mut Vec<u8>, number: u32, obj: &Members<'_>, at: At) -> Done {
    dropped(
        out,
        number,
        obj,
        "droppedAttributesCount",
        "dropped_attributes_count",
        at,
    )
}

const SPAN_KINDS: [&str; 6] = [
    "SPAN_KIND_UNSPECIFIED",
    "SPAN_KIND_INTERNAL",
    "SPAN_KIND_SERVER",
    "SPAN_KIND_CLIENT",
    "SPAN_KIND_PRODUCER",
    "SPAN_KIND_CONSUMER",
];
const STATUS_CODES: [&str; 3] = ["STATUS_CODE_UNSET", "STATUS_CODE_OK", "STATUS_CODE_ERROR"];

/// A `Span`'s fields, appended to `out`.
fn span(out: &mut Vec<u8>, v: &Node<'_>, at: At) -> Done {
    let s = object(v, at)?;
    put_hex(out, 1, false, s, ("traceId", "trace_id"), at)?;
    put_hex(out, 2, false, s, ("spanId", "span_id"), at)?;
    put_str(out, 3, s, "traceState", "trace_state");
    put_hex(out, 4, false, s, ("parentSpanId", "parent_span_id"), at)?;
    put_str(out, 5, s, "name", "name");
    put_varint_field(out, 6, enum_of(get(s, "kind", "kind"), &SPAN_KINDS, at)?);
    let time = |camel, snake| u64_of(get(s, camel, snake), at);
    put_fixed64_field(out, 7, time("startTimeUnixNano", "start_time_unix_nano")?);
    put_fixed64_field(out, 8, time("endTimeUnixNano", "end_time_unix_nano")?);
    attributes(out, 9, s, at)?;
    dropped_attributes(out, 10, s, at)?;
    for e in list(s, "events", "events") {
        let e = object(e, at)?;
        nested(out, 11, |body| {
            put_fixed64_field(
                body,
                1,
                u64_of(get(e, "timeUnixNano", "time_unix_nano"), at)?,
            );
            put_str(body, 2, e, "name", "name");
            attributes(body, 3, e, at)?;
            dropped_attributes(body, 4, e, at)
        })?;
    }
    dropped(out, 12, s, "droppedEventsCount", "dropped_events_count", at)?;
    for l in list(s, "links", "links") {
        let l = object(l, at)?;
        nested(out, 13, |body| {
            put_hex(body, 1, true, l, ("traceId", "trace_id"), at)?;
            put_hex(body, 2, true, l, ("spanId", "span_id"), at)?;
            put_str(body, 3, l, "traceState", "trace_state");
            attributes(body, 4, l, at)?;
            dropped_attributes(body, 5, l, at)?;
            let flags = u64_of(get(l, "flags", "flags"), at)?;
            if flags != 0 {
                put_varint(body, 6 << 3 | 5);
                body.extend_from_slice(&(flags as u32).to_le_bytes());
            }
            Ok(())
        })?;
    }
    dropped(out, 14, s, "droppedLinksCount", "dropped_links_count", at)?;
    if let Some(st) = get(s, "status", "status").and_then(Node::as_object) {
        nested(out, 15, |body| {
            put_str(body, 2, st, "message", "message");
            put_varint_field(body, 3, enum_of(member(st, "code"), &STATUS_CODES, at)?);
            Ok(())
        })?;
    }
    let flags = u64_of(get(s, "flags", "flags"), at)?;
    if flags != 0 {
        put_varint(out, 16 << 3 | 5);
        out.extend_from_slice(&(flags as u32).to_le_bytes());
    }
    Ok(())
}

/// Writes an OTLP JSON export request as `ExportTraceServiceRequest` protobuf.
pub fn json_to_protobuf(body: &[u8]) -> Out {
    let value =
        parse_node(body).map_err(|e| MalformedExport(format!("JSON export request: {e}")))?;
    let root = object(&value, At::REQUEST)?;
    // The protobuf is a little shorter than the JSON it is written from: one growth at most.
    let mut out = Vec::with_capacity(body.len());
    for (r, rs) in list(root, "resourceSpans", "resource_spans")
        .iter()
        .enumerate()
    {
        let at = At {
            resource: Some(r),
            ..At::REQUEST
        };
        let rs = object(rs, at)?;
        nested(&mut out, 1, |rbody| {
            if let Some(res) = get(rs, "resource", "resource").and_then(Node::as_object) {
                nested(rbody, 1, |b| {
                    attributes(b, 1, res, at)?;
                    dropped_attributes(b, 2, res, at)
                })?;
            }
            let mut scopes = list(rs, "scopeSpans", "scope_spans");
            if scopes.is_empty() {
                scopes = list(
                    rs,
                    "instrumentationLibrarySpans",
                    "instrumentation_library_spans",
                );
            }
            for (s, ss) in scopes.iter().enumerate() {
                let at = At {
                    scope: Some(s),
                    ..at
                };
                let ss = object(ss, at)?;
                nested(rbody, 2, |sbody| {
                    let scope = get(ss, "scope", "scope")
                        .or_else(|| get(ss, "instrumentationLibrary", "instrumentation_library"));
                    if let Some(sc) = scope.and_then(Node::as_object) {
                        nested(sbody, 1, |b| {
                            put_str(b, 1, sc, "name", "name");
                            put_str(b, 2, sc, "version", "version");
                            attributes(b, 3, sc, at)?;
                            dropped_attributes(b, 4, sc, at)
                        })?;
                    }
                    for (k, sp) in list(ss, "spans", "spans").iter().enumerate() {
                        let at = At {
                            span: Some(k),
                            ..at
                        };
                        nested(sbody, 2, |b| span(b, sp, at))?;
                    }
                    put_str(sbody, 3, ss, "schemaUrl", "schema_url");
                    Ok(())
                })?;
            }
            put_str(rbody, 3, rs, "schemaUrl", "schema_url");
            Ok(())
        })?;
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::formats::pipeline_parts::{proto, read_span};
    use serde_json::{json, Value};

    #[test]
    fn a_transcoded_request_reads_as_the_json_one() {
        let doc = json!({"resourceSpans": [{
            "resource": {"attributes": [{"key": "service.name", "value": {"stringValue": "a"}}]},
            "scopeSpans": [{"scope": {"name": "t", "version": "1"}, "spans": [{
                "traceId": "5b8efff798038103d269b633813fc60c", "spanId": "eee19b7ec3c1b174",
                "parentSpanId": "eee19b7ec3c1b173", "name": "execute_tool ls", "kind": "SPAN_KIND_INTERNAL",
                "startTimeUnixNano": "1544712660000000000", "endTimeUnixNano": 1544712661000000000u64,
                "status": {"code": 2, "message": "boom"},
                "attributes": [
                    {"key": "s", "value": {"stringValue": "x"}},
                    {"key": "i", "value": {"intValue": "-3"}},
                    {"key": "d", "value": {"doubleValue": 1.5}},
                    {"key": "b", "value": {"boolValue": true}},
                    {"key": "y", "value": {"bytesValue": "aGk="}},
                    {"key": "a", "value": {"arrayValue": {"values": [{"stringValue": "p"}, {"intValue": 7}]}}},
                    {"key": "k", "value": {"kvlistValue": {"values": [{"key": "q", "value": {"stringValue": "r"}}]}}}
                ],
                "events": [{"timeUnixNano": "5", "name": "gen_ai.tool.message", "attributes": [{"key": "id", "value": {"stringValue": "c"}}]}]
            }]}]
        }]});
        let pb = json_to_protobuf(&serde_json::to_vec(&doc).unwrap()).unwrap();
        let mut req = proto::decode(&pb).unwrap();
        let from_pb = req.spans.remove(0).1;
        let span = &doc["resourceSpans"][0]["scopeSpans"][0]["spans"][0];
        let from_json = read_span(span.as_object().unwrap());
        assert_eq!(from_pb.trace_id, from_json.trace_id);
        assert_eq!(from_pb.span_id, from_json.span_id);
        assert_eq!(from_pb.parent_id, from_json.parent_id);
        assert_eq!(from_pb.name, from_json.name);
        assert_eq!(from_pb.times, from_json.times);
        assert_eq!(from_pb.status, from_json.status);
        assert_eq!(from_pb.attrs, from_json.attrs);
        assert_eq!(from_pb.events[0].attrs, from_json.events[0].attrs);
        assert_eq!(req.resources[0].header.len(), 1);
        assert_eq!(req.resources[0].scopes[0].header.len(), 1);
        let e = json_to_protobuf(
            br#"{"resourceSpans":[{"scopeSpans":[{"spans":[{"traceId":"xyz1"}]}]}]}"#,
        )
        .unwrap_err();
        assert!(
            e.0.contains("resourceSpans[0].scopeSpans[0].spans[0]: traceId is not hex"),
            "{e}"
        );
    }

    /// Messages whose lengths take two, three and four bytes, nested five and more levels
    /// deep (a value in an array in a kvlist in an attribute of a span): each length is put
    /// in front of its message once the message is written, and the request reads back as
    /// the JSON one, span by span, with nothing after the last message.
    #[test]
    fn long_messages_get_their_lengths_in_front() {
        let sizes = [127usize, 128, 16_383, 16_384, 2_097_152];
        let spans: Vec<Value> = sizes
            .iter()
            .enumerate()
            .map(|(i, &n)| {
                let text = "é".repeat(n / 2) + &"x".repeat(n % 2);
                json!({"traceId": "5b8efff798038103d269b633813fc60c", "spanId": format!("{:016x}", i + 1),
                "name": "execute_tool read",
                "attributes": [
                    {"key": "gen_ai.tool.call.result", "value": {"stringValue": text}},
                    {"key": "k", "value": {"kvlistValue": {"values": [{"key": "v", "value":
                        {"arrayValue": {"values": [{"stringValue": text}, {"intValue": 1}]}}}]}}}
                ]})
            })
            .collect();
        let doc =
            json!({"resourceSpans": [{"scopeSpans": [{"scope": {"name": "t"}, "spans": spans}]}]});
        let pb = json_to_protobuf(&serde_json::to_vec(&doc).unwrap()).unwrap();
        let req = proto::decode(&pb).unwrap();
        assert_eq!(req.spans.len(), sizes.len());
        for (k, (_, from_pb)) in req.spans.iter().enumerate() {
            let from_json = read_span(spans[k].as_object().unwrap());
            assert_eq!(from_pb.span_id, from_json.span_id);
            assert_eq!(from_pb.attrs, from_json.attrs, "span {k}");
        }
    }

    #[test]
    fn an_id_with_multibyte_characters_is_refused_by_name_not_cut() {
        // "a\u{e9}a" is four bytes with a character across the first pair: reading it as
        // string slices of two bytes panicked here.
        for (id, field) in [
            ("a\u{e9}a", "spanId"),
            ("\u{e9}\u{e9}", "spanId"),
            ("0g", "spanId"),
        ] {
            let doc = format!(
                r#"{{"resourceSpans":[{{"scopeSpans":[{{"spans":[{{"traceId":"0a0b","spanId":"{id}"}}]}}]}}]}}"#
            );
            let e = json_to_protobuf(doc.as_bytes()).unwrap_err();
            assert!(
                e.0.ends_with(&format!("spans[0]: {field} is not hex")),
                "{id}: {e}"
            );
        }
        let link =
            br#"{"resourceSpans":[{"scopeSpans":[{"spans":[{"links":[{"traceId":"abc"}]}]}]}]}"#;
        let e = json_to_protobuf(link).unwrap_err();
        assert!(e.0.ends_with("traceId is not hex (odd length)"), "{e}");
    }

    /// Export requests of every shape the tests know: each line of the format fixtures and
    /// the split's request variants, and those damaged in a few ways each (an entry replaced,
    /// given twice, respelled or dropped).
    fn requests() -> Vec<Vec<u8>> {
        use crate::formats::pipeline_parts::{emit, fixtures, Op};
        let mut out: Vec<Vec<u8>> = Vec::new();
        for (name, bytes) in fixtures() {
            if name.ends_with(".jsonl") {
                out.extend(
                    bytes
                        .split(|&b| b == b'\n')
                        .filter(|l| !l.is_empty())
                        .map(<[u8]>::to_vec),
                );
            } else {
                out.push(bytes);
            }
        }
        const RAW: [&str; 10] = [
            "null",
            "1",
            "-3",
            "1.5",
            "\"x\"",
            "[]",
            "{}",
            "\"\\u00e9\\n\"",
            "\"NaN\"",
            "{\"key\":\"k\",\"value\":{\"stringValue\":\"v\"}}",
        ];
        let ops = Op::all(&RAW);
        for base in super::super::export::tests::json_request_variants() {
            for target in 0.. {
                let mut any = false;
                for k in 0..6 {
                    let op = ops[(target * 5 + k * 7) % ops.len()];
                    let (mut text, mut at) = (String::new(), 0);
                    if emit(&base, &mut text, &mut at, target, op) {
                        any = true;
                        out.push(text.into_bytes());
                    }
                }
                if !any {
                    break;
                }
            }
        }
        out
    }

    /// The transcoder reads a [`Node`]: on every request the tests know, it reads as the
    /// `Value` tree reads (the same values under the same names, a name given twice counting
    /// once, by its last value) or fails with the tree's error.
    #[test]
    fn a_node_reads_as_the_value_tree_reads() {
        use super::super::tree::parse;
        use serde_json::Value;
        fn same(node: &Node, value: &Value) -> bool {
            match (node, value) {
                (Node::Null, Value::Null) => true,
                (Node::Bool(a), Value::Bool(b)) => a == b,
                (Node::Number(a), Value::Number(b)) => a == b,
                (Node::String(a), Value::String(b)) => a == b,
                (Node::Array(a), Value::Array(b)) => {
                    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| same(x, y))
                }
                (Node::Object(a), Value::Object(b)) => {
                    a.iter().all(|(k, _)| b.contains_key(k.as_ref()))
                        && b.iter()
                            .all(|(k, v)| member(a, k).is_some_and(|n| same(n, v)))
                }
                _ => false,
            }
        }
        let (mut read, mut twice, mut escaped) = (0, 0, 0);
        for body in requests() {
            match (parse_node(&body), parse(&body)) {
                (Ok(node), Ok(value)) => {
                    assert!(same(&node, &value), "{}", String::from_utf8_lossy(&body));
                    read += 1;
                    let text = String::from_utf8_lossy(&body);
                    twice += usize::from(
                        text.matches("\"traceId\"").count() > text.matches("\"spanId\"").count(),
                    );
                    escaped += usize::from(text.contains("\\u00"));
                }
                (Err(a), Err(b)) => assert_eq!(a.to_string(), b.to_string()),
                (a, b) => panic!("{a:?} against {b:?}: {}", String::from_utf8_lossy(&body)),
            }
        }
        assert!(
            read > 1000 && twice > 10 && escaped > 10,
            "read {read}, a name twice {twice}, escapes {escaped}"
        );
    }
}
