//! OTLP traces in their protobuf encoding: `ExportTraceServiceRequest`, what the Python and
//! Go OTLP/HTTP exporters send by default (`application/x-protobuf`).
//!
//! A small decoder of the protobuf wire format, written for the five messages a trace export
//! uses (request, resource spans, scope spans, span, event) and the attribute values
//! (`KeyValue`, `AnyValue`), rather than a generated one (prost): it keeps no copy of the
//! input, it records where each span lies in the input so the pipeline can forward the span's
//! own bytes untouched, and it adds a few kilobytes of wasm instead of a code generator and a
//! runtime crate (BENCHMARKS.md, "OTLP endpoint", has the figures).
//!
//! Spans become the same [`OtelSpan`] the JSON reader ([`super::otlp`]) produces, with ids as
//! lowercase hex and 64-bit integers as numbers, so everything after reading (conventions,
//! join, verdict) is shared by both encodings.
//!
//! Field numbers are those of opentelemetry-proto v1 (`trace/v1/trace.proto`,
//! `common/v1/common.proto`); unknown fields are skipped as the wire format allows, so
//! a newer exporter's additions never fail the read.

use std::borrow::Cow;
use std::fmt;
use std::ops::Range;

use serde_json::{Map, Number, Value};

use super::model::Times;
use super::otel::{AttrValue as Attr, Attrs, OtelEvent, OtelSpan};

/// Why a protobuf export could not be read: the message path and the byte offset.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProtoError {
    pub offset: usize,
    pub path: String,
    pub message: String,
}

impl fmt::Display for ProtoError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "protobuf {} at byte {}: {}",
            self.path, self.offset, self.message
        )
    }
}

/// Where in the request a field is, built into text only when an error names it (a span
/// has a dozen fields and as many attributes; formatting each path would cost more than
/// reading the field).
#[derive(Clone, Copy)]
struct Path<'a> {
    parent: Option<&'a Path<'a>>,
    name: &'a str,
    index: Option<usize>,
}

impl<'a> Path<'a> {
    const fn root(name: &'static str) -> Path<'static> {
        Path {
            parent: None,
            name,
            index: None,
        }
    }
    fn at(&'a self, name: &'a str) -> Path<'a> {
        Path {
            parent: Some(self),
            name,
            index: None,
        }
    }
    fn item(&'a self, name: &'a str, index: usize) -> Path<'a> {
        Path {
            parent: Some(self),
            name,
            index: Some(index),
        }
    }
}

impl fmt::Display for Path<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(parent) = self.parent {
            if parent.parent.is_some() {
                write!(f, "{parent}.")?;
            }
        }
        f.write_str(self.name)?;
        if let Some(i) = self.index {
            write!(f, "[{i}]")?;
        }
        Ok(())
    }
}

/// One `ScopeSpans` of a request: its bytes other than the spans (scope, schema url, unknown
/// fields), and where each span lies.
#[derive(Debug, Clone, Default)]
pub(crate) struct WireScope {
    /// The ranges of every field except `spans` (field 2), in input order.
    pub header: Vec<Range<usize>>,
    pub spans: Vec<Range<usize>>,
    /// The field number this scope came in: 2 (`scope_spans`) or 1000 (the deprecated
    /// `instrumentation_library_spans`), so a rebuilt request says it the same way.
    pub field: u32,
}

/// One `ResourceSpans`: its bytes other than the scopes, and its scopes.
#[derive(Debug, Clone, Default)]
pub(crate) struct WireResource {
    pub header: Vec<Range<usize>>,
    pub scopes: Vec<WireScope>,
}

/// A decoded request: the layout of the input, and each span read.
/// Its spans borrow their names, attribute keys and string attribute values from the input
/// (protobuf strings are the UTF-8 bytes themselves): copying each into a JSON value cost an
/// allocation per attribute, where the JSON reader borrows the same strings.
#[derive(Debug, Clone, Default)]
pub(crate) struct WireRequest<'a> {
    pub resources: Vec<WireResource>,
    /// `(resource, scope, index in scope, span)` in input order.
    pub spans: Vec<((usize, usize, usize), OtelSpan<'a>)>,
}

