//! Export requests on the wire: split one into what is forwarded now and the tool spans held
//! for their verdict, annotate a held span, merge held spans into one request.
//!
//! Both encodings are handled the same way: a held span is kept as a one-span export request
//! (its resource and scope with it) in the encoding it came in, so it can be forwarded on its
//! own later, and the rest of the request is forwarded with the held spans taken out. In
//! protobuf every byte outside the removed spans is copied as it came (resource, scope,
//! schema urls, fields this reader does not know); in JSON too, from the byte ranges of
//! [`json_wire`], for a request of the ordinary shape. A JSON request of another shape (a
//! list member given twice, a span the span reader declines) is read as a tree
//! ([`tree::parse`], its work bounded) and written again from it, every member kept in
//! order.

use std::borrow::Cow;
use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::{json, Map, Value};

use super::tree;
use super::MAX_DISTINCT_MESSAGES_PER_TRACE;
use super::{
    Annotation, Encoding, MalformedExport, ATTR_DETAIL, ATTR_INJECTED, ATTR_JOIN, ATTR_OBSERVED,
    ATTR_STATUS,
};
use crate::formats::pipeline_parts::json_wire::{self, Item, Level, RESOURCES, SCOPES};
use crate::formats::pipeline_parts::{
    interpret, is_request, proto, read_span, Damaged, Decoder, Encoder, ModelCall, OtelSpan,
    ToolCall,
};
use crate::formats::Collector;
use crate::record::{ReadAs, Sink};
use crate::span::{InvalidKind, SpanView};

/// One tool span held for its verdict.
#[derive(Debug, Clone, PartialEq)]
pub struct HeldSpan {
    /// Its key in its trace: the span id, or (a span without one) a digest of its bytes, so a
    /// retried export holds the same span under the same key.
    pub key: String,
    /// A one-span export request in the encoding the span came in.
    pub body: Vec<u8>,
}

/// What one export request brings to one trace.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct TraceBatch {
    /// Lowercase hex; empty for spans without a trace id.
    pub trace_id: String,
    /// The measures of the held tool spans, keyed as their [`HeldSpan`]s.
    pub(crate) tools: Vec<(String, ToolCall)>,
    /// The measures of the model calls, with their span ids (for de-duplicating retries).
    pub(crate) models: Vec<(Option<String>, ModelCall)>,
    /// The held spans themselves (not part of the measures a trace's state keeps).
    #[serde(skip)]
    pub held: Vec<HeldSpan>,
}

/// The first bytes of a batch's encoded measures (and their version).
const MEASURES_MAGIC: &[u8; 4] = b"tsm1";

impl TraceBatch {
    /// The measures alone (no span bytes), encoded as a part's calls are ([`Encoder`]): what
    /// the trace's state needs, sent from the split to the trace. As JSON they were about
    /// 0.6 times the size of the request (every earlier tool result a model input re-lists,
    /// with its digests and preview), written with every string escaped and parsed again:
    /// a sixth of a split's time.
    pub fn measures(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(64 + 256 * (self.tools.len() + self.models.len()));
        self.write_measures(&mut out);
        out
    }

    /// [`measures`](Self::measures), appended to `out`: for a caller that puts a request's
    /// parts end to end in one buffer (the JS binding's split).
    pub fn write_measures(&self, out: &mut Vec<u8>) {
        let mut w = Encoder(std::mem::take(out));
        w.0.extend_from_slice(MEASURES_MAGIC);
        w.str(&self.trace_id);
        w.u64(self.tools.len() as u64);
        for (key, tool) in &self.tools {
            w.str(key);
            w.tool_call(tool);
        }
        w.u64(self.models.len() as u64);
        for (span_id, model) in &self.models {
            w.opt_str(span_id.as_deref());
            w.model_call(model);
        }
        *out = w.0;
    }

    /// Reads [`measures`](Self::measures) back; bytes that are not whole measures are a
    /// `malformed_export`, naming the byte where they stop making sense.
    pub fn from_measures(bytes: &[u8]) -> Result<TraceBatch, MalformedExport> {
        let damaged = |d: Damaged| MalformedExport(format!("trace batch measures: {d}"));
        if bytes.get(..4) != Some(&MEASURES_MAGIC[..]) {
            return Err(MalformedExport(
                "trace batch measures: not encoded measures (or of another version)".into(),
            ));
        }
        let mut r = Decoder::new(bytes);
        r.at = 4;
        let trace_id = r.str().map_err(damaged)?;
        // Room for what the bytes can hold (a damaged count must not reserve gigabytes):
        // each call takes at least 8 encoded bytes.
        let n = r.len().map_err(damaged)?;
        let mut tools = Vec::with_capacity(n.min(r.left() / 8));
        for _ in 0..n {
            let key = r.str().map_err(damaged)?;
            tools.push((key, r.tool_call().map_err(damaged)?));
        }
        let n = r.len().map_err(damaged)?;
        let mut models = Vec::with_capacity(n.min(r.left() / 8));
        for _ in 0..n {
            let span_id = r.opt_str().map_err(damaged)?;
            models.push((span_id, r.model_call().map_err(damaged)?));
        }
        if r.left() != 0 {
            return Err(damaged(r.bad("end")));
        }
        Ok(TraceBatch {
            trace_id,
            tools,
            models,
            held: Vec::new(),
        })
    }

    /// The measures as JSON, the form `measures` had before it was bytes: still taken by
    /// the trace's `ingest`, so a split by an earlier version of the package can be sent
    /// to a trace run by this one.
    pub fn from_measures_json(text: &str) -> Result<TraceBatch, MalformedExport> {
        serde_json::from_str(text)
            .map_err(|e| MalformedExport(format!("trace batch measures: {e}")))
    }

    pub fn tool_count(&self) -> usize {
        self.tools.len()
    }

    pub fn model_count(&self) -> usize {
        self.models.len()
    }
}

/// An export request, split.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Split {
    /// The request without the held tool spans, in its encoding; `None` when nothing is
    /// left. When nothing was held it is the input itself, byte for byte.
    pub passthrough: Option<Vec<u8>>,
    /// Per trace with a tool or model call, in first-seen order.
    pub traces: Vec<TraceBatch>,
    pub spans: u64,
    pub tools: u64,
    pub models: u64,
}

/// What a span is, read as `toolslice check` reads it.
enum Kind {
    Tool(Box<ToolCall>),
    Model(Box<ModelCall>),
    Context,
}

