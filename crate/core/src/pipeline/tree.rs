//! A request body read as a tree, with the work it can cost bounded: a `serde_json::Value`
//! for the requests the byte-range reader ([`crate::formats::pipeline_parts`]'s
//! `json_wire`) declines, which the split rewrites; a [`Node`] (borrowed strings, member
//! lists, nothing hashed) for the JSON-to-protobuf transcoder, which only reads.
//!
//! A tree's objects are ordered hash maps keyed by std's SipHash, whose keys are fixed in
//! wasm (there is no entropy source to seed them from). Keys chosen offline to fall into
//! one bucket would make each insert walk all of the ones before it: one object of n such
//! members costs n² probes, and the endpoint reads bodies from the network. No OTLP object
//! has more than a score of members (attribute lists, key-value lists and events are
//! arrays), so a body with an object of more than [`MAX_MEMBERS`] members is refused before
//! any map is built, by a pass that counts members and builds nothing. The pass is
//! serde_json's own parser, so it accepts exactly the JSON the tree reader accepts, and a
//! syntax error gets the same message and place.

use std::borrow::Cow;
use std::fmt;

use serde::de::{
    Deserialize, DeserializeSeed, Deserializer, Error, IgnoredAny, MapAccess, SeqAccess, Visitor,
};
use serde_json::{Number, Value};

use crate::formats::pipeline_parts::{fast_json, json_wire};

/// The most members one object of a request may have (the byte-range reader declines a
/// request with a larger one, which then comes here).
pub const MAX_MEMBERS: usize = json_wire::MAX_MEMBERS as usize;

/// `body` as a tree, or serde_json's error (syntax, or an object over [`MAX_MEMBERS`]).
pub(super) fn parse(body: &[u8]) -> Result<Value, serde_json::Error> {
    serde_json::from_slice::<Counted>(body)?;
    serde_json::from_slice(body)
}

/// Any JSON value, its objects' members counted.
struct Counted;

impl<'de> Deserialize<'de> for Counted {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(CountedVisitor)
    }
}

struct CountedVisitor;

impl<'de> Visitor<'de> for CountedVisitor {
    type Value = Counted;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_bool<E: Error>(self, _: bool) -> Result<Counted, E> {
        Ok(Counted)
    }
    fn visit_i64<E: Error>(self, _: i64) -> Result<Counted, E> {
        Ok(Counted)
    }
    fn visit_u64<E: Error>(self, _: u64) -> Result<Counted, E> {
        Ok(Counted)
    }
    fn visit_f64<E: Error>(self, _: f64) -> Result<Counted, E> {
        Ok(Counted)
    }
    fn visit_str<E: Error>(self, _: &str) -> Result<Counted, E> {
        Ok(Counted)
    }
    fn visit_unit<E: Error>(self) -> Result<Counted, E> {
        Ok(Counted)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Counted, A::Error> {
        while seq.next_element::<Counted>()?.is_some() {}
        Ok(Counted)
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Counted, A::Error> {
        let mut members = 0;
        // Keys are strings, checked as the tree checks them.
        while map.next_key::<IgnoredAny>()?.is_some() {
            members = counted::<A::Error>(members)?;
            map.next_value::<Counted>()?;
        }
        Ok(Counted)
    }
}

/// One more member of an object, or the error for an object over [`MAX_MEMBERS`] (raised at
/// its first member too many, where the parser then stands).
fn counted<E: Error>(members: usize) -> Result<usize, E> {
    if members == MAX_MEMBERS {
        return Err(E::custom(format_args!(
            "an object with more than {MAX_MEMBERS} members (no OTLP object has more than a few dozen)"
        )));
    }
    Ok(members + 1)
}

/// A JSON value read for reading only: strings borrowed from the body unless they hold
/// escapes, objects as their members in order. It reads what the `Value` tree reads (same
/// parser, same errors, same [`MAX_MEMBERS`] bound, raised at the same place) with an
/// allocation per array and object, none per string, and no key hashed; a key given twice
/// counts as the tree counts it, the last one ([`member`]). Through the `Value` tree, the
/// transcoder took 30 µs per request of the 50 MB Collector bench file and 35.4 MiB of wasm
/// memory for a 7.6 MiB request (with the split after it); through this, 15 µs and 30.3 MiB.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Node<'a> {
    Null,
    Bool(bool),
    Number(Number),
    String(Cow<'a, str>),
    Array(Vec<Node<'a>>),
    Object(Vec<(Cow<'a, str>, Node<'a>)>),
}

/// The members of an object [`Node`].
pub(super) type Members<'a> = [(Cow<'a, str>, Node<'a>)];

impl<'a> Node<'a> {
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Node::String(s) => Some(s),
            _ => None,
        }
    }

    pub fn as_bool(&self) -> Option<bool> {
        match self {
            Node::Bool(b) => Some(*b),
            _ => None,
        }
    }

    pub fn as_array(&self) -> Option<&[Node<'a>]> {
        match self {
            Node::Array(items) => Some(items),
            _ => None,
        }
    }

    pub fn as_object(&self) -> Option<&Members<'a>> {
        match self {
            Node::Object(members) => Some(members),
            _ => None,
        }
    }