/// Reads an `ExportTraceServiceRequest`.
pub(crate) fn decode(input: &[u8]) -> Result<WireRequest<'_>, ProtoError> {
    let mut out = WireRequest::default();
    let root = Path::root("ExportTraceServiceRequest");
    let mut top = Fields::new(input, 0, root);
    while let Some(field) = top.next()? {
        if field.number != 1 {
            continue;
        }
        let at = out.resources.len();
        let path = root.item("resource_spans", at);
        let body = field.bytes(&path)?;
        let resource = resource_spans(input, body, &path, at, &mut out.spans)?;
        out.resources.push(resource);
    }
    Ok(out)
}

fn resource_spans<'a>(
    input: &'a [u8],
    range: Range<usize>,
    path: &Path<'_>,
    at: usize,
    spans: &mut Vec<((usize, usize, usize), OtelSpan<'a>)>,
) -> Result<WireResource, ProtoError> {
    let mut resource = WireResource::default();
    let mut fields = Fields::new(input, range.start, *path);
    fields.end = range.end;
    while let Some(field) = fields.next()? {
        if field.number != 2 && field.number != 1000 {
            resource.header.push(field.whole.clone());
            continue;
        }
        let s = resource.scopes.len();
        let spath = path.item("scope_spans", s);
        let body = field.bytes(&spath)?;
        let mut scope = WireScope {
            field: field.number,
            ..WireScope::default()
        };
        let mut sf = Fields::new(input, body.start, spath);
        sf.end = body.end;
        while let Some(f) = sf.next()? {
            if f.number != 2 {
                scope.header.push(f.whole.clone());
                continue;
            }
            let k = scope.spans.len();
            let kpath = spath.item("spans", k);
            let body = f.bytes(&kpath)?;
            spans.push(((at, s, k), span(input, body.clone(), &kpath)?));
            scope.spans.push(f.whole.clone());
        }
        resource.scopes.push(scope);
    }
    Ok(resource)
}

fn span<'a>(
    input: &'a [u8],
    range: Range<usize>,
    path: &Path<'_>,
) -> Result<OtelSpan<'a>, ProtoError> {
    let mut s = OtelSpan::default();
    let mut attrs = Vec::new();
    let (mut start, mut end, mut code) = (None, None, None);
    let mut fields = Fields::new(input, range.start, *path);
    fields.end = range.end;
    while let Some(f) = fields.next()? {
        match f.number {
            1 => s.trace_id = hex_id(&input[f.bytes(path)?]).map(Cow::Owned),
            2 => s.span_id = hex_id(&input[f.bytes(path)?]).map(Cow::Owned),
            4 => s.parent_id = hex_id(&input[f.bytes(path)?]).map(Cow::Owned),
            5 => s.name = Some(Cow::Borrowed(f.str(input, &path.at("name"))?)),
            7 => start = Some(f.fixed64(&path.at("start_time_unix_nano"))?),
            8 => end = Some(f.fixed64(&path.at("end_time_unix_nano"))?),
            9 => {
                let kpath = path.at("attributes");
                attrs.push(attribute(input, f.bytes(&kpath)?, &kpath, 0)?);
            }
            11 => {
                let epath = path.item("events", s.events.len());
                s.events.push(event(input, f.bytes(&epath)?, &epath)?);
            }
            15 => {
                let spath = path.at("status");
                let mut sf = Fields::new(input, f.bytes(&spath)?.start, spath);
                sf.end = f.bytes(&spath)?.end;
                while let Some(x) = sf.next()? {
                    if x.number == 3 {
                        code = Some(x.varint(&spath.at("code"))?);
                    }
                }
            }
            _ => {}
        }
    }
    s.attrs = Attrs::from_list(attrs);
    s.status = match code {
        Some(2) => Some("error"),
        Some(1) => Some("ok"),
        _ => None,
    };
    if end.unwrap_or(0) == 0 {
        s.status = Some("unfinished");
    }
    s.times = Times {
        start: start.map(i128::from),
        end: end.filter(|&e| e != 0).map(i128::from),
    };
    Ok(s)
}

