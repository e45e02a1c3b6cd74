//! OTLP JSON export requests read straight from the bytes into [`OtelSpan`]s: the fast path
//! of [`super::otlp`], which reads a `serde_json::Value` tree.
//!
//! A tree costs an allocation per key and per value, an ordered hash map (SipHash) per
//! object and a copy of every attribute value into the span; the request itself only needs
//! ids, name, times, status code and attributes. This reader visits the bytes once and keeps
//! only those: keys are compared in place (borrowed, no allocation unless escaped), fields
//! the join does not read are parsed and dropped, attribute values become the same plain
//! JSON values as [`super::otlp::any_value`] makes of them. The spans borrow from the bytes:
//! ids, names, attribute keys and string values without escapes are slices of the line (an
//! [`AttrValue::Text`] becomes a `Value` only if a convention asks for one).
//!
//! It reads only the ordinary shape: an object with `resourceSpans`, each level an object or
//! array, each known field once and of its usual type (or `null`, which the tree reader also
//! takes for absent). Anything else (a duplicate field, a wrong type, a non-object span, an
//! array of requests, invalid JSON) fails here, and the caller reads the same bytes with the
//! tree reader, whose messages for odd input stay the only ones. So what this reader
//! accepts it must read exactly as the tree reader does; the tests check that, span by span
//! and report call by report call, on every OTLP fixture of the repository and on thousands
//! of damaged variants (each field of another type, given twice, respelled or dropped).
//!
//! The JSON under the visitors is read by [`super::line_de`], not serde_json's own
//! deserializer: the same visitor calls, made faster, or declined (a declined line is read by
//! the tree reader).
//!
//! Fields it skips are still parsed as the tree reader parses them (`deserialize_any`: a
//! number out of range or a lone surrogate fails both), not skimmed like
//! [`serde::de::IgnoredAny`], so input the tree reader rejects never passes here. Objects
//! and arrays are asked for as such (`deserialize_map`, `deserialize_seq`), not through
//! `deserialize_any`: each visitor type instantiates what it calls, and `deserialize_any`,
//! with its number parsing, is the large one (the wasm module is smaller for it).

use std::borrow::Cow;
use std::fmt;

use serde::de::value::{MapAccessDeserializer, SeqAccessDeserializer};
use serde::de::{DeserializeSeed, Deserializer, Error, MapAccess, SeqAccess, Visitor};
use serde::Deserialize;
use serde_json::{Map, Number, Value};

use super::line_de::{Declined, LineDe, OTLP_ATTRIBUTE};
use super::model::{trimmed, Times};
use super::otel::{AttrValue, Attrs, OtelEvent, OtelSpan};
use super::{otlp, Collector, Entries, Sink};

/// The spans of one export request, in the tree reader's order, borrowing from its bytes.
pub(crate) struct Request<'a> {
    spans: Vec<OtelSpan<'a>>,
}

impl<'a> Request<'a> {
    /// Reads one request from its bytes, or `None` when it is not of the ordinary shape (then
    /// the tree reader reads it).
    ///
    /// The bytes are checked as UTF-8 once, whole, and then read as text by
    /// [`super::line_de`], which makes the visitor calls serde_json would make, or declines.
    /// Bytes that are not UTF-8 are never an ordinary request: the tree reader reads them,
    /// and reports them.
    pub fn parse(bytes: &'a [u8]) -> Option<Request<'a>> {
        super::line_de::from_str(crate::bytes::utf8(bytes)?)
    }

    /// What [`otlp::read_request`] does with the same request: each span interpreted by its
    /// conventions, or the request skipped when it has none.
    pub fn deliver(self, entries: &mut Entries, collector: &mut Collector, sink: &mut dyn Sink) {
        if self.spans.is_empty() {
            let why = "OTLP export request with no spans".into();
            return sink.skipped(entries.next(), None, why);
        }
        for span in self.spans {
            super::semconv::interpret(span, entries.next(), collector, sink);
        }
    }
}

/// Gives up on the fast path; the message is never shown.
fn unusual<E: Error>(what: &str) -> E {
    E::custom(format_args!("not the ordinary OTLP shape: {what}"))
}

/// A key or string, borrowed from the input unless it had escapes.
pub(super) struct Str<'de>(pub Cow<'de, str>);

impl<'de> Deserialize<'de> for Str<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Str<'de>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a string")
            }
            fn visit_borrowed_str<E: Error>(self, s: &'de str) -> Result<Str<'de>, E> {
                Ok(Str(Cow::Borrowed(s)))
            }
            fn visit_str<E: Error>(self, s: &str) -> Result<Str<'de>, E> {
                Ok(Str(Cow::Owned(s.to_string())))
            }
        }
        d.deserialize_str(V)
    }
}

/// An object's key as the line's own text. A key with an escape (rare: JSON writers escape
/// only quotes, backslashes and control characters) declines the line, which the tree reader
/// then reads.
///
/// The key loops of the fast paths read their keys with it, not as a [`Str`]: a `Cow` came
/// back from the call that read it through memory, written as three 4-byte words and read
/// back as one of 8 bytes, a load the CPU cannot forward from the stores (39% of that call's
/// samples were on it, and the key loop of the Langfuse and Agents SDK readers was a quarter
/// of reading their exports; `perf` over V8's code map, 2026-12-07). Inlined, a `Cow` was
/// still kept in memory; a `&str` stays in registers.
pub(super) struct KeySeed;

impl<'de> DeserializeSeed<'de> for KeySeed {
    type Value = &'de str;
    #[inline(always)]
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<&'de str, D::Error> {
        d.deserialize_str(KeySeed)
    }
}

impl<'de> Visitor<'de> for KeySeed {
    type Value = &'de str;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an object key")
    }
    #[inline(always)]
    fn visit_borrowed_str<E: Error>(self, key: &'de str) -> Result<&'de str, E> {
        Ok(key)
    }
    fn visit_str<E: Error>(self, _: &str) -> Result<&'de str, E> {
        Err(E::custom("an escaped key is left to the tree reader"))
    }
}

/// Any JSON value, parsed as the tree reader parses it and dropped: asked for as a value to
/// ignore, which the line deserializer steps over without a visitor call per member
/// (`line_de::LineDe::skip`) and declines where the tree reader would fail.
pub(super) struct Skip;

impl<'de> Deserialize<'de> for Skip {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_ignored_any(SkipVisitor)
    }
}

struct SkipVisitor;