    pub fn is_null(&self) -> bool {
        matches!(self, Node::Null)
    }
}

/// The value of `key` in an object: its last member of that name, as in a `Value` tree's
/// map (which keeps the last). A scan: objects are bounded, and their readers ask for a
/// fixed few names each.
pub(super) fn member<'n, 'a>(obj: &'n Members<'a>, key: &str) -> Option<&'n Node<'a>> {
    obj.iter().rev().find(|(k, _)| k == key).map(|(_, v)| v)
}

/// `body` as a [`Node`], or serde_json's error (syntax, or an object over [`MAX_MEMBERS`]).
///
/// Bytes that are UTF-8 (checked once, 16 bytes a step) are read by the line readers'
/// deserializer (`formats::line_de`), which makes the visitor calls serde_json would make,
/// faster, or declines; what it declines, and bytes that are not UTF-8, serde_json reads, so
/// its error is the one reported. Through serde_json alone, which checks each string's UTF-8
/// as it goes, the transcoder took 742-781 ms on the 17,625 requests of the 50 MB bench file,
/// read here 584-598 (`otlpJsonToProtobuf` on each, 3 interleaved processes, 2026-12-04;
/// before the writer's own change, `transcode::nested`).
pub(super) fn parse_node(body: &[u8]) -> Result<Node<'_>, serde_json::Error> {
    match crate::bytes::utf8(body) {
        Some(text) => match fast_json::<Node>(text) {
            Some(node) => Ok(node),
            None => serde_json::from_str(text),
        },
        None => serde_json::from_slice(body),
    }
}

impl<'de> Deserialize<'de> for Node<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(NodeVisitor)
    }
}

struct NodeVisitor;

impl<'de> Visitor<'de> for NodeVisitor {
    type Value = Node<'de>;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any valid JSON value")
    }
    fn visit_bool<E: Error>(self, b: bool) -> Result<Node<'de>, E> {
        Ok(Node::Bool(b))
    }
    fn visit_i64<E: Error>(self, n: i64) -> Result<Node<'de>, E> {
        Ok(Node::Number(n.into()))
    }
    fn visit_u64<E: Error>(self, n: u64) -> Result<Node<'de>, E> {
        Ok(Node::Number(n.into()))
    }
    fn visit_f64<E: Error>(self, f: f64) -> Result<Node<'de>, E> {
        // As the `Value` tree: a float JSON cannot hold (there is none after parsing) is null.
        Ok(Number::from_f64(f).map_or(Node::Null, Node::Number))
    }
    fn visit_borrowed_str<E: Error>(self, s: &'de str) -> Result<Node<'de>, E> {
        Ok(Node::String(Cow::Borrowed(s)))
    }
    fn visit_str<E: Error>(self, s: &str) -> Result<Node<'de>, E> {
        Ok(Node::String(Cow::Owned(s.to_owned())))
    }
    fn visit_string<E: Error>(self, s: String) -> Result<Node<'de>, E> {
        Ok(Node::String(Cow::Owned(s)))
    }
    fn visit_unit<E: Error>(self) -> Result<Node<'de>, E> {
        Ok(Node::Null)
    }
    fn visit_none<E: Error>(self) -> Result<Node<'de>, E> {
        Ok(Node::Null)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Node<'de>, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element()? {
            items.push(item);
        }
        Ok(Node::Array(items))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Node<'de>, A::Error> {
        let (mut members, mut count) = (Vec::new(), 0);
        while let Some(key) = map.next_key_seed(KeySeed)? {
            count = counted::<A::Error>(count)?;
            members.push((key, map.next_value()?));
        }
        Ok(Node::Object(members))
    }
}

