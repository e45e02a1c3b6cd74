//! Canonical JSON: one byte string per JSON value, so that a hash means "same value".
//!
//! JSON objects have no fixed key order and JSON numbers have many spellings (`1.0`, `1e0`,
//! `1.00`). A hash over the text a logger happened to print therefore flags false
//! regressions; a hash over a *canonical* text does not. Two canonical forms exist and they
//! are deliberately kept apart, because they disagree and both have users:
//!
//! - [`Form::Python`] (the default) is byte-identical to the seeds'
//!   `json.dumps(json.loads(text), sort_keys=True, separators=(",", ":"), ensure_ascii=False)`,
//!   so a digest computed here equals one computed by the seeds' scripts. Keys are sorted by
//!   code point, floats use Python's `repr` (`1.0`, `1e-07`, `1e+16`), integers of any size
//!   are kept exactly, and Python's extensions are mirrored: `NaN`, `Infinity` and
//!   `-Infinity` are accepted (and numbers that overflow a double print as `Infinity`), and a
//!   duplicate key keeps its last value. Collapsed duplicates are reported in [`Report`] so a
//!   caller can refuse them; nothing is dropped silently. (One difference by design: Python
//!   3.11+ refuses integers of more than 4,300 digits; here they are kept exactly.)
//! - [`Form::Jcs`] is RFC 8785 (the JSON Canonicalization Scheme): keys are sorted by UTF-16
//!   code units, numbers use the ECMAScript `Number.prototype.toString` form (`1`, `1e-7`,
//!   `1e+21`). Duplicate keys, `NaN`, `Infinity` and numbers that overflow a double are
//!   errors. So is an integer that a double cannot hold exactly (`9007199254740993`): JCS
//!   would round it, and two different ids would share one hash. (Beyond ±(2^53−1) an integer
//!   is accepted only when it already is the ECMAScript form of its double, like RFC 8785's
//!   own `295147905179352830000`, so canonical output always reads back as itself; the PyPI
//!   `rfc8785` package refuses all of them.)
//!
//! Both forms write strings the same way: only `"`, `\` and the C0 controls are escaped
//! (`\b \t \n \f \r`, others as lowercase `\u00xx`); everything else is raw UTF-8. Lone
//! surrogates (`"\ud800"`) have no UTF-8 encoding and are an error in both forms (the seed's
//! Python would fail at `.encode("utf-8")`).
//!
//! The parser keeps what a generic JSON library would lose: number lexemes (so big integers
//! stay exact and `-0` is told from `-0.0`), every duplicate key, and the byte offset, line,
//! column and JSON path of every error. It is iterative, so nesting depth is bounded by memory
//! only and no input can overflow the stack; it never panics on any input.
//!
//! [`canonicalize_value`] does the same over a [`serde_json::Value`] (for values that came from
//! JavaScript or from serde); there, numbers are whatever serde_json kept (`u64`, `i64`, `f64`).

mod number;
mod parse;
mod tree;
mod value;
mod write;

use std::fmt;
use std::str::FromStr;

use crate::error::Coded;

pub use number::{es_number, python_float_repr};
pub use tree::Tree;
pub use value::{canonicalize_value, MAX_VALUE_DEPTH};

/// Which canonical form to produce. See the module docs for the exact rules.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Form {
    /// `json.dumps(v, sort_keys=True, separators=(",", ":"), ensure_ascii=False)`.
    #[default]
    Python,
    /// RFC 8785, the JSON Canonicalization Scheme.
    Jcs,
}

impl Form {
    /// The name used on the command line and in the JS API.
    pub fn name(self) -> &'static str {
        match self {
            Form::Python => "python",
            Form::Jcs => "jcs",
        }
    }
}

impl fmt::Display for Form {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Form {
    type Err = UnknownForm;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "python" => Ok(Form::Python),
            "jcs" => Ok(Form::Jcs),
            other => Err(UnknownForm(other.to_string())),
        }
    }
}

/// A canonical form name that is neither `python` nor `jcs`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownForm(pub String);

impl fmt::Display for UnknownForm {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "unknown canonical form '{}' (expected 'python' or 'jcs')",
            self.0
        )
    }
}

impl std::error::Error for UnknownForm {}

impl Coded for UnknownForm {
    fn code(&self) -> &'static str {
        "unknown_form"
    }
}

/// Where an error was found: the JSON path of the value (`$`, `$.a[2]`) and, for text
/// input, the position in the text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Location {
    pub path: String,
    pub position: Option<Position>,
}

