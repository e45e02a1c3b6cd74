//! An OTLP JSON export request as byte ranges: the JSON twin of
//! [`super::otlp_proto::WireRequest`], for the OTLP endpoint's split ([`crate::pipeline`]).
//!
//! The endpoint forwards a request with its tool spans taken out and keeps each tool span as
//! a one-span request of its own. Read as a `serde_json::Value` tree, a request cost an
//! allocation per value and a SipHash per key (the std hasher's keys are fixed in wasm, so
//! keys chosen to collide would make a request's parse quadratic, on a port open to the
//! network), and each piece written back was serialized again. Here the request is walked
//! once: the three levels the split rebuilds (the request, its resources, their scopes)
//! keep each member's byte range, each span is read where it stands by the check's span
//! reader ([`super::otlp_json::span_at`]), and every other value is parsed as the tree
//! reader parses it and dropped. What is written back is copied from the ranges.
//!
//! As the check's fast path ([`super::otlp_json`]), it reads only the ordinary shape, and
//! declines the rest: bytes that are not UTF-8, a list member (`resourceSpans`, the scope
//! list, `spans`) given twice in one object, an object of more than [`MAX_MEMBERS`]
//! members, a span the span reader declines, and whatever [`super::line_de`] declines
//! (invalid JSON among it). A declined request is read by the
//! tree, whose messages for odd input are the only ones, so declining costs speed, never a
//! verdict; the pipeline's tests hold the two readings to the same split.

use std::ops::Range;

use super::line_de::{Declined, LineDe};
use super::otel::OtelSpan;
use super::otlp_json::{span_at, Skip, Str};
use serde::Deserialize;

type Result<T> = std::result::Result<T, Declined>;

/// The names of the request's resource list, in the order the tree reader picks one.
pub(crate) const RESOURCES: [&str; 2] = ["resourceSpans", "resource_spans"];
/// The names of a resource's scope list, in the order the tree reader picks one.
pub(crate) const SCOPES: [&str; 4] = [
    "scopeSpans",
    "scope_spans",
    "instrumentationLibrarySpans",
    "instrumentation_library_spans",
];
const SPANS: [&str; 1] = ["spans"];

/// The most members one object of a request may have: a request with a larger object is
/// declined here and refused by the tree reader ([`crate::pipeline`]'s bounded tree), since
/// no OTLP object has more than a few dozen and a large one is the shape of a body whose
/// keys were chosen to collide in a hash map.
pub(crate) const MAX_MEMBERS: u32 = 1024;

/// One member of an object: `whole` from its key's opening quote to its value's end, `value`
/// the value's bytes.
#[derive(Debug, Clone)]
pub(crate) struct Member {
    pub whole: Range<usize>,
    pub value: Range<usize>,
}

/// An object of one of the levels: its members in order, and the list the next level is
/// read from.
#[derive(Debug)]
pub(crate) struct Level<T> {
    pub members: Vec<Member>,
    /// The member that holds the list, picked by name as the tree reader picks it; `None`
    /// when the object has none.
    pub list: Option<usize>,
    /// That member's items when its value is an array (`None`: another value, such as
    /// `null`, which holds nothing).
    pub items: Option<Vec<Item<T>>>,
}

/// One item of a list: its bytes, and what it reads as when it is an object.
#[derive(Debug)]
pub(crate) struct Item<T> {
    pub whole: Range<usize>,
    pub object: Option<T>,
}

pub(crate) type Scope<S> = Level<S>;
pub(crate) type Resource<S> = Level<Scope<S>>;

/// A request: the root object and its text. `S` is what a span object reads as.
#[derive(Debug)]
pub(crate) struct Request<'a, S> {
    pub text: &'a str,
    pub root: Level<Resource<S>>,
    /// The index in [`RESOURCES`] of the list's name.
    pub name: usize,
}

impl<'a> Request<'a, OtelSpan<'a>> {
    /// A request with each span read as the check reads it, or `None` to read it as a tree.
    pub fn spans(bytes: &'a [u8]) -> Option<Self> {
        Request::parse(bytes, &mut |de| span_at(de))
    }
}

impl<'a> Request<'a, Level<()>> {
    /// A request with each span's members and its `attributes` list located (the list's
    /// items skipped), or `None` to read it as a tree.
    pub fn attributes(bytes: &'a [u8]) -> Option<Self> {
        Request::parse(bytes, &mut |de| level(de, &["attributes"], &mut skip))
    }
}

impl<'a> Request<'a, ()> {
    /// A request with its spans skipped, or `None` to read it as a tree.
    pub fn outline(bytes: &'a [u8]) -> Option<Self> {
        Request::parse(bytes, &mut skip)
    }
}

