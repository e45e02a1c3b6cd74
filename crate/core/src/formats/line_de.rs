//! The JSON deserializer of the line readers' fast paths ([`super::otlp_json`],
//! [`super::fields`]): serde's data model over one line's text, driving the same visitors as
//! `serde_json::Deserializer::from_str` would, faster, or declining.
//!
//! Those fast paths read only the fields the join needs, with visitors written against
//! serde's traits; the visitors stay as they are, and this deserializer takes the place of
//! serde_json's under them. serde_json's cost there was its reading, not the visitors: a
//! string's end found four bytes at a time in wasm32 (its `usize` words), a call per
//! structural byte, a position kept for error messages nobody reads. Here a string's end is
//! found 16 bytes a step (the span scanner's [`next_special`]), whitespace is one compare in
//! the common case, and an error is one unit value.
//!
//! The rule that makes it safe: for any text, either it makes exactly the visitor calls
//! serde_json makes (the same `visit_*` methods, the same values, borrowed where serde_json
//! borrows), or it fails. It never accepts what serde_json rejects, and where reading exactly
//! as serde_json would take work (a surrogate escape, a number that is not a short integer
//! when exactness is cheap to borrow, nesting past serde_json's limit) it declines: a failed
//! fast path means the line is read again by the tree reader, whose messages are the ones
//! shown. So declining costs speed on rare input, never a verdict. The tests hold it to
//! serde_json on every fixture line and on thousands of damaged ones.
//!
//! One request is answered otherwise, and only when asked for by name: an OTLP attribute
//! entry ([`OTLP_ATTRIBUTE`]) in the exporters' compact form comes back whole, as its two
//! strings, where serde_json hands the visitor the entry to read field by field. The visitor
//! that asks makes the same value of either answer; its tests hold it to the tree reader.
//! Nor is a model call's input ([`RELISTED_INPUT`]): a list that re-lists a recent input is
//! handed to the visitor from where that input's entries end ([`super::relist`]).

use std::cell::Cell;
use std::fmt;

use serde::de::{self, DeserializeSeed, Visitor};

use crate::span::{escape, next_special};

/// serde_json's nesting limit: deeper input fails there, so it is declined here.
const MAX_DEPTH: u32 = 128;

/// The one error: the text is not JSON, not what the visitor wants, or declined. Its
/// message is never shown (the tree reader reads the line again and reports).
#[derive(Debug)]
pub(super) struct Declined;

impl fmt::Display for Declined {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("declined by the fast JSON path")
    }
}

impl std::error::Error for Declined {}

impl de::Error for Declined {
    #[cold]
    fn custom<T: fmt::Display>(_: T) -> Self {
        Declined
    }
}

type Result<T> = std::result::Result<T, Declined>;

thread_local! {
    /// Room for the decoded text of escaped strings, handed from one deserializer to the
    /// next. A deserializer is made per line (and per model input held in a string), and a
    /// `String` of its own grew from nothing in each: an allocation, and a reallocation or
    /// two, for the first escaped strings of every line (reading 5 MB of a Langfuse export:
    /// 118,903 allocations and reallocations with it, 108,044 without). A nested
    /// deserializer takes an empty one while the outer holds it.
    static SCRATCH: Cell<String> = const { Cell::new(String::new()) };
}

/// Room past this is given back to the allocator rather than kept for the next line, so that
/// one huge escaped string does not hold its size for the rest of the reading.
const SCRATCH_KEPT: usize = 64 << 10;

/// The deserializer over one JSON text.
pub(super) struct LineDe<'de> {
    text: &'de str,
    b: &'de [u8],
    i: usize,
    depth: u32,
    /// The most members an object may have; more declines ([`LineDe::max_members`]).
    max_members: u32,
    /// The decoded text of the current escaped string.
    scratch: String,
}

/// One value of `T` read from all of `text`, or `None` where serde_json would fail or this
/// deserializer declines.
pub(crate) fn from_str<'de, T: de::Deserialize<'de>>(text: &'de str) -> Option<T> {
    let mut de = LineDe::new(text);
    let value = T::deserialize(&mut de).ok()?;
    de.end().ok()?;
    Some(value)
}