/// The readers report context spans and the like to a sink; the split only needs to know
/// which spans are tool and model calls.
struct Ignore;
impl Sink for Ignore {
    fn span(&mut self, _: u64, _: &mut SpanView<'_>) {}
    fn row(&mut self, _: u64, _: &mut SpanView<'_>, _: crate::record::Provenance) {}
    fn context(&mut self, _: u64, _: Option<&str>, _: Option<&str>, _: Option<&str>, _: &str) {}
    fn skipped(&mut self, _: u64, _: Option<String>, _: String) {}
    fn invalid(&mut self, _: u64, _: InvalidKind, _: String) {}
    fn blank(&mut self) {}
    fn set_format(&mut self, _: &str, _: Option<ReadAs>) {}
}

/// Reads one span as the check does; `seq` is its place in the request (read order, which
/// the join uses when times are missing).
fn kind_of(span: OtelSpan, seq: u64) -> Kind {
    let mut c = Collector::default();
    interpret(span, seq, &mut c, &mut Ignore);
    if let Some(mut t) = c.tools.pop() {
        t.at.seq = seq;
        Kind::Tool(Box::new(t))
    } else if let Some(mut m) = c.models.pop() {
        m.at.seq = seq;
        Kind::Model(Box::new(m))
    } else {
        Kind::Context
    }
}

/// Counts one span of a request (its place in it is `split.spans` after the count) and files
/// what it brings to its trace: a tool call's measures with its one-span request, which
/// `one` makes (only for a tool span), or a model call's measures. Returns whether the span
/// is held.
fn file_span(
    split: &mut Split,
    traces: &mut Traces,
    span: OtelSpan<'_>,
    one: impl FnOnce() -> Vec<u8>,
) -> bool {
    split.spans += 1;
    let trace_id = span.trace_id.clone();
    let span_id = span.span_id.clone().map(Cow::into_owned);
    match kind_of(span, split.spans) {
        Kind::Tool(call) => {
            split.tools += 1;
            let body = one();
            let key = key_of(span_id.as_deref(), &body);
            let batch = traces.of(trace_id.as_deref());
            batch.tools.push((key.clone(), *call));
            batch.held.push(HeldSpan { key, body });
            true
        }
        Kind::Model(mut call) => {
            split.models += 1;
            // An input of more tool messages than a trace keeps distinct is not kept (see
            // `TraceState`): dropped here, its measures are not written out and read back
            // by the trace's state (half the memory of such a request).
            let carried = call.input.as_ref().map_or(0, Vec::len);
            if carried > MAX_DISTINCT_MESSAGES_PER_TRACE {
                call.input = Err(format!(
                    "not kept: the input carries {carried} tool messages, more than the \
                     {MAX_DISTINCT_MESSAGES_PER_TRACE} distinct ones the endpoint keeps per trace"
                ));
            }
            traces.of(trace_id.as_deref()).models.push((span_id, *call));
            false
        }
        Kind::Context => false,
    }
}

/// Groups the calls of a request by trace.
#[derive(Default)]
struct Traces {
    order: Vec<String>,
    by_id: BTreeMap<String, TraceBatch>,
}

impl Traces {
    fn of(&mut self, trace_id: Option<&str>) -> &mut TraceBatch {
        let id = trace_id.unwrap_or("").to_ascii_lowercase();
        if !self.by_id.contains_key(&id) {
            self.order.push(id.clone());
        }
        self.by_id.entry(id.clone()).or_insert_with(|| TraceBatch {
            trace_id: id,
            ..TraceBatch::default()
        })
    }
    fn into_vec(mut self) -> Vec<TraceBatch> {
        self.order
            .iter()
            .filter_map(|id| self.by_id.remove(id))
            .collect()
    }
}

fn key_of(span_id: Option<&str>, body: &[u8]) -> String {
    match span_id {
        Some(id) => id.to_ascii_lowercase(),
        None => format!("sha256:{}", &crate::hash::sha256_hex(body)[..32]),
    }
}

/// Splits an export request: reads every span, holds the tool spans, measures the model
/// calls, and keeps the rest for forwarding now.
pub fn split_export(body: &[u8], encoding: Encoding) -> Result<Split, MalformedExport> {
    match encoding {
        Encoding::Json => split_json(body),
        Encoding::Protobuf => split_proto(body),
    }
}

/// Splits an export request for an upstream that takes protobuf only when `to_protobuf`: a
/// JSON request is then written as protobuf first, once ([`super::json_to_protobuf`]), and
/// split as protobuf, so a request the writer refuses is refused here, before any span of it
/// is held. Returns the split and the encoding its parts are written in.
pub fn split_export_for(
    body: &[u8],
    encoding: Encoding,
    to_protobuf: bool,
) -> Result<(Split, Encoding), MalformedExport> {
    if to_protobuf && encoding == Encoding::Json {
        let written = super::json_to_protobuf(body)?;
        return Ok((split_proto(&written)?, Encoding::Protobuf));
    }
    Ok((split_export(body, encoding)?, encoding))
}

fn split_proto(body: &[u8]) -> Result<Split, MalformedExport> {
    let mut req = proto::decode(body).map_err(|e| MalformedExport(e.to_string()))?;
    let mut split = Split::default();
    let mut traces = Traces::default();
    let mut held = std::collections::HashSet::new();
    // Each span's values are dropped once it is measured.
    for (at, span) in std::mem::take(&mut req.spans) {
        if file_span(&mut split, &mut traces, span, || {
            one_span_proto(body, &req, at)
        }) {
            held.insert(at);
        }
    }
    split.passthrough = if held.is_empty() {
        (split.spans > 0 || !body.is_empty()).then(|| body.to_vec())
    } else {
        rebuild_proto(body, &req, |at| (!held.contains(&at)).then(Vec::new))
    };
    split.traces = traces.into_vec();
    Ok(split)
}

/// A request holding one span of `req`, with its resource's and scope's other fields.
fn one_span_proto(
    input: &[u8],
    req: &proto::WireRequest,
    (r, s, k): (usize, usize, usize),
) -> Vec<u8> {
    let resource = &req.resources[r];
    let scope = &resource.scopes[s];
    let mut sbody = Vec::new();
    for range in &scope.header {
        sbody.extend_from_slice(&input[range.clone()]);
    }
    sbody.extend_from_slice(&input[scope.spans[k].clone()]);
    let mut rbody = Vec::new();
    for range in &resource.header {
        rbody.extend_from_slice(&input[range.clone()]);
    }
    proto::put_bytes_field(&mut rbody, scope.field, &sbody);
    let mut out = Vec::new();
    proto::put_bytes_field(&mut out, 1, &rbody);
    out
}

/// Writes a request holding the spans `keep` returns `Some` for, each with the returned
/// bytes appended (annotation attributes), with their resources and scopes copied as they
/// came; `None` when no span is kept.
fn rebuild_proto(
    input: &[u8],
    req: &proto::WireRequest,
    keep: impl Fn((usize, usize, usize)) -> Option<Vec<u8>>,
) -> Option<Vec<u8>> {
    let mut out = Vec::new();
    for (r, resource) in req.resources.iter().enumerate() {
        let mut rbody = Vec::new();
        for range in &resource.header {
            rbody.extend_from_slice(&input[range.clone()]);
        }
        let mut any = false;
        for (s, scope) in resource.scopes.iter().enumerate() {
            let mut sbody = Vec::new();
            for range in &scope.header {
                sbody.extend_from_slice(&input[range.clone()]);
            }
            let mut kept = false;
            for (k, range) in scope.spans.iter().enumerate() {
                let Some(extra) = keep((r, s, k)) else {
                    continue;
                };
                kept = true;
                if extra.is_empty() {
                    sbody.extend_from_slice(&input[range.clone()]);
                } else {
                    let span = proto_value(&input[range.clone()]);
                    let mut with = span.to_vec();
                    with.extend_from_slice(&extra);
                    proto::put_bytes_field(&mut sbody, 2, &with);
                }
            }
            if kept {
                any = true;
                proto::put_bytes_field(&mut rbody, scope.field, &sbody);
            }
        }
        if any {
            proto::put_bytes_field(&mut out, 1, &rbody);
        }
    }
    (!out.is_empty()).then_some(out)
}

/// The value of a length-delimited field given its whole bytes (tag and length first).
fn proto_value(field: &[u8]) -> &[u8] {
    let mut i = 0;
    // Skip the tag varint, then the length varint.
    for _ in 0..2 {
        while field.get(i).is_some_and(|b| b & 0x80 != 0) {
            i += 1;
        }
        i += 1;
    }
    &field[i.min(field.len())..]
}

/// The member names a JSON request uses at one level (OTLP's lowerCamelCase, or the protobuf
/// JSON mapping's snake_case, or the pre-0.19 library spans).
fn member<'a>(obj: &Map<String, Value>, names: &[&'a str]) -> Option<&'a str> {
    names.iter().copied().find(|n| obj.contains_key(*n))
}

