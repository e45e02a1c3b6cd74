//! Reading only the fields a reader looks at from one JSON object line, rather than a whole
//! `serde_json::Value` tree of it: the fast path of the line readers of the tree formats
//! (Langfuse, OpenAI Agents SDK).
//!
//! A line of those formats holds many fields the reading never looks at (token usage, model
//! parameters, a generation's output ...), and a tree of them costs an allocation per value
//! and a SipHash per key. Here the named fields are kept (a string as the line's own text,
//! anything else as the tree's value), the last of a repeated one kept (as the tree keeps
//! it), and every other field is parsed as the tree parses it and dropped, so what the tree
//! reader rejects fails here too, and the caller then reads the line as a tree for its
//! messages. A reader that looks only at the named fields reads the object made here as it
//! reads the whole tree. The model call's input, most of
//! the line, is not kept at all: it is read straight into its tool messages
//! ([`super::message_list`]), and fields that only other kinds of item read are skipped
//! once the item's kind is known. The line is read by [`super::line_de`]: serde_json's
//! visitor calls, made faster, or declined.

use std::borrow::Cow;
use std::cell::OnceCell;
use std::fmt;

use serde::de::value::{MapAccessDeserializer, SeqAccessDeserializer};
use serde::de::{DeserializeSeed, Deserializer, Error, MapAccess, SeqAccess, Visitor};
use serde::Deserialize;
use serde_json::{Map, Number, Value};

use super::message_list::{Input, InputSeed};
use super::otel::as_text;
use super::otlp_json::{KeySeed, Skip};

/// Which fields of an object to keep: `keep`, and within the object value of `nested` (when
/// it is one), the fields its own [`Fields`] says. Made by [`Fields::new`], which also
/// builds the table its names are found by ([`Names`]).
pub(crate) struct Fields {
    pub keep: &'static [&'static str],
    pub nested: Option<(&'static str, &'static Fields)>,
    /// Fields that only some kinds of item read (a generation's `output`, a tool's `input`):
    /// once the object's kind field has said the item is not such a kind, they are skipped
    /// unread. Should a later kind (a repeated key) say it is one after all, the line is
    /// left to the tree reader.
    pub by_kind: &'static [ByKind],
    names: Names,
}

/// The most fields a [`Fields`] keeps: a [`Level`] says which it holds in a bit each.
const MAX_KEPT: usize = 16;
/// The most names a [`Fields`] knows: the kept ones, then the input and the by-kind ones
/// that are not kept.
const MAX_NAMES: usize = 24;
/// Slots of a [`Names`] table: at most a third of them taken, so that a seed making every
/// name's slot its own is found in a few tries.
const TABLE: usize = 64;
/// No name: in a [`Names`] table, its by-kind entries and its `input` and `nested`.
const NONE: u8 = u8::MAX;