impl<'de> LineDe<'de> {
    pub fn new(text: &'de str) -> LineDe<'de> {
        LineDe {
            text,
            b: text.as_bytes(),
            i: 0,
            depth: 0,
            max_members: u32::MAX,
            scratch: SCRATCH.with(Cell::take),
        }
    }

    /// Declines an object of more than `n` members: for a reader whose declined input goes
    /// to a tree reader that refuses such objects ([`super::otlp_json_wire`]), so that both
    /// readings refuse the same input.
    pub(super) fn max_members(mut self, n: u32) -> Self {
        self.max_members = n;
        self
    }

    /// Whether an object may have `n` members.
    pub(super) fn members_allowed(&self, n: u32) -> bool {
        n <= self.max_members
    }

    /// What serde_json's `end` checks: nothing but whitespace after the value.
    pub fn end(&mut self) -> Result<()> {
        self.ws();
        if self.i == self.b.len() {
            Ok(())
        } else {
            Err(Declined)
        }
    }

    /// JSON whitespace. Compact lines have none, and the first byte says so.
    #[inline(always)]
    fn ws(&mut self) {
        while let Some(&c) = self.b.get(self.i) {
            if c > b' ' || !matches!(c, b' ' | b'\n' | b'\t' | b'\r') {
                return;
            }
            self.i += 1;
        }
    }

    /// The next byte after whitespace, not consumed.
    #[inline(always)]
    pub(super) fn peek(&mut self) -> Result<u8> {
        self.ws();
        self.b.get(self.i).copied().ok_or(Declined)
    }

    #[inline(always)]
    fn literal(&mut self, word: &[u8]) -> Result<()> {
        let end = self.i + word.len();
        if self.b.get(self.i..end) == Some(word) {
            self.i = end;
            Ok(())
        } else {
            Err(Declined)
        }
    }

    /// The string at `self.i` (its opening quote), to the visitor: borrowed from the text
    /// when it has no escapes (`visit_borrowed_str`, as serde_json), else decoded
    /// (`visit_str`).
    #[inline(always)]
    fn string<V: Visitor<'de>>(&mut self, visitor: V) -> Result<V::Value> {
        let start = self.i + 1;
        let at = next_special::<false>(self.b, start).ok_or(Declined)?;
        if self.b[at] == b'"' {
            self.i = at + 1;
            return visitor.visit_borrowed_str(&self.text[start..at]);
        }
        self.escaped(start, at)?;
        visitor.visit_str(&self.scratch)
    }

    /// Decodes a string with escapes into `scratch`: `start` is its first byte, `at` its
    /// first special byte. Escapes as serde_json decodes them; a surrogate escape declines
    /// (pairs are rare, and a lone one fails serde_json).
    #[cold]
    fn escaped(&mut self, start: usize, mut at: usize) -> Result<()> {
        self.scratch.clear();
        let mut from = start;
        loop {
            // Only a quote or a backslash may end a run: a control byte fails serde_json.
            match self.b[at] {
                b'"' => {
                    self.scratch.push_str(&self.text[from..at]);
                    self.i = at + 1;
                    return Ok(());
                }
                b'\\' => {
                    self.scratch.push_str(&self.text[from..at]);
                    let (c, used) = escape(&self.b[at + 1..]).ok_or(Declined)?;
                    self.scratch.push(c);
                    from = at + 1 + used;
                }
                _ => return Err(Declined),
            }
            at = next_special::<false>(self.b, from).ok_or(Declined)?;
        }
    }

