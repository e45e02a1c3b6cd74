//! An OpenTelemetry span as the semantic conventions read it, and what a convention makes of
//! it: the layer below the OTLP reader ([`super::otlp`], which builds [`OtelSpan`]s), the
//! dispatcher ([`super::semconv`]) and the conventions ([`super::genai`],
//! [`super::openinference`]), so none of those four needs another that needs it back.
//!
//! A span borrows from the bytes it was read from where it can (the fast JSON reader's ids,
//! names, attribute keys and string values): a convention reads a handful of a span's
//! attributes, so each attribute costing an owned key, an owned value and an ordered-map
//! node was most of what reading a span cost. String values are turned into a
//! [`serde_json::Value`] only when a convention asks for one.

use std::borrow::Cow;
use std::cell::OnceCell;
use std::collections::BTreeMap;
use std::fmt;

use serde_json::Value;

use super::model::{Captured, Times, ToolMessage};

/// A span of an OTLP export, with its attributes as plain JSON values.
#[derive(Debug, Clone, Default)]
pub(crate) struct OtelSpan<'a> {
    pub trace_id: Option<Cow<'a, str>>,
    pub span_id: Option<Cow<'a, str>>,
    pub parent_id: Option<Cow<'a, str>>,
    pub name: Option<Cow<'a, str>>,
    pub times: Times,
    /// `ok`, `error`, `unfinished` (no end time), or `None` when unset.
    pub status: Option<&'static str>,
    pub attrs: Attrs<'a>,
    pub events: Vec<OtelEvent<'a>>,
}

#[derive(Debug, Clone, Default)]
pub(crate) struct OtelEvent<'a> {
    pub name: Cow<'a, str>,
    pub attrs: Attrs<'a>,
}

impl OtelSpan<'_> {
    /// An attribute's value, `null` read as absent (as every convention reads it).
    pub fn attr(&self, key: &str) -> Option<&Value> {
        self.attr_value(key).map(AttrValue::value)
    }
    pub fn attr_value(&self, key: &str) -> Option<&AttrValue<'_>> {
        self.attrs.get(key).filter(|v| !v.is_null())
    }
    /// A string attribute, read without making a `Value` of it.
    pub fn attr_str(&self, key: &str) -> Option<&str> {
        self.attrs.get(key).and_then(AttrValue::as_str)
    }
}

/// One attribute value: a string borrowed from the input, or any JSON value.
#[derive(Clone)]
pub(crate) enum AttrValue<'a> {
    /// A string without escapes, as it stands in the input; its `Value` is made the first
    /// time one is asked for, and kept.
    Text(&'a str, OnceCell<Value>),
    /// Anything else, strings with escapes and values of the tree reader included.
    Json(Value),
}

impl<'a> AttrValue<'a> {
    pub fn text(text: &'a str) -> Self {
        AttrValue::Text(text, OnceCell::new())
    }
    /// The value as a JSON value (for a borrowed string, made now if not yet).
    pub fn value(&self) -> &Value {
        match self {
            AttrValue::Text(text, cell) => cell.get_or_init(|| Value::String(text.to_string())),
            AttrValue::Json(value) => value,
        }
    }
    pub fn as_str(&self) -> Option<&str> {
        match self {
            AttrValue::Text(text, _) => Some(text),
            AttrValue::Json(value) => value.as_str(),
        }
    }
    /// The value as an owned JSON value.
    pub fn into_value(self) -> Value {
        match self {
            AttrValue::Text(text, cell) => cell
                .into_inner()
                .unwrap_or_else(|| Value::String(text.to_string())),
            AttrValue::Json(value) => value,
        }
    }
    pub fn is_null(&self) -> bool {
        matches!(self, AttrValue::Json(Value::Null))
    }
    /// As [`as_text`]: a string, or a number written as text.
    pub fn as_text(&self) -> Option<String> {
        match self {
            AttrValue::Text(text, _) => Some(text.to_string()),
            AttrValue::Json(value) => as_text(Some(value)),
        }
    }
}

impl From<Value> for AttrValue<'_> {
    fn from(value: Value) -> Self {
        AttrValue::Json(value)
    }
}

/// Printed and compared as the JSON value it is, however it is held (the fast reader and
/// the tree reader hold the same string differently).
impl fmt::Debug for AttrValue<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.value().fmt(f)
    }
}