/// A [`Fields`]' names, each found from a key by one table look-up and one comparison (a
/// perfect hash of the key's length and first and last bytes, built at compile time), where
/// a scan compared each key of a line with every name, and each field a reader asked for
/// with every kept one: checking 5 MB of a Langfuse export (some twenty keys a line, fifteen
/// names) took 8.5% fewer instructions this way, an Agents SDK export 2.9% fewer. Two names
/// of one length with the same first and last bytes cannot share a table: building it
/// fails to compile. Name `i < keep.len()` is `keep[i]`.
struct Names {
    seed: u32,
    /// Slot -> name index, or [`NONE`].
    table: [u8; TABLE],
    names: [&'static str; MAX_NAMES],
    /// Name index -> its index in `by_kind`, or [`NONE`].
    by_kind: [u8; MAX_NAMES],
    /// The names of `input`, `kind` and `nested` ([`NONE`] when there is none).
    input: u8,
    kind: u8,
    nested: u8,
}

/// The slot of a key of `len` bytes, `first` and `last` its first and last (0 when empty).
#[inline(always)]
const fn slot(seed: u32, len: usize, first: u8, last: u8) -> usize {
    let x = (len as u32) << 16 | (first as u32) << 8 | last as u32;
    (x.wrapping_mul(seed) >> (32 - TABLE.trailing_zeros())) as usize
}

#[inline(always)]
const fn ends(key: &[u8]) -> (u8, u8) {
    match key {
        [] => (0, 0),
        [first, ..] => (*first, key[key.len() - 1]),
    }
}

/// Byte equality usable at compile time (building a table).
const fn const_eq(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len() != b.len() {
        return false;
    }
    let mut i = 0;
    while i < a.len() {
        if a[i] != b[i] {
            return false;
        }
        i += 1;
    }
    true
}

impl Names {
    /// The index of `name` among the first `n` of `names`, or [`NONE`].
    const fn index(names: &[&'static str; MAX_NAMES], n: usize, name: &str) -> u8 {
        let mut i = 0;
        while i < n {
            if const_eq(names[i], name) {
                return i as u8;
            }
            i += 1;
        }
        NONE
    }

    const fn new(
        keep: &'static [&'static str],
        nested: Option<(&'static str, &'static Fields)>,
        input: Option<&'static str>,
        by_kind: &'static [ByKind],
        kind: &'static str,
    ) -> Names {
        assert!(keep.len() <= MAX_KEPT, "too many kept fields");
        let mut names = [""; MAX_NAMES];
        let mut n = 0;
        while n < keep.len() {
            assert!(
                Names::index(&names, n, keep[n]) == NONE,
                "a kept field named twice"
            );
            names[n] = keep[n];
            n += 1;
        }
        // The names read otherwise: the input, and the by-kind fields not kept.
        let mut others: [&'static str; MAX_NAMES] = [""; MAX_NAMES];
        let mut m = 0;
        if let Some(name) = input {
            others[m] = name;
            m += 1;
        }
        let mut i = 0;
        while i < by_kind.len() {
            others[m] = by_kind[i].0;
            m += 1;
            i += 1;
        }
        let mut i = 0;
        while i < m {
            if Names::index(&names, n, others[i]) == NONE {
                assert!(n < MAX_NAMES, "too many field names");
                names[n] = others[i];
                n += 1;
            }
            i += 1;
        }
        let mut roles = [NONE; MAX_NAMES];
        let mut i = 0;
        while i < by_kind.len() {
            roles[Names::index(&names, n, by_kind[i].0) as usize] = i as u8;
            i += 1;
        }
        // No kind (""): a nested object read whatever its parent is, with no by-kind fields.
        let kind = if kind.is_empty() {
            assert!(by_kind.is_empty(), "by-kind fields without a kind field");
            NONE
        } else {
            let kind = Names::index(&names, keep.len(), kind);
            assert!(kind != NONE, "the kind field is not kept");
            kind
        };
        let nested = match nested {
            Some((name, _)) => {
                let at = Names::index(&names, keep.len(), name);
                assert!(at != NONE, "the nested field is not kept");
                at
            }
            None => NONE,
        };
        let input = match input {
            Some(name) => Names::index(&names, n, name),
            None => NONE,
        };
        // An odd multiplier that gives every name a slot of its own.
        let mut seed: u32 = 0x9e37_79b1;
        let mut tries = 0;
        loop {
            let mut table = [NONE; TABLE];
            let mut clash = false;
            let mut i = 0;
            while i < n {
                let key = names[i].as_bytes();
                let (first, last) = ends(key);
                let at = slot(seed, key.len(), first, last);
                if table[at] != NONE {
                    clash = true;
                    break;
                }
                table[at] = i as u8;
                i += 1;
            }
            if !clash {
                return Names {
                    seed,
                    table,
                    names,
                    by_kind: roles,
                    input,
                    kind,
                    nested,
                };
            }
            tries += 1;
            assert!(tries < 100_000, "no seed separates the field names");
            seed = seed.wrapping_add(0x6a09_e668);
        }
    }

    /// The index of the name `key` is, if any.
    #[inline(always)]
    fn find(&self, key: &str) -> Option<usize> {
        let (first, last) = ends(key.as_bytes());
        let i = self.table[slot(self.seed, key.len(), first, last)];
        let name = *self.names.get(usize::from(i))?;
        same(name, key).then_some(usize::from(i))
    }
}

impl Fields {
    /// `input`: the field that is a model call's input, read into its tool messages
    /// ([`super::message_list`]) rather than kept as a tree; it is not in the object.
    /// `kind`: the field that says the kind (`type`), one of `keep`; `""` for none (then
    /// `by_kind` is empty).
    pub const fn new(
        keep: &'static [&'static str],
        nested: Option<(&'static str, &'static Fields)>,
        input: Option<&'static str>,
        by_kind: &'static [ByKind],
        kind: &'static str,
    ) -> Fields {
        Fields {
            keep,
            nested,
            by_kind,
            names: Names::new(keep, nested, input, by_kind, kind),
        }
    }

