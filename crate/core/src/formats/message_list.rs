//! A model call's input read straight from JSON text into its tool messages: what
//! [`super::messages::tool_messages`] makes of the input's tree, without the tree.
//!
//! The input of a model call re-lists the whole conversation so far, so it is most of the
//! bytes of a Langfuse or Agents SDK export; a `serde_json::Value` tree of it cost an
//! allocation per value and a SipHash per key, only for most of it to be dropped. Here each
//! message is read into the few fields [`Message`] asks for (a string as the text it is,
//! borrowed from the line unless it had escapes; the calls of `tool_calls` as their ids and
//! names), every other field is parsed as the tree parses it and dropped, and the message
//! goes to the same [`Reading`] as a message of a tree, so the two give the same tool
//! messages. What this does not read (a JSON error, or LangChain's serialised messages,
//! which only the tree reader unwraps) fails the parse, and the caller then reads the line
//! as a tree, which gives any message.

use std::borrow::Cow;
use std::cell::Cell;
use std::fmt;

use serde::de::value::{MapAccessDeserializer, SeqAccessDeserializer};
use serde::de::{DeserializeSeed, Deserializer, Error, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde::Deserialize;
use serde_json::{Number, Value};

use super::line_de::RELISTED_INPUT;
use super::messages::{captured, hidden_or, Message, Reading};
use super::model::{Captured, ToolMessage};
use super::otlp_json::{KeySeed, Skip};
use super::relist::{self, Listed};

/// The tool messages of a model call's input, or why it holds none (as
/// [`super::messages::tool_messages`] says it).
pub(crate) type Input = Result<Vec<ToolMessage>, String>;

/// Reads a model call's input value: `None` for `null` (the callers' "not recorded"), else
/// what [`super::messages::tool_messages`] gives for the value's tree. Fails where the line is to
/// be read as a tree.
pub(crate) struct InputSeed;

impl<'de> DeserializeSeed<'de> for InputSeed {
    type Value = Option<Input>;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Option<Input>, D::Error> {
        let left = Cell::new(false);
        // Asked for by name: the line deserializer reads a list that re-lists a recent
        // input from where that input's entries end (see super::relist).
        let read = d.deserialize_newtype_struct(
            RELISTED_INPUT,
            InputVisitor {
                left: &left,
                text: true,
            },
        );
        read.map_err(|e| {
            if left.get() {
                D::Error::custom(LEFT)
            } else {
                e
            }
        })
    }
}

/// The error that hands a line to the tree reader; never shown.
const LEFT: &str = "left to the tree reader";

fn left_to_tree<E: Error>(left: &Cell<bool>) -> E {
    left.set(true);
    E::custom(LEFT)
}

/// An input value. `text`: a string is read as the JSON it holds (once: a string in that
/// string is not a list of messages). `left` is set when the reading is left to the tree
/// reader, so that the error of an input in a string is not taken for "not JSON".
struct InputVisitor<'f> {
    left: &'f Cell<bool>,
    text: bool,
}

const NOT_A_LIST: &str = "the input is not a list of messages";