impl<'a, S> Request<'a, S> {
    fn parse(bytes: &'a [u8], span: &mut dyn FnMut(&mut LineDe<'a>) -> Result<S>) -> Option<Self> {
        let text = crate::bytes::utf8(bytes)?;
        let mut de = LineDe::new(text).max_members(MAX_MEMBERS);
        if de.peek().ok()? != b'{' {
            return None;
        }
        let mut scope = |de: &mut LineDe<'a>| level(de, &SPANS, &mut *span);
        let mut resource = |de: &mut LineDe<'a>| level(de, &SCOPES, &mut scope);
        let (root, name) = level_named(&mut de, &RESOURCES, &mut resource).ok()?;
        de.end().ok()?;
        // Not a request (the tree reader says so).
        root.list?;
        Some(Request { text, root, name })
    }

    /// The text of a range.
    pub fn at(&self, range: &Range<usize>) -> &'a str {
        &self.text[range.clone()]
    }
}

fn skip<'a>(de: &mut LineDe<'a>) -> Result<()> {
    Skip::deserialize(&mut *de).map(|_| ())
}

fn level<'a, T>(
    de: &mut LineDe<'a>,
    names: &[&str],
    item: &mut dyn FnMut(&mut LineDe<'a>) -> Result<T>,
) -> Result<Level<T>> {
    level_named(de, names, item).map(|(level, _)| level)
}

/// The object at the reader's position: each member's range, and the items of the list
/// named by the first of `names` it has, each object among them read by `item`. Every other
/// value is parsed and dropped.
fn level_named<'a, T>(
    de: &mut LineDe<'a>,
    names: &[&str],
    item: &mut dyn FnMut(&mut LineDe<'a>) -> Result<T>,
) -> Result<(Level<T>, usize)> {
    de.enter()?;
    let mut members = Vec::new();
    // The names met (a bit per index in `names`), and the list member picked so far.
    let mut met = 0u32;
    let mut picked: Option<Found<T>> = None;
    let mut first = true;
    while let Some(c) = next_entry(de, &mut first, b'}')? {
        if c != b'"' {
            return Err(Declined);
        }
        let start = de.at();
        let key = Str::deserialize(&mut *de)?.0;
        if de.peek()? != b':' {
            return Err(Declined);
        }
        de.step();
        let value_start = {
            de.peek()?;
            de.at()
        };
        match names.iter().position(|n| *n == key) {
            Some(j) => {
                // Given twice: the tree keeps the last; which one a reader downstream
                // keeps is its own choice, so the tree decides (and writes one).
                if met & (1 << j) != 0 {
                    return Err(Declined);
                }
                met |= 1 << j;
                let items = if de.peek()? == b'[' {
                    Some(list(de, item)?)
                } else {
                    skip(de)?;
                    None
                };
                if picked.as_ref().is_none_or(|p| j < p.name) {
                    picked = Some(Found {
                        name: j,
                        member: members.len(),
                        items,
                    });
                }
            }
            None => skip(de)?,
        }
        let end = de.at();
        if !de.members_allowed(members.len() as u32 + 1) {
            return Err(Declined);
        }
        members.push(Member {
            whole: start..end,
            value: value_start..end,
        });
    }
    de.leave();
    let name = picked.as_ref().map_or(0, |p| p.name);
    let (list, items) = match picked {
        Some(p) => (Some(p.member), p.items),
        None => (None, None),
    };
    Ok((
        Level {
            members,
            list,
            items,
        },
        name,
    ))
}

/// Steps to the next entry of an object or array (past the comma after the one before):
/// its first byte, or `None` at the `close` that ends the object or array.
fn next_entry(de: &mut LineDe<'_>, first: &mut bool, close: u8) -> Result<Option<u8>> {
    let c = de.peek()?;
    if c == close {
        return Ok(None);
    }
    if std::mem::replace(first, false) {
        return Ok(Some(c));
    }
    if c != b',' {
        return Err(Declined);
    }
    de.step();
    de.peek().map(Some)
}

/// A list member of an object: the index of its name, its place, its items.
struct Found<T> {
    name: usize,
    member: usize,
    items: Option<Vec<Item<T>>>,
}

/// The array at the reader's position: each item's range, objects read by `item`.
fn list<'a, T>(
    de: &mut LineDe<'a>,
    item: &mut dyn FnMut(&mut LineDe<'a>) -> Result<T>,
) -> Result<Vec<Item<T>>> {
    de.enter()?;
    let mut items = Vec::new();
    let mut first = true;
    while let Some(c) = next_entry(de, &mut first, b']')? {
        let start = de.at();
        let object = if c == b'{' {
            Some(item(de)?)
        } else {
            skip(de)?;
            None
        };
        items.push(Item {
            whole: start..de.at(),
            object,
        });
    }
    de.leave();
    Ok(items)
}