/// A position in a text: byte offset (0-based), line and column (1-based, column counted in
/// characters).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Position {
    pub offset: usize,
    pub line: usize,
    pub column: usize,
}

impl Location {
    pub(crate) fn at(input: &[u8], offset: usize, path: String) -> Location {
        let offset = offset.min(input.len());
        let before = &input[..offset];
        let line = 1 + before.iter().filter(|&&b| b == b'\n').count();
        let line_start = before
            .iter()
            .rposition(|&b| b == b'\n')
            .map_or(0, |i| i + 1);
        // Count characters, not bytes: continuation bytes do not start a character.
        let column = 1 + before[line_start..]
            .iter()
            .filter(|&&b| (b & 0xC0) != 0x80)
            .count();
        Location {
            path,
            position: Some(Position {
                offset,
                line,
                column,
            }),
        }
    }

    pub(crate) fn path(path: String) -> Location {
        Location {
            path,
            position: None,
        }
    }
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "at {}", self.path)?;
        if let Some(p) = self.position {
            write!(
                f,
                " (line {}, column {}, byte {})",
                p.line, p.column, p.offset
            )?;
        }
        Ok(())
    }
}

/// Why a document could not be canonicalised.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CanonicalError {
    /// The input is not UTF-8.
    InvalidUtf8 { offset: usize },
    /// The input is not JSON; `expected` says what the parser was looking for.
    Syntax {
        expected: &'static str,
        at: Location,
    },
    /// The same key twice in one object (JCS only; the Python form keeps the last value).
    DuplicateKey { key: String, at: Location },
    /// A `\uD800`-style escape without its partner: no UTF-8 encoding exists.
    LoneSurrogate { escape: String, at: Location },
    /// `NaN`, `Infinity` or a number too large for a double, in the JCS form.
    NonFinite { lexeme: String, at: Location },
    /// An integer a double cannot hold exactly, in the JCS form.
    UnsafeInteger { lexeme: String, at: Location },
    /// A [`serde_json::Value`] nested deeper than [`MAX_VALUE_DEPTH`] (text input has no limit).
    TooDeep { path: String },
}

impl fmt::Display for CanonicalError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CanonicalError::InvalidUtf8 { offset } => {
                write!(f, "input is not valid UTF-8 (first bad byte at offset {offset})")
            }
            CanonicalError::Syntax { expected, at } => {
                write!(f, "invalid JSON: expected {expected} {at}")
            }
            CanonicalError::DuplicateKey { key, at } => write!(
                f,
                "duplicate key {} {at}: RFC 8785 (jcs) rejects duplicate keys",
                quoted(key)
            ),
            CanonicalError::LoneSurrogate { escape, at } => write!(
                f,
                "lone surrogate {escape} {at}: a string with an unpaired surrogate has no UTF-8 form"
            ),
            CanonicalError::NonFinite { lexeme, at } => write!(
                f,
                "number {lexeme} {at} is not a finite IEEE 754 double; RFC 8785 (jcs) rejects NaN and Infinity"
            ),
            CanonicalError::UnsafeInteger { lexeme, at } => write!(
                f,
                "integer {lexeme} {at} cannot be held exactly by an IEEE 754 double, which is what RFC 8785 (jcs) numbers are; encode it as a string or use the python form"
            ),
            CanonicalError::TooDeep { path } => write!(
                f,
                "value nested too deeply at {path} (more than {} levels)",
                MAX_VALUE_DEPTH
            ),
        }
    }
}

impl std::error::Error for CanonicalError {}

impl Coded for CanonicalError {
    fn code(&self) -> &'static str {
        match self {
            CanonicalError::InvalidUtf8 { .. } => "invalid_utf8",
            CanonicalError::Syntax { .. } => "invalid_json",
            CanonicalError::DuplicateKey { .. } => "duplicate_key",
            CanonicalError::LoneSurrogate { .. } => "lone_surrogate",
            CanonicalError::NonFinite { .. } => "non_finite_number",
            CanonicalError::UnsafeInteger { .. } => "unsafe_integer",
            CanonicalError::TooDeep { .. } => "too_deep",
        }
    }
}

/// What canonicalisation did besides writing the text.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Report {
    /// Keys that appeared more than once in one object and were collapsed to their last value
    /// (Python form only; JCS rejects them). Each entry is the path of the surviving member.
    pub duplicate_keys: Vec<String>,
}