impl PartialEq for AttrValue<'_> {
    fn eq(&self, other: &Self) -> bool {
        match (self.as_str(), other.as_str()) {
            (Some(a), Some(b)) => a == b,
            _ => self.value() == other.value(),
        }
    }
}

/// Attribute lists up to this long are scanned by [`Attrs::get`], longer ones bisected.
const SCANNED: usize = 16;

/// A span's or event's attributes, sorted by key once they are read, the first value of a
/// repeated key kept (the spec leaves duplicates undefined). A sorted list, not a map: a
/// span has a few attributes, each looked up by a convention at most a few times, and a
/// list costs one allocation where a map cost one per entry; sorted, so a span with very
/// many attributes still costs a binary search per lookup, not a scan (a short list is
/// scanned: see [`Attrs::get`]).
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Attrs<'a> {
    sorted: Vec<(Cow<'a, str>, AttrValue<'a>)>,
}

impl<'a> Attrs<'a> {
    /// The attributes in the order the input gave them.
    pub fn from_list(mut list: Vec<(Cow<'a, str>, AttrValue<'a>)>) -> Self {
        // Stable, so that of equal keys the first given stays first, and is the one kept.
        sort_by_key_str(&mut list, |(k, _)| k);
        list.dedup_by(|later, earlier| later.0 == earlier.0);
        Attrs { sorted: list }
    }

    pub fn get(&self, key: &str) -> Option<&AttrValue<'a>> {
        // A span holds a dozen attributes and an event two or three, and most lookups are
        // of keys they do not have: a scan that compares lengths first rejects nearly every
        // key without reading it, where a bisection compares bytes at each step, past the
        // `gen_ai.` prefix the keys share. The keys are distinct (`from_list`), so the
        // first found is the one.
        if self.sorted.len() <= SCANNED {
            return self
                .sorted
                .iter()
                .find(|(k, _)| crate::bytes::eq(k.as_bytes(), key.as_bytes()))
                .map(|(_, v)| v);
        }
        // Byte order a word at a time: `str::cmp` is a byte-by-byte `memcmp` in wasm, and a
        // span's attributes are looked up a dozen times (`gen_ai.`, `llm.` keys share long
        // prefixes).
        let i = self
            .sorted
            .binary_search_by(|(k, _)| crate::bytes::cmp(k.as_bytes(), key.as_bytes()))
            .ok()?;
        Some(&self.sorted[i].1)
    }

    /// The value of `key` as a JSON value (`null` included).
    pub fn value(&self, key: &str) -> Option<&Value> {
        self.get(key).map(AttrValue::value)
    }

    /// Every attribute, in key order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &AttrValue<'a>)> {
        self.sorted.iter().map(|(k, v)| (&**k, v))
    }

    pub fn contains_key(&self, key: &str) -> bool {
        self.get(key).is_some()
    }

    /// The attributes whose key starts with `prefix`, in key order.
    pub fn prefixed<'s>(
        &'s self,
        prefix: &'s str,
    ) -> impl Iterator<Item = (&'s str, &'s AttrValue<'a>)> {
        let start = self.sorted.partition_point(|(k, _)| &**k < prefix);
        self.sorted[start..]
            .iter()
            .take_while(move |(k, _)| k.starts_with(prefix))
            .map(|(k, v)| (&**k, v))
    }
}

/// Owned attributes (the protobuf and Phoenix readers, tests), the first of a repeated key
/// kept.
impl FromIterator<(String, Value)> for Attrs<'_> {
    fn from_iter<I: IntoIterator<Item = (String, Value)>>(iter: I) -> Self {
        Attrs::from_list(
            iter.into_iter()
                .map(|(k, v)| (Cow::Owned(k), AttrValue::Json(v)))
                .collect(),
        )
    }
}

/// `attrs["key"]`: the value of a key known to be there (tests).
impl std::ops::Index<&str> for Attrs<'_> {
    type Output = Value;
    fn index(&self, key: &str) -> &Value {
        self.value(key)
            .unwrap_or_else(|| panic!("no attribute {key:?}"))
    }
}