    /// A number at `self.i`: a short integer read here, anything else (a fraction, an
    /// exponent, twenty digits, `-0`) parsed by serde_json itself, so each value and each
    /// `visit_*` is the one serde_json makes.
    fn number<V: Visitor<'de>>(&mut self, visitor: V) -> Result<V::Value> {
        let start = self.i;
        let negative = self.b[start] == b'-';
        let digits_at = start + usize::from(negative);
        let mut end = digits_at;
        let mut value: u64 = 0;
        while let Some(&c) = self.b.get(end) {
            if !c.is_ascii_digit() {
                break;
            }
            // At most 18 digits are taken here, so this never overflows.
            value = value.wrapping_mul(10).wrapping_add(u64::from(c - b'0'));
            end += 1;
        }
        let digits = end - digits_at;
        let plain = (1..=18).contains(&digits)
            && (digits == 1 || self.b[digits_at] != b'0')
            && !matches!(self.b.get(end), Some(b'.' | b'e' | b'E'))
            && !(negative && value == 0);
        if plain {
            self.i = end;
            return if negative {
                visitor.visit_i64(-(value as i64))
            } else {
                visitor.visit_u64(value)
            };
        }
        while let Some(&c) = self.b.get(end) {
            if !matches!(c, b'0'..=b'9' | b'-' | b'+' | b'.' | b'e' | b'E') {
                break;
            }
            end += 1;
        }
        let number: serde_json::Number =
            serde_json::from_str(&self.text[start..end]).map_err(|_| Declined)?;
        self.i = end;
        if let Some(u) = number.as_u64() {
            visitor.visit_u64(u)
        } else if let Some(i) = number.as_i64() {
            visitor.visit_i64(i)
        } else {
            visitor.visit_f64(number.as_f64().ok_or(Declined)?)
        }
    }

    /// Steps over one value, accepting and declining exactly what [`Self::deserialize_any`]
    /// does for a visitor that keeps nothing, but without one: no visitor call per member or
    /// element, and a string's escapes checked, not decoded into `scratch`. The line readers
    /// skip most of the members they meet (a Langfuse observation's usage, model parameters,
    /// a generation's output; a tool message's role and metadata).
    fn skip(&mut self) -> Result<()> {
        match self.peek()? {
            b'"' => self.skip_string(),
            b'{' => {
                self.enter()?;
                let mut members = 0;
                loop {
                    // As [`Map`] reads: `}`, or (after a `,` past the first) a key, `:`, a value.
                    let mut c = self.peek()?;
                    if c == b'}' {
                        break;
                    }
                    if members > 0 {
                        if c != b',' {
                            return Err(Declined);
                        }
                        self.i += 1;
                        c = self.peek()?;
                    }
                    members += 1;
                    if c != b'"' || !self.members_allowed(members) {
                        return Err(Declined);
                    }
                    self.skip_string()?;
                    if self.peek()? != b':' {
                        return Err(Declined);
                    }
                    self.i += 1;
                    self.skip()?;
                }
                self.leave();
                Ok(())
            }
            b'[' => {
                self.enter()?;
                let mut first = true;
                loop {
                    // As [`Seq`] reads: `]`, or (after a `,` past the first) a value.
                    let c = self.peek()?;
                    if c == b']' {
                        break;
                    }
                    if !std::mem::replace(&mut first, false) {
                        if c != b',' {
                            return Err(Declined);
                        }
                        self.i += 1;
                        if self.peek()? == b']' {
                            return Err(Declined);
                        }
                    }
                    self.skip()?;
                }
                self.leave();
                Ok(())
            }
            b'n' => self.literal(b"null"),
            b't' => self.literal(b"true"),
            b'f' => self.literal(b"false"),
            b'-' | b'0'..=b'9' => self.number(de::IgnoredAny).map(drop),
            _ => Err(Declined),
        }
    }

    /// Steps over the string at `self.i` as [`Self::string`] reads it.
    fn skip_string(&mut self) -> Result<()> {
        let mut from = self.i + 1;
        loop {
            let at = next_special::<false>(self.b, from).ok_or(Declined)?;
            match self.b[at] {
                b'"' => {
                    self.i = at + 1;
                    return Ok(());
                }
                b'\\' => {
                    let (_, used) = escape(&self.b[at + 1..]).ok_or(Declined)?;
                    from = at + 1 + used;
                }
                // A control byte: serde_json fails.
                _ => return Err(Declined),
            }
        }
    }

    /// Steps into the object or array at `self.i`, counting its depth as serde_json does.
    pub(super) fn enter(&mut self) -> Result<()> {
        self.depth += 1;
        self.i += 1;
        if self.depth >= MAX_DEPTH {
            Err(Declined)
        } else {
            Ok(())
        }
    }

    /// Steps out of an object or array: `self.i` is at its closing byte.
    pub(super) fn leave(&mut self) {
        self.depth -= 1;
        self.i += 1;
    }

    /// Steps over one structural byte (a `,` or `:` that [`LineDe::peek`] returned).
    pub(super) fn step(&mut self) {
        self.i += 1;
    }

    /// Where the reading stands: a byte offset into the text. With [`LineDe::peek`],
    /// [`LineDe::enter`] and [`LineDe::leave`] it lets a reader keep the byte ranges of what
    /// it walks over ([`super::otlp_json_wire`]) while the values in between are read as
    /// here.
    pub(super) fn at(&self) -> usize {
        self.i
    }

    /// An array at `self.i` to the visitor, which must take all of it (as serde_json
    /// requires: what it leaves fails).
    fn seq<V: Visitor<'de>>(&mut self, visitor: V) -> Result<V::Value> {
        self.seq_from(None, visitor)
    }

    /// [`LineDe::seq`], or with `at` (the end of an entry of the array) the entries before
    /// it taken as read: the visitor is handed the rest ([`RELISTED_INPUT`]).
    fn seq_from<V: Visitor<'de>>(&mut self, at: Option<usize>, visitor: V) -> Result<V::Value> {
        self.enter()?;
        if let Some(at) = at {
            self.i = at;
        }
        let value = visitor.visit_seq(Seq {
            de: self,
            first: at.is_none(),
        })?;
        self.depth -= 1;
        if self.peek()? == b']' {
            self.i += 1;
            Ok(value)
        } else {
            Err(Declined)
        }
    }

    /// An object at `self.i` to the visitor, which must take all of it.
    fn map<V: Visitor<'de>>(&mut self, visitor: V) -> Result<V::Value> {
        self.enter()?;
        let value = visitor.visit_map(Map {
            de: self,
            first: true,
            members: 0,
        })?;
        self.depth -= 1;
        if self.peek()? == b'}' {
            self.i += 1;
            Ok(value)
        } else {
            Err(Declined)
        }
    }
}

impl Drop for LineDe<'_> {
    fn drop(&mut self) {
        if self.scratch.capacity() <= SCRATCH_KEPT {
            self.scratch.clear();
            SCRATCH.with(|kept| kept.set(std::mem::take(&mut self.scratch)));
        }
    }
}

/// Deserializer methods that decline: requests serde_json answers in ways of its own (a
/// number by type, a struct from an array, a key read as a number), which the fast paths'
/// visitors never make.
macro_rules! declined {
    ($($method:ident)*) => {
        $(
            fn $method<V: Visitor<'de>>(self, _: V) -> Result<V::Value> {
                Err(Declined)
            }
        )*
    };
}

/// [`declined!`] for the named and sized shapes of serde's data model, but newtypes.
macro_rules! declined_shapes {
    () => {
        fn deserialize_unit_struct<V: Visitor<'de>>(
            self,
            _: &'static str,
            _: V,
        ) -> Result<V::Value> {
            Err(Declined)
        }
        fn deserialize_tuple<V: Visitor<'de>>(self, _: usize, _: V) -> Result<V::Value> {
            Err(Declined)
        }
        fn deserialize_tuple_struct<V: Visitor<'de>>(
            self,
            _: &'static str,
            _: usize,
            _: V,
        ) -> Result<V::Value> {
            Err(Declined)
        }
        fn deserialize_struct<V: Visitor<'de>>(
            self,
            _: &'static str,
            _: &'static [&'static str],
            _: V,
        ) -> Result<V::Value> {
            Err(Declined)
        }
        fn deserialize_enum<V: Visitor<'de>>(
            self,
            _: &'static str,
            _: &'static [&'static str],
            _: V,
        ) -> Result<V::Value> {
            Err(Declined)
        }
    };
}