/// An object's members other than `key`, in order.
fn without(obj: &Map<String, Value>, key: &str) -> Map<String, Value> {
    obj.iter()
        .filter(|(k, _)| k.as_str() != key)
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect()
}

fn split_json(body: &[u8]) -> Result<Split, MalformedExport> {
    match json_wire::Request::spans(body) {
        Some(req) => Ok(split_wire(body, req)),
        None => split_tree(body),
    }
}

/// Where a span is: its resource's, its scope's and its own place in their lists.
type At = (usize, usize, usize);

/// [`split_json`] from the request's byte ranges: the held spans and the rest are copied
/// from the body, each span read where it stands.
fn split_wire(body: &[u8], mut req: json_wire::Request<'_, OtelSpan<'_>>) -> Split {
    // The spans first (reading one consumes it), then the bodies from the ranges.
    let mut read = Vec::new();
    for (r, resource) in objects_mut(&mut req.root) {
        for (s, scope) in objects_mut(resource) {
            for (k, span) in scope.items.iter_mut().flatten().enumerate() {
                if let Some(span) = span.object.take() {
                    read.push(((r, s, k), span));
                }
            }
        }
    }
    let mut split = Split::default();
    let mut traces = Traces::default();
    let mut held: Vec<At> = Vec::new();
    for (at, span) in read {
        if file_span(&mut split, &mut traces, span, || {
            one_span_json(&req, at).into_bytes()
        }) {
            held.push(at);
        }
    }
    split.traces = traces.into_vec();
    split.passthrough = if held.is_empty() {
        Some(body.to_vec())
    } else {
        // `held` is in read order, which is (r, s, k) order.
        let (out, left) = rebuild_json(&req, true, &mut |at, item, out| {
            let keep = held.binary_search(&at).is_err();
            if keep {
                out.push_str(req.at(&item.whole));
            }
            keep
        });
        (left > 0).then(|| out.into_bytes())
    };
    split
}

/// The object items of a level's list, with their places.
fn objects_mut<T>(level: &mut Level<T>) -> impl Iterator<Item = (usize, &mut T)> {
    level
        .items
        .iter_mut()
        .flatten()
        .enumerate()
        .filter_map(|(i, item)| item.object.as_mut().map(|o| (i, o)))
}

/// The `i`th item of a level's list, which the reading found.
fn item<T>(level: &Level<T>, i: usize) -> &Item<T> {
    &level.items.as_ref().expect("a list the reading found")[i]
}

/// A request holding the span at `at`, with its resource's and scope's other members as
/// they came, under the request's name for the resource list.
fn one_span_json<S>(req: &json_wire::Request<'_, S>, (r, s, k): At) -> String {
    let resource = item(&req.root, r).object.as_ref();
    let resource = resource.expect("a span's resource is an object");
    let scope = item(resource, s).object.as_ref();
    let scope = scope.expect("a span's scope is an object");
    let span = &item(scope, k).whole;
    let mut out = String::with_capacity(span.len() + 256);
    out.push_str("{\"");
    out.push_str(RESOURCES[req.name]);
    out.push_str("\":[");
    json_wire::write_level(&mut out, req.text, resource, |out| {
        out.push('[');
        json_wire::write_level(out, req.text, scope, |out| {
            out.push('[');
            out.push_str(req.at(span));
            out.push(']');
        });
        out.push(']');
    });
    out.push_str("]}");
    out
}

/// Writes a request back from its ranges, each span item as `span` writes it (`false`: it
/// wrote nothing, the span is left out), every other byte as it came. Returns the text and
/// the number of span items written.
///
/// `prune` is the split's rule for what is forwarded once spans are taken out: a scope with
/// no span left, or that is not an object or has no span list, is left out, and so is a
/// resource with no scope left (a resource that is not an object or has no scope list is
/// kept as it came).
fn rebuild_json<S>(
    req: &json_wire::Request<'_, S>,
    prune: bool,
    span: &mut dyn FnMut(At, &Item<S>, &mut String) -> bool,
) -> (String, usize) {
    let text = req.text;
    let mut written = 0;
    let mut out = String::with_capacity(text.len());
    json_wire::write_level(&mut out, text, &req.root, |out| {
        out.push('[');
        let mut first = true;
        let mut sep = |out: &mut String| {
            if !std::mem::replace(&mut first, false) {
                out.push(',');
            }
        };
        for (r, item) in req.root.items.iter().flatten().enumerate() {
            let Some(resource) = item.object.as_ref().filter(|o| o.items.is_some()) else {
                sep(out);
                out.push_str(req.at(&item.whole));
                continue;
            };
            let mut scopes_left = 0;
            let mut one = String::new();
            json_wire::write_level(&mut one, text, resource, |one| {
                one.push('[');
                for (s, item) in resource.items.iter().flatten().enumerate() {
                    let spans = item
                        .object
                        .as_ref()
                        .and_then(|o| o.items.as_ref().map(|v| (o, v)));
                    let Some((scope, spans)) = spans else {
                        if !prune {
                            if scopes_left > 0 {
                                one.push(',');
                            }
                            scopes_left += 1;
                            one.push_str(req.at(&item.whole));
                        }
                        continue;
                    };
                    let mark = one.len();
                    if scopes_left > 0 {
                        one.push(',');
                    }
                    let mut n = 0;
                    json_wire::write_level(one, text, scope, |one| {
                        one.push('[');
                        for (k, item) in spans.iter().enumerate() {
                            let before = one.len();
                            if n > 0 {
                                one.push(',');
                            }
                            if span((r, s, k), item, one) {
                                n += 1;
                            } else {
                                one.truncate(before);
                            }
                        }
                        one.push(']');
                    });
                    if prune && n == 0 {
                        one.truncate(mark);
                    } else {
                        scopes_left += 1;
                        written += n;
                    }
                }
                one.push(']');
            });
            if !prune || scopes_left > 0 {
                sep(out);
                out.push_str(&one);
            }
        }
        out.push(']');
    });
    (out, written)
}