/// Writes an object of `level` as it came, but for its list member, whose value `list`
/// writes.
pub(crate) fn write_level<T>(
    out: &mut String,
    text: &str,
    level: &Level<T>,
    list: impl FnOnce(&mut String),
) {
    out.push('{');
    let mut list = Some(list);
    for (i, m) in level.members.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        if Some(i) == level.list {
            out.push_str(&text[m.whole.start..m.value.start]);
            if let Some(write) = list.take() {
                write(out);
            }
        } else {
            out.push_str(&text[m.whole.clone()]);
        }
    }
    out.push('}');
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_cover_members_and_items() {
        let text = r#" {"a": 1, "resourceSpans" : [ {"scopeSpans":[{"spans":[{"name":"x"}, 3]}], "z":{}}, null ] , "b":[]} "#;
        let req = Request::outline(text.as_bytes()).unwrap();
        assert_eq!(req.name, 0);
        let root = &req.root;
        let names: Vec<&str> = root.members.iter().map(|m| req.at(&m.whole)).collect();
        assert_eq!(names[0], r#""a": 1"#);
        assert_eq!(names[2], r#""b":[]"#);
        assert_eq!(root.list, Some(1));
        let items = root.items.as_ref().unwrap();
        assert_eq!(items.len(), 2);
        assert!(items[1].object.is_none());
        assert_eq!(req.at(&items[1].whole), "null");
        let resource = items[0].object.as_ref().unwrap();
        assert_eq!(req.at(&resource.members[1].value), "{}");
        let scope = resource.items.as_ref().unwrap()[0].object.as_ref().unwrap();
        let spans = scope.items.as_ref().unwrap();
        assert_eq!(req.at(&spans[0].whole), r#"{"name":"x"}"#);
        assert_eq!(req.at(&spans[1].whole), "3");
        let mut out = String::new();
        write_level(&mut out, req.text, root, |o| o.push_str("[]"));
        assert_eq!(out, r#"{"a": 1,"resourceSpans" : [],"b":[]}"#);
    }

    #[test]
    fn declines_what_the_tree_decides() {
        for text in [
            "",
            "[]",
            r#"{"a":1}"#,
            r#"{"resourceSpans":[],"resourceSpans":[]}"#,
            r#"{"resourceSpans":[{"scopeSpans":[{"spans":[],"spans":[]}]}]}"#,
            r#"{"resourceSpans":[]} x"#,
            r#"{"resourceSpans":[1,]}"#,
            r#"{"resourceSpans":[], "s":"\ud800"}"#,
        ] {
            assert!(Request::outline(text.as_bytes()).is_none(), "{text}");
        }
        assert!(Request::outline(b"{\"resourceSpans\":[],\"x\":\"\xff\"}").is_none());
        // An object of more than MAX_MEMBERS members, wherever it is: the root, a resource,
        // a value skipped, a span read, a value inside the span.
        let object = |n: u32| {
            let members: Vec<String> = (0..n).map(|i| format!("\"k{i}\":{i}")).collect();
            format!("{{{}}}", members.join(","))
        };
        let places = [
            |o: &str| format!(r#"{{"resourceSpans":[],{}}}"#, &o[1..o.len() - 1]),
            |o: &str| {
                format!(
                    r#"{{"resourceSpans":[{{"scopeSpans":[],{}}}]}}"#,
                    &o[1..o.len() - 1]
                )
            },
            |o: &str| format!(r#"{{"resourceSpans":[{{"resource":{o}}}]}}"#),
            |o: &str| {
                format!(
                    r#"{{"resourceSpans":[{{"scopeSpans":[{{"spans":[{{"name":"s",{}}}]}}]}}]}}"#,
                    &o[1..o.len() - 1]
                )
            },
            |o: &str| {
                format!(
                    r#"{{"resourceSpans":[{{"scopeSpans":[{{"spans":[{{"attributes":[{{"key":"k","value":{{"kvlistValue":{o}}}}}]}}]}}]}}]}}"#
                )
            },
        ];
        let (fits, over) = (object(MAX_MEMBERS - 1), object(MAX_MEMBERS + 1));
        for (i, place) in places.iter().enumerate() {
            assert!(
                Request::spans(place(&fits).as_bytes()).is_some(),
                "place {i}"
            );
            assert!(
                Request::spans(place(&over).as_bytes()).is_none(),
                "place {i}"
            );
        }
        // The picked list by precedence, the other one a member like any other.
        let req = Request::outline(br#"{"resource_spans":[1],"resourceSpans":[2,3]}"#).unwrap();
        assert_eq!((req.name, req.root.list), (0, Some(1)));
        assert_eq!(req.root.items.as_ref().unwrap().len(), 2);
    }
}