impl<'de> Visitor<'de> for SkipVisitor {
    type Value = Skip;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_bool<E: Error>(self, _: bool) -> Result<Skip, E> {
        Ok(Skip)
    }
    fn visit_i64<E: Error>(self, _: i64) -> Result<Skip, E> {
        Ok(Skip)
    }
    fn visit_u64<E: Error>(self, _: u64) -> Result<Skip, E> {
        Ok(Skip)
    }
    fn visit_f64<E: Error>(self, _: f64) -> Result<Skip, E> {
        Ok(Skip)
    }
    fn visit_str<E: Error>(self, _: &str) -> Result<Skip, E> {
        Ok(Skip)
    }
    fn visit_unit<E: Error>(self) -> Result<Skip, E> {
        Ok(Skip)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Skip, A::Error> {
        while seq.next_element::<Skip>()?.is_some() {}
        Ok(Skip)
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Skip, A::Error> {
        while map.next_key::<Skip>()?.is_some() {
            map.next_value::<Skip>()?;
        }
        Ok(Skip)
    }
}

/// Marks a known field as read, failing on its second occurrence (the tree keeps the last
/// one, and a field spelled both ways picks one by name: the tree reader decides those).
fn once<E: Error>(seen: &mut bool) -> Result<(), E> {
    if std::mem::replace(seen, true) {
        Err(unusual("a field given twice"))
    } else {
        Ok(())
    }
}

impl<'de> Deserialize<'de> for Request<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Request<'de>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("an OTLP export request")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Request<'de>, A::Error> {
                let mut spans = Vec::new();
                let mut seen = false;
                while let Some(key) = map.next_key_seed(KeySeed)? {
                    match key {
                        "resourceSpans" | "resource_spans" => {
                            once(&mut seen)?;
                            map.next_value_seed(List(&mut Resources(&mut spans)))?;
                        }
                        _ => {
                            map.next_value::<Skip>()?;
                        }
                    }
                }
                if !seen {
                    return Err(unusual("no resourceSpans"));
                }
                Ok(Request { spans })
            }
        }
        d.deserialize_map(V)
    }
}

/// Reads the objects of an array one at a time.
trait EachObject<'de>: Sized {
    fn object<A: MapAccess<'de>>(&mut self, map: A) -> Result<(), A::Error>;

    /// Asks the deserializer for one item: as an object, which [`EachObject::object`]
    /// reads, unless the reader of the items asks otherwise (see [`Attributes`]).
    fn item<D: Deserializer<'de>>(&mut self, d: D) -> Result<(), D::Error> {
        d.deserialize_map(ListItem(self))
    }
}

/// A JSON array of objects, each read by `T`; `null` reads as empty, as the tree reader
/// takes a `null` field for an absent one.
struct List<'a, T>(&'a mut T);

impl<'de, T: EachObject<'de>> DeserializeSeed<'de> for List<'_, T> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_option(self)
    }
}

impl<'de, T: EachObject<'de>> Visitor<'de> for List<'_, T> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an array of objects or null")
    }
    fn visit_none<E: Error>(self) -> Result<(), E> {
        Ok(())
    }
    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_seq(self)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        while seq.next_element_seed(ListItem(&mut *self.0))?.is_some() {}
        Ok(())
    }
}

/// One item of a [`List`], which must be an object.
struct ListItem<'a, T>(&'a mut T);

impl<'de, T: EachObject<'de>> DeserializeSeed<'de> for ListItem<'_, T> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        self.0.item(d)
    }
}

impl<'de, T: EachObject<'de>> Visitor<'de> for ListItem<'_, T> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an object")
    }
    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<(), A::Error> {
        self.0.object(map)
    }
}

/// `resourceSpans`: each resource's spans, from `scopeSpans`, or from the pre-0.19
/// `instrumentationLibrarySpans` when `scopeSpans` has no entries.
struct Resources<'a, 'de>(&'a mut Vec<OtelSpan<'de>>);

/// The entries of a `scopeSpans` list: how many, and their spans.
struct Scopes<'a, 'de> {
    count: usize,
    spans: &'a mut Vec<OtelSpan<'de>>,
}

impl<'de> EachObject<'de> for Resources<'_, 'de> {
    fn object<A: MapAccess<'de>>(&mut self, mut map: A) -> Result<(), A::Error> {
        // `scopeSpans` read straight into the request's spans (if it has no entries it adds
        // none); the legacy list aside, kept only when `scopeSpans` has no entries.
        let mut legacy_spans = Vec::new();
        let mut scopes = Scopes {
            count: 0,
            spans: &mut *self.0,
        };
        let mut legacy = Scopes {
            count: 0,
            spans: &mut legacy_spans,
        };
        let (mut seen_scopes, mut seen_legacy) = (false, false);
        while let Some(key) = map.next_key_seed(KeySeed)? {
            match key {
                "scopeSpans" | "scope_spans" => {
                    once(&mut seen_scopes)?;
                    map.next_value_seed(List(&mut scopes))?;
                }
                "instrumentationLibrarySpans" | "instrumentation_library_spans" => {
                    once(&mut seen_legacy)?;
                    map.next_value_seed(List(&mut legacy))?;
                }
                _ => {
                    map.next_value::<Skip>()?;
                }
            }
        }
        if scopes.count == 0 {
            self.0.append(&mut legacy_spans);
        }
        Ok(())
    }
}

impl<'de> EachObject<'de> for Scopes<'_, 'de> {
    fn object<A: MapAccess<'de>>(&mut self, mut map: A) -> Result<(), A::Error> {
        self.count += 1;
        let mut seen = false;
        while let Some(key) = map.next_key_seed(KeySeed)? {
            if key == "spans" {
                once(&mut seen)?;
                map.next_value_seed(List(&mut Spans(&mut *self.spans)))?;
            } else {
                map.next_value::<Skip>()?;
            }
        }
        Ok(())
    }
}

struct Spans<'a, 'de>(&'a mut Vec<OtelSpan<'de>>);

/// The span object at the deserializer's position, read as a span of a request is read
/// here: for a reader that walks a request itself ([`super::otlp_json_wire`]).
pub(super) fn span_at<'de>(de: &mut LineDe<'de>) -> Result<OtelSpan<'de>, Declined> {
    let mut one = Vec::with_capacity(1);
    (&mut *de).deserialize_map(ListItem(&mut Spans(&mut one)))?;
    one.pop().ok_or(Declined)
}

