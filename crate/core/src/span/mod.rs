//! The clip-aware span record of seed 000, and the strict reader of one JSONL line.
//!
//! A tool span says what the tool *observed* and what was *injected* into the model's
//! context. The three lengths are not interchangeable: `observed_bytes` counts the bytes the
//! tool returned, `injected_bytes` the bytes copied into context, `injected_tokens` the
//! tokens the API accepted. `clip_reason` declares which policy cut the result, if any.
//!
//! Reading is strict about the fields it knows and silent about the ones it does not:
//! unknown fields are ignored, but a known field of the wrong type is an error that names the
//! field, because a checker of silent loss must not guess at what a length meant.

use std::borrow::Cow;
use std::fmt;

pub mod emit;
mod scan;
pub(crate) use scan::{escape, next_special, scan_line, KeyOrder};

use serde::de::{self, Deserializer, IgnoredAny, MapAccess, Visitor};
use serde::{Deserialize, Serialize};

/// Why an injected slice differs from what the tool observed: seed 000's closed enum.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ClipReason {
    /// The full result was injected.
    None,
    /// The prompt builder cut tokens.
    PromptTokenCap,
    /// A character cap fired.
    ToolResultCharLimit,
    /// The provider API rejected the tail.
    ProviderContextWindow,
    /// Bytes changed for safety.
    Redaction,
    /// A non-text payload was dropped.
    BinaryOmitted,
}

impl ClipReason {
    pub const ALL: [ClipReason; 6] = [
        ClipReason::None,
        ClipReason::PromptTokenCap,
        ClipReason::ToolResultCharLimit,
        ClipReason::ProviderContextWindow,
        ClipReason::Redaction,
        ClipReason::BinaryOmitted,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            ClipReason::None => "none",
            ClipReason::PromptTokenCap => "prompt_token_cap",
            ClipReason::ToolResultCharLimit => "tool_result_char_limit",
            ClipReason::ProviderContextWindow => "provider_context_window",
            ClipReason::Redaction => "redaction",
            ClipReason::BinaryOmitted => "binary_omitted",
        }
    }

    /// The enum value spelled exactly as the seed spells it; anything else is `None`.
    pub fn parse(text: &str) -> Option<ClipReason> {
        // Every span asks this, and the six names have six lengths: one comparison, a word
        // at a time (slice `==` is a byte loop on wasm32).
        let reason = ClipReason::ALL
            .into_iter()
            .find(|r| r.as_str().len() == text.len())?;
        crate::bytes::eq(reason.as_str().as_bytes(), text.as_bytes()).then_some(reason)
    }
}

impl fmt::Display for ClipReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One clip-aware span record, as seed 000 writes it (one JSON object per line).
///
/// `None` means the field was absent or `null`; the seed treats both the same way. Text
/// fields keep exactly what the file said (an unknown `clip_reason` is kept verbatim so the
/// report can name it).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SpanRecord {
    pub span_id: Option<String>,
    pub parent_id: Option<String>,
    pub name: Option<String>,
    pub status: Option<String>,
    pub observed_bytes: Option<u64>,
    pub injected_bytes: Option<u64>,
    pub injected_tokens: Option<u64>,
    pub clip_reason: Option<String>,
    pub sha256_observed: Option<String>,
    pub sha256_injected: Option<String>,
    pub injected_preview: Option<String>,
    pub prompt_builder_version: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model_context_limit_tokens: Option<u64>,
}

impl SpanRecord {
    /// The effective clip reason text: absent, null or empty means `none`, as in the seed.
    pub fn clip_reason_text(&self) -> &str {
        match self.clip_reason.as_deref() {
            None | Some("") => "none",
            Some(text) => text,
        }
    }
}

/// A span record borrowed from the line it was read from: the checker's hot path reads
/// millions of these and keeps only the few it reports, so strings are copied only when a
/// JSON escape forces it or when a row is kept.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SpanView<'a> {
    pub span_id: Option<Cow<'a, str>>,
    pub parent_id: Option<Cow<'a, str>>,
    pub name: Option<Cow<'a, str>>,
    pub status: Option<Cow<'a, str>>,
    pub observed_bytes: Option<u64>,
    pub injected_bytes: Option<u64>,
    pub injected_tokens: Option<u64>,
    pub clip_reason: Option<Cow<'a, str>>,
    pub sha256_observed: Option<Cow<'a, str>>,
    pub sha256_injected: Option<Cow<'a, str>>,
    pub injected_preview: Option<LazyText<'a>>,
    pub prompt_builder_version: Option<Cow<'a, str>>,
    pub model_context_limit_tokens: Option<u64>,
}