    /// The index in `keep` of the field `key`, if it is kept.
    #[inline(always)]
    fn kept(&self, key: &str) -> Option<usize> {
        self.names.find(key).filter(|&i| i < self.keep.len())
    }
}

/// A field read only by some kinds of item, and whether a kind reads it.
pub(crate) type ByKind = (&'static str, fn(&str) -> bool);

/// An object's fields as a reader looks them up: a tree's object, or the fields kept of a
/// line ([`Kept`]), so that one reader serves both.
///
/// The readers are generic over it rather than taking `&dyn Object`: a line's fields are then
/// looked up without a call through a table, and with the literal name folded into the
/// look-up (instructions of a warm pass, scripts/count-instructions: Langfuse -3.7%, Agents
/// SDK -2.7%, Langfuse lines of two fields -20%).
pub(crate) trait Object {
    /// What [`Object::object`] gives.
    type Nested: Object + ?Sized;
    /// The field `key`. (Of a [`Kept`], not its nested object: see [`Object::object`].)
    fn get(&self, key: &str) -> Option<&Value>;
    /// The field `key` when it is an object.
    fn object(&self, key: &str) -> Option<&Self::Nested>;
    fn contains_key(&self, key: &str) -> bool {
        self.get(key).is_some()
    }
    /// The field `key` when it is a string. A kept field answers from the line's text, with
    /// no tree value made of it (see [`Slot`]).
    fn str(&self, key: &str) -> Option<&str> {
        self.get(key).and_then(Value::as_str)
    }
    /// The field `key` as an id's text: a string, or a number written out
    /// ([`super::otel::as_text`]).
    fn text(&self, key: &str) -> Option<String> {
        as_text(self.get(key))
    }
    /// [`Object::text`], borrowed when the field is a string (as ids and names are): a
    /// reader copies it only for the calls that keep it, not for the spans it only lends to
    /// the sink.
    #[inline]
    fn text_ref(&self, key: &str) -> Option<Cow<'_, str>> {
        match self.str(key) {
            Some(s) => Some(Cow::Borrowed(s)),
            None => self.text(key).map(Cow::Owned),
        }
    }
    /// Whether the field `key` is there and not null.
    fn present(&self, key: &str) -> bool {
        self.get(key).is_some_and(|v| !v.is_null())
    }
}

impl Object for Map<String, Value> {
    type Nested = Map<String, Value>;
    fn get(&self, key: &str) -> Option<&Value> {
        Map::get(self, key)
    }
    fn object(&self, key: &str) -> Option<&Self::Nested> {
        Map::get(self, key)?.as_object()
    }
}

/// A kept field's value. A string (most kept fields: ids, names, times, a tool's output) is
/// the line's own text, or its decoded text when it has escapes: made into a tree value only
/// should a reader ask for one ([`Object::get`]), which the readers do not for strings. A
/// `Value::String` per kept string was a third of the allocations of reading a Langfuse or
/// Agents SDK export, and a copy of every tool output.
///
/// Null has a variant of its own and any other value is boxed: a slot is then 16 bytes in
/// wasm32, where an unboxed tree value (an `IndexMap` with its hasher's keys) made it 48, the
/// room a line makes for its kept fields ([`Level::for_fields`]) 672 bytes for Langfuse's
/// fourteen, past the allocator's small blocks (3.5% of the instructions of reading Langfuse
/// lines of two fields, 0.4% of the bench's export).
enum Slot<'de> {
    Text(Cow<'de, str>, OnceCell<Box<Value>>),
    Null,
    Tree(Box<Value>),
}

/// The tree value of a [`Slot::Null`].
static NULL: Value = Value::Null;

impl Slot<'_> {
    fn value(&self) -> &Value {
        match self {
            Slot::Text(s, tree) => tree.get_or_init(|| Box::new(Value::String(s.to_string()))),
            Slot::Null => &NULL,
            Slot::Tree(v) => v,
        }
    }
    fn str(&self) -> Option<&str> {
        match self {
            Slot::Text(s, _) => Some(s),
            Slot::Null => None,
            Slot::Tree(v) => v.as_str(),
        }
    }
    /// A value that is not a string.
    fn tree(value: Value) -> Self {
        match value {
            Value::Null => Slot::Null,
            value => Slot::Tree(Box::new(value)),
        }
    }
}

/// The kept fields of one object, the last of a repeated key winning, found by their index
/// in [`Fields::keep`]. A map (serde_json's, with `preserve_order`, an IndexMap with SipHash)
/// cost a hash per key and an allocation per key and per table.
pub(crate) struct Level<'de> {
    fields: &'static Fields,
    /// Bit `i`: the field `keep[i]` is here, at `slots[at[i]]`.
    here: u16,
    /// Bit `i`: `keep[i]` has a slot, `slots[at[i]]`. A field's slot is given at its first
    /// value, and its later values (a repeated key, or one after it was removed) take the
    /// same slot, so that `slots` never holds more than one per kept field, however often a
    /// key repeats.
    given: u16,
    at: [u8; MAX_KEPT],
    slots: Vec<Slot<'de>>,
}

/// Key equality a word at a time ([`crate::bytes::eq`]; `==` is a byte loop in wasm).
#[inline(always)]
fn same(a: &str, b: &str) -> bool {
    crate::bytes::eq(a.as_bytes(), b.as_bytes())
}

