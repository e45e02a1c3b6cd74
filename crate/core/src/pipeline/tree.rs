//! A request body read as a `serde_json::Value` tree, with the work it can cost bounded
//! first: for the requests the byte-range reader ([`crate::formats::pipeline_parts`]'s
//! `json_wire`) declines, and for the JSON-to-protobuf transcoder.
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

use std::fmt;

use serde::de::{Deserialize, Deserializer, Error, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::Value;

use crate::formats::pipeline_parts::json_wire;

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
            members += 1;
            if members > MAX_MEMBERS {
                return Err(A::Error::custom(format_args!(
                    "an object with more than {MAX_MEMBERS} members (no OTLP object has more than a few dozen)"
                )));
            }
            map.next_value::<Counted>()?;
        }
        Ok(Counted)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn objects_over_the_bound_are_refused_with_their_place() {
        let object = |n: usize| {
            let members: Vec<String> = (0..n).map(|i| format!("\"k{i}\":{i}")).collect();
            format!("{{\"a\":[{{{}}}]}}", members.join(","))
        };
        assert!(parse(object(MAX_MEMBERS).as_bytes()).is_ok());
        let e = parse(object(MAX_MEMBERS + 1).as_bytes()).unwrap_err();
        assert!(e.to_string().contains("more than 1024 members"), "{e}");
        assert_eq!(e.line(), 1);
        // Syntax errors as the tree reader gives them.
        for bad in ["{\"a\":", "[1,]", "{\"a\":1e999}", "\"\\ud800\"", "{} x"] {
            let tree = serde_json::from_str::<Value>(bad).unwrap_err();
            let ours = parse(bad.as_bytes()).unwrap_err();
            assert_eq!(ours.to_string(), tree.to_string(), "{bad}");
        }
        assert_eq!(
            parse(br#"{"a":[1,{"b":null}]}"#).unwrap()["a"][1]["b"],
            Value::Null
        );
    }
}