/// A string field decoded only when it is used. The preview is the longest field of a span
/// and is wanted only for the rows a report keeps, so the fast reader leaves it as the
/// escaped text it read; the rest of the checker never looks at it.
#[derive(Debug, Clone)]
pub enum LazyText<'a> {
    Text(Cow<'a, str>),
    /// The body of a JSON string between its quotes: escapes checked, not yet decoded.
    Escaped(&'a str),
}

impl<'a> LazyText<'a> {
    pub fn decode(&self) -> Cow<'_, str> {
        match self {
            LazyText::Text(text) => Cow::Borrowed(text),
            LazyText::Escaped(raw) => Cow::Owned(scan::unescape(raw)),
        }
    }

    pub fn into_owned(self) -> String {
        match self {
            LazyText::Text(text) => crate::bytes::own(text),
            LazyText::Escaped(raw) => scan::unescape(raw),
        }
    }
}

impl PartialEq for LazyText<'_> {
    fn eq(&self, other: &Self) -> bool {
        self.decode() == other.decode()
    }
}

impl Eq for LazyText<'_> {}

impl SpanView<'_> {
    /// The effective clip reason text: absent, null or empty means `none`, as in the seed.
    pub fn clip_reason_text(&self) -> &str {
        match self.clip_reason.as_deref() {
            None | Some("") => "none",
            Some(text) => text,
        }
    }

    pub fn into_owned(self) -> SpanRecord {
        let own = |v: Option<Cow<'_, str>>| v.map(crate::bytes::own);
        SpanRecord {
            span_id: own(self.span_id),
            parent_id: own(self.parent_id),
            name: own(self.name),
            status: own(self.status),
            observed_bytes: self.observed_bytes,
            injected_bytes: self.injected_bytes,
            injected_tokens: self.injected_tokens,
            clip_reason: own(self.clip_reason),
            sha256_observed: own(self.sha256_observed),
            sha256_injected: own(self.sha256_injected),
            injected_preview: self.injected_preview.map(LazyText::into_owned),
            prompt_builder_version: own(self.prompt_builder_version),
            model_context_limit_tokens: self.model_context_limit_tokens,
        }
    }
}

impl SpanRecord {
    /// A borrowed view of this record (no copies), for `check::classify` and the
    /// report builder.
    pub fn view(&self) -> SpanView<'_> {
        fn b(v: &Option<String>) -> Option<Cow<'_, str>> {
            v.as_deref().map(Cow::Borrowed)
        }
        SpanView {
            span_id: b(&self.span_id),
            parent_id: b(&self.parent_id),
            name: b(&self.name),
            status: b(&self.status),
            observed_bytes: self.observed_bytes,
            injected_bytes: self.injected_bytes,
            injected_tokens: self.injected_tokens,
            clip_reason: b(&self.clip_reason),
            sha256_observed: b(&self.sha256_observed),
            sha256_injected: b(&self.sha256_injected),
            injected_preview: b(&self.injected_preview).map(LazyText::Text),
            prompt_builder_version: b(&self.prompt_builder_version),
            model_context_limit_tokens: self.model_context_limit_tokens,
        }
    }
}

/// Why one line could not be read as a span record. The message names the field or the
/// problem; the line number is added by the caller, which knows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LineError {
    pub kind: InvalidKind,
    pub message: String,
}

impl LineError {
    fn new(kind: InvalidKind, message: String) -> Self {
        LineError { kind, message }
    }
}

impl fmt::Display for LineError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

/// What kind of problem made a line invalid: a stable code for programs (the page shows
/// "binary file" differently from "a field has the wrong type").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum InvalidKind {
    /// The bytes are not UTF-8 text.
    NotUtf8,
    /// The line holds a NUL byte: binary data, not a trace.
    Binary,
    /// The line is not JSON at all (or is cut short).
    NotJson,
    /// Valid JSON, but not an object.
    NotAnObject,
    /// A known field has the wrong type, or appears twice.
    BadField,
    /// A whole input is in no supported format.
    UnknownFormat,
    /// A line (or a single JSON document) is longer than a reader holds: it was measured
    /// and skipped, never buffered.
    TooLarge,
}