/// What a convention made of a span.
pub(crate) enum Read {
    Tool {
        name: Option<String>,
        call_id: Option<String>,
        result: Captured,
    },
    Model(Result<Vec<ToolMessage>, String>),
    /// Why the span is context; most are fixed texts, which are not copied per span.
    Context(Cow<'static, str>),
}

/// The attributes of one index of a flattened list: `rest -> value` of each
/// `{prefix}{i}.{rest}`, sorted by `rest`.
#[derive(Default)]
pub(crate) struct Group<'s, 'a>(Vec<(&'s str, &'s AttrValue<'a>)>);

impl<'s, 'a> Group<'s, 'a> {
    /// The value of a field, `null` included.
    pub fn get(&self, field: &str) -> Option<&'s Value> {
        let i = self.0.binary_search_by(|(k, _)| (*k).cmp(field)).ok()?;
        Some(self.0[i].1.value())
    }

    pub fn iter(&self) -> impl Iterator<Item = (&'s str, &'s AttrValue<'a>)> + '_ {
        self.0.iter().copied()
    }
}

/// Groups flattened attributes `{prefix}{i}.{rest}` into one [`Group`] per index `i`, in
/// index order (`llm.input_messages.0.message.role` ...). Attributes without the prefix are
/// passed over. Of a field given twice in one group (`0.role` and `00.role` are both index
/// 0) the one that comes later in `attrs` is kept, as a map filled in that order keeps it.
pub(crate) fn indexed<'s, 'a: 's>(
    attrs: impl Iterator<Item = (&'s str, &'s AttrValue<'a>)>,
    prefix: &str,
) -> Vec<Group<'s, 'a>> {
    let mut groups: BTreeMap<u64, Group<'s, 'a>> = BTreeMap::new();
    for (key, value) in attrs {
        let Some(rest) = key.strip_prefix(prefix) else {
            continue;
        };
        let Some((index, field)) = rest.split_once('.') else {
            continue;
        };
        if let Ok(i) = index.parse::<u64>() {
            groups.entry(i).or_default().0.push((field, value));
        }
    }
    groups
        .into_values()
        .map(|Group(mut fields)| {
            // Stable and reversed, so the last of equal fields comes first and is kept.
            fields.reverse();
            sort_by_key_str(&mut fields, |(k, _)| k);
            fields.dedup_by(|later, earlier| later.0 == earlier.0);
            Group(fields)
        })
        .collect()
}

/// Sorts stably by a string key: by insertion for the few entries a span or a message
/// mostly has (no allocation, little code in the wasm module), by [`crate::sort::sort_by`]
/// (n log n, one instantiation of the standard sort for the crate) above that.
fn sort_by_key_str<T>(items: &mut [T], key: impl Fn(&T) -> &str) {
    const SHORT: usize = 16;
    if items.len() > SHORT {
        return crate::sort::sort_by(items, |a, b| {
            crate::bytes::cmp(key(a).as_bytes(), key(b).as_bytes())
        });
    }
    for i in 1..items.len() {
        let mut j = i;
        // Strictly greater: an equal key never passes one given before it.
        while j > 0
            && crate::bytes::cmp(key(&items[j - 1]).as_bytes(), key(&items[j]).as_bytes()).is_gt()
        {
            items.swap(j - 1, j);
            j -= 1;
        }
    }
}

/// A string attribute, or a number written as text (some SDKs write ids as integers).
pub(crate) fn as_text(value: Option<&Value>) -> Option<String> {
    match value? {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn indexed_groups_by_number() {
        let attrs: Attrs = [
            ("llm.input_messages.10.message.role", json!("tool")),
            ("llm.input_messages.2.message.role", json!("user")),
            ("llm.input_messages.2.message.content", json!("hi")),
            ("llm.input_messages.02.message.content", json!("first")),
            ("llm.input_messagesX", json!(1)),
            ("llm.model_name", json!("m")),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
        .collect();
        let groups = indexed(attrs.prefixed("llm.input_messages."), "llm.input_messages.");
        assert_eq!(groups.len(), 2);
        // `02` and `2` are one index; the later key (`2`) wins, as in key order.
        assert_eq!(groups[0].get("message.content"), Some(&json!("hi")));
        assert_eq!(groups[0].get("message.role"), Some(&json!("user")));
        assert_eq!(groups[1].get("message.role"), Some(&json!("tool")));
        assert_eq!(groups[1].get("message.content"), None);
        // A group longer than an insertion sort takes: still the later key of a field.
        let long: Attrs = (0..40)
            .map(|i| (format!("p.{}.f{}", ["0", "00"][i % 2], i / 2), json!(i)))
            .collect();
        let groups = indexed(long.prefixed("p."), "p.");
        assert_eq!(groups.len(), 1);
        for f in 0..20 {
            // `p.0.fN` sorts before `p.00.fN`: the latter (2N + 1) is kept.
            assert_eq!(groups[0].get(&format!("f{f}")), Some(&json!(2 * f + 1)));
        }
    }

    /// Short lists (insertion) and long ones (the crate's sort) keep the first of a key.
    #[test]
    fn attrs_sort_stably_short_and_long() {
        for n in [3usize, 16, 17, 200] {
            let list = (0..n)
                .map(|i| {
                    let key = format!("k{}", (i * 7) % (n / 2 + 1));
                    (Cow::Owned(key), AttrValue::Json(json!(i)))
                })
                .collect();
            let attrs = Attrs::from_list(list);
            let kept: Vec<(&str, &Value)> =
                attrs.prefixed("").map(|(k, v)| (k, v.value())).collect();
            assert!(kept.windows(2).all(|w| w[0].0 < w[1].0), "n={n}");
            for (key, value) in kept {
                let first = (0..n).find(|i| format!("k{}", (i * 7) % (n / 2 + 1)) == key);
                assert_eq!(value, &json!(first.unwrap()), "n={n} {key}");
            }
        }
    }

    /// Lists on both sides of [`SCANNED`] (scanned, bisected) find every key they hold, the
    /// first value of a repeated one, and none they lack: keys of one length that differ
    /// only in their last byte, prefixes and extensions of held keys, and the empty key.
    #[test]
    fn attrs_find_every_key_scanned_or_bisected() {
        for n in [0usize, 1, 2, SCANNED - 1, SCANNED, SCANNED + 1, 3 * SCANNED] {
            let key = |i: usize| {
                format!("gen_ai.tool.call.{}", (b'a' + (i % 26) as u8) as char)
                    + &"x".repeat(i / 26)
            };
            let mut list: Vec<_> = (0..n)
                .map(|i| (Cow::Owned(key(i)), AttrValue::Json(json!(i))))
                .collect();
            // A repeated key given later: the first stays.
            if n > 0 {
                list.push((Cow::Owned(key(0)), AttrValue::Json(json!("later"))));
            }
            let attrs = Attrs::from_list(list);
            for i in 0..n {
                assert_eq!(attrs.value(&key(i)), Some(&json!(i)), "n={n} {}", key(i));
            }
            let held = key(0);
            for absent in [
                String::new(),
                "gen_ai.tool.call.".to_string(),
                held[..held.len() - 1].to_string(),
                format!("{held}x{}", "y".repeat(3 * SCANNED)),
                format!("gen_ai.tool.call.{}", '~'),
                "zzz".to_string(),
            ] {
                if (0..n).any(|i| key(i) == absent) {
                    continue;
                }
                assert!(attrs.get(&absent).is_none(), "n={n} {absent:?}");
            }
        }
    }

    #[test]
    fn attrs_keep_the_first_of_a_key_and_find_by_prefix() {
        let attrs = Attrs::from_list(vec![
            ("b".into(), AttrValue::text("first")),
            ("a.1".into(), AttrValue::Json(json!(1))),
            ("b".into(), AttrValue::Json(json!("second"))),
            ("a.0".into(), AttrValue::Json(Value::Null)),
            ("c".into(), AttrValue::text("c")),
        ]);
        assert_eq!(attrs.prefixed("").count(), 4);
        assert_eq!(attrs.value("b"), Some(&json!("first")));
        assert_eq!(attrs.get("b").and_then(AttrValue::as_str), Some("first"));
        assert!(attrs.contains_key("a.0") && !attrs.contains_key("a"));
        let keys: Vec<&str> = attrs.prefixed("a.").map(|(k, _)| k).collect();
        assert_eq!(keys, ["a.0", "a.1"]);
        assert_eq!(attrs.prefixed("d").count(), 0);
        // A borrowed string and an owned one are the same value.
        assert_eq!(AttrValue::text("x"), AttrValue::Json(json!("x")));
        assert_eq!(
            format!("{:?}", AttrValue::text("x")),
            format!("{:?}", AttrValue::Json(json!("x")))
        );
    }
}
