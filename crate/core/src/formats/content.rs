//! Measuring a captured string: its UTF-8 length, SHA-256, a preview, and the signatures of
//! cuts and redactions written into it.
//!
//! A trace records strings (a tool result, a tool message the model received); the checker
//! needs only their measures. Each string is measured once, when it is read, into a
//! [`Content`], and then dropped: the join and the report never hold the text itself, so
//! memory stays bounded by the number of spans, not by the size of what the tools returned.

use std::borrow::Cow;
use std::sync::Arc;

use serde_json::Value;

use crate::canonical::{CanonicalError, Form, Tree};
use crate::hash::{sha256, Digest};

/// The measures of one captured string, shared: a text is measured once and its measures
/// handed to every holder of it (the tool call's result, each model input re-listing it;
/// [`super::memo`], [`super::relist`]) as one more count, not a copy. A model call keeps its
/// input's tool messages until the check ends, and the measures were 128 of a message's 160
/// bytes in wasm: an Agents SDK export's re-listed messages and the results they repeat held
/// 86,000 copies of some 30,000 texts' measures on 50 MB. Read through `Deref`; written and read
/// as the [`Measures`] (the OTLP endpoint's stored state keeps its form).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Content(Arc<Measures>);

impl Content {
    pub fn new(measures: Measures) -> Content {
        Content(Arc::new(measures))
    }
}

impl std::ops::Deref for Content {
    type Target = Measures;
    fn deref(&self) -> &Measures {
        &self.0
    }
}

impl serde::Serialize for Content {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.0.serialize(s)
    }
}

impl<'de> serde::Deserialize<'de> for Content {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Content, D::Error> {
        Measures::deserialize(d).map(Content::new)
    }
}

/// What [`Content`] shares.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub(crate) struct Measures {
    /// UTF-8 bytes.
    pub bytes: u64,
    /// Unicode scalar values (SDK attribute limits count characters, not bytes).
    pub chars: u64,
    /// SHA-256 of the UTF-8 bytes. Kept as bytes: its hex is written only for the rows
    /// that show it (a model input re-lists every earlier tool result, and each is measured,
    /// but only the one joined is shown).
    pub sha256: Digest,
    /// SHA-256 of the canonical form (sorted keys, compact) of the data the text holds, when
    /// it is a JSON object or array, a Python repr of a dict or list, or was a structured
    /// value in the trace: two serialisations of the same data compare equal.
    pub value_sha256: Option<Digest>,
    /// Which serialisation the text is, when it holds data (for the explanation).
    pub syntax: Option<Syntax>,
    /// The first 128 characters (shared with the rest of the measures).
    pub preview: Box<str>,
    /// Cut markers (`...[truncated 120 chars]`, `[... 4000 bytes omitted ...]` ...): how many,
    /// and the first one.
    pub cut_markers: u32,
    pub first_cut_marker: Option<String>,
    /// Redaction markers (`__REDACTED__`, `[REDACTED]` ...): how many, and the first one.
    pub redactions: u32,
    pub first_redaction: Option<String>,
}

/// The serialisation of a text that holds a dict or list. Serialised with the measures
/// (the OTLP endpoint keeps a tool span's measures between export requests).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Syntax {
    Json,
    /// Python's `repr` / `str` of a dict or list (single quotes, `True`, `None`).
    PythonRepr,
}

impl Syntax {
    pub fn as_str(self) -> &'static str {
        match self {
            Syntax::Json => "JSON",
            Syntax::PythonRepr => "Python repr",
        }
    }
}

/// OpenInference's placeholder for a value its tracer hid (`OPENINFERENCE_HIDE_*`).
pub(crate) const OPENINFERENCE_REDACTED: &str = "__REDACTED__";

/// Attribute value length limits that SDKs and exporters commonly apply. A value whose length
/// is exactly one of these was probably cut by the exporter, without saying so.
pub(crate) const ATTRIBUTE_LIMITS: [u64; 3] = [4096, 12000, 32000];

const PREVIEW_CHARS: usize = 128;

impl Content {
    /// Measures a string (or answers with the measures of the same text measured since the
    /// previous model input began: [`super::memo`]).
    pub fn of_text(text: &str) -> Content {
        super::memo::measured(text, Content::of_text_unkept)
    }