impl<'de> Visitor<'de> for InputVisitor<'_> {
    type Value = Option<Input>;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a model call's input")
    }
    fn visit_unit<E: Error>(self) -> Result<Option<Input>, E> {
        // `null` in a string is a value like any other that is not a list.
        Ok(if self.text {
            None
        } else {
            Some(Err(NOT_A_LIST.into()))
        })
    }
    fn visit_bool<E: Error>(self, _: bool) -> Result<Option<Input>, E> {
        Ok(Some(Err(NOT_A_LIST.into())))
    }
    fn visit_i64<E: Error>(self, _: i64) -> Result<Option<Input>, E> {
        Ok(Some(Err(NOT_A_LIST.into())))
    }
    fn visit_u64<E: Error>(self, _: u64) -> Result<Option<Input>, E> {
        Ok(Some(Err(NOT_A_LIST.into())))
    }
    fn visit_f64<E: Error>(self, _: f64) -> Result<Option<Input>, E> {
        Ok(Some(Err(NOT_A_LIST.into())))
    }
    fn visit_str<E: Error>(self, s: &str) -> Result<Option<Input>, E> {
        if !self.text {
            return Ok(Some(Err(NOT_A_LIST.into())));
        }
        // The JSON in the string, read by the line's deserializer (so that serde_json's does
        // not instantiate every message visitor a second time: 50 KB of the check module).
        let mut de = super::line_de::LineDe::new(s);
        let inner = InputVisitor {
            left: self.left,
            text: false,
        };
        let read = (&mut de).deserialize_newtype_struct(RELISTED_INPUT, inner);
        match read.and_then(|v| de.end().map(|()| v)) {
            Ok(read) => Ok(read),
            Err(_) if self.left.get() => Err(E::custom(LEFT)),
            // serde_json's skip is no stricter than its full reading: where it fails, the
            // string is not JSON to serde_json either.
            Err(_) if serde_json::from_str::<IgnoredAny>(s).is_err() => {
                Ok(Some(Err("the input is a string that is not JSON".into())))
            }
            // JSON the deserializer declined (or a value of a kind the visitors refuse): the
            // line is the tree reader's, which says what it makes of it.
            Err(_) => Err(left_to_tree(self.left)),
        }
    }
    fn visit_newtype_struct<D: Deserializer<'de>>(self, d: D) -> Result<Option<Input>, D::Error> {
        d.deserialize_any(self)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Option<Input>, A::Error> {
        // The input's own list: perhaps resumed from a recent input's entries (see
        // super::relist).
        list_of_input(seq, self.left, true, true).map(|list| Some(Ok(list)))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Option<Input>, A::Error> {
        // An object holding the list: the first of these keys whose value is a list (the
        // last of a repeated key, as the tree keeps it).
        let mut found: [Option<Vec<ToolMessage>>; 3] = [None, None, None];
        while let Some(key) = map.next_key_seed(KeySeed)? {
            let slot = match key {
                "messages" => 0,
                "input" => 1,
                "contents" => 2,
                _ => {
                    map.next_value::<Skip>()?;
                    continue;
                }
            };
            found[slot] = map.next_value_seed(ListSeed(self.left))?;
        }
        Ok(Some(found.into_iter().flatten().next().ok_or_else(|| {
            "the input holds no list of messages".to_string()
        })))
    }
}

/// A value that is read as a list of messages when it is a list; `None` otherwise.
struct ListSeed<'f>(&'f Cell<bool>);

impl<'de> DeserializeSeed<'de> for ListSeed<'_> {
    type Value = Option<Vec<ToolMessage>>;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for ListSeed<'_> {
    type Value = Option<Vec<ToolMessage>>;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Self::Value, A::Error> {
        list(seq, self.0, true).map(Some)
    }
    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
        drain_map(map).map(|()| None)
    }
    fn visit_unit<E: Error>(self) -> Result<Self::Value, E> {
        Ok(None)
    }
    fn visit_bool<E: Error>(self, _: bool) -> Result<Self::Value, E> {
        Ok(None)
    }
    fn visit_i64<E: Error>(self, _: i64) -> Result<Self::Value, E> {
        Ok(None)
    }
    fn visit_u64<E: Error>(self, _: u64) -> Result<Self::Value, E> {
        Ok(None)
    }
    fn visit_f64<E: Error>(self, _: f64) -> Result<Self::Value, E> {
        Ok(None)
    }
    fn visit_str<E: Error>(self, _: &str) -> Result<Self::Value, E> {
        Ok(None)
    }
}

fn drain_map<'de, A: MapAccess<'de>>(mut map: A) -> Result<(), A::Error> {
    while map.next_key::<Skip>()?.is_some() {
        map.next_value::<Skip>()?;
    }
    Ok(())
}

fn drain_seq<'de, A: SeqAccess<'de>>(mut seq: A) -> Result<(), A::Error> {
    while seq.next_element::<Skip>()?.is_some() {}
    Ok(())
}