/// The canonical text of a JSON document (UTF-8 bytes, an optional UTF-8 BOM is skipped).
pub fn canonicalize(input: &[u8], form: Form) -> Result<String, CanonicalError> {
    let mut out = String::with_capacity(input.len());
    canonicalize_into(input, form, &mut out)?;
    Ok(out)
}

/// Appends the canonical text of `input` to `out` and reports collapsed duplicate keys.
/// On error, `out` may hold a partial text; the caller should discard it.
pub fn canonicalize_into(
    input: &[u8],
    form: Form,
    out: &mut String,
) -> Result<Report, CanonicalError> {
    let input = input.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(input);
    let text = std::str::from_utf8(input).map_err(|e| CanonicalError::InvalidUtf8 {
        offset: e.valid_up_to(),
    })?;
    let mut doc = parse::parse(text, form)?;
    let mut report = Report::default();
    write::write(&mut doc, form, out, &mut report)?;
    Ok(report)
}

/// Formats a path segment for an object key: `.name` for identifier-like keys, else
/// `["..."]` with JSON escaping.
pub(crate) fn push_key_segment(path: &mut String, key: &str) {
    let ident = !key.is_empty()
        && key
            .bytes()
            .enumerate()
            .all(|(i, b)| b == b'_' || b.is_ascii_alphabetic() || (i > 0 && b.is_ascii_digit()));
    if ident {
        path.push('.');
        path.push_str(key);
    } else {
        path.push('[');
        path.push_str(&quoted(key));
        path.push(']');
    }
}