/// The fields of a span that [`otlp::read_span`] reads, each at most once.
#[derive(Default)]
struct SpanSeen {
    trace_id: bool,
    span_id: bool,
    parent_id: bool,
    name: bool,
    start: bool,
    end: bool,
    status: bool,
    attributes: bool,
    events: bool,
}

// The span, attribute and event visitors are functions of their own, never inlined into the
// visitor of the list that holds them: inlined, the span's reading was one 12.6 KB wasm
// function that V8 took 130 ms to optimize (see `semconv::interpret`).
impl<'de> EachObject<'de> for Spans<'_, 'de> {
    #[inline(never)]
    fn object<A: MapAccess<'de>>(&mut self, mut map: A) -> Result<(), A::Error> {
        let mut span = OtelSpan::default();
        let mut seen = SpanSeen::default();
        let (mut start, mut end, mut code) = (None, None, None);
        while let Some(key) = map.next_key_seed(KeySeed)? {
            match key {
                "traceId" | "trace_id" => {
                    once(&mut seen.trace_id)?;
                    span.trace_id = map.next_value::<Id>()?.0;
                }
                "spanId" | "span_id" => {
                    once(&mut seen.span_id)?;
                    span.span_id = map.next_value::<Id>()?.0;
                }
                "parentSpanId" | "parent_span_id" => {
                    once(&mut seen.parent_id)?;
                    span.parent_id = map.next_value::<Id>()?.0;
                }
                "name" => {
                    once(&mut seen.name)?;
                    span.name = map.next_value::<Option<Str>>()?.map(|s| s.0);
                }
                "startTimeUnixNano" | "start_time_unix_nano" => {
                    once(&mut seen.start)?;
                    start = map.next_value::<Nanos>()?.0;
                }
                "endTimeUnixNano" | "end_time_unix_nano" => {
                    once(&mut seen.end)?;
                    end = map.next_value::<Nanos>()?.0;
                }
                "status" => {
                    once(&mut seen.status)?;
                    code = map.next_value::<Status>()?.0;
                }
                "attributes" => {
                    once(&mut seen.attributes)?;
                    let mut list = Vec::new();
                    map.next_value_seed(List(&mut Attributes(&mut list)))?;
                    span.attrs = Attrs::from_list(list);
                }
                "events" => {
                    once(&mut seen.events)?;
                    map.next_value_seed(List(&mut Events(&mut span.events)))?;
                }
                _ => {
                    map.next_value::<Skip>()?;
                }
            }
        }
        // As read_span: an end time of 0 or none at all is a span still open.
        span.status = if end.unwrap_or(0) == 0 {
            Some("unfinished")
        } else {
            code
        };
        span.times = Times {
            start,
            end: end.filter(|&e| e != 0),
        };
        self.0.push(span);
        Ok(())
    }
}

/// A time as [`otlp::nanos`] reads it: a decimal string (trimmed) or a non-negative integer;
/// anything else is no time. Read in place: a time is two strings of every span, and a tree
/// value of each was an allocation.
struct Nanos(Option<i128>);

impl<'de> Deserialize<'de> for Nanos {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Nanos;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a time")
            }
            fn visit_str<E: Error>(self, s: &str) -> Result<Nanos, E> {
                Ok(Nanos(otlp::nanos_text(s)))
            }
            fn visit_u64<E: Error>(self, n: u64) -> Result<Nanos, E> {
                Ok(Nanos(Some(i128::from(n))))
            }
            // A negative or fractional number is no time, as `Number::as_u64` says.
            fn visit_i64<E: Error>(self, n: i64) -> Result<Nanos, E> {
                Ok(Nanos(u64::try_from(n).ok().map(i128::from)))
            }
            fn visit_f64<E: Error>(self, _: f64) -> Result<Nanos, E> {
                Ok(Nanos(None))
            }
            fn visit_bool<E: Error>(self, _: bool) -> Result<Nanos, E> {
                Ok(Nanos(None))
            }
            fn visit_unit<E: Error>(self) -> Result<Nanos, E> {
                Ok(Nanos(None))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Nanos, A::Error> {
                SkipVisitor.visit_seq(seq).map(|_| Nanos(None))
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Nanos, A::Error> {
                SkipVisitor.visit_map(map).map(|_| Nanos(None))
            }
        }
        d.deserialize_any(V)
    }
}

/// A span's `status` as [`otlp::status_code`] reads it: `ok` or `error` by the object's
/// `code` (the last one, as the tree keeps it), a number or the enum's name.
struct Status(Option<&'static str>);

impl<'de> Deserialize<'de> for Status {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Status;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a span status")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Status, A::Error> {
                let mut code = None;
                while let Some(key) = map.next_key_seed(KeySeed)? {
                    if key == "code" {
                        code = map.next_value::<Code>()?.0;
                    } else {
                        map.next_value::<Skip>()?;
                    }
                }
                Ok(Status(code))
            }
            // Not an object: no code, the value still parsed as the tree reader parses it.
            fn visit_str<E: Error>(self, _: &str) -> Result<Status, E> {
                Ok(Status(None))
            }
            fn visit_u64<E: Error>(self, _: u64) -> Result<Status, E> {
                Ok(Status(None))
            }
            fn visit_i64<E: Error>(self, _: i64) -> Result<Status, E> {
                Ok(Status(None))
            }
            fn visit_f64<E: Error>(self, _: f64) -> Result<Status, E> {
                Ok(Status(None))
            }
            fn visit_bool<E: Error>(self, _: bool) -> Result<Status, E> {
                Ok(Status(None))
            }
            fn visit_unit<E: Error>(self) -> Result<Status, E> {
                Ok(Status(None))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Status, A::Error> {
                SkipVisitor.visit_seq(seq).map(|_| Status(None))
            }
        }
        d.deserialize_any(V)
    }
}

/// A status `code`: 1 or `STATUS_CODE_OK` is `ok`, 2 or `STATUS_CODE_ERROR` is `error`.
struct Code(Option<&'static str>);

impl<'de> Deserialize<'de> for Code {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Code;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a status code")
            }
            fn visit_u64<E: Error>(self, n: u64) -> Result<Code, E> {
                Ok(Code(match n {
                    2 => Some("error"),
                    1 => Some("ok"),
                    _ => None,
                }))
            }
            fn visit_str<E: Error>(self, s: &str) -> Result<Code, E> {
                Ok(Code(match s {
                    "STATUS_CODE_ERROR" => Some("error"),
                    "STATUS_CODE_OK" => Some("ok"),
                    _ => None,
                }))
            }
            fn visit_i64<E: Error>(self, n: i64) -> Result<Code, E> {
                u64::try_from(n).map_or(Ok(Code(None)), |n| self.visit_u64(n))
            }
            fn visit_f64<E: Error>(self, _: f64) -> Result<Code, E> {
                Ok(Code(None))
            }
            fn visit_bool<E: Error>(self, _: bool) -> Result<Code, E> {
                Ok(Code(None))
            }
            fn visit_unit<E: Error>(self) -> Result<Code, E> {
                Ok(Code(None))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Code, A::Error> {
                SkipVisitor.visit_seq(seq).map(|_| Code(None))
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Code, A::Error> {
                SkipVisitor.visit_map(map).map(|_| Code(None))
            }
        }
        d.deserialize_any(V)
    }
}