impl<'de> de::Deserializer<'de> for &mut LineDe<'de> {
    type Error = Declined;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        match self.peek()? {
            b'"' => self.string(visitor),
            b'{' => self.map(visitor),
            b'[' => self.seq(visitor),
            b'n' => {
                self.literal(b"null")?;
                visitor.visit_unit()
            }
            b't' => {
                self.literal(b"true")?;
                visitor.visit_bool(true)
            }
            b'f' => {
                self.literal(b"false")?;
                visitor.visit_bool(false)
            }
            b'-' | b'0'..=b'9' => self.number(visitor),
            _ => Err(Declined),
        }
    }

    // serde_json asks for these as such: anything but the named type fails.
    fn deserialize_str<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        match self.peek()? {
            b'"' => self.string(visitor),
            _ => Err(Declined),
        }
    }

    fn deserialize_string<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        self.deserialize_str(visitor)
    }

    fn deserialize_map<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        match self.peek()? {
            b'{' => self.map(visitor),
            _ => Err(Declined),
        }
    }

    fn deserialize_seq<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        match self.peek()? {
            b'[' => self.seq(visitor),
            _ => Err(Declined),
        }
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        if self.peek()? == b'n' {
            self.literal(b"null")?;
            visitor.visit_none()
        } else {
            visitor.visit_some(self)
        }
    }

    fn deserialize_bool<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        match self.peek()? {
            b't' | b'f' => self.deserialize_any(visitor),
            _ => Err(Declined),
        }
    }

    fn deserialize_unit<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        match self.peek()? {
            b'n' => self.deserialize_any(visitor),
            _ => Err(Declined),
        }
    }

    // Skipping accepts what `deserialize_any` does (stricter than serde_json's skip, never
    // laxer), and the visitor is told only that a value was there.
    fn deserialize_ignored_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        self.skip()?;
        visitor.visit_unit()
    }

    // The rest of serde's data model, which the fast paths' visitors do not ask for and
    // serde_json reads in ways of its own (numbers by type, structs from arrays, enums).
    declined! {
        deserialize_i8 deserialize_i16 deserialize_i32 deserialize_i64 deserialize_u8
        deserialize_u16 deserialize_u32 deserialize_u64 deserialize_f32 deserialize_f64
        deserialize_char deserialize_bytes deserialize_byte_buf deserialize_identifier
    }
    declined_shapes!();

    // The two newtypes the fast paths ask for. An OTLP attribute entry ([`OTLP_ATTRIBUTE`]):
    // in the compact form answered whole, otherwise with the entry itself, as serde_json
    // answers any newtype request, so the visitor then reads it as it would from serde_json.
    // A model input ([`RELISTED_INPUT`]): a list as a sequence, perhaps resumed; any other
    // value as the entry itself.
    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        name: &'static str,
        visitor: V,
    ) -> Result<V::Value> {
        if name == RELISTED_INPUT {
            return self.relisted(visitor);
        }
        if name != OTLP_ATTRIBUTE {
            return Err(Declined);
        }
        match self.compact_attribute() {
            Some((key, value)) => visitor.visit_seq(Strings {
                items: [key, value],
                next: 0,
            }),
            None => visitor.visit_newtype_struct(self),
        }
    }
}

/// The name of the newtype request for an OTLP attribute entry (see
/// `otlp_json::Attributes`). [`LineDe`] answers an entry in the exporters' compact form,
/// `{"key":"k","value":{"stringValue":"v"}}` without whitespace and with no escape in either
/// string, with a sequence of `k` and `v`, borrowed: what the field-by-field visitor makes of
/// those bytes, in two scans for a quote instead of eleven visitor calls.
pub(super) const OTLP_ATTRIBUTE: &str = "$toolslice::otlp_json::Attribute";

impl<'de> LineDe<'de> {
    /// The key and string value of an attribute entry at `self.i` in the compact form, which
    /// is then consumed; `None` (nothing consumed) for any other text.
    #[inline]
    fn compact_attribute(&mut self) -> Option<(&'de str, &'de str)> {
        const HEAD: &[u8] = br#"{"key":""#;
        const MIDDLE: &[u8] = br#"","value":{"stringValue":""#;
        const TAIL: &[u8] = br#""}}"#;
        // Two objects deep, as `map` would go: deeper input is left to it, which declines.
        if self.depth + 2 >= MAX_DEPTH {
            return None;
        }
        let b = self.b;
        let key = self.i + HEAD.len();
        if b.get(self.i..key)? != HEAD {
            return None;
        }
        // Each string ends at its first quote, backslash or control byte, and only a quote,
        // the first byte of what must follow, lets the form go on: no escape, nothing that
        // fails serde_json.
        let key_end = next_special::<false>(b, key)?;
        let value = key_end + MIDDLE.len();
        if b.get(key_end..value)? != MIDDLE {
            return None;
        }
        let value_end = next_special::<false>(b, value)?;
        let end = value_end + TAIL.len();
        if b.get(value_end..end)? != TAIL {
            return None;
        }
        self.i = end;
        // Both strings start and end next to ASCII quotes: char boundaries.
        Some((&self.text[key..key_end], &self.text[value..value_end]))
    }
}