/// The tool messages of a list, as [`super::messages::read_list`] reads it. `nest`: a list whose
/// one entry is a list is that inner list (LangChain's batched prompts, as
/// [`super::messages::tool_messages`] reads them).
fn list<'de, A: SeqAccess<'de>>(
    seq: A,
    left: &Cell<bool>,
    nest: bool,
) -> Result<Vec<ToolMessage>, A::Error> {
    list_of_input(seq, left, nest, false)
}

/// [`list`]; with `relisted`, the list a model input is (see [`relist`]): its entries read
/// from where a recent input's ended when the deserializer resumed it, and what all its
/// entries leave offered for keeping.
fn list_of_input<'de, A: SeqAccess<'de>>(
    mut seq: A,
    left: &Cell<bool>,
    nest: bool,
    relisted: bool,
) -> Result<Vec<ToolMessage>, A::Error> {
    let from = if relisted { relist::resumed() } else { None };
    let (mut reading, mut entries) = match from {
        Some(Listed { reading, entries }) => (Reading::resume(reading), entries),
        None => (Reading::new(), 0),
    };
    let mut inner = None;
    while let Some(entry) = seq.next_element_seed(EntrySeed {
        left,
        list: nest && entries == 0,
    })? {
        match entry {
            Entry::Message(m) => reading.message(&m),
            Entry::List(list) => {
                inner = Some(list);
                reading.skip();
            }
            Entry::Other => reading.skip(),
        }
        entries += 1;
    }
    Ok(match inner {
        Some(list) if entries == 1 => list,
        // A list whose first entry was a list is not kept: read again with only that entry,
        // it would be that entry's list, which its reading does not hold.
        Some(_) => reading.finish(),
        None => {
            if relisted {
                relist::offer(&reading, entries);
            }
            reading.finish()
        }
    })
}

// An entry lives on the stack while its message is read; a box would be the allocation per
// message that this reader exists to avoid.
#[allow(clippy::large_enum_variant)]
enum Entry<'de> {
    Message(Msg<'de>),
    /// The first entry, a list read as one (see [`list`]).
    List(Vec<ToolMessage>),
    Other,
}

struct EntrySeed<'f> {
    left: &'f Cell<bool>,
    /// Read an entry that is a list as a list of messages.
    list: bool,
}

impl<'de> DeserializeSeed<'de> for EntrySeed<'_> {
    type Value = Entry<'de>;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Entry<'de>, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for EntrySeed<'_> {
    type Value = Entry<'de>;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Entry<'de>, A::Error> {
        Msg::read(map, self.left).map(Entry::Message)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Entry<'de>, A::Error> {
        if self.list {
            list(seq, self.left, false).map(Entry::List)
        } else {
            drain_seq(seq).map(|()| Entry::Other)
        }
    }
    fn visit_unit<E: Error>(self) -> Result<Entry<'de>, E> {
        Ok(Entry::Other)
    }
    fn visit_bool<E: Error>(self, _: bool) -> Result<Entry<'de>, E> {
        Ok(Entry::Other)
    }
    fn visit_i64<E: Error>(self, _: i64) -> Result<Entry<'de>, E> {
        Ok(Entry::Other)
    }
    fn visit_u64<E: Error>(self, _: u64) -> Result<Entry<'de>, E> {
        Ok(Entry::Other)
    }
    fn visit_f64<E: Error>(self, _: f64) -> Result<Entry<'de>, E> {
        Ok(Entry::Other)
    }
    fn visit_str<E: Error>(self, _: &str) -> Result<Entry<'de>, E> {
        Ok(Entry::Other)
    }
}

/// The fields of one message that [`Message`] asks for; the last of a repeated key kept, as
/// the tree keeps it.
#[derive(Default)]
struct Msg<'de> {
    role: Option<Cow<'de, str>>,
    kind: Option<Cow<'de, str>>,
    tool_call_id: Option<Cow<'de, str>>,
    id: Option<Cow<'de, str>>,
    call_id: Option<Cow<'de, str>>,
    name: Option<Cow<'de, str>>,
    content: Option<Field<'de>>,
    output: Option<Field<'de>>,
    parts: Option<Value>,
    /// `None` when `tool_calls` is absent or not a list; a call that is not an object is
    /// `None`.
    tool_calls: Option<Vec<Option<Call<'de>>>>,
}