/// A key or string as a JSON string literal (for messages and paths).
pub(crate) fn quoted(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    write::write_string(&mut out, s);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn py(s: &str) -> String {
        canonicalize(s.as_bytes(), Form::Python).unwrap()
    }
    fn jcs(s: &str) -> String {
        canonicalize(s.as_bytes(), Form::Jcs).unwrap()
    }
    fn err(s: &[u8], form: Form) -> CanonicalError {
        canonicalize(s, form).unwrap_err()
    }

    #[test]
    fn python_form_basics() {
        assert_eq!(
            py(r#" { "b" : 1, "a" : [ 1.0, 1e-7, -0, -0.0, 1E400, 12345678901234567890123 ] } "#),
            r#"{"a":[1.0,1e-07,0,-0.0,Infinity,12345678901234567890123],"b":1}"#
        );
        assert_eq!(
            py(r#"[NaN, Infinity, -Infinity]"#),
            "[NaN,Infinity,-Infinity]"
        );
        assert_eq!(
            py(r#""\u00e9\/\ud83d\ude00\u001f\u007f""#),
            "\"é/😀\\u001f\u{7f}\""
        );
        assert_eq!(py("\u{feff}[]"), "[]");
        assert_eq!(
            py(r#"{"a":{"z":1,"y":{}},"":[[]]}"#),
            r#"{"":[[]],"a":{"y":{},"z":1}}"#
        );
    }

    #[test]
    fn python_duplicates_keep_the_last_value_and_are_reported() {
        let mut out = String::new();
        let report = canonicalize_into(
            br#"{"a":1,"b":{"x":1,"x":2,"x":3},"a":2}"#,
            Form::Python,
            &mut out,
        )
        .unwrap();
        assert_eq!(out, r#"{"a":2,"b":{"x":3}}"#);
        assert_eq!(report.duplicate_keys, vec!["$.a", "$.b.x", "$.b.x"]);
        // Escaped and raw spellings of a key are the same key.
        assert_eq!(py(r#"{"a":1,"\u0061":2}"#), r#"{"a":2}"#);
    }

    #[test]
    fn key_order_differs_between_forms() {
        // U+FB33 (BMP, above the surrogates) against U+1F600 (a surrogate pair in UTF-16).
        let doc = r#"{"\ufb33":1,"\ud83d\ude00":2}"#;
        assert_eq!(py(doc), "{\"\u{fb33}\":1,\"😀\":2}");
        assert_eq!(jcs(doc), "{\"😀\":2,\"\u{fb33}\":1}");
    }

    #[test]
    fn jcs_rejections_name_the_place() {
        let e = err(b"{\n \"a\": [1, {\"k\": 1, \"k\": 2}]}", Form::Jcs);
        assert_eq!(e.code(), "duplicate_key");
        assert_eq!(e.to_string(), "duplicate key \"k\" at $.a[1].k (line 2, column 20, byte 21): RFC 8785 (jcs) rejects duplicate keys");
        assert_eq!(err(b"[1,NaN]", Form::Jcs).code(), "non_finite_number");
        assert_eq!(err(b"[-Infinity]", Form::Jcs).code(), "non_finite_number");
        let e = err(b"{\"x\":1e400}", Form::Jcs);
        assert_eq!(e.code(), "non_finite_number");
        assert!(e.to_string().contains("at $.x"), "{e}");
        assert_eq!(err(b"9007199254740993", Form::Jcs).code(), "unsafe_integer");
        assert_eq!(
            err(b"12345678901234567890", Form::Jcs).code(),
            "unsafe_integer"
        );
        assert_eq!(
            jcs("[9007199254740992,-295147905179352830000]"),
            "[9007199254740992,-295147905179352830000]"
        );
        assert_eq!(
            jcs("[9007199254740991,-9007199254740991,-0,1.0,1e21,1E-7]"),
            "[9007199254740991,-9007199254740991,0,1,1e+21,1e-7]"
        );
        let e = err(b"{\"s\":\"ab\\ud800x\"}", Form::Jcs);
        assert_eq!(e.code(), "lone_surrogate");
        assert_eq!(e.to_string(), "lone surrogate \\ud800 at $.s (line 1, column 9, byte 8): a string with an unpaired surrogate has no UTF-8 form");
        assert_eq!(
            err(b"\"\\udc00\\ud800\"", Form::Python).code(),
            "lone_surrogate"
        );
    }

    #[test]
    fn syntax_errors() {
        for (input, code) in [
            (&b""[..], "invalid_json"),
            (b"   ", "invalid_json"),
            (b"[1,]", "invalid_json"),
            (b"{\"a\":1,}", "invalid_json"),
            (b"{\"a\" 1}", "invalid_json"),
            (b"[01]", "invalid_json"),
            (b"1.", "invalid_json"),
            (b"1e", "invalid_json"),
            (b"-", "invalid_json"),
            (b"\"a\nb\"", "invalid_json"),
            (b"\"\\x\"", "invalid_json"),
            (b"\"\\u12g4\"", "invalid_json"),
            (b"[1] [2]", "invalid_json"),
            (b"{1:2}", "invalid_json"),
            (b"tru", "invalid_json"),
            (b"\"abc", "invalid_json"),
            (b"[\xff]", "invalid_utf8"),
        ] {
            for form in [Form::Python, Form::Jcs] {
                assert_eq!(
                    err(input, form).code(),
                    code,
                    "{:?}",
                    String::from_utf8_lossy(input)
                );
            }
        }
        assert_eq!(
            err(b"{\"a\": [1, 2,\n  ]}", Form::Python).to_string(),
            "invalid JSON: expected a JSON value at $.a[2] (line 2, column 3, byte 15)"
        );
    }

    #[test]
    fn deep_nesting_does_not_overflow() {
        let depth = 200_000;
        let doc = format!("{}{}", "[".repeat(depth), "]".repeat(depth));
        assert_eq!(canonicalize(doc.as_bytes(), Form::Jcs).unwrap(), doc);
        let doc = format!("{}1{}", "{\"a\":".repeat(depth), "}".repeat(depth));
        assert_eq!(canonicalize(doc.as_bytes(), Form::Python).unwrap(), doc);
    }

    #[test]
    fn value_form_matches_text_form() {
        let text = r#"{"b":[1,2.5,-3,1e-7,"x\n"],"a":{"\ufb33":null,"\ud83d\ude00":true}}"#;
        let value: serde_json::Value = serde_json::from_str(text).unwrap();
        for form in [Form::Python, Form::Jcs] {
            assert_eq!(
                canonicalize_value(&value, form).unwrap(),
                canonicalize(text.as_bytes(), form).unwrap()
            );
        }
        let big: serde_json::Value = serde_json::json!({"id": 9007199254740993u64});
        assert_eq!(
            canonicalize_value(&big, Form::Python).unwrap(),
            r#"{"id":9007199254740993}"#
        );
        assert_eq!(
            canonicalize_value(&big, Form::Jcs).unwrap_err().code(),
            "unsafe_integer"
        );
    }

    #[test]
    fn form_names() {
        assert_eq!("jcs".parse::<Form>(), Ok(Form::Jcs));
        assert_eq!("python".parse::<Form>(), Ok(Form::Python));
        assert_eq!("raw".parse::<Form>().unwrap_err().code(), "unknown_form");
        assert_eq!(Form::default(), Form::Python);
    }
}