/// The name of the newtype request for a model call's input (see `message_list::InputSeed`).
/// [`LineDe`] answers a list with a sequence of its entries, read from where a recent input
/// that the list re-lists ended, when there is one ([`super::relist`]): the visitor of the
/// input then starts from what that input's entries left. Any other value is answered as
/// serde_json answers a newtype request, with the value itself.
pub(super) const RELISTED_INPUT: &str = "$toolslice::message_list::Input";

impl<'de> LineDe<'de> {
    fn relisted<V: Visitor<'de>>(&mut self, visitor: V) -> Result<V::Value> {
        if self.peek()? != b'[' {
            return visitor.visit_newtype_struct(self);
        }
        let start = self.i;
        let entries_end = super::relist::resume(&self.b[start..], self.depth, self.max_members);
        let read = self.seq_from(entries_end.map(|end| start + end), visitor);
        let text = read.is_ok().then(|| &self.text[start..self.i]);
        super::relist::end(text, self.depth, self.max_members);
        read
    }
}

/// Strings handed out as a sequence, each borrowed.
struct Strings<'de> {
    items: [&'de str; 2],
    next: usize,
}

impl<'de> de::SeqAccess<'de> for Strings<'de> {
    type Error = Declined;

    fn next_element_seed<T: DeserializeSeed<'de>>(&mut self, seed: T) -> Result<Option<T::Value>> {
        let Some(&s) = self.items.get(self.next) else {
            return Ok(None);
        };
        self.next += 1;
        seed.deserialize(de::value::BorrowedStrDeserializer::new(s))
            .map(Some)
    }
}

/// The elements of an array, as serde_json's `SeqAccess` hands them out.
struct Seq<'a, 'de> {
    de: &'a mut LineDe<'de>,
    first: bool,
}

impl<'de> de::SeqAccess<'de> for Seq<'_, 'de> {
    type Error = Declined;

    #[inline]
    fn next_element_seed<T: DeserializeSeed<'de>>(&mut self, seed: T) -> Result<Option<T::Value>> {
        let c = self.de.peek()?;
        if c == b']' {
            return Ok(None);
        }
        if !std::mem::replace(&mut self.first, false) {
            if c != b',' {
                return Err(Declined);
            }
            self.de.i += 1;
            // `[1,]` fails serde_json.
            if self.de.peek()? == b']' {
                return Err(Declined);
            }
        }
        seed.deserialize(&mut *self.de).map(Some)
    }
}

/// The entries of an object, as serde_json's `MapAccess` hands them out.
struct Map<'a, 'de> {
    de: &'a mut LineDe<'de>,
    first: bool,
    members: u32,
}

impl<'de> de::MapAccess<'de> for Map<'_, 'de> {
    type Error = Declined;

    // Inlined into the key loops, with the key's reading (`Key::deserialize_str`,
    // `LineDe::string`, `otlp_json::KeySeed`): a key read by a call came back through memory
    // in a way the CPU cannot forward (see `KeySeed`).
    #[inline(always)]
    fn next_key_seed<K: DeserializeSeed<'de>>(&mut self, seed: K) -> Result<Option<K::Value>> {
        let mut c = self.de.peek()?;
        if c == b'}' {
            return Ok(None);
        }
        if !std::mem::replace(&mut self.first, false) {
            if c != b',' {
                return Err(Declined);
            }
            self.de.i += 1;
            c = self.de.peek()?;
        }
        // A key is a string (`{"a":1,}` fails serde_json here too).
        if c != b'"' {
            return Err(Declined);
        }
        self.members += 1;
        if !self.de.members_allowed(self.members) {
            return Err(Declined);
        }
        seed.deserialize(Key(&mut *self.de)).map(Some)
    }

    #[inline]
    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value> {
        if self.de.peek()? != b':' {
            return Err(Declined);
        }
        self.de.i += 1;
        seed.deserialize(&mut *self.de)
    }
}

/// An object's key: serde_json hands it to any string-like request as a string; the fast
/// paths ask for nothing else (other requests decline).
struct Key<'a, 'de>(&'a mut LineDe<'de>);

impl<'de> de::Deserializer<'de> for Key<'_, 'de> {
    type Error = Declined;