impl InvalidKind {
    pub fn as_str(self) -> &'static str {
        match self {
            InvalidKind::NotUtf8 => "not_utf8",
            InvalidKind::Binary => "binary",
            InvalidKind::NotJson => "not_json",
            InvalidKind::NotAnObject => "not_an_object",
            InvalidKind::BadField => "bad_field",
            InvalidKind::UnknownFormat => "unknown_format",
            InvalidKind::TooLarge => "too_large",
        }
    }
}

/// Reads one line (without its newline) as a span record.
pub fn parse_line(line: &[u8]) -> Result<SpanRecord, LineError> {
    parse_view(line).map(SpanView::into_owned)
}

/// Reads one line of text as a span record.
pub fn parse_str(text: &str) -> Result<SpanRecord, LineError> {
    parse_view_str(text).map(SpanView::into_owned)
}

/// Reads one line as a record that borrows from it (the checker's hot path): the fast
/// scanner reads ordinary records, and anything it declines goes to the strict reader, which
/// gives the same record or the error that names the field.
pub fn parse_view(line: &[u8]) -> Result<SpanView<'_>, LineError> {
    match scan::scan(line) {
        Some(view) => Ok(view),
        None => parse_view_strict(line),
    }
}

/// The strict reader alone (serde_json with a visitor that names every bad field).
pub(crate) fn parse_view_strict(line: &[u8]) -> Result<SpanView<'_>, LineError> {
    let text = std::str::from_utf8(line).map_err(|e| {
        if let Some(at) = line.iter().position(|&b| b == 0) {
            return binary(at);
        }
        LineError::new(
            InvalidKind::NotUtf8,
            format!("not valid UTF-8 (bad byte at offset {})", e.valid_up_to()),
        )
    })?;
    parse_view_str(text)
}

fn parse_view_str(text: &str) -> Result<SpanView<'_>, LineError> {
    let first = text
        .trim_start_matches([' ', '\t', '\r', '\n'])
        .bytes()
        .next();
    if first != Some(b'{') {
        return Err(not_an_object(text));
    }
    let mut de = serde_json::Deserializer::from_str(text);
    Wire::deserialize(&mut de)
        .and_then(|w| de.end().map(|()| w.0))
        .map_err(|e| {
            let kind = match e.classify() {
                serde_json::error::Category::Data => InvalidKind::BadField,
                _ => InvalidKind::NotJson,
            };
            match text.bytes().position(|b| b == 0) {
                Some(at) if kind == InvalidKind::NotJson => binary(at),
                _ => LineError::new(kind, without_position(&e)),
            }
        })
}

fn binary(at: usize) -> LineError {
    LineError::new(
        InvalidKind::Binary,
        format!("binary data (a NUL byte at offset {at}), not a span record"),
    )
}

fn not_an_object(text: &str) -> LineError {
    match serde_json::from_str::<serde_json::Value>(text) {
        Ok(value) => LineError::new(
            InvalidKind::NotAnObject,
            format!("expected a JSON object, found {}", kind_of(&value)),
        ),
        Err(_) if text.contains('\0') => binary(text.find('\0').unwrap_or(0)),
        Err(e) => LineError::new(
            InvalidKind::NotJson,
            format!("not valid JSON: {}", without_position(&e)),
        ),
    }
}

fn kind_of(value: &serde_json::Value) -> &'static str {
    match value {
        serde_json::Value::Null => "null",
        serde_json::Value::Bool(_) => "a boolean",
        serde_json::Value::Number(_) => "a number",
        serde_json::Value::String(_) => "a string",
        serde_json::Value::Array(_) => "an array",
        serde_json::Value::Object(_) => "an object",
    }
}

/// serde_json appends " at line L column C"; a span line is a single line, so keep only the
/// column, which is what a user needs to find the spot.
fn without_position(err: &serde_json::Error) -> String {
    let full = err.to_string();
    let suffix = format!(" at line {} column {}", err.line(), err.column());
    match full.strip_suffix(&suffix) {
        Some(message) if err.column() > 0 => format!("{message} (column {})", err.column()),
        Some(message) => message.to_string(),
        None => full,
    }
}

/// The record as it appears on the wire; a hand-written visitor so that every error names
/// its field and strings are borrowed from the line where possible.
struct Wire<'de>(SpanView<'de>);

impl<'de> Deserialize<'de> for Wire<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_map(WireVisitor)
    }
}

struct WireVisitor;