impl<'de> Level<'de> {
    /// Room for every kept field: one allocation per object, not one per doubling.
    fn for_fields(fields: &'static Fields) -> Self {
        Level {
            fields,
            here: 0,
            given: 0,
            at: [0; MAX_KEPT],
            slots: Vec::with_capacity(fields.keep.len()),
        }
    }
    /// The value of `keep[i]`. Inlined, so that a value is written straight into its slot
    /// (see [`SlotInto`]).
    #[inline(always)]
    fn insert(&mut self, i: usize, value: Slot<'de>) {
        if self.given & 1 << i != 0 {
            self.slots[usize::from(self.at[i])] = value;
        } else {
            self.at[i] = self.slots.len() as u8;
            self.slots.push(value);
            self.given |= 1 << i;
        }
        self.here |= 1 << i;
    }
    fn remove(&mut self, i: usize) {
        self.here &= !(1 << i);
    }
    /// The value of `keep[i]`.
    #[inline(always)]
    fn slot_at(&self, i: usize) -> Option<&Slot<'de>> {
        if self.here & 1 << i == 0 {
            return None;
        }
        self.slots.get(usize::from(self.at[i]))
    }
    /// The value of the kept field `key`. Inlined: a reader asks for its fields by literal
    /// names, whose length and end bytes then fold into the look-up.
    #[inline(always)]
    fn slot(&self, key: &str) -> Option<&Slot<'de>> {
        self.slot_at(self.fields.kept(key)?)
    }
}

impl<'de> Object for Level<'de> {
    type Nested = Level<'de>;
    #[inline]
    fn get(&self, key: &str) -> Option<&Value> {
        self.slot(key).map(Slot::value)
    }
    #[inline]
    fn object(&self, _: &str) -> Option<&Self::Nested> {
        None
    }
    #[inline]
    fn contains_key(&self, key: &str) -> bool {
        self.slot(key).is_some()
    }
    #[inline]
    fn str(&self, key: &str) -> Option<&str> {
        self.slot(key)?.str()
    }
    #[inline]
    fn text(&self, key: &str) -> Option<String> {
        match self.slot(key)? {
            Slot::Text(s, _) => Some(s.to_string()),
            Slot::Null => None,
            Slot::Tree(v) => as_text(Some(v)),
        }
    }
    #[inline]
    fn present(&self, key: &str) -> bool {
        self.slot(key).is_some_and(|s| !matches!(s, Slot::Null))
    }
}

/// The kept fields of a line's object, and those of its nested object when that is an object.
pub(crate) struct Kept<'de> {
    fields: Level<'de>,
    nested: Option<(&'static str, Level<'de>)>,
}

impl<'de> Object for Kept<'de> {
    type Nested = Level<'de>;
    #[inline]
    fn get(&self, key: &str) -> Option<&Value> {
        self.fields.get(key)
    }
    #[inline]
    fn object(&self, key: &str) -> Option<&Self::Nested> {
        match &self.nested {
            Some((name, level)) if same(name, key) => Some(level),
            _ => None,
        }
    }
    #[inline]
    fn contains_key(&self, key: &str) -> bool {
        self.fields.contains_key(key)
    }
    #[inline]
    fn str(&self, key: &str) -> Option<&str> {
        self.fields.str(key)
    }
    #[inline]
    fn text(&self, key: &str) -> Option<String> {
        self.fields.text(key)
    }
    #[inline]
    fn present(&self, key: &str) -> bool {
        self.fields.present(key)
    }
}

/// The kept fields of a line's object, and the model call input read from it (`None` when
/// absent or null).
pub(crate) struct Line<'de> {
    pub obj: Kept<'de>,
    pub input: Option<Input>,
}

impl Fields {
    /// The object of a line with only the kept fields, or `None` when the line is not one
    /// JSON object, or is left to the tree reader.
    pub fn line<'de>(&'static self, text: &'de str) -> Option<Line<'de>> {
        let mut de = super::line_de::LineDe::new(text);
        let mut input = None;
        let obj = de
            .deserialize_map(ObjectVisitor {
                fields: self,
                input: &mut input,
            })
            .ok()?;
        de.end().ok()?;
        Some(Line { obj, input })
    }
}

struct ObjectVisitor<'i> {
    fields: &'static Fields,
    /// Where the input goes, at whichever level it is.
    input: &'i mut Option<Input>,
}