impl<'de> Msg<'de> {
    fn read<A: MapAccess<'de>>(mut map: A, left: &Cell<bool>) -> Result<Msg<'de>, A::Error> {
        let mut m = Msg::default();
        while let Some(key) = map.next_key_seed(KeySeed)? {
            match key {
                "role" => m.role = map.next_value::<Text>()?.0,
                "type" => m.kind = map.next_value::<Text>()?.0,
                "tool_call_id" => m.tool_call_id = map.next_value::<Text>()?.0,
                "id" => m.id = map.next_value::<Text>()?.0,
                "call_id" => m.call_id = map.next_value::<Text>()?.0,
                "name" => m.name = map.next_value::<Text>()?.0,
                "content" => m.content = Some(map.next_value()?),
                "output" => m.output = Some(map.next_value()?),
                "parts" => m.parts = Some(map.next_value()?),
                "tool_calls" => m.tool_calls = map.next_value::<Calls>()?.0,
                // LangChain's serialised messages (`messages::langchain_message`).
                "lc" | "data" => return Err(left_to_tree(left)),
                _ => {
                    map.next_value::<Skip>()?;
                }
            }
        }
        Ok(m)
    }

    fn slot(&self, key: &str) -> Option<&Field<'de>> {
        match key {
            "content" => self.content.as_ref(),
            "output" => self.output.as_ref(),
            _ => None,
        }
    }
}

impl Message for Msg<'_> {
    fn field(&self, key: &str) -> Option<&Value> {
        match key {
            "parts" => self.parts.as_ref(),
            _ => match self.slot(key) {
                Some(Field::Value(v)) => Some(v),
                _ => None,
            },
        }
    }
    fn text(&self, key: &str) -> Option<&str> {
        let text = match key {
            "role" => &self.role,
            "type" => &self.kind,
            "tool_call_id" => &self.tool_call_id,
            "id" => &self.id,
            "call_id" => &self.call_id,
            "name" => &self.name,
            _ => {
                return match self.slot(key) {
                    Some(Field::Text(s)) => Some(s),
                    _ => self.field(key).and_then(Value::as_str),
                }
            }
        };
        text.as_deref()
    }
    fn captured(&self, key: &str, what: &str) -> Captured {
        match self.slot(key) {
            Some(Field::Text(s)) => hidden_or(s),
            Some(Field::Value(v)) => captured(Some(v), what),
            None => captured(None, what),
        }
    }
    fn tool_calls(&self, add: &mut dyn FnMut(Option<&str>, Option<&str>)) {
        for call in self.tool_calls.iter().flatten().flatten() {
            // `function.name` when `function` is an object with a string name, else `name`.
            let name = call.function.as_ref().and_then(|f| f.as_deref());
            add(call.id.as_deref(), name.or(call.name.as_deref()));
        }
    }
}

/// A string, or `None` for any other value (parsed and dropped).
struct Text<'de>(Option<Cow<'de, str>>);

impl<'de> Deserialize<'de> for Text<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(TextVisitor)
    }
}

struct TextVisitor;

impl<'de> Visitor<'de> for TextVisitor {
    type Value = Text<'de>;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_borrowed_str<E: Error>(self, s: &'de str) -> Result<Text<'de>, E> {
        Ok(Text(Some(Cow::Borrowed(s))))
    }
    fn visit_str<E: Error>(self, s: &str) -> Result<Text<'de>, E> {
        Ok(Text(Some(Cow::Owned(s.to_string()))))
    }
    fn visit_unit<E: Error>(self) -> Result<Text<'de>, E> {
        Ok(Text(None))
    }
    fn visit_bool<E: Error>(self, _: bool) -> Result<Text<'de>, E> {
        Ok(Text(None))
    }
    fn visit_i64<E: Error>(self, _: i64) -> Result<Text<'de>, E> {
        Ok(Text(None))
    }
    fn visit_u64<E: Error>(self, _: u64) -> Result<Text<'de>, E> {
        Ok(Text(None))
    }
    fn visit_f64<E: Error>(self, _: f64) -> Result<Text<'de>, E> {
        Ok(Text(None))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Text<'de>, A::Error> {
        drain_seq(seq).map(|()| Text(None))
    }
    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Text<'de>, A::Error> {
        drain_map(map).map(|()| Text(None))
    }
}

