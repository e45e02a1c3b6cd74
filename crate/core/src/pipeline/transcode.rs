//! OTLP JSON to protobuf, for upstreams that take protobuf only (Arize Phoenix answers JSON
//! with 415): the endpoint can forward every request in protobuf whatever the exporter sent.
//!
//! Every field of the trace messages that OTLP JSON can carry is written, with OTLP's JSON
//! rules read back: ids are hex, 64-bit integers are decimal strings or numbers, enums are
//! integers or their names, field names are lowerCamelCase or snake_case. A member this
//! writer does not know is dropped (protobuf has no place for it).

use super::tree::{member, parse_node, Members, Node};

use super::MalformedExport;
use crate::formats::pipeline_parts::proto::{put_bytes_field, put_varint};

type Out = Result<Vec<u8>, MalformedExport>;

fn get<'n, 'a>(obj: &'n Members<'a>, camel: &str, snake: &str) -> Option<&'n Node<'a>> {
    member(obj, camel)
        .or_else(|| member(obj, snake))
        .filter(|v| !v.is_null())
}

fn bad(path: &str, what: &str) -> MalformedExport {
    MalformedExport(format!("JSON export request: {path}: {what}"))
}

fn list<'n, 'a>(obj: &'n Members<'a>, camel: &str, snake: &str) -> &'n [Node<'a>] {
    get(obj, camel, snake)
        .and_then(Node::as_array)
        .unwrap_or(&[])
}