    /// Measures a string, whether measured before or not.
    ///
    /// Text that is JSON (or a Python repr) is read into a [`Tree`], not a `Value`: a tool's
    /// result is whatever the tool fetched, and a `Value`'s object hashes its keys with a
    /// SipHash whose keys are fixed in wasm (see [`Tree`]), so a result of keys searched out
    /// to collide would cost time growing with the square of its size.
    pub(super) fn of_text_unkept(text: &str) -> Content {
        let data = match text.trim_start().as_bytes().first() {
            Some(b'{' | b'[') => match serde_json::from_str::<Tree>(text) {
                Ok(v) => Some((v, Syntax::Json)),
                Err(_) => super::pyrepr::parse(text).map(|v| (v, Syntax::PythonRepr)),
            },
            _ => None,
        };
        match data {
            Some((v, syntax)) => Content::measure(text, tree_digest(&v), Some(syntax)),
            None => Content::measure(text, None, None),
        }
    }

    /// Measures a JSON value from a trace: a string is itself; anything else is measured as
    /// its compact JSON text, which is what a client sends when it serializes the value.
    pub fn of_value(value: &Value) -> Content {
        match value {
            Value::String(s) => Content::of_text(s),
            other => {
                let text = compact(other);
                let structured = matches!(other, Value::Object(_) | Value::Array(_));
                let digest = structured.then(|| value_digest(other)).flatten();
                Content::measure(&text, digest, structured.then_some(Syntax::Json))
            }
        }
    }

    fn measure(text: &str, value_sha256: Option<Digest>, syntax: Option<Syntax>) -> Content {
        let preview = Box::from(match preview_end(text) {
            Some(cut) => &text[..cut],
            None => text,
        });
        let ((cut_markers, first_cut_marker), (mut redactions, mut first_redaction)) =
            markers(text);
        let bare = redacted_finder().find_iter(text.as_bytes()).count() as u32;
        if bare > 0 {
            redactions += bare;
            first_redaction.get_or_insert_with(|| OPENINFERENCE_REDACTED.to_string());
        }
        Content::new(Measures {
            bytes: text.len() as u64,
            chars: crate::bytes::char_count(text) as u64,
            sha256: sha256(text.as_bytes()),
            value_sha256,
            syntax,
            preview,
            cut_markers,
            first_cut_marker,
            redactions,
            first_redaction,
        })
    }

    /// A warning when the length equals a common SDK attribute limit.
    pub fn limit_warning(&self, what: &str) -> Option<String> {
        let (n, unit) = if ATTRIBUTE_LIMITS.contains(&self.chars) {
            (self.chars, "characters")
        } else if ATTRIBUTE_LIMITS.contains(&self.bytes) {
            (self.bytes, "bytes")
        } else {
            return None;
        };
        Some(format!(
            "likely silent clip: the {what} is exactly {n} {unit}, a common SDK attribute \
             length limit; the exporter may have cut it without saying so"
        ))
    }
}

/// The searcher for OpenInference's bare [`OPENINFERENCE_REDACTED`], built once: built per
/// text (`memmem::find_iter`), its set-up cost about as much as the search of a short result.
fn redacted_finder() -> &'static memchr::memmem::Finder<'static> {
    static FINDER: std::sync::OnceLock<memchr::memmem::Finder<'static>> =
        std::sync::OnceLock::new();
    FINDER.get_or_init(|| memchr::memmem::Finder::new(OPENINFERENCE_REDACTED))
}

/// Where the text's first [`PREVIEW_CHARS`] characters end, when it has more. An ASCII start
/// is answered without walking it character by character (a walk per tool result and per
/// tool message).
fn preview_end(text: &str) -> Option<usize> {
    if text.len() <= PREVIEW_CHARS {
        return None;
    }
    if text.as_bytes()[..PREVIEW_CHARS].is_ascii() {
        return Some(PREVIEW_CHARS);
    }
    text.char_indices().nth(PREVIEW_CHARS).map(|(cut, _)| cut)
}

/// The text of a JSON value as a client would send it: strings as they are, everything else
/// as compact JSON.
pub(crate) fn text_of(value: &Value) -> Cow<'_, str> {
    match value {
        Value::String(s) => Cow::Borrowed(s),
        other => Cow::Owned(compact(other)),
    }
}