/// [`split_json`] from a tree, for a request the byte-range reader declines.
fn split_tree(body: &[u8]) -> Result<Split, MalformedExport> {
    let mut value: Value = tree::parse(body).map_err(|e| {
        MalformedExport(format!(
            "JSON export request: {e} (line {}, column {})",
            e.line(),
            e.column()
        ))
    })?;
    let Some(root) = value.as_object().filter(|o| is_request(o)) else {
        return Err(MalformedExport(
            "JSON export request: expected an object with resourceSpans".into(),
        ));
    };
    let rkey = member(root, &RESOURCES).unwrap_or("resourceSpans");
    let mut split = Split::default();
    let mut traces = Traces::default();
    let mut held: Vec<(usize, usize, usize)> = Vec::new();
    let resources = root[rkey].as_array().map_or(&[][..], Vec::as_slice);
    for (r, resource) in resources.iter().enumerate() {
        let Some(resource) = resource.as_object() else {
            continue;
        };
        let Some(skey) = member(resource, &SCOPES) else {
            continue;
        };
        let scopes = resource[skey].as_array().map_or(&[][..], Vec::as_slice);
        for (s, scope) in scopes.iter().enumerate() {
            let Some(scope) = scope.as_object() else {
                continue;
            };
            let spans = scope.get("spans").and_then(Value::as_array);
            for (k, span) in spans.map_or(&[][..], Vec::as_slice).iter().enumerate() {
                let Some(obj) = span.as_object() else {
                    continue;
                };
                let one = || {
                    // The resource and scope without their lists (cloning those would
                    // copy every span of the request once per tool span).
                    let mut rh = without(resource, skey);
                    let mut sh = without(scope, "spans");
                    sh.insert("spans".into(), json!([span]));
                    rh.insert(skey.into(), json!([sh]));
                    serde_json::to_vec(&json!({ rkey: [rh] })).unwrap_or_default()
                };
                if file_span(&mut split, &mut traces, read_span(obj), one) {
                    held.push((r, s, k));
                }
            }
        }
    }
    split.traces = traces.into_vec();
    if held.is_empty() {
        split.passthrough = Some(body.to_vec());
        return Ok(split);
    }
    // Take the held spans out (last first, so earlier indices stay valid), then drop the
    // scopes and resources left empty.
    let list = value[rkey].as_array_mut().expect("checked above");
    for &(r, s, k) in held.iter().rev() {
        let resource = list[r].as_object_mut().expect("an object above");
        let skey = member(resource, &SCOPES).expect("found above");
        let scope = &mut resource[skey][s];
        if let Some(spans) = scope.get_mut("spans").and_then(Value::as_array_mut) {
            spans.remove(k);
        }
    }
    let mut left = 0;
    list.retain_mut(|resource| {
        let Some(obj) = resource.as_object_mut() else {
            return true;
        };
        let Some(skey) = member(obj, &SCOPES) else {
            return true;
        };
        if let Some(scopes) = obj[skey].as_array_mut() {
            scopes.retain(|scope| {
                let n = scope
                    .get("spans")
                    .and_then(Value::as_array)
                    .map_or(0, Vec::len);
                left += n;
                n > 0
            });
            !scopes.is_empty()
        } else {
            true
        }
    });
    split.passthrough = (left > 0).then(|| serde_json::to_vec(&value).unwrap_or_default());
    Ok(split)
}

/// Writes the verdict on a held span (a one-span request from [`split_export`]).
pub fn annotate(
    body: &[u8],
    encoding: Encoding,
    note: &Annotation,
) -> Result<Vec<u8>, MalformedExport> {
    let mut attrs: Vec<(&str, proto::AttrValue)> = vec![
        (ATTR_STATUS, proto::AttrValue::Str(note.status.clone())),
        (ATTR_DETAIL, proto::AttrValue::Str(note.detail.clone())),
        (ATTR_JOIN, proto::AttrValue::Str(note.join.clone())),
    ];
    if let Some(b) = note.observed_bytes {
        attrs.push((ATTR_OBSERVED, proto::AttrValue::Int(b as i64)));
    }
    if let Some(b) = note.injected_bytes {
        attrs.push((ATTR_INJECTED, proto::AttrValue::Int(b as i64)));
    }
    match encoding {
        Encoding::Protobuf => {
            let req = proto::decode(body).map_err(|e| MalformedExport(e.to_string()))?;
            let mut extra = Vec::new();
            for (key, value) in &attrs {
                extra.extend(proto::span_attribute(key, value));
            }
            rebuild_proto(body, &req, |_| Some(extra.clone()))
                .ok_or_else(|| MalformedExport("a held span request has no span".into()))
        }
        Encoding::Json => {
            if let Some(req) = json_wire::Request::attributes(body) {
                return annotate_wire(&req, &attrs);
            }
            let mut value: Value =
                tree::parse(body).map_err(|e| MalformedExport(format!("held span: {e}")))?;
            let mut done = false;
            for_each_span(&mut value, &mut |span| {
                let list = span
                    .entry("attributes")
                    .or_insert_with(|| Value::Array(Vec::new()));
                if !list.is_array() {
                    *list = Value::Array(Vec::new());
                }
                let list = list.as_array_mut().expect("made an array");
                list.extend(attrs.iter().map(attribute_json));
                done = true;
            });
            if !done {
                return Err(MalformedExport("a held span request has no span".into()));
            }
            Ok(serde_json::to_vec(&value).unwrap_or_default())
        }
    }
}