fn event<'a>(
    input: &'a [u8],
    range: Range<usize>,
    path: &Path<'_>,
) -> Result<OtelEvent<'a>, ProtoError> {
    let mut e = OtelEvent::default();
    let mut attrs = Vec::new();
    let mut fields = Fields::new(input, range.start, *path);
    fields.end = range.end;
    while let Some(f) = fields.next()? {
        match f.number {
            2 => e.name = Cow::Borrowed(f.str(input, &path.at("name"))?),
            3 => {
                let kpath = path.at("attributes");
                attrs.push(attribute(input, f.bytes(&kpath)?, &kpath, 0)?);
            }
            _ => {}
        }
    }
    // The first value of a repeated key kept, as the JSON readers keep it.
    e.attrs = Attrs::from_list(attrs);
    Ok(e)
}

/// How deep `AnyValue`s may nest (an array or a key-value list holding another), as deep as
/// the protobuf libraries' own default recursion limit. Each level is a call of
/// [`any_value`], so a request nested deeper would overflow the stack; the JSON reader's
/// limit (128 levels of JSON, three per `AnyValue`) lets fewer through.
const MAX_VALUE_DEPTH: usize = 100;

/// `KeyValue { string key = 1; AnyValue value = 2; }`: a span's or event's attribute, or a
/// member of a key-value list `depth` arrays and lists deep. Its key and a string value are
/// borrowed from the input.
fn attribute<'a>(
    input: &'a [u8],
    range: Range<usize>,
    path: &Path<'_>,
    depth: usize,
) -> Result<(Cow<'a, str>, Attr<'a>), ProtoError> {
    let (mut key, mut value) = (Cow::Borrowed(""), Attr::Json(Value::Null));
    let mut fields = Fields::new(input, range.start, *path);
    fields.end = range.end;
    while let Some(f) = fields.next()? {
        match f.number {
            1 => key = Cow::Borrowed(f.str(input, &path.at("key"))?),
            2 => {
                let vpath = path.at("value");
                let body = f.bytes(&vpath)?;
                // As `any_value`, the last field of the oneof counts.
                let mut vf = Fields::new(input, body.start, vpath);
                vf.end = body.end;
                value = Attr::Json(Value::Null);
                while let Some(v) = vf.next()? {
                    if v.number == 1 {
                        value = Attr::text(v.str(input, &vpath)?);
                    } else if let Some(json) = one_value(input, &v, &vpath, depth)? {
                        value = Attr::Json(json);
                    }
                }
            }
            _ => {}
        }
    }
    Ok((key, value))
}

/// `AnyValue`, as the same plain JSON value the JSON reader makes of it; `depth` counts the
/// arrays and key-value lists around it.
fn any_value(
    input: &[u8],
    range: Range<usize>,
    path: &Path<'_>,
    depth: usize,
) -> Result<Value, ProtoError> {
    let mut value = Value::Null;
    let mut fields = Fields::new(input, range.start, *path);
    fields.end = range.end;
    while let Some(f) = fields.next()? {
        if let Some(v) = one_value(input, &f, path, depth)? {
            value = v;
        }
    }
    Ok(value)
}

/// The value one field of an `AnyValue` gives, or `None` for a field it does not have.
fn one_value(
    input: &[u8],
    f: &Field,
    path: &Path<'_>,
    depth: usize,
) -> Result<Option<Value>, ProtoError> {
    Ok(Some(match f.number {
        1 => Value::String(f.string(input, path)?),
        2 => Value::Bool(f.varint(path)? != 0),
        3 => Value::from(f.varint(path)? as i64),
        4 => {
            let bits = f.fixed64(path)?;
            Number::from_f64(f64::from_bits(bits)).map_or(Value::Null, Value::Number)
        }
        5 | 6 => {
            let body = f.bytes(path)?;
            if depth >= MAX_VALUE_DEPTH {
                return Err(f.err(
                    path,
                    format!(
                        "a value is nested more than {MAX_VALUE_DEPTH} arrays or \
                             key-value lists deep"
                    ),
                ));
            }
            let mut list = Fields::new(input, body.start, *path);
            list.end = body.end;
            let (mut items, mut map) = (Vec::new(), Map::new());
            while let Some(item) = list.next()? {
                if item.number != 1 {
                    continue;
                }
                let b = item.bytes(path)?;
                if f.number == 5 {
                    items.push(any_value(input, b, path, depth + 1)?);
                } else {
                    let (k, v) = attribute(input, b, path, depth + 1)?;
                    map.insert(k.into_owned(), v.into_value());
                }
            }
            if f.number == 5 {
                Value::Array(items)
            } else {
                Value::Object(map)
            }
        }
        // JSON carries bytes as base64, so both encodings read the same value.
        7 => Value::String(base64(&input[f.bytes(path)?])),
        _ => return Ok(None),
    }))
}