macro_rules! set_once {
    ($map:ident, $slot:expr, $key:literal, $ty:ty) => {{
        if $slot.is_some() {
            return Err(de::Error::custom(concat!("duplicate field ", $key)));
        }
        $slot = Some($map.next_value_seed(Field::<$ty>::new($key))?);
    }};
}

impl<'de> Visitor<'de> for WireVisitor {
    type Value = Wire<'de>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a span record object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Wire<'de>, A::Error> {
        // Option<Option<_>>: outer = seen, inner = the value (null allowed).
        let mut span_id = None;
        let mut parent_id = None;
        let mut name = None;
        let mut status = None;
        let mut observed_bytes = None;
        let mut injected_bytes = None;
        let mut injected_tokens = None;
        let mut clip_reason = None;
        let mut sha256_observed = None;
        let mut sha256_injected = None;
        let mut injected_preview = None;
        let mut prompt_builder_version = None;
        let mut model_context_limit_tokens = None;
        while let Some(key) = map.next_key::<Cow<'de, str>>()? {
            match key.as_ref() {
                "span_id" => set_once!(map, span_id, "span_id", IdKind),
                "parent_id" => set_once!(map, parent_id, "parent_id", IdKind),
                "name" => set_once!(map, name, "name", TextKind),
                "status" => set_once!(map, status, "status", TextKind),
                "observed_bytes" => set_once!(map, observed_bytes, "observed_bytes", LenKind),
                "injected_bytes" => set_once!(map, injected_bytes, "injected_bytes", LenKind),
                "injected_tokens" => set_once!(map, injected_tokens, "injected_tokens", LenKind),
                "clip_reason" => set_once!(map, clip_reason, "clip_reason", TextKind),
                "sha256_observed" => set_once!(map, sha256_observed, "sha256_observed", TextKind),
                "sha256_injected" => set_once!(map, sha256_injected, "sha256_injected", TextKind),
                "injected_preview" => {
                    set_once!(map, injected_preview, "injected_preview", TextKind)
                }
                "prompt_builder_version" => {
                    set_once!(
                        map,
                        prompt_builder_version,
                        "prompt_builder_version",
                        TextKind
                    )
                }
                "model_context_limit_tokens" => set_once!(
                    map,
                    model_context_limit_tokens,
                    "model_context_limit_tokens",
                    LenKind
                ),
                _ => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(Wire(SpanView {
            span_id: span_id.flatten(),
            parent_id: parent_id.flatten(),
            name: name.flatten(),
            status: status.flatten(),
            observed_bytes: observed_bytes.flatten(),
            injected_bytes: injected_bytes.flatten(),
            injected_tokens: injected_tokens.flatten(),
            clip_reason: clip_reason.flatten(),
            sha256_observed: sha256_observed.flatten(),
            sha256_injected: sha256_injected.flatten(),
            injected_preview: injected_preview.flatten().map(LazyText::Text),
            prompt_builder_version: prompt_builder_version.flatten(),
            model_context_limit_tokens: model_context_limit_tokens.flatten(),
        }))
    }
}

/// What a known field may hold; each kind has its own visitor and error wording.
trait FieldKind {
    const EXPECTED: &'static str;
}
struct TextKind;
struct IdKind;
struct LenKind;
impl FieldKind for TextKind {
    const EXPECTED: &'static str = "a string or null";
}
impl FieldKind for IdKind {
    const EXPECTED: &'static str = "a string, an integer or null";
}
impl FieldKind for LenKind {
    const EXPECTED: &'static str = "a non-negative integer or null";
}

/// A seed that deserializes one field's value and, on a type error, says which field.
struct Field<K> {
    key: &'static str,
    kind: std::marker::PhantomData<K>,
}

impl<K> Field<K> {
    fn new(key: &'static str) -> Self {
        Field {
            key,
            kind: std::marker::PhantomData,
        }
    }
    fn wrong<E: de::Error>(&self, found: fmt::Arguments<'_>) -> E
    where
        K: FieldKind,
    {
        E::custom(format_args!(
            "{} must be {}, got {}",
            self.key,
            K::EXPECTED,
            found
        ))
    }
}

macro_rules! field_seed {
    ($kind:ty, $out:ty) => {
        impl<'de> de::DeserializeSeed<'de> for Field<$kind> {
            type Value = Option<$out>;
            fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
                d.deserialize_any(self)
            }
        }
    };
}
field_seed!(TextKind, Cow<'de, str>);
field_seed!(IdKind, Cow<'de, str>);
field_seed!(LenKind, u64);

/// Rejections common to every kind: containers, booleans and the like, named by value.
macro_rules! reject_common {
    () => {
        fn visit_bool<E: de::Error>(self, v: bool) -> Result<Self::Value, E> {
            Err(self.wrong(format_args!("{v}")))
        }
        fn visit_seq<A: de::SeqAccess<'de>>(self, _: A) -> Result<Self::Value, A::Error> {
            Err(self.wrong(format_args!("an array")))
        }
        fn visit_map<A: MapAccess<'de>>(self, _: A) -> Result<Self::Value, A::Error> {
            Err(self.wrong(format_args!("an object")))
        }
        fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
            Ok(None)
        }
        fn visit_none<E: de::Error>(self) -> Result<Self::Value, E> {
            Ok(None)
        }
    };
}