/// An attribute entry as OTLP JSON writes it.
fn attribute_json((key, value): &(&str, proto::AttrValue)) -> Value {
    let v = match value {
        proto::AttrValue::Str(s) => json!({ "stringValue": s }),
        // OTLP JSON writes 64-bit integers as decimal strings.
        proto::AttrValue::Int(i) => json!({ "intValue": i.to_string() }),
    };
    json!({ "key": key, "value": v })
}

/// [`annotate`] from the request's byte ranges: each span's `attributes` list gets the
/// entries appended (made when it is missing, replaced when it is not a list), every other
/// byte as it came.
fn annotate_wire(
    req: &json_wire::Request<'_, Level<()>>,
    attrs: &[(&str, proto::AttrValue)],
) -> Result<Vec<u8>, MalformedExport> {
    let entries: Vec<String> = attrs
        .iter()
        .map(|a| attribute_json(a).to_string())
        .collect();
    let entries = entries.join(",");
    let text = req.text;
    let mut spans = 0;
    let (out, _) = rebuild_json(req, false, &mut |_, item, out| {
        let Some(span) = &item.object else {
            out.push_str(req.at(&item.whole));
            return true;
        };
        spans += 1;
        let with_entries = |out: &mut String| {
            out.push('[');
            for (i, a) in span.items.iter().flatten().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(req.at(&a.whole));
            }
            if span.items.as_ref().is_some_and(|v| !v.is_empty()) {
                out.push(',');
            }
            out.push_str(&entries);
            out.push(']');
        };
        if span.list.is_some() {
            json_wire::write_level(out, text, span, with_entries);
        } else {
            out.push('{');
            for m in &span.members {
                out.push_str(req.at(&m.whole));
                out.push(',');
            }
            out.push_str("\"attributes\":");
            with_entries(out);
            out.push('}');
        }
        true
    });
    if spans == 0 {
        return Err(MalformedExport("a held span request has no span".into()));
    }
    Ok(out.into_bytes())
}

fn for_each_span(value: &mut Value, f: &mut impl FnMut(&mut Map<String, Value>)) {
    let Some(root) = value.as_object_mut() else {
        return;
    };
    let Some(rkey) = member(root, &RESOURCES) else {
        return;
    };
    for resource in root[rkey].as_array_mut().into_iter().flatten() {
        let Some(resource) = resource.as_object_mut() else {
            continue;
        };
        let Some(skey) = member(resource, &SCOPES) else {
            continue;
        };
        for scope in resource[skey].as_array_mut().into_iter().flatten() {
            let spans = scope.get_mut("spans").and_then(Value::as_array_mut);
            for span in spans.into_iter().flatten() {
                if let Some(obj) = span.as_object_mut() {
                    f(obj);
                }
            }
        }
    }
}

/// One request holding the spans of several requests of the same encoding. In protobuf the
/// concatenation of two messages is the message with both lists, so the bytes are joined;
/// in JSON the `resourceSpans` lists are.
pub fn merge(bodies: &[Vec<u8>], encoding: Encoding) -> Result<Vec<u8>, MalformedExport> {
    match encoding {
        Encoding::Protobuf => Ok(bodies.concat()),
        Encoding::Json => {
            // Each request's resource list items as they came, or (a request the byte-range
            // reader declines) as its tree writes them.
            let mut all = Vec::new();
            for body in bodies {
                if let Some(req) = json_wire::Request::outline(body) {
                    let items = req.root.items.iter().flatten();
                    all.extend(items.map(|item| req.at(&item.whole).to_string()));
                    continue;
                }
                let value: Value =
                    tree::parse(body).map_err(|e| MalformedExport(format!("held span: {e}")))?;
                let Value::Object(mut obj) = value else {
                    return Err(MalformedExport("held span: not an object".into()));
                };
                let key = member(&obj, &RESOURCES).unwrap_or("resourceSpans");
                if let Some(Value::Array(list)) = obj.remove(key) {
                    all.extend(list.iter().map(Value::to_string));
                }
            }
            Ok(format!("{{\"resourceSpans\":[{}]}}", all.join(",")).into_bytes())
        }
    }
}