/// A field that may be a tool message's content: a string as its text, anything else as the
/// tree holds it (measured as a whole, or read as content blocks).
enum Field<'de> {
    Text(Cow<'de, str>),
    Value(Value),
}

impl<'de> Deserialize<'de> for Field<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(FieldVisitor)
    }
}

struct FieldVisitor;

impl<'de> Visitor<'de> for FieldVisitor {
    type Value = Field<'de>;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_borrowed_str<E: Error>(self, s: &'de str) -> Result<Field<'de>, E> {
        Ok(Field::Text(Cow::Borrowed(s)))
    }
    fn visit_str<E: Error>(self, s: &str) -> Result<Field<'de>, E> {
        Ok(Field::Text(Cow::Owned(s.to_string())))
    }
    // Anything else as the tree holds it.
    fn visit_unit<E: Error>(self) -> Result<Field<'de>, E> {
        Ok(Field::Value(Value::Null))
    }
    fn visit_bool<E: Error>(self, b: bool) -> Result<Field<'de>, E> {
        Ok(Field::Value(Value::Bool(b)))
    }
    fn visit_u64<E: Error>(self, n: u64) -> Result<Field<'de>, E> {
        Ok(Field::Value(Value::Number(n.into())))
    }
    fn visit_i64<E: Error>(self, n: i64) -> Result<Field<'de>, E> {
        Ok(Field::Value(Value::Number(n.into())))
    }
    fn visit_f64<E: Error>(self, n: f64) -> Result<Field<'de>, E> {
        Ok(Field::Value(
            Number::from_f64(n).map_or(Value::Null, Value::Number),
        ))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Field<'de>, A::Error> {
        Value::deserialize(SeqAccessDeserializer::new(seq)).map(Field::Value)
    }
    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Field<'de>, A::Error> {
        Value::deserialize(MapAccessDeserializer::new(map)).map(Field::Value)
    }
}

/// One call of `tool_calls`: its `id`, `name`, and `function`'s `name` (`Some` when
/// `function` is an object: its name when that is a string).
#[derive(Default)]
struct Call<'de> {
    id: Option<Cow<'de, str>>,
    name: Option<Cow<'de, str>>,
    function: Option<Option<Cow<'de, str>>>,
}

/// `tool_calls`: `Some` list when it is a list.
struct Calls<'de>(Option<Vec<Option<Call<'de>>>>);

impl<'de> Deserialize<'de> for Calls<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(CallsVisitor)
    }
}

struct CallsVisitor;

impl<'de> Visitor<'de> for CallsVisitor {
    type Value = Calls<'de>;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Calls<'de>, A::Error> {
        let mut calls = Vec::new();
        while let Some(call) = seq.next_element::<Object<CallFields>>()? {
            calls.push(call.0.map(|c| c.0));
        }
        Ok(Calls(Some(calls)))
    }
    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Calls<'de>, A::Error> {
        drain_map(map).map(|()| Calls(None))
    }
    fn visit_unit<E: Error>(self) -> Result<Calls<'de>, E> {
        Ok(Calls(None))
    }
    fn visit_bool<E: Error>(self, _: bool) -> Result<Calls<'de>, E> {
        Ok(Calls(None))
    }
    fn visit_i64<E: Error>(self, _: i64) -> Result<Calls<'de>, E> {
        Ok(Calls(None))
    }
    fn visit_u64<E: Error>(self, _: u64) -> Result<Calls<'de>, E> {
        Ok(Calls(None))
    }
    fn visit_f64<E: Error>(self, _: f64) -> Result<Calls<'de>, E> {
        Ok(Calls(None))
    }
    fn visit_str<E: Error>(self, _: &str) -> Result<Calls<'de>, E> {
        Ok(Calls(None))
    }
}

/// The fields of an object read by a [`ReadFields`]; `None` for a value that is not an
/// object (parsed and dropped).
struct Object<T>(Option<T>);