/// An object key, borrowed from the body unless it holds escapes (serde's own `Cow<str>`
/// always copies).
struct KeySeed;

impl<'de> DeserializeSeed<'de> for KeySeed {
    type Value = Cow<'de, str>;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_str(self)
    }
}

impl<'de> Visitor<'de> for KeySeed {
    type Value = Cow<'de, str>;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a string key")
    }
    fn visit_borrowed_str<E: Error>(self, s: &'de str) -> Result<Self::Value, E> {
        Ok(Cow::Borrowed(s))
    }
    fn visit_str<E: Error>(self, s: &str) -> Result<Self::Value, E> {
        Ok(Cow::Owned(s.to_owned()))
    }
    fn visit_string<E: Error>(self, s: String) -> Result<Self::Value, E> {
        Ok(Cow::Owned(s))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What the fast deserializer declines (a surrogate pair, numbers it does not read
    /// exactly, deep nesting) serde_json reads, to the same node; bytes that are not UTF-8
    /// get serde_json's error, with its place.
    #[test]
    fn declined_and_non_utf8_bodies_read_as_serde_json_reads_them() {
        let deep = format!("{}1{}", "[".repeat(200), "]".repeat(200));
        for text in [
            r#"{"s":"\ud83d\ude00","n":[1e5,-0.0,12345678901234567890123,0.1,-7]}"#,
            r#"{"a":{"b":[true,false,null,"\u00e9x"]},"a":2}"#,
            deep.as_str(),
        ] {
            let value: Value = serde_json::from_str(text).unwrap_or(Value::Null);
            match parse_node(text.as_bytes()) {
                Ok(node) => assert_eq!(node, serde_json::from_str::<Node>(text).unwrap(), "{text}"),
                Err(e) => {
                    assert!(value.is_null(), "{text}");
                    let slow = serde_json::from_str::<Node>(text).unwrap_err();
                    assert_eq!(e.to_string(), slow.to_string());
                }
            }
        }
        let bad = b"{\"a\":\"x\xff\"}";
        let e = parse_node(bad).unwrap_err();
        let slow = serde_json::from_slice::<Node>(bad).unwrap_err();
        assert_eq!(e.to_string(), slow.to_string());
        assert!(e.to_string().contains("column"), "{e}");
    }

    #[test]
    fn objects_over_the_bound_are_refused_with_their_place() {
        let object = |n: usize| {
            let members: Vec<String> = (0..n).map(|i| format!("\"k{i}\":{i}")).collect();
            format!("{{\"a\":[{{{}}}]}}", members.join(","))
        };
        assert!(parse(object(MAX_MEMBERS).as_bytes()).is_ok());
        assert!(parse_node(object(MAX_MEMBERS).as_bytes()).is_ok());
        let e = parse(object(MAX_MEMBERS + 1).as_bytes()).unwrap_err();
        assert!(e.to_string().contains("more than 1024 members"), "{e}");
        assert_eq!(e.line(), 1);
        let node = parse_node(object(MAX_MEMBERS + 1).as_bytes()).unwrap_err();
        assert_eq!(node.to_string(), e.to_string());
        // Syntax errors as the tree reader gives them.
        for bad in [
            "{\"a\":",
            "[1,]",
            "{\"a\":1e999}",
            "\"\\ud800\"",
            "{} x",
            "{\"a\" 1}",
            "[\"\\q\"]",
        ] {
            let tree = serde_json::from_str::<Value>(bad).unwrap_err();
            let ours = parse(bad.as_bytes()).unwrap_err();
            assert_eq!(ours.to_string(), tree.to_string(), "{bad}");
            let node = parse_node(bad.as_bytes()).unwrap_err();
            assert_eq!(node.to_string(), tree.to_string(), "{bad}");
        }
        // Strings borrowed unless escaped.
        let node = parse_node(br#"{"a":"x","b\u0041":"y\n"}"#).unwrap();
        let members = node.as_object().unwrap();
        assert!(matches!(
            &members[0],
            (Cow::Borrowed("a"), Node::String(Cow::Borrowed("x")))
        ));
        assert!(
            matches!(&members[1], (Cow::Owned(k), Node::String(Cow::Owned(v))) if k == "bA" && v == "y\n")
        );
        assert_eq!(
            parse(br#"{"a":[1,{"b":null}]}"#).unwrap()["a"][1]["b"],
            Value::Null
        );
    }
}