/// SHA-256 of a value's canonical text (keys sorted, compact, Python's number forms): equal
/// data, whatever its key order, spacing or syntax, gives one digest.
fn value_digest(value: &Value) -> Option<Digest> {
    canonical_digest(crate::canonical::canonicalize_value(value, Form::Python))
}

/// [`value_digest`] of text read into a [`Tree`]: the same canonical text, the same digest.
fn tree_digest(tree: &Tree) -> Option<Digest> {
    canonical_digest(tree.canonical(Form::Python))
}

fn canonical_digest(text: Result<String, CanonicalError>) -> Option<Digest> {
    text.ok().map(|t| sha256(t.as_bytes()))
}

fn compact(value: &Value) -> String {
    // Serializing a Value cannot fail: its keys are strings.
    serde_json::to_string(value).unwrap_or_default()
}

/// Words that, inside brackets, mark a cut: `[truncated]`, `(output truncated)`,
/// `<... 4000 bytes omitted ...>`, `[... 12 lines elided ...]`.
const CUT_WORDS: [&str; 3] = ["truncat", "omitted", "elided"];
/// Words that, inside brackets, mark a redaction: `[REDACTED]`, `<redacted:email>`.
const REDACT_WORDS: [&str; 1] = ["redact"];

/// Longest marker we accept, in bytes, on either side of its keyword.
const MARKER_REACH: usize = 120;

/// The cut markers and the redaction markers of `text` ([`find_markers_from`] with
/// [`CUT_WORDS`] and [`REDACT_WORDS`]). Both scans start at the first opening bracket, which a
/// scan from the start jumps to first (nothing before it is framed by a bracket): one search
/// for it rather than one per scan, and for the many texts with none, no scan at all.
fn markers(text: &str) -> ((u32, Option<String>), (u32, Option<String>)) {
    match memchr::memchr3(b'[', b'(', b'<', text.as_bytes()) {
        None => ((0, None), (0, None)),
        Some(at) => (
            find_markers_from(text, &CUT_WORDS, at),
            find_markers_from(text, &REDACT_WORDS, at),
        ),
    }
}

/// Finds bracketed markers containing one of `words` (ASCII case-insensitive): `[`, `(` or
/// `<` before the word with no closing bracket in between, and the matching closing bracket
/// after it, each within [`MARKER_REACH`] bytes. Returns the count and the first marker.
///
/// Most texts hold no marker, and this runs on both sides of every tool call (and on every
/// tool message a model call's input re-lists): stretches where no opening bracket is in
/// reach are crossed with one vector search to the next opening bracket (a text with none
/// at all is answered by that search alone), and elsewhere a word is only compared where a
/// byte is one of the words' first letters.
///
/// The jumps find what a byte-by-byte scan finds: from a position where no bracket can frame
/// a keyword ([`no_open_bracket`]), no keyword before the next opening bracket is a marker,
/// and a keyword (letters only) never runs into that bracket, so the byte-by-byte scan, which
/// steps one byte or one keyword at a time there, arrives at that very bracket. The scan
/// starts at `from`: 0, or the first opening bracket, where the scan from 0 jumps first
/// (see [`markers`]).
fn find_markers_from(text: &str, words: &[&str], from: usize) -> (u32, Option<String>) {
    let bytes = text.as_bytes();
    let mut count = 0;
    let mut first = None;
    let mut i = from;
    // Where to ask next whether a jump is possible: asked at most once per 64 bytes while a
    // bracket is open, so the backward look never costs more than the scan it saves.
    let mut ask_at = from;
    while i < bytes.len() {
        if i >= ask_at {
            if no_open_bracket(bytes, i) {
                match memchr::memchr3(b'[', b'(', b'<', &bytes[i..]) {
                    Some(k) => i += k,
                    None => break,
                }
            }
            ask_at = i + 64;
        }
        // The words start with lowercase ASCII letters, and only that letter and its
        // uppercase form give it when 0x20 is set.
        let lower = bytes[i] | 0x20;
        let hit = words
            .iter()
            .filter(|w| w.as_bytes()[0] == lower)
            .find(|w| starts_with_ignore_case(&bytes[i..], w));
        let Some(word) = hit else {
            i += 1;
            continue;
        };
        match marker_around(bytes, i, word.len()) {
            Some((start, end)) => {
                count += 1;
                if first.is_none() {
                    // Both ends are ASCII brackets, so they are char boundaries.
                    first = Some(text[start..end].to_string());
                }
                i = end;
            }
            None => i += word.len(),
        }
    }
    (count, first)
}