/// Reads the fields of an object it wants from a map.
trait ReadFields<'de>: Sized {
    fn read<A: MapAccess<'de>>(map: A) -> Result<Self, A::Error>;
}

impl<'de, T: ReadFields<'de>> Deserialize<'de> for Object<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V<T>(std::marker::PhantomData<T>);
        impl<'de, T: ReadFields<'de>> Visitor<'de> for V<T> {
            type Value = Object<T>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("any JSON value")
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Object<T>, A::Error> {
                T::read(map).map(|t| Object(Some(t)))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Object<T>, A::Error> {
                drain_seq(seq).map(|()| Object(None))
            }
            fn visit_unit<E: Error>(self) -> Result<Object<T>, E> {
                Ok(Object(None))
            }
            fn visit_bool<E: Error>(self, _: bool) -> Result<Object<T>, E> {
                Ok(Object(None))
            }
            fn visit_i64<E: Error>(self, _: i64) -> Result<Object<T>, E> {
                Ok(Object(None))
            }
            fn visit_u64<E: Error>(self, _: u64) -> Result<Object<T>, E> {
                Ok(Object(None))
            }
            fn visit_f64<E: Error>(self, _: f64) -> Result<Object<T>, E> {
                Ok(Object(None))
            }
            fn visit_str<E: Error>(self, _: &str) -> Result<Object<T>, E> {
                Ok(Object(None))
            }
        }
        d.deserialize_any(V(std::marker::PhantomData))
    }
}

struct CallFields<'de>(Call<'de>);

impl<'de> ReadFields<'de> for CallFields<'de> {
    fn read<A: MapAccess<'de>>(mut map: A) -> Result<Self, A::Error> {
        let mut call = Call::default();
        while let Some(key) = map.next_key_seed(KeySeed)? {
            match key {
                "id" => call.id = map.next_value::<Text>()?.0,
                "name" => call.name = map.next_value::<Text>()?.0,
                "function" => {
                    call.function = map.next_value::<Object<NameField>>()?.0.map(|n| n.0);
                }
                _ => {
                    map.next_value::<Skip>()?;
                }
            }
        }
        Ok(CallFields(call))
    }
}

/// The `name` of an object, when it is a string.
struct NameField<'de>(Option<Cow<'de, str>>);

impl<'de> ReadFields<'de> for NameField<'de> {
    fn read<A: MapAccess<'de>>(mut map: A) -> Result<Self, A::Error> {
        let mut name = None;
        while let Some(key) = map.next_key_seed(KeySeed)? {
            if key == "name" {
                name = map.next_value::<Text>()?.0;
            } else {
                map.next_value::<Skip>()?;
            }
        }
        Ok(NameField(name))
    }
}

/// What [`super::messages::tool_messages`] gives for a string value holding an input's JSON
/// (GenAI's `gen_ai.input.messages`, the AI SDK's `ai.prompt.messages`), read straight from
/// the text; `None` where the tree reader is to read it. A model call's input re-lists the
/// conversation: as a tree, a long one took about 1 KB of memory a message while it was
/// read, the most of the OTLP endpoint's memory for such a request.
pub(crate) fn read_string(text: &str) -> Option<Input> {
    let left = Cell::new(false);
    let visitor = InputVisitor {
        left: &left,
        text: true,
    };
    visitor.visit_str::<serde_json::Error>(text).ok().flatten()
}

/// The tool messages of an input given as JSON text, read as [`InputSeed`] reads it from a
/// line (by the line deserializer), or `None` where the tree reader is to read it (for the
/// tests that compare the two).
#[cfg(test)]
pub(crate) fn read_text(text: &str) -> Option<Option<Input>> {
    let mut de = super::line_de::LineDe::new(text);
    let read = InputSeed.deserialize(&mut de).ok()?;
    de.end().ok()?;
    Some(read)
}

#[cfg(test)]
mod tests {
    use super::super::messages;
    use super::*;

    /// What the tree reader makes of `text` (None for null, as the callers filter it).
    fn tree(text: &str) -> Option<Option<Input>> {
        let value: Value = serde_json::from_str(text).ok()?;
        Some((!value.is_null()).then(|| messages::tool_messages(&value)))
    }