/// A span id: a string, trimmed, empty read as absent; `null` is absent. Borrowed from the
/// input unless it had escapes.
struct Id<'de>(Option<Cow<'de, str>>);

impl<'de> Deserialize<'de> for Id<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = Option::<Str>::deserialize(d)?;
        Ok(Id(text
            .map(|s| match s.0 {
                Cow::Borrowed(b) => Cow::Borrowed(trimmed(b)),
                Cow::Owned(o) => Cow::Owned(trimmed(&o).to_string()),
            })
            .filter(|s| !s.is_empty())))
    }
}

/// `[{"key": k, "value": AnyValue}]` in the order given: [`Attrs::from_list`] keeps the first
/// value of a repeated key (as the tree reader's `attributes`). An entry whose key is `null`
/// or missing is dropped.
///
/// Each entry is asked for as a newtype struct named [`OTLP_ATTRIBUTE`] (serde's way to let
/// one deserializer answer a request of its own, as serde_json's `RawValue` is asked for):
/// the line deserializer answers an entry in the exporters' compact form,
/// `{"key":"k","value":{"stringValue":"v"}}` with no escape in either string, with the two
/// strings at once, found by two scans for a quote; any other entry is read field by field
/// ([`Attributes::object`]). Attributes are over half the bytes of an OTLP export, and field
/// by field each cost eleven visitor calls.
struct Attributes<'a, 'de>(&'a mut Vec<(Cow<'de, str>, AttrValue<'de>)>);

/// How [`Attributes`] asks for an entry, and takes either answer.
struct Attribute<'s, 'a, 'de>(&'s mut Attributes<'a, 'de>);

impl<'de> Visitor<'de> for Attribute<'_, '_, 'de> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an attribute")
    }
    // The entry itself: read field by field.
    fn visit_newtype_struct<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_map(ListItem(self.0))
    }
    // The compact form, answered whole: what `object` makes of it, a borrowed key and a
    // borrowed string value.
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let key: &'de str = seq.next_element()?.ok_or_else(|| unusual("an attribute"))?;
        let value: &'de str = seq.next_element()?.ok_or_else(|| unusual("an attribute"))?;
        let Attribute(Attributes(list)) = self;
        list.push((Cow::Borrowed(key), AttrValue::text(value)));
        Ok(())
    }
}

impl<'de> EachObject<'de> for Attributes<'_, 'de> {
    fn item<D: Deserializer<'de>>(&mut self, d: D) -> Result<(), D::Error> {
        d.deserialize_newtype_struct(OTLP_ATTRIBUTE, Attribute(self))
    }

    #[inline(never)]
    fn object<A: MapAccess<'de>>(&mut self, mut map: A) -> Result<(), A::Error> {
        let (mut key, mut value) = (None, None);
        while let Some(field) = map.next_key_seed(KeySeed)? {
            match field {
                "key" => {
                    if key.is_some() {
                        return Err(unusual("a field given twice"));
                    }
                    key = Some(map.next_value::<Option<Str>>()?);
                }
                "value" => {
                    if value.is_some() {
                        return Err(unusual("a field given twice"));
                    }
                    value = Some(map.next_value::<AnyValue>()?.0);
                }
                _ => {
                    map.next_value::<Skip>()?;
                }
            }
        }
        if let Some(Some(key)) = key {
            self.0
                .push((key.0, value.unwrap_or(AttrValue::Json(Value::Null))));
        }
        Ok(())
    }
}

struct Events<'a, 'de>(&'a mut Vec<OtelEvent<'de>>);

impl<'de> EachObject<'de> for Events<'_, 'de> {
    #[inline(never)]
    fn object<A: MapAccess<'de>>(&mut self, mut map: A) -> Result<(), A::Error> {
        let mut event = OtelEvent::default();
        let (mut seen_name, mut seen_attrs) = (false, false);
        while let Some(key) = map.next_key_seed(KeySeed)? {
            match key {
                "name" => {
                    once(&mut seen_name)?;
                    if let Some(name) = map.next_value::<Option<Str>>()? {
                        event.name = name.0;
                    }
                }
                "attributes" => {
                    once(&mut seen_attrs)?;
                    let mut list = Vec::new();
                    map.next_value_seed(List(&mut Attributes(&mut list)))?;
                    event.attrs = Attrs::from_list(list);
                }
                _ => {
                    map.next_value::<Skip>()?;
                }
            }
        }
        self.0.push(event);
        Ok(())
    }
}

/// An attribute value as [`otlp::any_value`] reads it: the value of its one typed field for
/// the common ones, otherwise the object itself handed to `any_value`. A string (a
/// `stringValue`, mostly) stays borrowed from the input: most are never read.
struct AnyValue<'de>(AttrValue<'de>);

impl<'de> Deserialize<'de> for AnyValue<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(PlainVisitor(true)).map(AnyValue)
    }
}

/// Any JSON value as the tree would hold it, a string without escapes borrowed.
struct Plain<'de>(AttrValue<'de>);

impl<'de> Deserialize<'de> for Plain<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(PlainVisitor(false)).map(Plain)
    }
}

/// Reads a plain value; an object, when `any` is set, as an AnyValue ([`AnyValue`]), else
/// as the tree's object.
struct PlainVisitor(bool);