/// The body of an OTLP error response: a `google.rpc.Status` with the message, in the
/// request's encoding (code 3, `INVALID_ARGUMENT`, for a malformed request).
pub fn error_body(message: &str, code: i32, encoding: Encoding) -> Vec<u8> {
    match encoding {
        Encoding::Json => {
            serde_json::to_vec(&json!({ "code": code, "message": message })).unwrap_or_default()
        }
        Encoding::Protobuf => {
            let mut out = Vec::new();
            proto::put_varint(&mut out, 1 << 3);
            proto::put_varint(&mut out, code as u64);
            proto::put_bytes_field(&mut out, 2, message.as_bytes());
            out
        }
    }
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use crate::error::Coded;

    fn kv(key: &str, value: &str) -> Value {
        json!({"key": key, "value": {"stringValue": value}})
    }

    /// A JSON request: a tool span, a model call receiving a cut of its result, an agent span.
    pub(crate) fn json_request() -> Value {
        json!({"resourceSpans": [{
            "resource": {"attributes": [kv("service.name", "agent")]},
            "scopeSpans": [{"scope": {"name": "t"}, "spans": [
                {"traceId": "AA01", "spanId": "01", "name": "invoke_agent", "startTimeUnixNano": "1", "endTimeUnixNano": "9",
                 "attributes": [kv("gen_ai.operation.name", "invoke_agent")]},
                {"traceId": "AA01", "spanId": "02", "parentSpanId": "01", "name": "execute_tool ls",
                 "startTimeUnixNano": "2", "endTimeUnixNano": "3",
                 "attributes": [kv("gen_ai.operation.name", "execute_tool"), kv("gen_ai.tool.call.id", "call_1"),
                                kv("gen_ai.tool.call.result", "a.txt b.txt c.txt")]},
                {"traceId": "aa01", "spanId": "03", "parentSpanId": "01", "name": "chat",
                 "startTimeUnixNano": "4", "endTimeUnixNano": "5",
                 "attributes": [kv("gen_ai.operation.name", "chat"), kv("gen_ai.input.messages",
                   r#"[{"role":"tool","parts":[{"type":"tool_call_response","id":"call_1","response":"a.txt"}]}]"#)]}
            ]}],
            "schemaUrl": "s"
        }]})
    }

    #[test]
    fn json_split_holds_tools_and_forwards_the_rest() {
        let body = serde_json::to_vec(&json_request()).unwrap();
        let split = split_export(&body, Encoding::Json).unwrap();
        assert_eq!((split.spans, split.tools, split.models), (3, 1, 1));
        assert_eq!(
            split.traces.len(),
            1,
            "trace ids compare case-insensitively"
        );
        assert_eq!(split.traces[0].trace_id, "aa01");
        let t = &split.traces[0];
        assert_eq!(t.held[0].key, "02");
        assert_eq!(t.tools[0].0, "02");
        let pass: Value = serde_json::from_slice(split.passthrough.as_ref().unwrap()).unwrap();
        let spans = &pass["resourceSpans"][0]["scopeSpans"][0]["spans"];
        assert_eq!(spans.as_array().unwrap().len(), 2);
        assert_eq!(pass["resourceSpans"][0]["schemaUrl"], "s");
        let one: Value = serde_json::from_slice(&t.held[0].body).unwrap();
        let rs = &one["resourceSpans"][0];
        assert_eq!(
            rs["resource"],
            json_request()["resourceSpans"][0]["resource"]
        );
        assert_eq!(rs["scopeSpans"][0]["scope"]["name"], "t");
        assert_eq!(rs["scopeSpans"][0]["spans"][0]["spanId"], "02");
    }

    #[test]
    fn a_request_without_tools_is_forwarded_byte_for_byte() {
        let body =
            br#"{"resourceSpans":[{"scopeSpans":[{"spans":[{"name":"x","traceId":"a"}]}]}]}"#;
        let split = split_export(body, Encoding::Json).unwrap();
        assert_eq!(split.passthrough.as_deref(), Some(&body[..]));
        assert!(split.traces.is_empty());
    }

    #[test]
    fn malformed_json_names_the_place() {
        let e = split_export(b"{\"resourceSpans\": [", Encoding::Json).unwrap_err();
        assert!(e.0.contains("line 1"), "{e}");
        let e = split_export(b"[1]", Encoding::Json).unwrap_err();
        assert!(e.0.contains("resourceSpans"), "{e}");
        assert_eq!(e.code(), "malformed_export");
    }

    #[test]
    fn json_annotation_appends_attributes() {
        let body = serde_json::to_vec(&json_request()).unwrap();
        let split = split_export(&body, Encoding::Json).unwrap();
        let note = Annotation {
            status: "silent_clip".into(),
            detail: "ratio=0.71".into(),
            observed_bytes: Some(17),
            injected_bytes: Some(5),
            join: "tool_call_id".into(),
        };
        let out = annotate(&split.traces[0].held[0].body, Encoding::Json, &note).unwrap();
        let v: Value = serde_json::from_slice(&out).unwrap();
        let attrs = &v["resourceSpans"][0]["scopeSpans"][0]["spans"][0]["attributes"];
        let find = |k: &str| {
            attrs
                .as_array()
                .unwrap()
                .iter()
                .find(|a| a["key"] == k)
                .map(|a| a["value"].clone())
        };
        assert_eq!(
            find("gen_ai.tool.call.id"),
            Some(json!({"stringValue": "call_1"}))
        );
        assert_eq!(
            find(ATTR_STATUS),
            Some(json!({"stringValue": "silent_clip"}))
        );
        assert_eq!(find(ATTR_OBSERVED), Some(json!({"intValue": "17"})));
        assert_eq!(find(ATTR_INJECTED), Some(json!({"intValue": "5"})));
        assert_eq!(
            find(ATTR_JOIN),
            Some(json!({"stringValue": "tool_call_id"}))
        );
        let merged = merge(&[out.clone(), out], Encoding::Json).unwrap();
        let v: Value = serde_json::from_slice(&merged).unwrap();
        assert_eq!(v["resourceSpans"].as_array().unwrap().len(), 2);
    }

    /// What a split says, with the bodies as the JSON they hold (a tree compares members
    /// by name, so the tree reader's order and the ranges' order are the same), and a held
    /// span's key only when it is its span id (otherwise a digest of the body's bytes).
    fn meaning(split: &Split) -> String {
        fn sorted(v: Value) -> Value {
            match v {
                Value::Object(o) => {
                    let mut members: Vec<_> = o.into_iter().map(|(k, v)| (k, sorted(v))).collect();
                    members.sort_by(|a, b| a.0.cmp(&b.0));
                    Value::Object(members.into_iter().collect())
                }
                Value::Array(a) => Value::Array(a.into_iter().map(sorted).collect()),
                other => other,
            }
        }
        let json = |b: &[u8]| sorted(serde_json::from_slice::<Value>(b).unwrap());
        let traces: Vec<_> = split
            .traces
            .iter()
            .map(|t| {
                let key = |k: &str| (!k.starts_with("sha256:")).then(|| k.to_string());
                let tools: Vec<_> = t.tools.iter().map(|(k, c)| (key(k), c)).collect();
                let held: Vec<_> = t
                    .held
                    .iter()
                    .map(|h| (key(&h.key), json(&h.body)))
                    .collect();
                format!("{} {tools:?} {:?} {held:?}", t.trace_id, t.models)
            })
            .collect();
        let pass = split.passthrough.as_deref().map(json);
        let counts = (split.spans, split.tools, split.models);
        format!("{counts:?} {traces:?} {pass:?}")
    }

    /// Splits `body` both ways: returns whether the byte-range reader read it, after checking
    /// that its split means what the tree's does (and that annotating and merging its held
    /// spans from their ranges gives the tree's JSON).
    fn split_both_ways(body: &[u8]) -> bool {
        let text = String::from_utf8_lossy(body);
        let tree = split_tree(body);
        let Some(req) = json_wire::Request::spans(body) else {
            let got = split_json(body);
            assert_eq!(got, tree, "{text}");
            return false;
        };
        let wire = split_wire(body, req);
        let tree = tree.unwrap_or_else(|e| panic!("the tree fails ({e}) on {text}"));
        let (a, b) = (meaning(&wire), meaning(&tree));
        if a != b {
            std::fs::write("/tmp/w/a.txt", a.replace("), (", "),\n(")).unwrap();
            std::fs::write("/tmp/w/b.txt", b.replace("), (", "),\n(")).unwrap();
            std::fs::write("/tmp/w/in.txt", text.as_bytes()).unwrap();
        }
        assert!(a == b, "{text}");
        let note = Annotation {
            status: "silent_clip".into(),
            detail: "d \"q\"".into(),
            observed_bytes: Some(9),
            injected_bytes: None,
            join: "order".into(),
        };
        let held: Vec<Vec<u8>> = wire
            .traces
            .iter()
            .flat_map(|t| &t.held)
            .map(|h| h.body.clone())
            .collect();
        for body in &held {
            let by_tree = |b: &[u8]| {
                let mut v = tree::parse(b).unwrap();
                let Value::Object(o) = &mut v else { panic!() };
                o.insert("_".into(), Value::Null);
                serde_json::to_vec(&v).unwrap()
            };
            // The annotation from ranges, and the tree's (the member added makes the
            // reader decline, so the tree writes it).
            let got: Value =
                serde_json::from_slice(&annotate(body, Encoding::Json, &note).unwrap()).unwrap();
            let mut want: Value =
                serde_json::from_slice(&annotate(&by_tree(body), Encoding::Json, &note).unwrap())
                    .unwrap();
            want.as_object_mut().unwrap().remove("_");
            assert_eq!(got, want, "{text}");
        }
        if !held.is_empty() {
            let got: Value =
                serde_json::from_slice(&merge(&held, Encoding::Json).unwrap()).unwrap();
            let list: Vec<Value> = held
                .iter()
                .map(|b| serde_json::from_slice::<Value>(b).unwrap())
                .collect();
            let all: Vec<Value> = list
                .iter()
                .flat_map(|v| {
                    v.as_object()
                        .unwrap()
                        .values()
                        .next()
                        .unwrap()
                        .as_array()
                        .unwrap()
                        .clone()
                })
                .collect();
            assert_eq!(got, json!({"resourceSpans": all}), "{text}");
        }
        true
    }

    /// The export requests of a fixture file: a line each in JSON lines, else the whole file.
    fn requests_of<'b>(name: &str, bytes: &'b [u8]) -> Vec<&'b [u8]> {
        if name.ends_with(".jsonl") {
            bytes
                .split(|&b| b == b'\n')
                .filter(|l| !l.is_empty())
                .collect()
        } else {
            vec![bytes]
        }
    }

    /// Every OTLP fixture and producer export, line by line and whole, and every entry of
    /// two of them damaged in a few ways each: the split from byte ranges means what the
    /// tree's split means, and the requests it declines are split by the tree.
    #[test]
    fn split_from_ranges_means_what_the_trees_split_means() {
        use crate::formats::pipeline_parts::{emit, fixtures, Op};
        let (mut read, mut tools) = (0, 0);
        for (name, bytes) in fixtures() {
            for piece in requests_of(&name, &bytes) {
                if split_both_ways(piece) {
                    read += 1;
                    tools += split_tree(piece).unwrap().tools;
                }
            }
        }
        assert!(
            read >= 20 && tools >= 10,
            "requests read from ranges: {read}, tool spans: {tools}"
        );
        // Damaged: each entry (depth first) replaced, given twice, respelled or dropped.
        const RAW: [&str; 12] = [
            "null",
            "1",
            "1e400",
            "-0",
            "\"x\"",
            "[]",
            "[1]",
            "{}",
            "\"\\ud800\"",
            "{\"spans\":[{\"name\":\"n\",\"attributes\":[]}]}",
            "{\"scopeSpans\":[{\"spans\":[]}]}",
            "{\"key\":\"gen_ai.operation.name\",\"value\":{\"stringValue\":\"execute_tool\"}}",
        ];
        let ops = Op::all(&RAW);
        let base: Vec<Value> = json_request_variants();
        let (mut variants, mut fast) = (0, 0);
        for base in &base {
            for target in 0.. {
                let mut any = false;
                for k in 0..8 {
                    let op = ops[(target * 5 + k * 11) % ops.len()];
                    let (mut text, mut at) = (String::new(), 0);
                    if !emit(base, &mut text, &mut at, target, op) {
                        continue;
                    }
                    any = true;
                    variants += 1;
                    fast += usize::from(split_both_ways(text.as_bytes()));
                }
                if !any {
                    break;
                }
            }
        }
        assert!(variants > 300, "variants: {variants}");
        assert!(
            fast > variants / 3 && fast < variants,
            "{fast} of {variants} read from ranges"
        );
    }

    /// Every batch of every OTLP fixture request: its measures read back are the batch (its
    /// held spans aside), and so are its measures as JSON, the form they had before (but
    /// for the tool calls' conventions).
    #[test]
    fn measures_read_back_as_the_batch() {
        use crate::formats::pipeline_parts::fixtures;
        let (mut batches, mut messages) = (0, 0);
        for (name, bytes) in fixtures() {
            for request in requests_of(&name, &bytes) {
                let Ok(split) = split_export(request, Encoding::Json) else {
                    continue;
                };
                for batch in split.traces {
                    let bare = TraceBatch {
                        held: Vec::new(),
                        ..batch.clone()
                    };
                    assert_eq!(
                        TraceBatch::from_measures(&batch.measures()).unwrap(),
                        bare,
                        "{name}"
                    );
                    // JSON never carried a tool call's convention (the state does not keep it).
                    let json = serde_json::to_string(&batch).unwrap();
                    let mut unnamed = bare.clone();
                    unnamed.tools.iter_mut().for_each(|(_, t)| t.source = "");
                    assert_eq!(
                        TraceBatch::from_measures_json(&json).unwrap(),
                        unnamed,
                        "{name}"
                    );
                    batches += 1;
                    messages += batch
                        .models
                        .iter()
                        .map(|(_, m)| m.input.as_ref().map_or(0, Vec::len))
                        .sum::<usize>();
                }
            }
        }
        assert!(
            batches >= 20 && messages >= 10,
            "batches {batches}, tool messages {messages}"
        );
    }

    /// Measures cut short anywhere, or with a byte changed, are refused with the byte named,
    /// or read as other measures; never a panic.
    #[test]
    fn damaged_measures_are_refused() {
        let body = serde_json::to_vec(&json_request()).unwrap();
        let split = split_export(&body, Encoding::Json).unwrap();
        let m = split.traces[0].measures();
        assert!(m.len() > 100, "{}", m.len());
        for cut in 0..m.len() {
            let e = TraceBatch::from_measures(&m[..cut]).unwrap_err();
            assert_eq!(e.code(), "malformed_export");
            assert!(e.0.starts_with("trace batch measures: "), "{e}");
            if cut >= 4 {
                assert!(e.0.contains(" at byte "), "{e}");
            }
        }
        let mut longer = m.clone();
        longer.push(0);
        assert!(TraceBatch::from_measures(&longer)
            .unwrap_err()
            .0
            .contains("its end at byte"));
        for at in 0..m.len() {
            for flip in [0x01, 0x80, 0xff] {
                let mut d = m.clone();
                d[at] ^= flip;
                let _ = TraceBatch::from_measures(&d);
            }
        }
        // A count of calls far past what the bytes hold reserves nothing for them.
        let mut huge = MEASURES_MAGIC.to_vec();
        huge.extend_from_slice(&[0, 0xff, 0xff, 0xff, 0xff, 0x0f]);
        assert!(TraceBatch::from_measures(&huge).is_err());
        assert!(TraceBatch::from_measures(b"{\"trace_id\":\"a\"}")
            .unwrap_err()
            .0
            .contains("not encoded measures"));
    }

    /// Requests of several resources and scopes, with the shapes the split has rules for:
    /// items that are not objects, empty and missing lists, the pre-0.19 scope list, both
    /// spellings, and pretty-printed text.
    pub(in crate::pipeline) fn json_request_variants() -> Vec<Value> {
        let one = json_request();
        let spans = one["resourceSpans"][0]["scopeSpans"][0]["spans"].clone();
        vec![
            one.clone(),
            json!({"resource_spans": [
                {"resource": {}, "scope_spans": [
                    {"scope": {"name": "a"}, "spans": spans.clone()},
                    {"scope": {"name": "b"}, "spans": [spans[1].clone(), 7]},
                    {"scope": {"name": "c"}, "spans": []},
                    3,
                ], "schemaUrl": "r1"},
                {"instrumentationLibrarySpans": [{"spans": [spans[1].clone()]}]},
                {"scopeSpans": [], "instrumentationLibrarySpans": [{"spans": spans.clone()}]},
                {"scopeSpans": null},
                "x",
                {"scopeSpans": [{"spans": [spans[0].clone()]}]},
            ], "extra": {"a": [1, 2]}}),
        ]
    }

    #[test]
    fn a_request_for_a_protobuf_upstream_is_split_as_protobuf() {
        let body = serde_json::to_vec(&json_request()).unwrap();
        let json = split_export(&body, Encoding::Json).unwrap();
        let (pb, wire) = split_export_for(&body, Encoding::Json, true).unwrap();
        assert_eq!(wire, Encoding::Protobuf);
        assert_eq!(
            (pb.spans, pb.tools, pb.models),
            (json.spans, json.tools, json.models)
        );
        let rest = split_export(pb.passthrough.as_ref().unwrap(), Encoding::Protobuf).unwrap();
        assert_eq!(rest.spans, json.spans - json.tools);
        let held = &pb.traces.iter().find(|t| !t.held.is_empty()).unwrap().held[0];
        assert_eq!(
            split_export(&held.body, Encoding::Protobuf).unwrap().tools,
            1
        );
        // Protobuf comes as it is; JSON for a JSON upstream too.
        assert_eq!(
            split_export_for(&body, Encoding::Json, false).unwrap().1,
            Encoding::Json
        );
        // A request protobuf cannot hold is refused before anything is held.
        let bad = br#"{"resourceSpans":[{"scopeSpans":[{"spans":[{"traceId":"not-hex!","spanId":"01"}]}]}]}"#;
        assert!(split_export(bad, Encoding::Json).is_ok());
        let e = split_export_for(bad, Encoding::Json, true).unwrap_err();
        assert!(e.0.contains("traceId is not hex"), "{e}");
    }

    #[test]
    fn error_bodies() {
        assert_eq!(
            error_body("bad", 3, Encoding::Json),
            br#"{"code":3,"message":"bad"}"#.to_vec()
        );
        assert_eq!(
            error_body("bad", 3, Encoding::Protobuf),
            vec![8, 3, 18, 3, b'b', b'a', b'd']
        );
    }
    #[test]
    fn protobuf_split_copies_bytes_and_annotation_reads_back() {
        use crate::formats::otlp_proto::tests::{kv_str, msg, s, W};
        let span = |id: u8, fields: Vec<(u32, W)>| {
            let mut f = vec![
                (1, W::B(vec![7; 16])),
                (2, W::B(vec![id; 8])),
                (7, W::F64(u64::from(id))),
                (8, W::F64(u64::from(id) + 1)),
            ];
            f.extend(fields);
            msg(&f)
        };
        let tool = span(
            2,
            vec![
                (5, s("execute_tool ls")),
                (9, kv_str("gen_ai.operation.name", "execute_tool")),
                (9, kv_str("gen_ai.tool.call.id", "call_1")),
                (9, kv_str("gen_ai.tool.call.result", "a.txt b.txt c.txt")),
                (77, s("a field this reader does not know")),
            ],
        );
        let chat = span(
            4,
            vec![
                (5, s("chat")),
                (9, kv_str("gen_ai.operation.name", "chat")),
                (
                    9,
                    kv_str(
                        "gen_ai.input.messages",
                        r#"[{"role":"tool","parts":[{"type":"tool_call_response","id":"call_1","response":"a.txt"}]}]"#,
                    ),
                ),
            ],
        );
        let scope = msg(&[
            (1, W::B(msg(&[(1, s("tracer"))]))),
            (2, W::B(tool.clone())),
            (2, W::B(chat.clone())),
            (3, s("scope-schema")),
        ]);
        let resource = msg(&[
            (1, W::B(msg(&[(1, kv_str("service.name", "agent"))]))),
            (2, W::B(scope)),
            (3, s("res-schema")),
        ]);
        let body = msg(&[(1, W::B(resource))]);
        let split = split_export(&body, Encoding::Protobuf).unwrap();
        assert_eq!((split.spans, split.tools, split.models), (2, 1, 1));
        let held = &split.traces[0].held[0];
        assert_eq!(held.key, "0202020202020202");
        // The held request carries the span's bytes as they came, unknown field included.
        assert!(held.body.windows(tool.len()).any(|w| w == tool.as_slice()));
        let held_req = proto::decode(&held.body).unwrap();
        assert_eq!(held_req.spans.len(), 1);
        assert_eq!(
            held_req.resources[0].header.len(),
            2,
            "resource and schema url kept"
        );
        assert_eq!(
            held_req.resources[0].scopes[0].header.len(),
            2,
            "scope and schema url kept"
        );
        let pass = proto::decode(split.passthrough.as_ref().unwrap()).unwrap();
        assert_eq!(pass.spans.len(), 1);
        assert_eq!(pass.spans[0].1.name.as_deref(), Some("chat"));
        let note = Annotation {
            status: "silent_clip".into(),
            detail: "d".into(),
            observed_bytes: Some(17),
            injected_bytes: Some(5),
            join: "tool_call_id".into(),
        };
        let out = annotate(&held.body, Encoding::Protobuf, &note).unwrap();
        let attrs = proto::decode(&out).unwrap().spans.remove(0).1.attrs;
        assert_eq!(attrs[ATTR_STATUS], json!("silent_clip"));
        assert_eq!(attrs[ATTR_OBSERVED], json!(17));
        assert_eq!(attrs[ATTR_INJECTED], json!(5));
        assert_eq!(attrs["gen_ai.tool.call.id"], json!("call_1"));
        let two = merge(&[out.clone(), out], Encoding::Protobuf).unwrap();
        assert_eq!(proto::decode(&two).unwrap().spans.len(), 2);
        // The whole pipeline on this request: the same verdict as the check of its JSON twin.
        let mut state = super::super::TraceState::new(&split.traces[0].trace_id);
        let t = split.traces.into_iter().next().unwrap();
        let got = state.ingest(t, 0, 1000);
        assert_eq!(got.decisions[0].annotation.status, "silent_clip");
        assert_eq!(got.decisions[0].annotation.injected_bytes, Some(5));
    }
}