impl<'de> Visitor<'de> for ObjectVisitor<'_> {
    type Value = Kept<'de>;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an object")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Kept<'de>, A::Error> {
        let fields = self.fields;
        let names = &fields.names;
        let kind_at = usize::from(names.kind);
        let mut obj = Kept {
            fields: Level::for_fields(fields),
            nested: None,
        };
        // Bit i: the field `by_kind[i]` was skipped.
        let mut skipped = 0u32;
        while let Some(key) = map.next_key_seed(KeySeed)? {
            let Some(at) = names.find(key) else {
                map.next_value::<Skip>()?;
                continue;
            };
            let by_kind = names.by_kind[at];
            if by_kind != NONE {
                let wants = fields.by_kind[usize::from(by_kind)].1;
                let kind = obj.fields.slot_at(kind_at);
                if kind.is_some_and(|k| !k.str().is_some_and(wants)) {
                    map.next_value::<Skip>()?;
                    skipped |= 1 << by_kind;
                    continue;
                }
            }
            if at == usize::from(names.input) {
                *self.input = map.next_value_seed(InputSeed)?;
                continue;
            }
            if at >= fields.keep.len() {
                map.next_value::<Skip>()?;
                continue;
            }
            match fields.nested {
                Some((_, nested)) if at == usize::from(names.nested) => {
                    // A repeated nested value: the last one's input, as the tree keeps the
                    // last one (none when it is not an object), when the input is in there.
                    if nested.names.input != NONE {
                        *self.input = None;
                    }
                    let value = map.next_value_seed(Nested {
                        fields: nested,
                        input: &mut *self.input,
                    })?;
                    match value {
                        Ok(level) => {
                            obj.fields.remove(at);
                            obj.nested = Some((fields.keep[at], level));
                        }
                        Err(value) => {
                            obj.nested = None;
                            obj.fields.insert(at, value);
                        }
                    }
                }
                _ => map.next_value_seed(SlotInto {
                    level: &mut obj.fields,
                    at,
                })?,
            }
        }
        if skipped != 0 {
            let kind = obj.fields.slot_at(kind_at).and_then(Slot::str);
            let read = |(i, (_, wants)): (usize, &ByKind)| {
                skipped & 1 << i != 0 && kind.is_some_and(wants)
            };
            if fields.by_kind.iter().enumerate().any(read) {
                return Err(A::Error::custom("a skipped field is read after all"));
            }
        }
        Ok(obj)
    }
}

/// A value that is kept: an object with only its kept fields (`Ok`), anything else as
/// [`SlotSeed`] keeps it.
struct Nested<'i> {
    fields: &'static Fields,
    input: &'i mut Option<Input>,
}

impl<'de> DeserializeSeed<'de> for Nested<'_> {
    type Value = Result<Level<'de>, Slot<'de>>;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Nested<'_> {
    type Value = Result<Level<'de>, Slot<'de>>;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
        let fields = ObjectVisitor {
            fields: self.fields,
            input: self.input,
        };
        // One level of nesting: the nested object's own fields are a level.
        fields.visit_map(map).map(|kept| Ok(kept.fields))
    }
    fn visit_unit<E: Error>(self) -> Result<Self::Value, E> {
        SlotSeed.visit_unit().map(Err)
    }
    fn visit_bool<E: Error>(self, b: bool) -> Result<Self::Value, E> {
        SlotSeed.visit_bool(b).map(Err)
    }
    fn visit_u64<E: Error>(self, n: u64) -> Result<Self::Value, E> {
        SlotSeed.visit_u64(n).map(Err)
    }
    fn visit_i64<E: Error>(self, n: i64) -> Result<Self::Value, E> {
        SlotSeed.visit_i64(n).map(Err)
    }
    fn visit_f64<E: Error>(self, n: f64) -> Result<Self::Value, E> {
        SlotSeed.visit_f64(n).map(Err)
    }
    fn visit_str<E: Error>(self, s: &str) -> Result<Self::Value, E> {
        SlotSeed.visit_str(s).map(Err)
    }
    fn visit_borrowed_str<E: Error>(self, s: &'de str) -> Result<Self::Value, E> {
        SlotSeed.visit_borrowed_str(s).map(Err)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Self::Value, A::Error> {
        SlotSeed.visit_seq(seq).map(Err)
    }
}

/// A kept field's value as [`Slot`] holds it: a string as text, anything else as the tree
/// (`serde_json::Value`) holds it.
struct SlotSeed;

impl<'de> DeserializeSeed<'de> for SlotSeed {
    type Value = Slot<'de>;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for SlotSeed {
    type Value = Slot<'de>;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_unit<E: Error>(self) -> Result<Self::Value, E> {
        Ok(Slot::Null)
    }
    fn visit_bool<E: Error>(self, b: bool) -> Result<Self::Value, E> {
        Ok(Slot::tree(Value::Bool(b)))
    }
    fn visit_u64<E: Error>(self, n: u64) -> Result<Self::Value, E> {
        Ok(Slot::tree(Value::Number(n.into())))
    }
    fn visit_i64<E: Error>(self, n: i64) -> Result<Self::Value, E> {
        Ok(Slot::tree(Value::Number(n.into())))
    }
    fn visit_f64<E: Error>(self, n: f64) -> Result<Self::Value, E> {
        Ok(Slot::tree(
            Number::from_f64(n).map_or(Value::Null, Value::Number),
        ))
    }
    fn visit_str<E: Error>(self, s: &str) -> Result<Self::Value, E> {
        Ok(Slot::Text(Cow::Owned(s.to_string()), OnceCell::new()))
    }
    fn visit_borrowed_str<E: Error>(self, s: &'de str) -> Result<Self::Value, E> {
        Ok(Slot::Text(Cow::Borrowed(s), OnceCell::new()))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Self::Value, A::Error> {
        Value::deserialize(SeqAccessDeserializer::new(seq)).map(Slot::tree)
    }
    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
        Value::deserialize(MapAccessDeserializer::new(map)).map(Slot::tree)
    }
}