impl<'de> Visitor<'de> for PlainVisitor {
    type Value = AttrValue<'de>;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an OTLP AnyValue")
    }
    // A value that is already plain is taken as it is, as the tree would hold it.
    fn visit_unit<E: Error>(self) -> Result<AttrValue<'de>, E> {
        Ok(AttrValue::Json(Value::Null))
    }
    fn visit_bool<E: Error>(self, b: bool) -> Result<AttrValue<'de>, E> {
        Ok(AttrValue::Json(Value::Bool(b)))
    }
    fn visit_u64<E: Error>(self, n: u64) -> Result<AttrValue<'de>, E> {
        Ok(AttrValue::Json(Value::Number(n.into())))
    }
    fn visit_i64<E: Error>(self, n: i64) -> Result<AttrValue<'de>, E> {
        Ok(AttrValue::Json(Value::Number(n.into())))
    }
    fn visit_f64<E: Error>(self, n: f64) -> Result<AttrValue<'de>, E> {
        Ok(AttrValue::Json(
            Number::from_f64(n).map_or(Value::Null, Value::Number),
        ))
    }
    fn visit_borrowed_str<E: Error>(self, s: &'de str) -> Result<AttrValue<'de>, E> {
        Ok(AttrValue::text(s))
    }
    fn visit_str<E: Error>(self, s: &str) -> Result<AttrValue<'de>, E> {
        Ok(AttrValue::Json(Value::String(s.to_string())))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<AttrValue<'de>, A::Error> {
        Value::deserialize(SeqAccessDeserializer::new(seq)).map(AttrValue::Json)
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<AttrValue<'de>, A::Error> {
        if !self.0 {
            return Value::deserialize(MapAccessDeserializer::new(map)).map(AttrValue::Json);
        }
        let Some(key) = map.next_key_seed(KeySeed)? else {
            return Ok(AttrValue::Json(Value::Null));
        };
        let value = map.next_value::<Plain>()?.0;
        let Some(second) = map.next_key_seed(KeySeed)? else {
            return Ok(single(key, value));
        };
        // Several fields: the tree's object, read as the tree reader reads it.
        let mut obj = Map::new();
        obj.insert(key.to_string(), value.into_value());
        obj.insert(second.to_string(), map.next_value::<Value>()?);
        while let Some(key) = map.next_key::<String>()? {
            obj.insert(key, map.next_value::<Value>()?);
        }
        Ok(AttrValue::Json(otlp::any_value(&Value::Object(obj))))
    }
}