    #[inline]
    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        self.0.string(visitor)
    }

    #[inline(always)]
    fn deserialize_str<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        self.0.string(visitor)
    }

    fn deserialize_string<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        self.0.string(visitor)
    }

    fn deserialize_identifier<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        self.0.string(visitor)
    }

    fn deserialize_ignored_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        self.0.skip_string()?;
        visitor.visit_unit()
    }

    declined! {
        deserialize_bool deserialize_i8 deserialize_i16 deserialize_i32 deserialize_i64
        deserialize_u8 deserialize_u16 deserialize_u32 deserialize_u64 deserialize_f32
        deserialize_f64 deserialize_char deserialize_bytes deserialize_byte_buf
        deserialize_option deserialize_unit deserialize_seq deserialize_map
    }
    declined_shapes!();

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        _: &'static str,
        _: V,
    ) -> Result<V::Value> {
        Err(Declined)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::de::{Deserialize, Deserializer, MapAccess, SeqAccess};
    use std::cell::Cell;

    /// Every visitor call a deserializer makes, in order, as text: the method, whether a
    /// string was borrowed, and each value. Values are asked for in turn with each request
    /// the fast paths make (any, option, str, map, seq), so each request meets each kind of
    /// value.
    struct Log<'l> {
        out: &'l mut Vec<String>,
        turn: &'l Cell<usize>,
    }

    /// The calls of one whole value: `MIXED` asks for each value with each request in turn
    /// (most texts then fail both ways, which is the point: failing alike), else always with
    /// `deserialize_any`.
    #[derive(Debug, PartialEq)]
    struct Calls<const MIXED: bool>(Vec<String>);

    impl<'de, const MIXED: bool> Deserialize<'de> for Calls<MIXED> {
        fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
            let mut out = Vec::new();
            // Turns past 5 * usize::MAX / 10 never come: `any` forever when not mixed.
            let turn = Cell::new(if MIXED { 0 } else { usize::MAX });
            Log {
                out: &mut out,
                turn: &turn,
            }
            .deserialize(d)?;
            Ok(Calls(out))
        }
    }

    impl<'de> DeserializeSeed<'de> for Log<'_> {
        type Value = ();
        fn deserialize<D: Deserializer<'de>>(self, d: D) -> std::result::Result<(), D::Error> {
            let turn = self.turn.get();
            if turn == usize::MAX {
                return d.deserialize_any(self);
            }
            self.turn.set(turn + 1);
            match turn % 5 {
                0 => d.deserialize_any(self),
                1 => d.deserialize_option(self),
                2 => d.deserialize_str(self),
                3 => d.deserialize_map(self),
                _ => d.deserialize_seq(self),
            }
        }
    }

    impl<'de> Visitor<'de> for Log<'_> {
        type Value = ();
        fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
            f.write_str("anything")
        }
        fn visit_bool<E: de::Error>(self, v: bool) -> std::result::Result<(), E> {
            self.out.push(format!("bool {v}"));
            Ok(())
        }
        fn visit_i64<E: de::Error>(self, v: i64) -> std::result::Result<(), E> {
            self.out.push(format!("i64 {v}"));
            Ok(())
        }
        fn visit_u64<E: de::Error>(self, v: u64) -> std::result::Result<(), E> {
            self.out.push(format!("u64 {v}"));
            Ok(())
        }
        fn visit_f64<E: de::Error>(self, v: f64) -> std::result::Result<(), E> {
            self.out.push(format!("f64 {:?}", v.to_bits()));
            Ok(())
        }
        fn visit_str<E: de::Error>(self, v: &str) -> std::result::Result<(), E> {
            self.out.push(format!("str {v:?}"));
            Ok(())
        }
        fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> std::result::Result<(), E> {
            self.out.push(format!("borrowed {v:?}"));
            Ok(())
        }
        fn visit_unit<E: de::Error>(self) -> std::result::Result<(), E> {
            self.out.push("unit".into());
            Ok(())
        }
        fn visit_none<E: de::Error>(self) -> std::result::Result<(), E> {
            self.out.push("none".into());
            Ok(())
        }
        fn visit_some<D: Deserializer<'de>>(self, d: D) -> std::result::Result<(), D::Error> {
            self.out.push("some".into());
            Log { ..self }.deserialize(d)
        }
        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> std::result::Result<(), A::Error> {
            self.out.push("[".into());
            let turn = self.turn;
            while seq
                .next_element_seed(Log {
                    out: &mut *self.out,
                    turn,
                })?
                .is_some()
            {}
            self.out.push("]".into());
            Ok(())
        }
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> std::result::Result<(), A::Error> {
            self.out.push("{".into());
            let turn = self.turn;
            // Keys as the fast paths ask for them: as strings, or through `deserialize_any`.
            while map.next_key_seed(KeyLog(&mut *self.out, turn))?.is_some() {
                map.next_value_seed(Log {
                    out: &mut *self.out,
                    turn,
                })?;
            }
            self.out.push("}".into());
            Ok(())
        }
    }

    struct KeyLog<'l>(&'l mut Vec<String>, &'l Cell<usize>);

    impl<'de> DeserializeSeed<'de> for KeyLog<'_> {
        type Value = ();
        fn deserialize<D: Deserializer<'de>>(self, d: D) -> std::result::Result<(), D::Error> {
            let turn = self.1.get();
            self.1
                .set(turn.wrapping_add(usize::from(turn != usize::MAX)));
            let log = Log {
                out: self.0,
                turn: self.1,
            };
            if turn % 2 == 0 {
                d.deserialize_str(log)
            } else {
                d.deserialize_any(log)
            }
        }
    }

    /// The rule of the module on `text`: serde_json failing means this fails; this
    /// succeeding means the same visitor calls, and the same `serde_json::Value`.
    fn same<'t, T: Deserialize<'t> + fmt::Debug + PartialEq>(text: &'t str) -> bool {
        let ours = from_str::<T>(text);
        match (&ours, serde_json::from_str::<T>(text)) {
            (Some(_), Err(e)) => panic!("accepted what serde_json rejects ({e}): {text:?}"),
            (Some(a), Ok(b)) => assert_eq!(a, &b, "{text:?}"),
            (None, _) => {}
        }
        ours.is_some()
    }

    /// [`same`] for every visitor of the tests; whether the text was read (not declined).
    fn agrees(text: &str) -> bool {
        same::<Calls<true>>(text);
        let read = same::<Calls<false>>(text);
        let value = from_str::<serde_json::Value>(text);
        if let (Some(a), Ok(b)) = (&value, serde_json::from_str::<serde_json::Value>(text)) {
            // `to_string` tells 1 from 1.0, and keeps the order of keys.
            assert_eq!(a.to_string(), b.to_string(), "{text:?}");
        }
        assert_eq!(value.is_some(), read, "{text:?}");
        // Skipped (as the readers skip the members they do not keep): the same texts taken
        // and the same declined, so a skip never accepts what serde_json rejects.
        let skipped = from_str::<de::IgnoredAny>(text);
        assert_eq!(skipped.is_some(), read, "skipped: {text:?}");
        read
    }

    /// The scratch that decodes escaped strings is handed from one text's deserializer to
    /// the next (and kept only up to [`SCRATCH_KEPT`]): a long escaped string, then shorter
    /// ones, then a string cut at its escape, in one thread, each read as serde_json reads it,
    /// with nothing of an earlier text left in a later one.
    #[test]
    fn escaped_strings_in_turn_read_alone() {
        let long = format!("\"{}\\n{}\"", "a".repeat(SCRATCH_KEPT), "b".repeat(70));
        let texts = [
            long.as_str(),
            r#"{"k":"x\ny","l":["\u00e9\t"]}"#,
            r#""\"""#,
            r#""c\"d""#,
            r#"["\u0041", "\\", "plain"]"#,
            r#""cut\"#,
            r#""z""#,
        ];
        for round in 0..3 {
            for text in texts {
                assert_eq!(
                    agrees(text),
                    !text.ends_with('\\'),
                    "round {round}: {text:?}"
                );
            }
        }
        // A deserializer made while another holds the scratch (an input in a string).
        let outer = r#"{"input":"[{\"role\": \"tool\", \"content\": \"a\\nb\"}]","x":"p\nq"}"#;
        assert!(agrees(outer));
        let value: serde_json::Value = from_str(outer).unwrap();
        assert!(agrees(value["input"].as_str().unwrap()));
        assert_eq!(value["x"], "p\nq");
    }

    fn fixture_lines() -> Vec<String> {
        let mut texts: Vec<String> = [
            include_str!("../../tests/fixtures/formats/otlp-collector-events.jsonl"),
            include_str!("../../tests/fixtures/formats/langfuse.jsonl"),
            include_str!("../../tests/fixtures/formats/openai-agents.jsonl"),
            include_str!("../../tests/fixtures/formats/otlp-genai.json"),
            include_str!("../../tests/fixtures/formats/langfuse.json"),
        ]
        .iter()
        .flat_map(|f| f.lines().map(str::to_string))
        .collect();
        texts.extend(
            crate::real_texts::all()
                .iter()
                .flat_map(|f| f.lines().map(str::to_string).collect::<Vec<_>>()),
        );
        texts.retain(|l| !l.trim().is_empty());
        texts
    }

    #[cfg_attr(target_arch = "wasm32", wasm_bindgen_test::wasm_bindgen_test)]
    #[test]
    fn reads_every_export_line_as_serde_json_does() {
        let lines = fixture_lines();
        let mut read = 0;
        for line in &lines {
            let exported = serde_json::from_str::<serde_json::Value>(line).is_ok();
            // Every line that is JSON is read here, not declined: the fast paths are fast.
            assert_eq!(agrees(line), exported, "{line}");
            read += usize::from(exported);
        }
        assert!(read > 50, "export lines read: {read}");
    }

    #[cfg_attr(target_arch = "wasm32", wasm_bindgen_test::wasm_bindgen_test)]
    #[test]
    fn edge_cases_agree() {
        let numbers = [
            "0",
            "-0",
            "7",
            "-7",
            "01",
            "-01",
            "1.",
            ".5",
            "+1",
            "1e",
            "1e5",
            "1E-5",
            "-1.5e+3",
            "1.0",
            "0.1",
            "123456789012345678",
            "1234567890123456789",
            "18446744073709551615",
            "18446744073709551616",
            "-9223372036854775808",
            "-9223372036854775809",
            "1e400",
            "-1e400",
            "1e-400",
            "2.2250738585072011e-308",
            "9007199254740993",
            "-",
            "--1",
            "1-2",
            "0x10",
            "1.5.5",
            "00",
            "-0.0",
            "1_000",
        ];
        let strings = [
            r#""""#,
            r#""a""#,
            r#""\n""#,
            r#""\"\\\/\b\f\n\r\t""#,
            r#""\u00e9""#,
            r#""\u00E9x""#,
            r#""\ud83d\ude00""#,
            r#""\ud800""#,
            r#""\udc00""#,
            r#""\u12""#,
            r#""\x41""#,
            r#""\""#,
            "\"a\u{1}b\"",
            "\"a\tb\"",
            "\"\u{7f}\u{80}é🙂\"",
            r#""unterminated"#,
            r#""a\"#,
            "\"0123456789abcdef0123456789\\n\"",
        ];
        let shapes = [
            "null",
            "true",
            "false",
            "nul",
            "nulls",
            "truex",
            "tru",
            "[]",
            "{}",
            "[1,]",
            "[,1]",
            "[1 2]",
            r#"{"a":1,}"#,
            r#"{"a" 1}"#,
            r#"{"a":}"#,
            r#"{1:2}"#,
            r#"{"a":1"b":2}"#,
            r#"{"a":1,"a":2}"#,
            " \t\r\n[ 1 , { \"k\" : [ null ] } ] \n",
            "[1] x",
            "[1]]",
            "",
            "  ",
            "[",
            "{",
            r#"{"a":[1,{"b":null}],"c":"d"}"#,
            "[\"a\",\"b\\u0041\"]",
            "\u{feff}{}",
            "[1]\u{0}",
        ];
        for text in numbers.iter().chain(&strings).chain(&shapes) {
            agrees(text);
            agrees(&format!("[{text}]"));
            agrees(&format!("{{\"k\":{text}}}"));
            agrees(&format!("{{{text}:1}}"));
        }
        // Nesting around serde_json's limit.
        for depth in [1, 126, 127, 128, 129, 300] {
            let text = format!("{}{}", "[".repeat(depth), "]".repeat(depth));
            agrees(&text);
            let text = format!(
                "{}1{}",
                "{\"a\":[".repeat(depth / 2),
                "]}".repeat(depth / 2)
            );
            agrees(&text);
        }
        // Short numbers and strings are read, not declined.
        for text in [
            "0",
            "-7",
            "123456789012345678",
            r#""\u00e9\n""#,
            "[true,null,{}]",
        ] {
            assert!(agrees(text), "{text}");
        }
    }

    #[cfg_attr(target_arch = "wasm32", wasm_bindgen_test::wasm_bindgen_test)]
    #[test]
    fn damaged_export_lines_agree() {
        // Each line damaged at a spread of positions: a byte dropped, doubled, or replaced
        // by one that matters to JSON.
        let marks = [
            "\"", "\\", ",", ":", "]", "}", "[", "{", "0", "-", "e", ".", " ", "\u{1}", "n", "é",
        ];
        let mut cases = 0;
        for (n, line) in fixture_lines().iter().enumerate().step_by(3) {
            let bounds: Vec<usize> = (0..line.len())
                .filter(|&i| line.is_char_boundary(i))
                .collect();
            let step = (bounds.len() / 24).max(1);
            for (k, &at) in bounds.iter().enumerate().skip(n % step).step_by(step) {
                let next = bounds.get(k + 1).copied().unwrap_or(line.len());
                let mark = marks[(n + k) % marks.len()];
                for text in [
                    format!("{}{}", &line[..at], &line[next..]),
                    format!("{}{}", &line[..next], &line[at..]),
                    format!("{}{mark}{}", &line[..at], &line[next..]),
                    format!("{}{mark}{}", &line[..at], &line[at..]),
                ] {
                    agrees(&text);
                    cases += 1;
                }
            }
        }
        assert!(cases > 5000, "cases: {cases}");
    }

    /// The compact form of an OTLP attribute entry is answered whole and consumed; any other
    /// text, nothing consumed, is left to the entry's visitor.
    #[test]
    fn compact_attribute_entries() {
        let take = |text: &str| {
            let mut de = LineDe::new(text);
            let got = de
                .compact_attribute()
                .map(|(k, v)| (k.to_string(), v.to_string()));
            (got, de.i)
        };
        let text = r#"{"key":"k","value":{"stringValue":"a b"}},"#;
        assert_eq!(
            take(text),
            (Some(("k".into(), "a b".into())), text.len() - 1)
        );
        let text = "{\"key\":\"\u{e9}\",\"value\":{\"stringValue\":\"\"}}";
        assert_eq!(
            take(text),
            (Some(("\u{e9}".into(), String::new())), text.len())
        );
        for text in [
            r#"{"key":"k","value":{"stringValue":"a\nb"}}"#,
            r#"{"key":"k\u0041","value":{"stringValue":"v"}}"#,
            "{\"key\":\"k\",\"value\":{\"stringValue\":\"a\nb\"}}",
            r#"{"key":"k","value":{"intValue":"3"}}"#,
            r#"{"key":"k","value":{"stringValue":"v","x":1}}"#,
            r#"{"key":"k","value":{"stringValue":"v"},"x":1}"#,
            r#"{"key": "k","value":{"stringValue":"v"}}"#,
            r#"{"value":{"stringValue":"v"},"key":"k"}"#,
            r#"{"key":"k","value":{"stringValue":"v"#,
            r#"{"key":"k""#,
            "",
        ] {
            assert_eq!(take(text), (None, 0), "{text}");
        }
        // As deep as `map` would decline, it declines too.
        let mut de = LineDe::new(r#"{"key":"k","value":{"stringValue":"v"}}"#);
        de.depth = MAX_DEPTH - 2;
        assert_eq!(de.compact_attribute(), None);
        de.depth = MAX_DEPTH - 3;
        assert_eq!(de.compact_attribute(), Some(("k", "v")));
    }
}