fn hex_id(bytes: &[u8]) -> Option<String> {
    if bytes.is_empty() || bytes.iter().all(|&b| b == 0) {
        return None;
    }
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let mut s = String::with_capacity(bytes.len() * 2);
    for &b in bytes {
        s.push(HEX[usize::from(b >> 4)] as char);
        s.push(HEX[usize::from(b & 15)] as char);
    }
    Some(s)
}

/// Standard base64 with padding.
pub(crate) fn base64(bytes: &[u8]) -> String {
    const A: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let n = (u32::from(chunk[0]) << 16)
            | (u32::from(*chunk.get(1).unwrap_or(&0)) << 8)
            | u32::from(*chunk.get(2).unwrap_or(&0));
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(A[(n >> (18 - 6 * i) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// One field of a message: its number, wire type, value range, and whole range (tag
/// included), so a field can be copied as it came.
struct Field {
    number: u32,
    wire: u8,
    value: Range<usize>,
    whole: Range<usize>,
    varint: u64,
}

impl Field {
    fn err(&self, path: &Path<'_>, message: String) -> ProtoError {
        ProtoError {
            offset: self.whole.start,
            path: path.to_string(),
            message,
        }
    }
    fn bytes(&self, path: &Path<'_>) -> Result<Range<usize>, ProtoError> {
        if self.wire != 2 {
            return Err(self.err(
                path,
                format!(
                    "field {} has wire type {}, expected 2 (length-delimited)",
                    self.number, self.wire
                ),
            ));
        }
        Ok(self.value.clone())
    }
    fn string(&self, input: &[u8], path: &Path<'_>) -> Result<String, ProtoError> {
        self.str(input, path).map(str::to_owned)
    }
    fn str<'a>(&self, input: &'a [u8], path: &Path<'_>) -> Result<&'a str, ProtoError> {
        let r = self.bytes(path)?;
        std::str::from_utf8(&input[r])
            .map_err(|e| self.err(path, format!("a string field is not UTF-8 ({e})")))
    }
    fn varint(&self, path: &Path<'_>) -> Result<u64, ProtoError> {
        if self.wire != 0 {
            return Err(self.err(
                path,
                format!(
                    "field {} has wire type {}, expected 0 (varint)",
                    self.number, self.wire
                ),
            ));
        }
        Ok(self.varint)
    }
    fn fixed64(&self, path: &Path<'_>) -> Result<u64, ProtoError> {
        if self.wire != 1 {
            return Err(self.err(
                path,
                format!(
                    "field {} has wire type {}, expected 1 (64-bit)",
                    self.number, self.wire
                ),
            ));
        }
        Ok(self.varint)
    }
}

/// The fields of one message, in order.
struct Fields<'a> {
    input: &'a [u8],
    pos: usize,
    end: usize,
    path: Path<'a>,
}

impl<'a> Fields<'a> {
    fn new(input: &'a [u8], pos: usize, path: Path<'a>) -> Self {
        Fields {
            input,
            pos,
            end: input.len(),
            path,
        }
    }

    fn fail(&self, offset: usize, message: &str) -> ProtoError {
        ProtoError {
            offset,
            path: self.path.to_string(),
            message: message.to_string(),
        }
    }

    fn read_varint(&mut self) -> Result<u64, ProtoError> {
        let start = self.pos;
        let mut value = 0u64;
        for shift in (0..70).step_by(7) {
            let Some(&b) = self.input[..self.end].get(self.pos) else {
                return Err(self.fail(start, "the message ends inside a varint"));
            };
            self.pos += 1;
            if shift == 63 && b > 1 {
                return Err(self.fail(start, "a varint is longer than 64 bits"));
            }
            value |= u64::from(b & 0x7f) << shift;
            if b & 0x80 == 0 {
                return Ok(value);
            }
        }
        Err(self.fail(start, "a varint is longer than 10 bytes"))
    }

    fn next(&mut self) -> Result<Option<Field>, ProtoError> {
        if self.pos >= self.end {
            return Ok(None);
        }
        let start = self.pos;
        let tag = self.read_varint()?;
        let number = (tag >> 3) as u32;
        let wire = (tag & 7) as u8;
        if number == 0 || tag >> 3 > u64::from(u32::MAX >> 3) {
            return Err(self.fail(start, &format!("invalid field number in tag {tag}")));
        }
        let mut varint = 0;
        let value = match wire {
            0 => {
                let at = self.pos;
                varint = self.read_varint()?;
                at..self.pos
            }
            1 | 5 => {
                let n = if wire == 1 { 8 } else { 4 };
                if self.end - self.pos < n {
                    return Err(self.fail(start, "the message ends inside a fixed-size field"));
                }
                let mut buf = [0u8; 8];
                buf[..n].copy_from_slice(&self.input[self.pos..self.pos + n]);
                varint = u64::from_le_bytes(buf);
                self.pos += n;
                self.pos - n..self.pos
            }
            2 => {
                let len = self.read_varint()?;
                if len > (self.end - self.pos) as u64 {
                    return Err(self.fail(
                        start,
                        &format!(
                            "field {number} says {len} bytes but only {} remain",
                            self.end - self.pos
                        ),
                    ));
                }
                let at = self.pos;
                self.pos += len as usize;
                at..self.pos
            }
            other => {
                return Err(self.fail(
                    start,
                    &format!("field {number} has wire type {other}, which OTLP never uses"),
                ))
            }
        };
        Ok(Some(Field {
            number,
            wire,
            value,
            whole: start..self.pos,
            varint,
        }))
    }
}

// ---- encoding: what the pipeline writes (annotations, rebuilt requests) ----

pub(crate) fn put_varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// A length-delimited field: tag, length, bytes.
pub(crate) fn put_bytes_field(out: &mut Vec<u8>, number: u32, bytes: &[u8]) {
    put_varint(out, u64::from(number) << 3 | 2);
    put_varint(out, bytes.len() as u64);
    out.extend_from_slice(bytes);
}

/// An attribute value for an annotation.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum AttrValue {
    Str(String),
    Int(i64),
}

/// `KeyValue` of a span's `attributes` (field 9), ready to append to the span's bytes: a
/// repeated field may appear anywhere in a message, so appending adds the attribute and
/// leaves every other byte of the span as the exporter wrote it.
pub(crate) fn span_attribute(key: &str, value: &AttrValue) -> Vec<u8> {
    let mut any = Vec::new();
    match value {
        AttrValue::Str(s) => put_bytes_field(&mut any, 1, s.as_bytes()),
        AttrValue::Int(i) => {
            put_varint(&mut any, 3 << 3);
            put_varint(&mut any, *i as u64);
        }
    }
    let mut kv = Vec::new();
    put_bytes_field(&mut kv, 1, key.as_bytes());
    put_bytes_field(&mut kv, 2, &any);
    let mut out = Vec::new();
    put_bytes_field(&mut out, 9, &kv);
    out
}

/// The attributes of a decoded span, for tests and diagnostics.
#[cfg(test)]
pub(crate) fn attrs_of(input: &[u8]) -> super::otel::Attrs<'_> {
    decode(input).unwrap().spans.remove(0).1.attrs
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use serde_json::json;

    /// A tiny encoder for building test inputs, independent of the decoder.
    pub(crate) fn msg(fields: &[(u32, W)]) -> Vec<u8> {
        let mut out = Vec::new();
        for (n, w) in fields {
            match w {
                W::V(v) => {
                    put_varint(&mut out, u64::from(*n) << 3);
                    put_varint(&mut out, *v);
                }
                W::F64(v) => {
                    put_varint(&mut out, u64::from(*n) << 3 | 1);
                    out.extend_from_slice(&v.to_le_bytes());
                }
                W::B(b) => put_bytes_field(&mut out, *n, b),
            }
        }
        out
    }
    pub(crate) enum W {
        V(u64),
        F64(u64),
        B(Vec<u8>),
    }
    pub(crate) fn s(text: &str) -> W {
        W::B(text.as_bytes().to_vec())
    }
    pub(crate) fn kv_str(key: &str, value: &str) -> W {
        W::B(msg(&[(1, s(key)), (2, W::B(msg(&[(1, s(value))])))]))
    }

    fn request(spans: Vec<Vec<u8>>) -> Vec<u8> {
        let resource = msg(&[(1, kv_str("service.name", "agent"))]);
        let scope = msg(&[(1, s("tracer")), (2, s("1.0"))]);
        let mut sc = vec![(1, W::B(scope))];
        sc.extend(spans.into_iter().map(|b| (2, W::B(b))));
        let rs = msg(&[
            (1, W::B(resource)),
            (2, W::B(msg(&sc))),
            (3, s("https://opentelemetry.io/schemas/1.21.0")),
        ]);
        msg(&[(1, W::B(rs))])
    }

    #[test]
    fn reads_a_span_like_the_json_reader() {
        let span = msg(&[
            (1, W::B(vec![0xab; 16])),
            (2, W::B(vec![0x01, 0x02, 0, 0, 0, 0, 0, 0xff])),
            (4, W::B(vec![])),
            (5, s("execute_tool ls")),
            (7, W::F64(10)),
            (8, W::F64(20)),
            (9, kv_str("gen_ai.operation.name", "execute_tool")),
            (9, kv_str("gen_ai.operation.name", "ignored: first wins")),
            (
                9,
                W::B(msg(&[(1, s("n")), (2, W::B(msg(&[(3, W::V(u64::MAX))])))])),
            ),
            (
                9,
                W::B(msg(&[
                    (1, s("list")),
                    (
                        2,
                        W::B(msg(&[(
                            5,
                            W::B(msg(&[
                                (1, W::B(msg(&[(1, s("a"))]))),
                                (1, W::B(msg(&[(2, W::V(1))]))),
                                (1, W::B(msg(&[(4, W::F64(1.5f64.to_bits()))]))),
                                (1, W::B(msg(&[(7, W::B(b"hi".to_vec()))]))),
                            ])),
                        )])),
                    ),
                ])),
            ),
            (
                11,
                W::B(msg(&[
                    (1, W::F64(15)),
                    (2, s("gen_ai.tool.message")),
                    (3, kv_str("id", "call_1")),
                ])),
            ),
            (15, W::B(msg(&[(2, s("boom")), (3, W::V(2))]))),
            (99, W::B(b"an unknown field is skipped".to_vec())),
        ]);
        let body = request(vec![span]);
        let req = decode(&body).unwrap();
        assert_eq!(req.resources.len(), 1);
        assert_eq!(req.resources[0].header.len(), 2);
        assert_eq!(req.resources[0].scopes[0].header.len(), 1);
        let (at, s) = &req.spans[0];
        assert_eq!(*at, (0, 0, 0));
        assert_eq!(
            s.trace_id.as_deref(),
            Some("abababababababababababababababab")
        );
        assert_eq!(s.span_id.as_deref(), Some("01020000000000ff"));
        assert_eq!(s.parent_id, None);
        assert_eq!(s.name.as_deref(), Some("execute_tool ls"));
        assert_eq!((s.times.start, s.times.end), (Some(10), Some(20)));
        assert_eq!(s.status, Some("error"));
        assert_eq!(s.attr_str("gen_ai.operation.name"), Some("execute_tool"));
        assert_eq!(s.attrs["n"], json!(-1));
        assert_eq!(s.attrs["list"], json!(["a", true, 1.5, "aGk="]));
        assert_eq!(s.events[0].name, "gen_ai.tool.message");
        assert_eq!(s.events[0].attrs["id"], json!("call_1"));
    }

    #[test]
    fn an_open_span_is_unfinished_and_ok_status_reads() {
        let open = msg(&[(5, s("x")), (7, W::F64(10))]);
        let closed = msg(&[
            (5, s("y")),
            (8, W::F64(20)),
            (15, W::B(msg(&[(3, W::V(1))]))),
        ]);
        let body = request(vec![open, closed]);
        let req = decode(&body).unwrap();
        assert_eq!(req.spans[0].1.status, Some("unfinished"));
        assert_eq!(req.spans[1].1.status, Some("ok"));
        assert_eq!(req.spans[1].0, (0, 0, 1));
    }

    #[test]
    fn broken_input_names_the_field_and_offset() {
        let good = request(vec![msg(&[(5, s("x")), (8, W::F64(2))])]);
        // Cut anywhere inside: an error, never a panic, and never a silent partial read of
        // a length-delimited field.
        for cut in 1..good.len() {
            if let Err(e) = decode(&good[..cut]) {
                assert!(e.offset < good.len(), "{e}");
                assert!(e.to_string().starts_with("protobuf "), "{e}");
            }
        }
        let e = decode(&good[..good.len() - 3]).unwrap_err();
        assert!(e.path.starts_with("ExportTraceServiceRequest"), "{e}");
        assert_eq!(e.path, "ExportTraceServiceRequest");
        assert!(e.message.contains("remain"), "{e}");
        // A span whose name is a varint: the path names the span.
        let bad = request(vec![msg(&[(5, W::V(3))])]);
        let e = decode(&bad).unwrap_err();
        assert_eq!(e.path, "resource_spans[0].scope_spans[0].spans[0].name");
        assert!(e.message.contains("wire type 0"), "{e}");
        // Groups (wire types 3, 4) are not OTLP.
        let e = decode(&[0x0b]).unwrap_err();
        assert!(e.message.contains("wire type 3"), "{e}");
        assert!(decode(&[0xff; 11]).is_err());
        assert_eq!(decode(&[]).unwrap().spans.len(), 0);
    }

    #[test]
    fn appended_attributes_read_back() {
        let span = msg(&[(5, s("x")), (8, W::F64(2)), (9, kv_str("a", "1"))]);
        let mut annotated = span.clone();
        annotated.extend(span_attribute(
            "toolslice.status",
            &AttrValue::Str("silent_clip".into()),
        ));
        annotated.extend(span_attribute(
            "toolslice.observed_bytes",
            &AttrValue::Int(1234),
        ));
        let body = request(vec![annotated]);
        let attrs = attrs_of(&body);
        assert_eq!(attrs["a"], json!("1"));
        assert_eq!(attrs["toolslice.status"], json!("silent_clip"));
        assert_eq!(attrs["toolslice.observed_bytes"], json!(1234));
    }

    /// An attribute whose value is an array holding an array ... `levels` deep, built in
    /// one pass (wrapping one level at a time would copy the whole value at each level).
    fn nested_arrays(levels: usize) -> Vec<u8> {
        let inner = msg(&[(1, s("x"))]);
        let varint_len = |v: usize| {
            let mut b = Vec::new();
            put_varint(&mut b, v as u64);
            b.len()
        };
        // (length of the ArrayValue, length of the AnyValue holding it), innermost first.
        let mut lens = Vec::with_capacity(levels);
        let mut any = inner.len();
        for _ in 0..levels {
            let array = 1 + varint_len(any) + any;
            lens.push((array, any));
            any = 1 + varint_len(array) + array;
        }
        let mut out = Vec::with_capacity(any);
        for &(array, inside) in lens.iter().rev() {
            out.push(5 << 3 | 2);
            put_varint(&mut out, array as u64);
            out.push(1 << 3 | 2);
            put_varint(&mut out, inside as u64);
        }
        out.extend_from_slice(&inner);
        out
    }

    #[test]
    fn deeply_nested_values_are_refused_not_recursed_into() {
        // Before: an attribute value of arrays nested 200,000 deep (about 1.2 MB) recursed
        // once per level and overflowed the stack, which aborts the process (natively) or
        // runs the shadow stack into the heap (wasm).
        let kv = |levels| W::B(msg(&[(1, s("deep")), (2, W::B(nested_arrays(levels)))]));
        let read = |levels| {
            decode(&request(vec![msg(&[(5, s("x")), (9, kv(levels))])]))
                .map(|req| req.spans[0].1.attrs["deep"].is_array())
        };
        assert!(read(MAX_VALUE_DEPTH).unwrap());
        for levels in [MAX_VALUE_DEPTH + 1, 200_000] {
            let e = read(levels).unwrap_err();
            assert_eq!(
                e.path,
                "resource_spans[0].scope_spans[0].spans[0].attributes.value"
            );
            assert!(e.message.contains("nested more than"), "{e}");
        }
    }

    #[test]
    fn base64_matches_the_rfc_vectors() {
        for (plain, coded) in [
            ("", ""),
            ("f", "Zg=="),
            ("fo", "Zm8="),
            ("foo", "Zm9v"),
            ("foob", "Zm9vYg=="),
            ("fooba", "Zm9vYmE="),
            ("foobar", "Zm9vYmFy"),
        ] {
            assert_eq!(base64(plain.as_bytes()), coded);
        }
    }
}