/// A kept field's value, as [`SlotSeed`] reads it, put in its slot by the visitor itself.
/// Returned from the value's reading (a `Result<Slot>` through memory), a slot was written
/// as 4-byte words and copied on as an 8-byte one: a store-forwarding stall, a tenth of the
/// key loop's samples on a Langfuse export (`perf annotate` of V8's code).
struct SlotInto<'l, 'de> {
    level: &'l mut Level<'de>,
    at: usize,
}

impl<'de> DeserializeSeed<'de> for SlotInto<'_, 'de> {
    type Value = ();
    #[inline(always)]
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> SlotInto<'_, 'de> {
    #[inline(always)]
    fn put<E>(self, value: Result<Slot<'de>, E>) -> Result<(), E> {
        self.level.insert(self.at, value?);
        Ok(())
    }
}

impl<'de> Visitor<'de> for SlotInto<'_, 'de> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_unit<E: Error>(self) -> Result<(), E> {
        self.put(SlotSeed.visit_unit())
    }
    fn visit_bool<E: Error>(self, b: bool) -> Result<(), E> {
        self.put(SlotSeed.visit_bool(b))
    }
    fn visit_u64<E: Error>(self, n: u64) -> Result<(), E> {
        self.put(SlotSeed.visit_u64(n))
    }
    fn visit_i64<E: Error>(self, n: i64) -> Result<(), E> {
        self.put(SlotSeed.visit_i64(n))
    }
    fn visit_f64<E: Error>(self, n: f64) -> Result<(), E> {
        self.put(SlotSeed.visit_f64(n))
    }
    fn visit_str<E: Error>(self, s: &str) -> Result<(), E> {
        self.put(SlotSeed.visit_str(s))
    }
    #[inline(always)]
    fn visit_borrowed_str<E: Error>(self, s: &'de str) -> Result<(), E> {
        self.put(SlotSeed.visit_borrowed_str(s))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<(), A::Error> {
        let value = SlotSeed.visit_seq(seq);
        self.put(value)
    }
    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<(), A::Error> {
        let value = SlotSeed.visit_map(map);
        self.put(value)
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::super::otlp_json::tests::{emit, Op, Recorder};
    use super::super::reader::json_line_as;
    use super::super::{Collector, Format};

    /// The lines read as `format` with the fast path for single items, and without.
    fn both_ways(format: Format, lines: &[&[u8]]) -> (Vec<String>, Vec<String>) {
        let run = |fast: bool| {
            let (mut collector, mut sink) = (Collector::default(), Recorder::default());
            for (i, line) in lines.iter().enumerate() {
                let n = i as u64 + 1;
                json_line_as(format, n, line, &mut collector, &mut sink, fast);
            }
            // What was read for the join, beside what the join made of it (a single line
            // has no model call for its tool call: its call id shows only here).
            let read = format!("{:?} {:?}", collector.tools, collector.models);
            sink.0.push(read);
            let conventions = collector.finish(&mut sink, crate::formats::End::Free);
            sink.0.push(format!("conventions {conventions:?}"));
            sink.0
        };
        (run(true), run(false))
    }

    /// Every item of a fixture, each field (nested ones too) of every type, given twice,
    /// respelled or dropped: the fast path reads what it accepts as the tree reader does, and
    /// leaves the rest to it. (Leaving a read field out of a list fails this.)
    /// `absent`: fields (`a` or `a.b`) given to every item that lacks them, so that every
    /// read field is varied even where the fixture leaves it out.
    fn lines_read_the_same(
        format: Format,
        fixture: &str,
        raw: &[&'static str],
        absent: &[(&str, serde_json::Value)],
    ) {
        let ops = Op::all(raw);
        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        let text = std::fs::read(root.join("tests/fixtures/formats").join(fixture)).unwrap();
        let lines: Vec<&[u8]> = text.split(|&b| b == b'\n').collect();
        // The fixture as it is, in one run (the join across lines).
        let (fast, tree) = both_ways(format, &lines);
        assert_eq!(fast, tree);
        let mut variants = 0;
        for line in lines.iter().filter(|l| !l.is_empty()) {
            let mut base: serde_json::Value = serde_json::from_slice(line).unwrap();
            for (path, value) in absent {
                let (outer, inner) = path.split_once('.').unwrap_or((path, ""));
                let Some(obj) = base.as_object_mut() else {
                    continue;
                };
                let slot = if inner.is_empty() {
                    Some((obj, outer))
                } else {
                    obj.get_mut(outer)
                        .and_then(serde_json::Value::as_object_mut)
                        .map(|o| (o, inner))
                };
                if let Some((o, key)) = slot {
                    o.entry(key).or_insert_with(|| value.clone());
                }
            }
            let mut target = 0;
            loop {
                let mut any = false;
                for &op in &ops {
                    let (mut text, mut at) = (String::new(), 0);
                    if !emit(&base, &mut text, &mut at, target, op) {
                        continue;
                    }
                    any = true;
                    variants += 1;
                    let (fast, tree) = both_ways(format, &[text.as_bytes()]);
                    assert_eq!(fast, tree, "{text}");
                }
                if !any {
                    break;
                }
                target += 1;
            }
        }
        assert!(variants > 3000, "variants: {variants}");
    }

    /// A line's kept fields answer every accessor as the tree's object does: strings kept as
    /// the line's text (borrowed, or decoded when escaped) give the tree's value when one
    /// is asked for, and the same string, id text and presence.
    #[test]
    fn kept_fields_answer_as_the_tree() {
        use super::{Fields, Object};
        static KEEP: Fields = Fields::new(
            &["s", "e", "n", "f", "z", "b", "o", "a", "k"],
            None,
            None,
            &[],
            "k",
        );
        let line = r#"{"s": "plain", "e": "tab\there \u00e9 \"q\"", "n": 42, "f": -1.5, "z": null, "b": true, "o": {"x": [1, "y"]}, "a": [], "k": "", "s": "last", "skipped": "x"}"#;
        let tree: serde_json::Map<String, serde_json::Value> = serde_json::from_str(line).unwrap();
        let kept = KEEP.line(line).expect("read by the fast path").obj;
        for key in ["s", "e", "n", "f", "z", "b", "o", "a", "k", "absent"] {
            assert_eq!(Object::get(&kept, key), tree.get(key), "{key}");
            assert_eq!(Object::str(&kept, key), Object::str(&tree, key), "{key}");
            assert_eq!(Object::text(&kept, key), Object::text(&tree, key), "{key}");
            assert_eq!(kept.present(key), tree.present(key), "{key}");
            assert_eq!(
                Object::contains_key(&kept, key),
                tree.contains_key(key),
                "{key}"
            );
        }
        assert_eq!(Object::str(&kept, "s"), Some("last"));
        assert_eq!(Object::str(&kept, "e"), Some("tab\there é \"q\""));
    }

    /// Every name of a field list is found, at its index (the kept ones first), and no other
    /// key is: not one that hashes alike (the same length and first and last bytes), nor a
    /// prefix, an empty key, or a key in another case.
    #[test]
    fn names_are_found_and_nothing_else() {
        use super::{Fields, NONE};
        const KEPT: &[&str] = &[
            "type",
            "id",
            "traceId",
            "parentObservationId",
            "",
            "x",
            "metadata",
        ];
        static NAMED: Fields = Fields::new(
            KEPT,
            None,
            Some("input"),
            &[("output", |_| true), ("metadata", |_| true)],
            "type",
        );
        let names = &NAMED.names;
        for (i, name) in KEPT.iter().copied().chain(["input", "output"]).enumerate() {
            assert_eq!(names.find(name), Some(i), "{name:?}");
        }
        assert_eq!(NAMED.kept("input"), None);
        assert_eq!(NAMED.kept("metadata"), Some(6));
        assert_eq!(usize::from(names.input), 7);
        assert_eq!(usize::from(names.by_kind[8]), 0);
        assert_eq!(usize::from(names.by_kind[6]), 1);
        assert_eq!(names.by_kind[0], NONE);
        for key in [
            "tyqe",
            "Type",
            "typ",
            "types",
            "i",
            "iid",
            "trace_id",
            "traceID",
            "y",
            "X",
            "parentObservationIb",
            "metadatas",
            "mEtadata",
            "inpux",
            "\u{e9}",
        ] {
            assert_eq!(names.find(key), None, "{key:?}");
        }
    }

    /// Keys repeated hundreds of times, their values changing kind each time (the nested
    /// field between an object and a string, the kind between one that reads a field and one
    /// that does not), are read as the tree reads them: the last value wins, and a field
    /// skipped for a kind that a later value changes leaves the line to the tree reader.
    #[test]
    fn keys_repeated_many_times_read_as_the_tree() {
        let mut agents =
            String::from(r#"{"object":"trace.span","id":"span_1","trace_id":"trace_1""#);
        let mut langfuse =
            String::from(r#"{"id":"tool-1","traceId":"t1","startTime":"2025-06-15T09:30:00.010Z""#);
        for i in 0..300 {
            agents += if i % 2 == 0 {
                r#","span_data":{"type":"function","name":"f","output":"x","call_id":"c1"}"#
            } else {
                r#","span_data":"s","id":"span_2""#
            };
            langfuse += [
                r#","type":"TOOL","output":"kept","metadata":{"tool_call_id":"call_1"}"#,
                r#","type":"SPAN","output":"skipped","name":"n""#,
            ][i % 2];
        }
        for (format, line, last) in [
            (
                Format::OpenaiAgents,
                &mut agents,
                r#","span_data":{"type":"function","name":"g","output":"y","call_id":"c2"}}"#,
            ),
            (
                Format::Langfuse,
                &mut langfuse,
                r#","type":"TOOL","output":"last"}"#,
            ),
        ] {
            line.push_str(last);
            let (fast, tree) = both_ways(format, &[line.as_bytes()]);
            assert_eq!(fast, tree);
        }
        // Without the kind changing after a skip, the fast path reads it (the tree reader is
        // not what agrees here).
        let tool = format!(
            r#"{{"type":"TOOL","id":"tool-1","traceId":"t1","startTime":"2025-06-15T09:30:00.010Z"{}}}"#,
            r#","output":"o","metadata":{"tool_call_id":"call_1"}"#.repeat(300)
        );
        assert!(super::super::langfuse::observation_line(&tool).is_some());
        let (fast, tree) = both_ways(Format::Langfuse, &[tool.as_bytes()]);
        assert_eq!(fast, tree);
    }

    const RAW: [&str; 19] = [
        // Inputs given as JSON text: a tool message with a surrogate pair (which the line's
        // deserializer declines), text that is not JSON, and a number.
        r#""[{\"role\":\"tool\",\"tool_call_id\":\"call_1\",\"content\":\"\\ud83d\\ude00\"}]""#,
        r#""[1,""#,
        r#""5""#,
        "null",
        "0",
        "-1",
        "1.5",
        "1e400",
        "true",
        "\"\"",
        "\"\\ud800\"",
        "[]",
        "{}",
        "\"2025-06-15T09:30:00.010Z\"",
        "{\"content\":\"c\",\"tool_call_id\":\"call_1\"}",
        "[{\"role\":\"tool\",\"tool_call_id\":\"call_1\",\"content\":\"x\"}]",
        "\"call_1\"",
        // A tool message as JSON text (a Langfuse output read as a string, then parsed), and
        // a string with escapes (decoded, not borrowed from the line).
        r#""{\"content\":\"c\",\"tool_call_id\":\"call_1\"}""#,
        r#""a\nb\u00e9\"""#,
    ];

    #[test]
    fn langfuse_observation_lines_read_the_same() {
        let mut raw = RAW.to_vec();
        raw.extend(["\"tool\"", "\"ERROR\"", "\"GENERATION\""]);
        let absent: Vec<_> = [
            "trace_id",
            "start_time",
            "end_time",
            "parent_observation_id",
        ]
        .into_iter()
        .map(|k| (k, serde_json::json!("2025-06-15T09:30:00.010Z")))
        .chain([
            ("metadata.tool_call_id", serde_json::json!("call_1")),
            (
                "metadata.attributes",
                serde_json::json!({"gen_ai.tool.call.id": "call_2"}),
            ),
        ])
        .collect();
        lines_read_the_same(Format::Langfuse, "langfuse.jsonl", &raw, &absent);
    }

    #[test]
    fn agents_item_lines_read_the_same() {
        let mut raw = RAW.to_vec();
        raw.extend(["\"function\"", "\"trace\"", "\"response\""]);
        let absent: Vec<_> = ["span_id", "workflow_name", "error"]
            .into_iter()
            .map(|k| (k, serde_json::json!("x")))
            .chain(
                ["call_id", "tool_call_id", "model", "name"]
                    .map(|k| (["span_data.", k].concat(), serde_json::json!("call_1")))
                    .iter()
                    .map(|(k, v)| (&*k.clone().leak(), v.clone())),
            )
            .collect();
        lines_read_the_same(Format::OpenaiAgents, "openai-agents.jsonl", &raw, &absent);
    }
}

#[cfg(test)]
mod fast_taken {
    use std::path::Path;

    /// Every line of the fixtures is read by the fast path, not handed to the tree reader.
    #[test]
    fn fixture_lines_are_read_fast() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/formats");
        for (name, read) in [
            (
                "langfuse.jsonl",
                super::super::langfuse::observation_line as fn(&str) -> Option<super::Line<'_>>,
            ),
            (
                "openai-agents.jsonl",
                super::super::openai_agents::item_line,
            ),
        ] {
            let text = std::fs::read_to_string(root.join(name)).unwrap();
            for line in text.lines() {
                assert!(read(line).is_some(), "{name}: {line}");
            }
        }
    }
}