/// Whether no opening bracket before `at` can frame a keyword at or after `at`, as
/// [`marker_around`] looks for one: none in the [`MARKER_REACH`] bytes before `at`, or a
/// closing bracket or line end after the last of them (which stops the backward look at
/// every later position too, before it reaches that bracket or any before it).
fn no_open_bracket(bytes: &[u8], at: usize) -> bool {
    let lo = at.saturating_sub(MARKER_REACH);
    match memchr::memrchr3(b'[', b'(', b'<', &bytes[lo..at]) {
        None => true,
        Some(j) => bytes[lo + j + 1..at]
            .iter()
            .any(|b| matches!(b, b']' | b')' | b'>' | b'\n')),
    }
}

fn starts_with_ignore_case(haystack: &[u8], word: &str) -> bool {
    haystack.len() >= word.len() && haystack[..word.len()].eq_ignore_ascii_case(word.as_bytes())
}

/// The byte range of the bracketed marker around the keyword at `at`, if any.
fn marker_around(bytes: &[u8], at: usize, len: usize) -> Option<(usize, usize)> {
    let lo = at.saturating_sub(MARKER_REACH);
    let mut start = None;
    for j in (lo..at).rev() {
        match bytes[j] {
            b'[' | b'(' | b'<' => {
                start = Some(j);
                break;
            }
            b']' | b')' | b'>' | b'\n' => return None,
            _ => {}
        }
    }
    let start = start?;
    let close = match bytes[start] {
        b'[' => b']',
        b'(' => b')',
        _ => b'>',
    };
    let hi = (at + len + MARKER_REACH).min(bytes.len());
    let end = (at + len..hi).find(|&j| bytes[j] == close || bytes[j] == b'\n')?;
    (bytes[end] == close).then_some((start, end + 1))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The scan from the start of the text.
    fn find_markers(text: &str, words: &[&str]) -> (u32, Option<String>) {
        find_markers_from(text, words, 0)
    }

    /// The byte-by-byte scan [`find_markers_from`] was before it jumped between brackets.
    fn find_markers_bytewise(text: &str, words: &[&str]) -> (u32, Option<String>) {
        let bytes = text.as_bytes();
        let (mut count, mut first, mut i) = (0, None, 0);
        while i < bytes.len() {
            let lower = bytes[i] | 0x20;
            let hit = words
                .iter()
                .filter(|w| w.as_bytes()[0] == lower)
                .find(|w| starts_with_ignore_case(&bytes[i..], w));
            let Some(word) = hit else {
                i += 1;
                continue;
            };
            match marker_around(bytes, i, word.len()) {
                Some((start, end)) => {
                    count += 1;
                    first.get_or_insert_with(|| text[start..end].to_string());
                    i = end;
                }
                None => i += word.len(),
            }
        }
        (count, first)
    }

    #[test]
    fn preview_ends_after_128_characters() {
        for text in [
            String::new(),
            "a".repeat(128),
            "a".repeat(129),
            "a".repeat(300),
            format!("{}\u{e9}", "a".repeat(127)),
            format!("{}\u{e9}", "a".repeat(128)),
            format!("{}\u{e9}x", "a".repeat(127)),
            "\u{e9}".repeat(200),
            format!("\u{2615}{}", "a".repeat(200)),
        ] {
            let walked = text.char_indices().nth(PREVIEW_CHARS).map(|(cut, _)| cut);
            assert_eq!(preview_end(&text), walked, "{text:?}");
        }
    }

    #[test]
    fn marker_jumps_find_what_the_bytewise_scan_finds() {
        let pieces = [
            "[", "(", "<", "]", ")", ">", "\n", "truncat", "TRUNCATED", "omitted", "elided",
            "redact", "Redacted", "t", "x", " ", "\u{e9}", "... 12 lines ", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
            "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb",
        ];
        let mut seed: u64 = 0x9e37_79b9_7f4a_7c15;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        for _ in 0..20_000 {
            let len = (next() % 40) as usize;
            let text: String = (0..len)
                .map(|_| pieces[(next() % pieces.len() as u64) as usize])
                .collect();
            for words in [&CUT_WORDS[..], &REDACT_WORDS[..]] {
                assert_eq!(
                    find_markers(&text, words),
                    find_markers_bytewise(&text, words),
                    "{text:?}"
                );
            }
            // Both scans as measuring makes them, from the first opening bracket.
            assert_eq!(
                markers(&text),
                (
                    find_markers_bytewise(&text, &CUT_WORDS),
                    find_markers_bytewise(&text, &REDACT_WORDS)
                ),
                "{text:?}"
            );
        }
    }

    #[test]
    fn measures_utf8_bytes_and_chars() {
        let c = Content::of_text("caf\u{e9} \u{2615}");
        assert_eq!((c.bytes, c.chars), (9, 6));
        assert_eq!(
            Content::of_text("").sha256.hex(),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
        );
        assert_eq!(
            Content::of_text("abc").sha256.hex(),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
        let long = "\u{e9}".repeat(200);
        assert_eq!(Content::of_text(&long).preview.chars().count(), 128);
    }

    #[test]
    fn recognises_cut_markers() {
        for text in [
            "abc...[truncated 1200 chars]",
            "head\n... [truncated, 40 lines omitted]",
            "a\n\n... [truncated: 300 chars omitted from the middle] ...\n\nz",
            "x\n[... 4000 bytes omitted ...]\n",
            "out (output truncated)",
            "<truncated 512 bytes>",
            "[... 12 lines elided ...]",
        ] {
            let c = Content::of_text(text);
            assert_eq!(c.cut_markers, 1, "{text}");
            assert!(c.first_cut_marker.is_some());
        }
        assert_eq!(
            Content::of_text("abc...[truncated 1200 chars]")
                .first_cut_marker
                .as_deref(),
            Some("[truncated 1200 chars]")
        );
        // The word alone, or a bracket that never closes, is not a marker.
        for text in [
            "the log was truncated yesterday",
            "[truncated",
            "(see below) truncated",
        ] {
            assert_eq!(Content::of_text(text).cut_markers, 0, "{text}");
        }
    }

    #[test]
    fn recognises_redactions() {
        let c = Content::of_text("key=__REDACTED__ user=[REDACTED] mail=<redacted:email>");
        assert_eq!(c.redactions, 3);
        assert_eq!(c.first_redaction.as_deref(), Some("[REDACTED]"));
        assert_eq!(Content::of_text("nothing here").redactions, 0);
    }

    #[test]
    fn structured_values_compare_by_data() {
        let pretty = Content::of_text("{\"a\": 1, \"b\": [1, 2]}");
        let value = Content::of_value(&serde_json::json!({"a": 1, "b": [1, 2]}));
        assert_ne!(pretty.sha256, value.sha256);
        assert_eq!(pretty.value_sha256, value.value_sha256);
        // Another key order, and Python's repr of the same dict.
        let reordered = Content::of_text("{\"b\":[1,2],\"a\":1}");
        let repr = Content::of_text("{'b': [1, 2], 'a': 1}");
        assert_eq!(reordered.value_sha256, value.value_sha256);
        assert_eq!(repr.value_sha256, value.value_sha256);
        assert_eq!(
            (pretty.syntax, repr.syntax),
            (Some(Syntax::Json), Some(Syntax::PythonRepr))
        );
        // Different data is different.
        assert_ne!(
            Content::of_text("{'a': 2, 'b': [1, 2]}").value_sha256,
            value.value_sha256
        );
        assert!(Content::of_text("plain").value_sha256.is_none());
        assert_eq!(Content::of_value(&serde_json::json!(42)).bytes, 2);
    }

    #[test]
    fn limit_lengths_warn() {
        assert!(Content::of_text(&"x".repeat(4096))
            .limit_warning("tool result")
            .unwrap()
            .contains("exactly 4096 characters"));
        assert!(Content::of_text(&"\u{e9}".repeat(6000))
            .limit_warning("x")
            .unwrap()
            .contains("12000 bytes"));
        assert!(Content::of_text(&"x".repeat(4095))
            .limit_warning("x")
            .is_none());
    }
}