/// An AnyValue object with one field: `{"stringValue": "x"}` is `"x"`.
fn single<'de>(key: &str, value: AttrValue<'de>) -> AttrValue<'de> {
    match key {
        "stringValue" | "string_value" | "boolValue" | "bool_value" | "doubleValue"
        | "double_value" | "bytesValue" | "bytes_value"
            if !value.is_null() =>
        {
            value
        }
        "intValue" | "int_value" if value.as_str().is_some() => {
            match value.as_str().unwrap_or_default().trim().parse::<i64>() {
                Ok(n) => AttrValue::Json(Value::from(n)),
                Err(_) => value,
            }
        }
        "intValue" | "int_value" if !value.is_null() => value,
        _ => {
            let mut obj = Map::new();
            obj.insert(key.to_string(), value.into_value());
            AttrValue::Json(otlp::any_value(&Value::Object(obj)))
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use std::path::Path;

    use super::super::reader::{json_line_as, read_document_as};
    use super::super::{Collector, Format, FormatOption};
    use super::*;
    use crate::record::{Provenance, ReadAs};
    use crate::span::{InvalidKind, SpanView};

    /// Every call a reader makes, in order, as text.
    #[derive(Default)]
    pub(in super::super) struct Recorder(pub Vec<String>);

    impl Sink for Recorder {
        fn span(&mut self, line: u64, _: &mut SpanView<'_>) {
            self.0.push(format!("span {line}"));
        }
        fn row(&mut self, line: u64, record: &mut SpanView<'_>, provenance: Provenance) {
            let record = std::mem::take(record).into_owned();
            self.0.push(format!("row {line} {record:?} {provenance:?}"));
        }
        fn context(
            &mut self,
            line: u64,
            span_id: Option<&str>,
            parent_id: Option<&str>,
            name: Option<&str>,
            reason: &str,
        ) {
            let call = format!("context {line} {span_id:?} {parent_id:?} {name:?} {reason}");
            self.0.push(call);
        }
        fn skipped(&mut self, line: u64, span_id: Option<String>, reason: String) {
            self.0.push(format!("skipped {line} {span_id:?} {reason}"));
        }
        fn invalid(&mut self, line: u64, kind: InvalidKind, error: String) {
            self.0.push(format!("invalid {line} {kind:?} {error}"));
        }
        fn blank(&mut self) {
            self.0.push("blank".into());
        }
        fn set_format(&mut self, format: &str, read_as: Option<ReadAs>) {
            self.0.push(format!("format {format} {read_as:?}"));
        }
    }

    /// The lines read as `otlp` by the reader with the fast path, and by the tree reader.
    fn both_ways(lines: &[&[u8]]) -> (Vec<String>, Vec<String>) {
        let run = |fast: bool| {
            let (mut collector, mut sink) = (Collector::default(), Recorder::default());
            for (i, line) in lines.iter().enumerate() {
                let n = i as u64 + 1;
                json_line_as(Format::Otlp, n, line, &mut collector, &mut sink, fast);
            }
            let conventions = collector.finish(&mut sink, crate::formats::End::Free);
            sink.0.push(format!("conventions {conventions:?}"));
            sink.0
        };
        (run(true), run(false))
    }

    fn document_both_ways(doc: &[u8], option: FormatOption) -> (Vec<String>, Vec<String>) {
        let run = |fast| {
            let mut sink = Recorder::default();
            read_document_as(option, doc, &mut sink, fast, crate::formats::End::Free);
            sink.0
        };
        (run(true), run(false))
    }

    /// The OTLP fixtures of the repository: this crate's, and the producers' corpus.
    pub(crate) fn fixtures() -> Vec<(String, Vec<u8>)> {
        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        let mut out = Vec::new();
        for dir in ["tests/fixtures/formats", "../../pkg-tests/producers/corpus"] {
            let mut names: Vec<_> = std::fs::read_dir(root.join(dir))
                .unwrap()
                .map(|e| e.unwrap().path())
                .filter(|p| {
                    let name = p.file_name().unwrap().to_string_lossy();
                    name.contains("otlp") && !name.contains(".spans.") && !name.contains("truth")
                })
                .collect();
            names.sort();
            for path in names {
                let name = path.file_name().unwrap().to_string_lossy().to_string();
                out.push((name, std::fs::read(&path).unwrap()));
            }
        }
        out
    }

    /// When the fast reader reads `bytes`, its spans are the tree reader's, field by field
    /// (attributes the conventions never look at included). Returns whether it read them.
    fn same_spans(bytes: &[u8]) -> bool {
        let Some(fast) = Request::parse(bytes) else {
            return false;
        };
        // The walk of otlp::read_request, on a request the fast reader found ordinary.
        fn list<'a>(obj: &'a Map<String, Value>, camel: &str, snake: &str) -> &'a [Value] {
            obj.get(camel)
                .or_else(|| obj.get(snake))
                .and_then(Value::as_array)
                .map_or(&[], Vec::as_slice)
        }
        let value: Value = serde_json::from_slice(bytes).unwrap();
        let mut tree = Vec::new();
        for resource in list(
            value.as_object().unwrap(),
            "resourceSpans",
            "resource_spans",
        ) {
            let resource = resource.as_object().unwrap();
            let mut scopes = list(resource, "scopeSpans", "scope_spans");
            if scopes.is_empty() {
                scopes = list(
                    resource,
                    "instrumentationLibrarySpans",
                    "instrumentation_library_spans",
                );
            }
            for scope in scopes {
                for span in list(scope.as_object().unwrap(), "spans", "spans") {
                    tree.push(otlp::read_span(span.as_object().unwrap()));
                }
            }
        }
        let text = String::from_utf8_lossy(bytes);
        assert_eq!(format!("{:?}", fast.spans), format!("{tree:?}"), "{text}");
        true
    }

    fn lines(bytes: &[u8]) -> Vec<&[u8]> {
        bytes.split(|&b| b == b'\n').collect()
    }

    #[test]
    fn every_fixture_reads_the_same() {
        let all = fixtures();
        assert!(all.len() >= 15, "fixtures found: {}", all.len());
        let mut fast_read = 0;
        for (name, bytes) in &all {
            let (fast, tree) = both_ways(&lines(bytes));
            assert_eq!(fast, tree, "{name} as lines");
            let (fast, tree) = document_both_ways(bytes, FormatOption::Auto);
            assert_eq!(fast, tree, "{name} as a document");
            let (fast, tree) = document_both_ways(bytes, FormatOption::Otlp);
            assert_eq!(fast, tree, "{name} as a forced otlp document");
            // The fast path must actually read them, not hand them all to the tree reader:
            // every export request (a JSONL line, or a whole .json document).
            if name.ends_with(".jsonl") {
                for line in lines(bytes).into_iter().filter(|l| !l.is_empty()) {
                    assert!(same_spans(line), "{name}: a line not read fast");
                    fast_read += 1;
                }
            } else if name.starts_with("otlp-") {
                assert!(same_spans(bytes), "{name} not read fast");
                fast_read += 1;
            }
        }
        assert!(
            fast_read >= 20,
            "requests read by the fast path: {fast_read}"
        );
    }

    /// The point of the fast reader: a span's ids, name, keys and plain strings are slices of
    /// the line, not copies; a string with escapes is the one that is copied.
    #[test]
    fn spans_borrow_from_the_line() {
        let line = br#"{"resourceSpans":[{"scopeSpans":[{"spans":[{"traceId":"t1","spanId":" s1 ","name":"execute_tool ls","endTimeUnixNano":"9","attributes":[{"key":"gen_ai.tool.name","value":{"stringValue":"ls"}},{"key":"gen_ai.tool.call.result","value":{"stringValue":"a\nb"}},{"key":"n","value":{"intValue":"3"}}],"events":[{"name":"e","attributes":[{"key":"content","value":{"stringValue":"hi"}}]}]}]}]}]}"#;
        let request = Request::parse(line).unwrap();
        let span = &request.spans[0];
        let borrowed = |s: &Option<Cow<'_, str>>| matches!(s, Some(Cow::Borrowed(_)));
        assert!(borrowed(&span.trace_id) && borrowed(&span.span_id) && borrowed(&span.name));
        assert_eq!(span.span_id.as_deref(), Some("s1"));
        assert!(matches!(
            span.attrs.get("gen_ai.tool.name"),
            Some(AttrValue::Text("ls", _))
        ));
        assert!(matches!(
            span.attrs.get("gen_ai.tool.call.result"),
            Some(AttrValue::Json(Value::String(s))) if s == "a\nb"
        ));
        assert_eq!(span.attr("n"), Some(&Value::from(3)));
        let event = &span.events[0];
        assert!(matches!(event.name, Cow::Borrowed("e")));
        assert!(matches!(
            event.attrs.get("content"),
            Some(AttrValue::Text("hi", _))
        ));
    }

    /// A change to one entry (object member or array item) of a JSON tree, made in the text.
    #[derive(Clone, Copy)]
    pub(crate) enum Op<'a> {
        /// The value replaced by this JSON text.
        Value(&'a str),
        /// The member written twice: itself, then with this value.
        After(&'a str),
        /// The member written twice: with this value, then itself.
        Before(&'a str),
        /// The member's key written as this JSON string (another spelling).
        Key(&'a str),
        Drop,
    }

    impl<'a> Op<'a> {
        /// Every change the damage tests make: each of `raw` as a member's value, written
        /// after it and before it; the key in snake_case and with an escape; the member
        /// dropped.
        pub(crate) fn all(raw: &[&'a str]) -> Vec<Op<'a>> {
            let mut ops: Vec<Op<'a>> = raw
                .iter()
                .flat_map(|&r| [Op::Value(r), Op::After(r), Op::Before(r)])
                .collect();
            ops.extend([Op::Key("snake"), Op::Key("escaped"), Op::Drop]);
            ops
        }
    }

    /// Writes `value` as JSON with `op` applied at the `target`-th entry (depth first);
    /// returns whether it was applied.
    pub(crate) fn emit(
        value: &Value,
        out: &mut String,
        at: &mut usize,
        target: usize,
        op: Op,
    ) -> bool {
        let mut applied = false;
        match value {
            Value::Array(items) => {
                out.push('[');
                let mut first = true;
                for item in items {
                    let here = *at == target;
                    *at += 1;
                    let mut piece = String::new();
                    match op {
                        Op::Value(raw) if here => piece.push_str(raw),
                        Op::Drop if here => {}
                        Op::After(raw) if here => {
                            emit(item, &mut piece, at, target, op);
                            piece.push(',');
                            piece.push_str(raw);
                        }
                        Op::Before(raw) if here => {
                            piece.push_str(raw);
                            piece.push(',');
                            emit(item, &mut piece, at, target, op);
                        }
                        // An item given twice (a repeated attribute key, say).
                        Op::Key(_) if here => {
                            let mut once = String::new();
                            emit(item, &mut once, at, target, op);
                            piece = format!("{once},{once}");
                        }
                        _ => applied |= emit(item, &mut piece, at, target, op),
                    }
                    applied |= here;
                    if !piece.is_empty() {
                        if !first {
                            out.push(',');
                        }
                        first = false;
                        out.push_str(&piece);
                    }
                }
                out.push(']');
            }
            Value::Object(map) => {
                out.push('{');
                let mut members = Vec::new();
                for (key, item) in map {
                    let here = *at == target;
                    *at += 1;
                    let k = serde_json::to_string(key).unwrap();
                    let mut inner = String::new();
                    let sub = emit(item, &mut inner, at, target, op);
                    applied |= sub;
                    if !here {
                        members.push(format!("{k}:{inner}"));
                        continue;
                    }
                    applied = true;
                    match op {
                        Op::Value(raw) => members.push(format!("{k}:{raw}")),
                        Op::After(raw) => {
                            members.push(format!("{k}:{inner}"));
                            members.push(format!("{k}:{raw}"));
                        }
                        Op::Before(raw) => {
                            members.push(format!("{k}:{raw}"));
                            members.push(format!("{k}:{inner}"));
                        }
                        Op::Key(spelling) => {
                            let spelled = match spelling {
                                "snake" => serde_json::to_string(&snake(key)).unwrap(),
                                // The same key with its first letter escaped.
                                _ => {
                                    let mut c = key.chars();
                                    let first = c.next().map_or(0, u32::from);
                                    format!("\"\\u{first:04x}{}\"", c.as_str())
                                }
                            };
                            members.push(format!("{spelled}:{inner}"));
                        }
                        Op::Drop => {}
                    }
                }
                out.push_str(&members.join(","));
                out.push('}');
            }
            other => out.push_str(&serde_json::to_string(other).unwrap()),
        }
        applied
    }

    fn snake(key: &str) -> String {
        let mut out = String::new();
        for c in key.chars() {
            if c.is_ascii_uppercase() {
                out.push('_');
                out.push(c.to_ascii_lowercase());
            } else {
                out.push(c);
            }
        }
        out
    }

    /// Values of every type in every field, given twice, respelled or dropped: whatever the
    /// fast reader accepts it reads as the tree reader does, and what it does not accept the
    /// tree reader reports, with its own words.
    #[test]
    fn damaged_requests_read_the_same() {
        const RAW: [&str; 24] = [
            "null",
            "0",
            "1",
            "2",
            "-1",
            "-0",
            "1.5",
            "1e400",
            "18446744073709551616",
            "true",
            "\"\"",
            "\" 7 \"",
            "\"x\"",
            "\"STATUS_CODE_ERROR\"",
            "[]",
            "[1]",
            "{}",
            "{\"stringValue\":\"s\"}",
            "{\"intValue\":\" 12 \"}",
            "{\"stringValue\":null,\"intValue\":\"3\"}",
            "\"\\ud800\"",
            "{\"arrayValue\":{\"values\":[{\"intValue\":\"1\"}]}}",
            "{\"key\":\"gen_ai.operation.name\",\"value\":{\"stringValue\":\"chat\"}}",
            "{\"key\":\"gen_ai.tool.call.result\",\"value\":{\"intValue\":\"-4\"}}",
        ];
        let ops = Op::all(&RAW);
        let (mut fast_read, mut variants) = (0, 0);
        let collector = std::fs::read(
            Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("tests/fixtures/formats/otlp-collector-events.jsonl"),
        )
        .unwrap();
        let mut bases: Vec<Value> = lines(&collector)
            .into_iter()
            .filter(|l| !l.is_empty())
            .map(|l| serde_json::from_slice(l).unwrap())
            .collect();
        bases.truncate(2);
        for base in &bases {
            let mut target = 0;
            loop {
                let mut any = false;
                // A few operations per entry, a different few for each (all of them would
                // take minutes in a debug build).
                for k in 0..6 {
                    let op = ops[(target * 7 + k * 13) % ops.len()];
                    let (mut text, mut at) = (String::new(), 0);
                    if !emit(base, &mut text, &mut at, target, op) {
                        continue;
                    }
                    any = true;
                    variants += 1;
                    fast_read += usize::from(same_spans(text.as_bytes()));
                    let (fast, tree) = both_ways(&[text.as_bytes()]);
                    assert_eq!(fast, tree, "{text}");
                }
                if !any {
                    break;
                }
                target += 1;
            }
        }
        // Both paths were taken, many times each.
        assert!(variants > 500, "variants: {variants}");
        assert!(
            fast_read > variants / 4,
            "{fast_read} of {variants} read fast"
        );
        assert!(
            fast_read < variants * 3 / 4,
            "{fast_read} of {variants} read fast"
        );
    }

    /// Attribute entries in and near the exporters' compact form, which the line
    /// deserializer answers whole: each reads as the tree reader reads it, and the ones in
    /// the form stay borrowed from the line.
    #[test]
    fn compact_attributes_read_as_the_tree_reader_reads_them() {
        let entries = [
            r#"{"key":"k","value":{"stringValue":"v"}}"#,
            r#"{"key":"","value":{"stringValue":""}}"#,
            r#"{"key":"caf\u00e9","value":{"stringValue":"v"}}"#,
            "{\"key\":\"caf\u{e9} \u{2615}\",\"value\":{\"stringValue\":\"\u{1f600}\"}}",
            r#"{"key":"k","value":{"stringValue":"a\nb"}}"#,
            r#"{"key":"a\"b","value":{"stringValue":"v"}}"#,
            r#"{"key":"k","value":{"stringValue":"}}"}}"#,
            r#"{"key":"k","value":{"stringValue":"v"},"x":1}"#,
            r#"{"key":"k","value":{"stringValue":"v","x":1}}"#,
            r#"{"key":"k","value":{"stringValue":"v","stringValue":"w"}}"#,
            r#"{"key":"k","value":{"stringValue":null}}"#,
            r#"{"key":"k","value":{"intValue":"3"}}"#,
            r#"{"key":"k","value":{"string_value":"v"}}"#,
            r#"{"key":null,"value":{"stringValue":"v"}}"#,
            r#"{"value":{"stringValue":"v"},"key":"k"}"#,
            r#"{"key":"k","key":"j","value":{"stringValue":"v"}}"#,
            r#"{ "key": "k", "value": { "stringValue": "v" } }"#,
            r#"{"key":"k" ,"value":{"stringValue":"v"}}"#,
            r#"{"key":"k","value":{"stringValue":"v"}}}"#,
            r#"{"key":"k","value":{"stringValue":"v"}"#,
            r#"{"key":"k","value":{"stringValue":"v"#,
            "{\"key\":\"k\",\"value\":{\"stringValue\":\"a\tb\"}}",
            "{\"key\":\"k\u{1}\",\"value\":{\"stringValue\":\"v\"}}",
        ];
        let request = |attributes: &str| {
            format!(
                r#"{{"resourceSpans":[{{"scopeSpans":[{{"spans":[{{"traceId":"t","spanId":"s","name":"execute_tool x","endTimeUnixNano":"9","attributes":[{{"key":"gen_ai.operation.name","value":{{"stringValue":"execute_tool"}}}},{attributes}],"events":[{{"name":"e","attributes":[{attributes}]}}]}}]}}]}}]}}"#
            )
        };
        for entry in entries {
            // Alone, then before and after an entry in the compact form with the same key,
            // twice (a repeated key keeps its first value).
            for attributes in [
                entry.to_string(),
                format!(r#"{entry},{{"key":"k","value":{{"stringValue":"last"}}}}"#),
                format!(r#"{{"key":"k","value":{{"stringValue":"first"}}}},{entry},{entry}"#),
            ] {
                let line = request(&attributes);
                same_spans(line.as_bytes());
                let (fast, tree) = both_ways(&[line.as_bytes()]);
                assert_eq!(fast, tree, "{line}");
            }
        }
        let line = request(entries[3]);
        let request = Request::parse(line.as_bytes()).unwrap();
        let span = &request.spans[0];
        assert!(matches!(
            span.attrs.get("caf\u{e9} \u{2615}"),
            Some(AttrValue::Text("\u{1f600}", _))
        ));
        assert!(matches!(
            span.events[0].attrs.get("caf\u{e9} \u{2615}"),
            Some(AttrValue::Text("\u{1f600}", _))
        ));
    }

    #[test]
    fn odd_requests_read_the_same() {
        let deep = |n: usize| format!("{}{}", "[".repeat(n), "]".repeat(n));
        let span = r#"{"traceId":"t","spanId":"s","name":"execute_tool x","endTimeUnixNano":"9","attributes":[{"key":"gen_ai.operation.name","value":{"stringValue":"execute_tool"}},{"key":"gen_ai.tool.call.result","value":{"stringValue":"out"}}]}"#;
        let wrap = |spans: &str| {
            format!(r#"{{"resourceSpans":[{{"scopeSpans":[{{"spans":[{spans}]}}]}}]}}"#)
        };
        let cases = [
            wrap(span),
            format!("[{}]", wrap(span)),
            format!("[{},{}]", wrap(span), wrap(span)),
            r#"{"resourceSpans":null}"#.to_string(),
            r#"{"resourceSpans":[]}"#.to_string(),
            r#"{"resource_spans":[{"scope_spans":[]}]}"#.to_string(),
            r#"{"resourceSpans":[{"scopeSpans":[],"instrumentationLibrarySpans":[{"spans":[{"name":"a"}]}]}]}"#.to_string(),
            r#"{"resourceSpans":[{"scopeSpans":[{}],"instrumentationLibrarySpans":[{"spans":[{"name":"a"}]}]}]}"#.to_string(),
            "{}".to_string(),
            "[]".to_string(),
            wrap(&format!(r#"{{"x":{},"name":"a"}}"#, deep(100))),
            wrap(&format!(r#"{{"x":{},"name":"a"}}"#, deep(200))),
            wrap(&format!(
                r#"{{"name":"a","attributes":[{{"key":"k","value":{{"arrayValue":{{"values":{}}}}}}}]}}"#,
                deep(120)
            )),
            wrap(&format!(r#"{span},{span},{{"name":"b","status":{{"code":1}},"endTimeUnixNano":3}}"#)),
            wrap(r#"{"name":"a","attributes":[{"key":"k","value":{"kvlistValue":{"values":[{"key":"b","value":{"intValue":"1"}},{"key":"a","value":{"boolValue":false}}]}}}]}"#),
            wrap(r#"{"name":"a","attributes":[{"key":"k","value":{"boolValue":true,"stringValue":"s"}},{"key":"k","value":{"stringValue":"second"}}]}"#),
            wrap(r#"{"name":"a","events":[{"attributes":[{"key":"k","value":{"doubleValue":1e308}}]}]}"#),
            wrap(r#"{"name":"a","x":1e400}"#),
            // Each kind of AnyValue alone, null, or of another type.
            wrap(&format!(
                r#"{{"name":"a","attributes":[{}]}}"#,
                [
                    r#"{"intValue":null}"#,
                    r#"{"stringValue":null}"#,
                    r#"{"intValue":"x"}"#,
                    r#"{"intValue":" -3 "}"#,
                    r#"{"intValue":true}"#,
                    r#"{"int_value":7}"#,
                    r#"{"string_value":"s"}"#,
                    r#"{"doubleValue":null}"#,
                    r#"{"double_value":2}"#,
                    r#"{"bytesValue":"aGk="}"#,
                    r#"{"boolValue":"no"}"#,
                    r#"{"arrayValue":null}"#,
                    r#"{"arrayValue":{"values":[{"stringValue":"a"},{"intValue":"2"},7]}}"#,
                    r#"{"kvlistValue":{"values":[{"key":"b","value":{"intValue":"1"}}]}}"#,
                    r#"{"kvlist_value":{"values":null}}"#,
                    r#"{"other":1}"#,
                    r#"{"stringValue":"s","stringValue":"t"}"#,
                    r#"{"stringValue":null,"string_value":"u"}"#,
                    "[1,{\"a\":2}]",
                    "-7",
                    "1.25",
                ]
                .iter()
                .enumerate()
                .map(|(i, v)| format!(r#"{{"key":"k{i}","value":{v}}}"#))
                .collect::<Vec<_>>()
                .join(",")
            )),
            wrap(r#"{"name":"a","x":"\ud800"}"#),
            wrap(r#"{"name":"a\u0000b"}"#),
            format!("{} ", wrap(span)),
            format!("{} x", wrap(span)),
            wrap(span)[..40].to_string(),
        ];
        for case in &cases {
            same_spans(case.as_bytes());
            let (fast, tree) = both_ways(&[case.as_bytes()]);
            assert_eq!(fast, tree, "{case}");
            let (fast, tree) = document_both_ways(case.as_bytes(), FormatOption::Auto);
            assert_eq!(fast, tree, "{case}");
        }
    }
}