fn object<'n, 'a>(v: &'n Node<'a>, path: &str) -> Result<&'n Members<'a>, MalformedExport> {
    v.as_object().ok_or_else(|| bad(path, "not an object"))
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
fn u64_of(v: Option<&Node<'_>>, path: &str) -> Result<u64, MalformedExport> {
    match v {
        None => Ok(0),
        Some(Node::String(s)) => s
            .trim()
            .parse()
            .map_err(|_| bad(path, "not a decimal integer")),
        Some(Node::Number(n)) => n
            .as_u64()
            .ok_or_else(|| bad(path, "not an unsigned integer")),
        Some(_) => Err(bad(path, "not an integer")),
    }
}

/// An id field (`camel` names it in errors) as bytes. Hex is read byte by byte, so a
/// string with multi-byte characters is refused, never cut inside a character.
fn hex_bytes(
    obj: &Members<'_>,
    camel: &str,
    snake: &str,
    path: &str,
) -> Result<Vec<u8>, MalformedExport> {
    let Some(s) = get(obj, camel, snake).and_then(Node::as_str) else {
        return Ok(Vec::new());
    };
    let s = s.trim().as_bytes();
    let nibble = |b: u8| (b as char).to_digit(16);
    if s.len() % 2 != 0 {
        return Err(bad(path, &format!("{camel} is not hex (odd length)")));
    }
    s.chunks_exact(2)
        .map(|p| match (nibble(p[0]), nibble(p[1])) {
            (Some(h), Some(l)) => Ok((h * 16 + l) as u8),
            _ => Err(bad(path, &format!("{camel} is not hex"))),
        })
        .collect()
}

/// An enum: its number, or its name from `names` (index = number).
fn enum_of(v: Option<&Node<'_>>, names: &[&str], path: &str) -> Result<u64, MalformedExport> {
    match v {
        None => Ok(0),
        Some(Node::Number(n)) => n.as_u64().ok_or_else(|| bad(path, "not an enum number")),
        Some(Node::String(s)) => names
            .iter()
            .position(|n| n == s)
            .map(|i| i as u64)
            .ok_or_else(|| bad(path, "unknown enum name")),
        Some(_) => Err(bad(path, "not an enum")),
    }
}

fn any_value(v: &Node<'_>, path: &str) -> Out {
    let mut out = Vec::new();
    let Some(obj) = v.as_object() else {
        return Err(bad(path, "an AnyValue is not an object"));
    };
    if let Some(s) = get(obj, "stringValue", "string_value") {
        put_bytes_field(&mut out, 1, s.as_str().unwrap_or_default().as_bytes());
    } else if let Some(b) = get(obj, "boolValue", "bool_value") {
        put_varint(&mut out, 2 << 3);
        put_varint(&mut out, u64::from(b.as_bool().unwrap_or(false)));
    } else if let Some(i) = get(obj, "intValue", "int_value") {
        let n: i64 = match i {
            Node::String(s) => s.trim().parse().map_err(|_| bad(path, "intValue"))?,
            Node::Number(n) => n.as_i64().ok_or_else(|| bad(path, "intValue"))?,
            _ => return Err(bad(path, "intValue")),
        };
        put_varint(&mut out, 3 << 3);
        put_varint(&mut out, n as u64);
    } else if let Some(d) = get(obj, "doubleValue", "double_value") {
        let f = match d {
            Node::Number(n) => n.as_f64().unwrap_or(0.0),
            Node::String(s) => s.trim().parse().map_err(|_| bad(path, "doubleValue"))?,
            _ => return Err(bad(path, "doubleValue")),
        };
        put_varint(&mut out, 4 << 3 | 1);
        out.extend_from_slice(&f.to_bits().to_le_bytes());
    } else if let Some(a) = get(obj, "arrayValue", "array_value") {
        put_bytes_field(
            &mut out,
            5,
            &values_message(a, |item| any_value(item, path))?,
        );
    } else if let Some(kv) = get(obj, "kvlistValue", "kvlist_value") {
        put_bytes_field(
            &mut out,
            6,
            &values_message(kv, |item| key_value(item, path))?,
        );
    } else if let Some(b) = get(obj, "bytesValue", "bytes_value") {
        let text = b.as_str().unwrap_or_default();
        put_bytes_field(
            &mut out,
            7,
            &unbase64(text).ok_or_else(|| bad(path, "bytesValue"))?,
        );
    }
    Ok(out)
}

/// `ArrayValue` and `KeyValueList` alike: field 1 repeated, one encoded item per entry of
/// the JSON object's `values`.
fn values_message<E>(
    list_obj: &Node<'_>,
    mut item: impl FnMut(&Node<'_>) -> Result<Vec<u8>, E>,
) -> Result<Vec<u8>, E> {
    let mut body = Vec::new();
    for v in list_obj
        .as_object()
        .map_or(&[][..], |o| list(o, "values", "values"))
    {
        put_bytes_field(&mut body, 1, &item(v)?);
    }
    Ok(body)
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

fn key_value(v: &Node<'_>, path: &str) -> Out {
    let obj = object(v, path)?;
    let mut out = Vec::new();
    put_str(&mut out, 1, obj, "key", "key");
    if let Some(value) = get(obj, "value", "value") {
        put_bytes_field(&mut out, 2, &any_value(value, path)?);
    }
    Ok(out)
}

fn attributes(
    out: &mut Vec<u8>,
    number: u32,
    obj: &Members<'_>,
    path: &str,
) -> Result<(), MalformedExport> {
    for kv in list(obj, "attributes", "attributes") {
        put_bytes_field(out, number, &key_value(kv, path)?);
    }
    Ok(())
}

fn dropped(
    out: &mut Vec<u8>,
    number: u32,
    obj: &Members<'_>,
    camel: &str,
    snake: &str,
    path: &str,
) -> Result<(), MalformedExport> {
    put_varint_field(out, number, u64_of(get(obj, camel, snake), path)?);
    Ok(())
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

fn span(v: &Node<'_>, path: &str) -> Out {
    let s = object(v, path)?;
    let mut out = Vec::new();
    let id = |camel, snake| hex_bytes(s, camel, snake, path);
    let trace_id = id("traceId", "trace_id")?;
    if !trace_id.is_empty() {
        put_bytes_field(&mut out, 1, &trace_id);
    }
    let span_id = id("spanId", "span_id")?;
    if !span_id.is_empty() {
        put_bytes_field(&mut out, 2, &span_id);
    }
    put_str(&mut out, 3, s, "traceState", "trace_state");
    let parent = id("parentSpanId", "parent_span_id")?;
    if !parent.is_empty() {
        put_bytes_field(&mut out, 4, &parent);
    }
    put_str(&mut out, 5, s, "name", "name");
    put_varint_field(
        &mut out,
        6,
        enum_of(get(s, "kind", "kind"), &SPAN_KINDS, path)?,
    );
    let time = |camel, snake| u64_of(get(s, camel, snake), path);
    put_fixed64_field(
        &mut out,
        7,
        time("startTimeUnixNano", "start_time_unix_nano")?,
    );
    put_fixed64_field(&mut out, 8, time("endTimeUnixNano", "end_time_unix_nano")?);
    attributes(&mut out, 9, s, path)?;
    dropped(
        &mut out,
        10,
        s,
        "droppedAttributesCount",
        "dropped_attributes_count",
        path,
    )?;
    for e in list(s, "events", "events") {
        let e = object(e, path)?;
        let mut body = Vec::new();
        put_fixed64_field(
            &mut body,
            1,
            u64_of(get(e, "timeUnixNano", "time_unix_nano"), path)?,
        );
        put_str(&mut body, 2, e, "name", "name");
        attributes(&mut body, 3, e, path)?;
        dropped(
            &mut body,
            4,
            e,
            "droppedAttributesCount",
            "dropped_attributes_count",
            path,
        )?;
        put_bytes_field(&mut out, 11, &body);
    }
    dropped(
        &mut out,
        12,
        s,
        "droppedEventsCount",
        "dropped_events_count",
        path,
    )?;
    for l in list(s, "links", "links") {
        let l = object(l, path)?;
        let mut body = Vec::new();
        put_bytes_field(&mut body, 1, &hex_bytes(l, "traceId", "trace_id", path)?);
        put_bytes_field(&mut body, 2, &hex_bytes(l, "spanId", "span_id", path)?);
        put_str(&mut body, 3, l, "traceState", "trace_state");
        attributes(&mut body, 4, l, path)?;
        dropped(
            &mut body,
            5,
            l,
            "droppedAttributesCount",
            "dropped_attributes_count",
            path,
        )?;
        let flags = u64_of(get(l, "flags", "flags"), path)?;
        if flags != 0 {
            put_varint(&mut body, 6 << 3 | 5);
            body.extend_from_slice(&(flags as u32).to_le_bytes());
        }
        put_bytes_field(&mut out, 13, &body);
    }
    dropped(
        &mut out,
        14,
        s,
        "droppedLinksCount",
        "dropped_links_count",
        path,
    )?;
    if let Some(st) = get(s, "status", "status").and_then(Node::as_object) {
        let mut body = Vec::new();
        put_str(&mut body, 2, st, "message", "message");
        put_varint_field(
            &mut body,
            3,
            enum_of(member(st, "code"), &STATUS_CODES, path)?,
        );
        put_bytes_field(&mut out, 15, &body);
    }
    let flags = u64_of(get(s, "flags", "flags"), path)?;
    if flags != 0 {
        put_varint(&mut out, 16 << 3 | 5);
        out.extend_from_slice(&(flags as u32).to_le_bytes());
    }
    Ok(out)
}

/// Writes an OTLP JSON export request as `ExportTraceServiceRequest` protobuf.
pub fn json_to_protobuf(body: &[u8]) -> Out {
    let value =
        parse_node(body).map_err(|e| MalformedExport(format!("JSON export request: {e}")))?;
    let root = object(&value, "the request")?;
    let mut out = Vec::new();
    for (r, rs) in list(root, "resourceSpans", "resource_spans")
        .iter()
        .enumerate()
    {
        let path = format!("resourceSpans[{r}]");
        let rs = object(rs, &path)?;
        let mut rbody = Vec::new();
        if let Some(res) = get(rs, "resource", "resource").and_then(Node::as_object) {
            let mut b = Vec::new();
            attributes(&mut b, 1, res, &path)?;
            dropped(
                &mut b,
                2,
                res,
                "droppedAttributesCount",
                "dropped_attributes_count",
                &path,
            )?;
            put_bytes_field(&mut rbody, 1, &b);
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
            let spath = format!("{path}.scopeSpans[{s}]");
            let ss = object(ss, &spath)?;
            let mut sbody = Vec::new();
            let scope = get(ss, "scope", "scope")
                .or_else(|| get(ss, "instrumentationLibrary", "instrumentation_library"));
            if let Some(sc) = scope.and_then(Node::as_object) {
                let mut b = Vec::new();
                put_str(&mut b, 1, sc, "name", "name");
                put_str(&mut b, 2, sc, "version", "version");
                attributes(&mut b, 3, sc, &spath)?;
                dropped(
                    &mut b,
                    4,
                    sc,
                    "droppedAttributesCount",
                    "dropped_attributes_count",
                    &spath,
                )?;
                put_bytes_field(&mut sbody, 1, &b);
            }
            for (k, sp) in list(ss, "spans", "spans").iter().enumerate() {
                put_bytes_field(&mut sbody, 2, &span(sp, &format!("{spath}.spans[{k}]"))?);
            }
            put_str(&mut sbody, 3, ss, "schemaUrl", "schema_url");
            put_bytes_field(&mut rbody, 2, &sbody);
        }
        put_str(&mut rbody, 3, rs, "schemaUrl", "schema_url");
        put_bytes_field(&mut out, 1, &rbody);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::formats::pipeline_parts::{proto, read_span};
    use serde_json::json;

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