    #[test]
    fn reads_as_the_tree_reader() {
        let cases = [
            r#"[{"role": "system", "content": "s"}, {"role": "assistant", "content": null, "tool_calls": [{"id": "c1", "function": {"name": "ls"}}, {"id": "c2", "name": "grep"}, 3]}, {"role": "tool", "tool_call_id": " c1 ", "content": "a\nb"}, {"role": "tool", "tool_call_id": "c2", "content": [{"type": "text", "text": "x"}]}]"#,
            r#"{"messages": [{"role": "tool", "tool_call_id": "c", "content": {"a": 1}}]}"#,
            r#"{"input": 3, "contents": [{"role": "tool", "id": "c", "content": "__REDACTED__"}]}"#,
            r#""[{\"role\": \"tool\", \"tool_call_id\": \"c\", \"content\": \"x\"}]""#,
            r#""not json""#,
            r#""\"[]\"""#,
            r#"[[{"role": "tool", "tool_call_id": "c", "content": "x"}]]"#,
            r#"[[{"role": "tool", "tool_call_id": "c", "content": "x"}], 1]"#,
            r#"[{"type": "function_call", "call_id": "c", "name": "ls"}, {"type": "function_call_output", "call_id": "c", "output": "o"}]"#,
            r#"[{"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t", "content": "r"}]}]"#,
            r#"[{"role": "tool", "parts": [{"type": "tool_call_response", "id": "c", "response": {"k": [1]}}]}]"#,
            r#"[{"role": "tool", "tool_call_id": "c", "content": "x", "content": 5}]"#,
            r#"[{"role": "assistant", "tool_calls": [{"id": "c", "function": {"name": 1}, "name": "n"}]}, {"role": "tool", "tool_call_id": "c"}]"#,
            r#"{"model": "x"}"#,
            "null",
            "3",
            "\"null\"",
        ];
        for text in cases {
            let fast = read_text(text).expect(text);
            assert_eq!(fast, tree(text).unwrap(), "{text}");
        }
        // LangChain's messages are left to the tree reader.
        assert_eq!(
            read_text(r#"[{"type": "tool", "data": {"content": "x"}}]"#),
            None
        );
        assert_eq!(
            read_text(r#""[{\"lc\": 1, \"type\": \"constructor\"}]""#),
            None
        );
        // JSON the tree rejects is rejected.
        assert_eq!(read_text(r#"[{"role": "tool", "x": 1e400}]"#), None);
        assert_eq!(tree(r#"[{"role": "tool", "x": 1e400}]"#), None);
    }

    /// A string value holding the input's JSON reads as the tree reader reads the string
    /// value, or is left to it: every case above given as the text of a string, and text
    /// that is not JSON, or JSON of a string, null or a number.
    #[test]
    fn a_string_reads_as_the_tree_reader_reads_it() {
        let cases = [
            r#"[{"role": "tool", "tool_call_id": "c", "content": "x"}]"#,
            r#"[{"role": "assistant", "tool_calls": [{"id": "c", "function": {"name": "ls"}}]}, {"role": "tool", "tool_call_id": "c", "content": "a\nb"}]"#,
            r#"[{"role": "tool", "parts": [{"type": "tool_call_response", "id": "c", "response": {"k": [1]}}]}]"#,
            r#"{"messages": [[{"role": "tool", "tool_call_id": "c", "content": "x"}]]}"#,
            r#"[{"type": "tool", "data": {"content": "x"}}]"#,
            r#"[{"role": "tool", "x": 1e400}]"#,
            "not json",
            "\"[]\"",
            "null",
            "3",
            "",
            "[",
        ];
        let mut fast = 0;
        for text in cases {
            let tree = messages::tool_messages(&Value::String(text.to_string()));
            match read_string(text) {
                Some(read) => {
                    assert_eq!(read, tree, "{text}");
                    fast += 1;
                }
                None => assert!(tree.is_ok() || text.contains("1e400"), "{text}: {tree:?}"),
            }
        }
        assert_eq!(fast, 10);
    }
}