impl<'de> Visitor<'de> for Field<TextKind> {
    type Value = Option<Cow<'de, str>>;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} as {}", self.key, TextKind::EXPECTED)
    }
    fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Self::Value, E> {
        Ok(Some(Cow::Borrowed(v)))
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
        Ok(Some(Cow::Owned(v.to_owned())))
    }
    fn visit_string<E: de::Error>(self, v: String) -> Result<Self::Value, E> {
        Ok(Some(Cow::Owned(v)))
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Self::Value, E> {
        Err(self.wrong(format_args!("the number {v}")))
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Self::Value, E> {
        Err(self.wrong(format_args!("the number {v}")))
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Self::Value, E> {
        Err(self.wrong(format_args!("the number {v}")))
    }
    reject_common!();
}

impl<'de> Visitor<'de> for Field<IdKind> {
    type Value = Option<Cow<'de, str>>;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} as {}", self.key, IdKind::EXPECTED)
    }
    fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Self::Value, E> {
        Ok(Some(Cow::Borrowed(v)))
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
        Ok(Some(Cow::Owned(v.to_owned())))
    }
    fn visit_string<E: de::Error>(self, v: String) -> Result<Self::Value, E> {
        Ok(Some(Cow::Owned(v)))
    }
    // Some exporters write numeric ids; they name a span just as well as a string does.
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Self::Value, E> {
        Ok(Some(Cow::Owned(v.to_string())))
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Self::Value, E> {
        Ok(Some(Cow::Owned(v.to_string())))
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Self::Value, E> {
        Err(self.wrong(format_args!("the number {v}")))
    }
    reject_common!();
}

impl<'de> Visitor<'de> for Field<LenKind> {
    type Value = Option<u64>;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} as {}", self.key, LenKind::EXPECTED)
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Self::Value, E> {
        Ok(Some(v))
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Self::Value, E> {
        Err(self.wrong(format_args!("{v}")))
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Self::Value, E> {
        Err(self.wrong(format_args!("{v:?}")))
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
        Err(self.wrong(format_args!("the string {:?}", short(v))))
    }
    reject_common!();
}

/// At most 40 characters of a bad value, so one huge string does not flood the report.
fn short(v: &str) -> Cow<'_, str> {
    match v.char_indices().nth(40) {
        Some((cut, _)) => Cow::Owned(format!("{}...", &v[..cut])),
        None => Cow::Borrowed(v),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clip_reasons_parse_exactly_as_spelled() {
        for reason in ClipReason::ALL {
            assert_eq!(ClipReason::parse(reason.as_str()), Some(reason));
            let name = reason.as_str();
            for wrong in [
                name.to_uppercase(),
                format!("{name} "),
                name[1..].to_string(),
                format!("{}x", &name[..name.len() - 1]),
            ] {
                assert_eq!(ClipReason::parse(&wrong), None, "{wrong:?}");
            }
        }
        assert_eq!(ClipReason::parse(""), None);
    }

    #[test]
    fn reads_the_seed_example() {
        let line = r#"{"span_id":"tool-14","parent_id":"turn-3","name":"read_file","status":"ok","observed_bytes":96412,"injected_bytes":12040,"injected_tokens":8192,"clip_reason":"prompt_token_cap","sha256_observed":"ab12","sha256_injected":"cd34","injected_preview":"app:\\n  name: billing\\n","prompt_builder_version":"cap-v3"}"#;
        let rec = parse_str(line).unwrap();
        assert_eq!(rec.span_id.as_deref(), Some("tool-14"));
        assert_eq!(rec.observed_bytes, Some(96412));
        assert_eq!(rec.injected_tokens, Some(8192));
        assert_eq!(
            rec.injected_preview.as_deref(),
            Some("app:\\n  name: billing\\n")
        );
        assert_eq!(rec.clip_reason_text(), "prompt_token_cap");
    }

    #[test]
    fn null_and_absent_are_the_same() {
        let a = parse_str(r#"{"name":"x","observed_bytes":null,"clip_reason":null}"#).unwrap();
        let b = parse_str(r#"{"name":"x"}"#).unwrap();
        assert_eq!(a, b);
        assert_eq!(a.clip_reason_text(), "none");
        let c = parse_str(r#"{"name":"x","clip_reason":""}"#).unwrap();
        assert_eq!(c.clip_reason_text(), "none");
    }

    #[test]
    fn unknown_fields_are_ignored() {
        let rec = parse_str(r#"{"name":"x","extra":{"deep":[1,2,{"a":null}]},"n":1.5}"#).unwrap();
        assert_eq!(rec.name.as_deref(), Some("x"));
    }

    #[test]
    fn numeric_ids_are_read_as_text() {
        let rec = parse_str(r#"{"name":"x","span_id":14,"parent_id":3}"#).unwrap();
        assert_eq!(rec.span_id.as_deref(), Some("14"));
        assert_eq!(rec.parent_id.as_deref(), Some("3"));
    }

    #[test]
    fn bad_lengths_name_the_field() {
        for (line, want) in [
            (
                r#"{"name":"x","observed_bytes":-3}"#,
                "observed_bytes must be a non-negative integer or null, got -3",
            ),
            (
                r#"{"name":"x","injected_bytes":12.5}"#,
                "injected_bytes must be a non-negative integer or null, got 12.5",
            ),
            (
                r#"{"name":"x","injected_tokens":"80"}"#,
                "injected_tokens must be a non-negative integer or null, got the string \"80\"",
            ),
            (
                r#"{"name":"x","observed_bytes":true}"#,
                "observed_bytes must be a non-negative integer or null, got true",
            ),
            (
                r#"{"name":"x","observed_bytes":[1]}"#,
                "observed_bytes must be a non-negative integer or null, got an array",
            ),
            (
                r#"{"name":"x","observed_bytes":1e400}"#,
                "number out of range",
            ),
            (
                r#"{"name":5}"#,
                "name must be a string or null, got the number 5",
            ),
            (r#"{"name":"x","name":"y"}"#, "duplicate field name"),
        ] {
            let err = parse_str(line).unwrap_err().message;
            assert!(err.contains(want), "{line}: got {err:?}, want {want:?}");
        }
    }

    #[test]
    fn invalid_lines_carry_a_kind() {
        let kind = |line: &[u8]| parse_line(line).unwrap_err().kind;
        assert_eq!(kind(b"{\"name\":\"\xff\"}"), InvalidKind::NotUtf8);
        assert_eq!(kind(b"\x00\x01\x02 PNG"), InvalidKind::Binary);
        assert_eq!(kind(b"{\"a\":\x00}"), InvalidKind::Binary);
        assert_eq!(kind(b"{\"name\":"), InvalidKind::NotJson);
        assert_eq!(kind(b"[1]"), InvalidKind::NotAnObject);
        assert_eq!(kind(b"{\"name\":1}"), InvalidKind::BadField);
        assert_eq!(
            kind(b"{\"name\":\"a\",\"name\":\"b\"}"),
            InvalidKind::BadField
        );
    }

    #[test]
    fn non_objects_say_what_they_are() {
        assert_eq!(
            parse_str("[1,2]").unwrap_err().message,
            "expected a JSON object, found an array"
        );
        assert_eq!(
            parse_str("\"x\"").unwrap_err().message,
            "expected a JSON object, found a string"
        );
        assert!(parse_str("hello")
            .unwrap_err()
            .message
            .starts_with("not valid JSON: "));
        assert!(parse_str(r#"{"name":"x""#)
            .unwrap_err()
            .message
            .contains("EOF"));
        assert!(parse_str(r#"{"name":"x"} {}"#)
            .unwrap_err()
            .message
            .contains("trailing characters"));
        assert!(parse_line(b"{\"name\":\"\xff\"}")
            .unwrap_err()
            .message
            .starts_with("not valid UTF-8"));
    }
}
