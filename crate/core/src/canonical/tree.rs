//! A parsed JSON value without hash tables: for text from untrusted input that is read only
//! to be canonicalised (a tool result's value digest).
//!
//! A [`serde_json::Value`] keeps an object in an `IndexMap` hashed with std's SipHash, whose
//! keys are fixed in wasm32-unknown-unknown (std has no randomness there: every instance
//! hashes alike), so an object whose keys were searched out to share a bucket costs time
//! growing with the square of its size. A tool's output is whatever the tool fetched. Here
//! an object is its members in input order, and the canonical writer sorts them (a stable
//! sort, the last of a repeated key kept, as `Value` and Python's `json.loads` keep it), so
//! reading and writing cost O(n log n) whatever the keys. Deserialized by serde_json's own
//! deserializer with the visitor calls `Value` takes, so the same texts are accepted, the
//! same numbers kept, and the canonical text is the one `Value` gives.

use std::fmt;

use serde::de::{Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::Number;

use super::value::{write_root, Parsed, Shape};
use super::{CanonicalError, Form};

#[derive(Debug, Clone, PartialEq)]
pub enum Tree {
    Null,
    Bool(bool),
    Number(Number),
    String(String),
    Array(Vec<Tree>),
    /// Members in input order; a key may repeat (the last counts).
    Object(Vec<(String, Tree)>),
}

impl Tree {
    /// The canonical text of this value (see [`super::canonicalize_value`]).
    pub fn canonical(&self, form: Form) -> Result<String, CanonicalError> {
        write_root(self, form)
    }
}

impl Parsed for Tree {
    fn shape(&self) -> Shape<'_, Tree> {
        match self {
            Tree::Null => Shape::Null,
            Tree::Bool(b) => Shape::Bool(*b),
            Tree::Number(n) => Shape::Number(n),
            Tree::String(s) => Shape::String(s),
            Tree::Array(items) => Shape::Array(items),
            Tree::Object(members) => {
                Shape::Object(members.iter().map(|(k, v)| (k.as_str(), v)).collect())
            }
        }
    }
}

impl<'de> Deserialize<'de> for Tree {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Tree, D::Error> {
        deserializer.deserialize_any(TreeVisitor)
    }
}

/// serde_json's `ValueVisitor`, building a [`Tree`]: each `visit_*` makes what `Value`'s
/// makes (a float that is not finite becomes null, as `Value` has it).
struct TreeVisitor;

impl<'de> Visitor<'de> for TreeVisitor {
    type Value = Tree;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any valid JSON value")
    }
    fn visit_bool<E>(self, b: bool) -> Result<Tree, E> {
        Ok(Tree::Bool(b))
    }
    fn visit_i64<E>(self, n: i64) -> Result<Tree, E> {
        Ok(Tree::Number(n.into()))
    }
    fn visit_u64<E>(self, n: u64) -> Result<Tree, E> {
        Ok(Tree::Number(n.into()))
    }
    fn visit_f64<E>(self, x: f64) -> Result<Tree, E> {
        Ok(Number::from_f64(x).map_or(Tree::Null, Tree::Number))
    }
    fn visit_str<E>(self, s: &str) -> Result<Tree, E> {
        Ok(Tree::String(s.to_string()))
    }
    fn visit_string<E>(self, s: String) -> Result<Tree, E> {
        Ok(Tree::String(s))
    }
    fn visit_none<E>(self) -> Result<Tree, E> {
        Ok(Tree::Null)
    }
    fn visit_unit<E>(self) -> Result<Tree, E> {
        Ok(Tree::Null)
    }
    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Tree, D::Error> {
        Tree::deserialize(d)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Tree, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element()? {
            items.push(item);
        }
        Ok(Tree::Array(items))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Tree, A::Error> {
        let mut members = Vec::new();
        while let Some((key, value)) = map.next_entry::<String, Tree>()? {
            members.push((key, value));
        }
        Ok(Tree::Object(members))
    }
}

#[cfg(test)]
mod tests {
    use super::super::canonicalize_value;
    use super::*;
    use serde_json::Value;

    /// Texts of every kind a tool returns, and the corners: numbers of each kind (exact
    /// integers past i64 and u64, floats, exponents, negative zero, overflow), escapes,
    /// nesting, empty containers, and repeated keys at every depth.
    const TEXTS: &[&str] = &[
        r#"{"b": 1, "a": [true, false, null], "c": {"z": "x", "y": -0.0}}"#,
        r#"[1, -1, 18446744073709551615, -9223372036854775808, 18446744073709551616, 1.5, 1e300, 1E-7, 0.1, 100000000000000000000000, -0.0, 0]"#,
        r#"{"k": 1, "k": 2, "j": {"x": 1, "x": {"x": 3}}, "k": 3}"#,
        r#"{"é": 1, "e": 2, "\u00e9x": 3, "\ud83d\ude00": 4, "\uffff": 5, "": 6}"#,
        r#"{"s": "line\nbreak \"quoted\" \\ \u0001 \t tab"}"#,
        r#"[[[[[[]]]]], {}, [{}], {"a": {}}]"#,
        r#"{"exit_code": 2, "stderr": "error: x", "files": ["a", "b"], "ok": false}"#,
        "[]",
        "{}",
        "  {\"a\" : 1 }  ",
    ];

    /// A tree gives the canonical text a `Value` gives, in both forms, and accepts and
    /// refuses the same texts.
    #[test]
    fn canonical_text_is_the_values() {
        for text in TEXTS {
            let value: Value = serde_json::from_str(text).unwrap();
            let tree: Tree = serde_json::from_str(text).unwrap();
            for form in [Form::Python, Form::Jcs] {
                let want = canonicalize_value(&value, form).map_err(|e| e.to_string());
                let got = tree.canonical(form).map_err(|e| e.to_string());
                // JCS refuses a tree's repeated keys, which a Value has already collapsed.
                if form == Form::Jcs && text.contains(r#""k": 1, "k""#) {
                    assert!(got.unwrap_err().contains("duplicate key"));
                    continue;
                }
                assert_eq!(got, want, "{text} ({form:?})");
            }
        }
        let deep = "[".repeat(200) + &"]".repeat(200);
        for bad in [
            "{",
            "[1,]",
            "{\"a\" 1}",
            "1e400",
            "\"\\ud800\"",
            "nul",
            deep.as_str(),
        ] {
            assert_eq!(
                serde_json::from_str::<Tree>(bad).is_err(),
                serde_json::from_str::<Value>(bad).is_err(),
                "{bad}"
            );
        }
    }

    /// The last of a repeated key counts, wherever it is.
    #[test]
    fn a_repeated_key_keeps_its_last_value() {
        let tree: Tree = serde_json::from_str(r#"{"a": 1, "b": 2, "a": 3}"#).unwrap();
        assert_eq!(tree.canonical(Form::Python).unwrap(), r#"{"a":3,"b":2}"#);
        let tree: Tree = serde_json::from_str(r#"{"a": {"x": 1}, "a": [2]}"#).unwrap();
        assert_eq!(tree.canonical(Form::Python).unwrap(), r#"{"a":[2]}"#);
    }
}
