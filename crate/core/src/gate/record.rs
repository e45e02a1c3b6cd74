//! The gate's order at the tool boundary (seed 002): **redact, canonicalise, hash, store**.
//!
//! "Redaction sits before hashing, not after ... the local store would still hold the secret
//! if you write the raw value." A [`Gate`] takes a call's arguments and result as JSON,
//! replaces every secret with a typed placeholder (the same rules as `pack`, one receipt per
//! replacement, never a character of the secret), strips volatile values (timestamps,
//! request ids, temp paths: [`super::volatile`]), and only then canonicalises and hashes.
//! The receipts and the stripped values ride in the span record; the bodies that reach the
//! store are the redacted canonical forms. Both steps are on by default; turning them off is
//! an explicit [`GatePolicy`] choice ([`GatePolicy::raw`] is the seed's bare hashing).
//!
//! Numbers are never rounded on the way: the document is parsed losslessly first, and every
//! number a double might not carry exactly (big integers, long or exponent floats, Python's
//! `NaN`/`Infinity`) is held aside while secrets and volatile values are handled, then
//! written back as its original canonical lexeme.

use std::fmt;

use serde_json::Value;

use crate::canonical::{canonicalize, canonicalize_value, CanonicalError, Form};
use crate::error::Coded;
use crate::redact::{Policy, Receipt, RedactError, Redactor};

use super::span::{tool_span, Body, ToolSpan};
use super::store::{write_bodies, BodyStore, StoreError};
use super::volatile::{PathError, Stripped, Volatile, VolatilePolicy};

/// What the gate does to a payload before hashing it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GatePolicy {
    pub form: Form,
    /// Redaction rules; `None` turns redaction off (the secret is then hashed and stored).
    pub redact: Option<Policy>,
    /// Volatile fields; `None` hashes them with the rest.
    pub volatile: Option<VolatilePolicy>,
}

impl Default for GatePolicy {
    fn default() -> Self {
        GatePolicy {
            form: Form::Python,
            redact: Some(Policy::default()),
            volatile: Some(VolatilePolicy::default()),
        }
    }
}

impl GatePolicy {
    /// No redaction, no volatile fields: the seed's `payload_hash` exactly.
    pub fn raw(form: Form) -> GatePolicy {
        GatePolicy {
            form,
            redact: None,
            volatile: None,
        }
    }
}

/// Why a payload could not pass the gate.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GateError {
    /// The payload is not JSON the canonical form accepts.
    Canonical {
        body: &'static str,
        error: CanonicalError,
    },
    Redact(RedactError),
    Volatile(PathError),
    /// A string holds the control sequence the gate uses to hold numbers aside.
    Marker {
        body: &'static str,
    },
    Store(StoreError),
}

impl fmt::Display for GateError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            GateError::Canonical { body, error } => write!(f, "{body}: {error}"),
            GateError::Redact(e) => e.fmt(f),
            GateError::Volatile(e) => e.fmt(f),
            GateError::Marker { body } => write!(
                f,
                "{body}: a string contains \"\\u0001N\", the gate's number marker; hash it with redaction and volatile stripping off"
            ),
            GateError::Store(e) => e.fmt(f),
        }
    }
}

impl std::error::Error for GateError {}

impl Coded for GateError {
    fn code(&self) -> &'static str {
        match self {
            GateError::Canonical { error, .. } => error.code(),
            GateError::Redact(e) => e.code(),
            GateError::Volatile(e) => e.code(),
            GateError::Marker { .. } => "unsupported_payload",
            GateError::Store(e) => e.code(),
        }
    }
}

/// One payload through the gate: its canonical body (what is hashed and stored), the
/// receipts of what was redacted and the volatile values taken out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Prepared {
    pub body: Body,
    pub receipts: Vec<Receipt>,
    pub volatile: Vec<Stripped>,
}

/// One recorded call: the span record and the two bodies to store.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Recorded {
    pub span: ToolSpan,
    pub args: Body,
    pub result: Body,
}

/// A compiled [`GatePolicy`]: build once, record many calls.
#[derive(Debug, Clone)]
pub struct Gate {
    form: Form,
    redactor: Option<Redactor>,
    volatile: Option<Volatile>,
}

impl Gate {
    pub fn new(policy: &GatePolicy) -> Result<Gate, GateError> {
        Ok(Gate {
            form: policy.form,
            redactor: match &policy.redact {
                Some(p) => Some(Redactor::new(p).map_err(GateError::Redact)?),
                None => None,
            },
            volatile: match &policy.volatile {
                Some(p) => Some(Volatile::new(p).map_err(GateError::Volatile)?),
                None => None,
            },
        })
    }

    /// One payload (JSON text) through redact → strip → canonicalise → hash. `body` names
    /// it (`args` or `result`): in errors, and as the root of receipt and attribute paths
    /// (`$.args.headers.Authorization`).
    pub fn prepare(&self, json: &[u8], body: &'static str) -> Result<Prepared, GateError> {
        let canonical = |json: &[u8]| {
            canonicalize(json, self.form).map_err(|error| GateError::Canonical { body, error })
        };
        let text = canonical(json)?;
        if self.redactor.is_none() && self.volatile.is_none() {
            return Ok(Prepared {
                body: Body::from_canonical(text),
                receipts: Vec::new(),
                volatile: Vec::new(),
            });
        }
        if text.contains(MARKER_ESCAPED) {
            return Err(GateError::Marker { body });
        }
        let (protected, lexemes) = hold_numbers(&text);
        // The protected text has only numbers a double carries exactly: no loss here.
        let mut value: Value =
            serde_json::from_str(&protected).map_err(|_| GateError::Marker { body })?;
        let root = format!("$.{body}");
        let mut receipts = match &self.redactor {
            Some(r) => r.json(&mut value),
            None => Vec::new(),
        };
        for r in &mut receipts {
            r.field_path = format!("{root}{}", &r.field_path[1..]);
        }
        let mut volatile = match &self.volatile {
            Some(v) => v.strip(&mut value, &root),
            None => Vec::new(),
        };
        for s in &mut volatile {
            restore_value(&mut s.value, &lexemes);
        }
        let rewritten = canonicalize_value(&value, self.form)
            .map_err(|error| GateError::Canonical { body, error })?;
        Ok(Prepared {
            body: Body::from_canonical(restore_text(&rewritten, &lexemes)),
            receipts,
            volatile,
        })
    }

    /// The span of one call (the seed's `tool_span`, after redaction and stripping), with
    /// the receipts and stripped values beside the hashes, and the bodies to store.
    pub fn record(
        &self,
        name: &str,
        args: &[u8],
        result: &[u8],
        status: &str,
    ) -> Result<Recorded, GateError> {
        let a = self.prepare(args, "args")?;
        let r = self.prepare(result, "result")?;
        let mut span = tool_span(name, &a.body, &r.body, status);
        span.receipts = a.receipts.into_iter().chain(r.receipts).collect();
        span.volatile = a.volatile.into_iter().chain(r.volatile).collect();
        Ok(Recorded {
            span,
            args: a.body,
            result: r.body,
        })
    }

    /// [`record`](Self::record), then the seed's `write_bodies` into `store`: the same
    /// function both hashes and stores, so the store can never hold an unredacted body.
    pub fn record_into(
        &self,
        store: &mut dyn BodyStore,
        name: &str,
        args: &[u8],
        result: &[u8],
        status: &str,
    ) -> Result<ToolSpan, GateError> {
        let rec = self.record(name, args, result, status)?;
        write_bodies(store, &rec.span, &rec.args, &rec.result).map_err(GateError::Store)?;
        Ok(rec.span)
    }
}

/// The result body of a call whose tool threw: `{"error": {"message", "name", "code"}}`
/// (absent parts left out), so a failed call is recorded with status `error` and a body
/// that says what failed rather than with no result at all.
pub fn error_result(message: &str, name: Option<&str>, code: Option<&str>) -> String {
    let mut error = serde_json::Map::new();
    error.insert("message".into(), Value::String(message.to_string()));
    if let Some(n) = name {
        error.insert("name".into(), Value::String(n.to_string()));
    }
    if let Some(c) = code {
        error.insert("code".into(), Value::String(c.to_string()));
    }
    serde_json::json!({ "error": error }).to_string()
}

/// The marker of a held-aside number: `\u{1}N`, its index, then `~` up to the lexeme's
/// length (so a receipt for a number under a secret key counts the number's bytes).
const MARKER: &str = "\u{1}N";
/// The marker as canonical JSON writes it inside a string.
const MARKER_ESCAPED: &str = "\\u0001N";

/// Whether a double might not carry `lexeme` exactly: Python's non-finite words, an
/// exponent, or more than 15 digits. Shorter plain lexemes parse exactly on any
/// correctly-rounding or fast-path parser.
fn needs_holding(lexeme: &str) -> bool {
    lexeme
        .bytes()
        .any(|b| matches!(b, b'e' | b'E' | b'N' | b'I'))
        || lexeme.bytes().filter(u8::is_ascii_digit).count() > 15
}

/// Replaces every number of canonical `text` that needs holding by a marker string;
/// returns the new text and the lexemes by index.
fn hold_numbers(text: &str) -> (String, Vec<String>) {
    let b = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut lexemes = Vec::new();
    let (mut i, mut last) = (0, 0);
    while i < b.len() {
        match b[i] {
            b'"' => {
                // Canonical strings: skip to the closing quote, over escapes.
                i += 1;
                while i < b.len() && b[i] != b'"' {
                    i += if b[i] == b'\\' { 2 } else { 1 };
                }
                i += 1;
            }
            b'-' | b'0'..=b'9' | b'N' | b'I' => {
                let start = i;
                while i < b.len() && !matches!(b[i], b',' | b']' | b'}' | b':') {
                    i += 1;
                }
                let lexeme = &text[start..i];
                if needs_holding(lexeme) {
                    out.push_str(&text[last..start]);
                    let mut marker = format!("{MARKER}{}", lexemes.len());
                    while marker.len() < lexeme.len() {
                        marker.push('~');
                    }
                    out.push_str(&Value::String(marker).to_string());
                    lexemes.push(lexeme.to_string());
                    last = i;
                }
            }
            _ => i += 1,
        }
    }
    out.push_str(&text[last..]);
    (out, lexemes)
}

/// The index a marker string holds, if `s` is one.
fn marker_index(s: &str) -> Option<usize> {
    let digits = s.strip_prefix(MARKER)?.trim_end_matches('~');
    digits.parse().ok()
}

/// Writes each held number back into canonical text in place of its marker string.
fn restore_text(text: &str, lexemes: &[String]) -> String {
    if lexemes.is_empty() {
        return text.to_string();
    }
    let quoted = format!("\"{MARKER_ESCAPED}");
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find(&quoted) {
        let after = &rest[at + quoted.len()..];
        let end = after.find('"').unwrap_or(after.len());
        let index = after[..end].trim_end_matches('~').parse::<usize>().ok();
        match index.and_then(|i| lexemes.get(i)) {
            Some(lexeme) => {
                out.push_str(&rest[..at]);
                out.push_str(lexeme);
                rest = &after[(end + 1).min(after.len())..];
            }
            None => {
                out.push_str(&rest[..at + quoted.len()]);
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

/// Held numbers inside a stripped value, back as numbers (or, when a double cannot carry
/// one, as its lexeme in a string).
fn restore_value(value: &mut Value, lexemes: &[String]) {
    match value {
        Value::String(s) => {
            if let Some(lexeme) = marker_index(s).and_then(|i| lexemes.get(i)) {
                *value = match serde_json::from_str::<Value>(lexeme) {
                    Ok(n @ Value::Number(_)) if n.to_string().as_str() == lexeme.as_str() => n,
                    _ => Value::String(lexeme.clone()),
                };
            }
        }
        Value::Array(items) => items.iter_mut().for_each(|v| restore_value(v, lexemes)),
        Value::Object(map) => map.values_mut().for_each(|v| restore_value(v, lexemes)),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gate::{tool_span_of_values, MemoryStore};
    use crate::hash::sha256_hex;
    use serde_json::json;

    const GH: &str = "ghp_aB3dE5fG7hI9jK1lM3nO5pQ7rS9tU1vW3xY5";

    #[test]
    fn redacts_before_hashing_and_stores_no_secret() {
        let gate = Gate::new(&GatePolicy::default()).unwrap();
        let args = format!(r#"{{"repo": "a/b", "note": "use {GH}"}}"#);
        let result = format!(r#"{{"log": "push with {GH} ok"}}"#);
        let mut store = MemoryStore::new();
        let span = gate
            .record_into(
                &mut store,
                "git_push",
                args.as_bytes(),
                result.as_bytes(),
                "ok",
            )
            .unwrap();
        for (_, text) in store.iter() {
            assert!(!text.contains("ghp_"), "{text}");
        }
        let stored_args = store.get(&span.args_sha256).unwrap().unwrap();
        assert_eq!(
            stored_args,
            r#"{"note":"use [REDACTED:github_token]","repo":"a/b"}"#
        );
        assert_eq!(span.args_sha256, sha256_hex(stored_args.as_bytes()));
        let paths: Vec<(&str, &str)> = (span.receipts.iter())
            .map(|r| (r.field_path.as_str(), r.rule_id.as_str()))
            .collect();
        assert_eq!(
            paths,
            [
                ("$.args.note", "github_token"),
                ("$.result.log", "github_token")
            ]
        );
        let line = serde_json::to_string(&span).unwrap();
        assert!(
            !line.contains("ghp_") && line.contains("\"receipts\":["),
            "{line}"
        );

        // Off is explicit, and then the secret is hashed and stored as the seed does.
        let raw = Gate::new(&GatePolicy::raw(Form::Python)).unwrap();
        let rec = raw
            .record("git_push", args.as_bytes(), result.as_bytes(), "ok")
            .unwrap();
        assert!(rec.args.text.contains(GH));
        assert!(rec.span.receipts.is_empty());
    }

    #[test]
    fn volatile_values_leave_the_hash_and_ride_beside_it() {
        let gate = Gate::new(&GatePolicy::default()).unwrap();
        let run = |ts: &str, rid: &str, tmp: &str| {
            let args = format!(r#"{{"path": "{tmp}/repo/a.rs", "request_id": "{rid}"}}"#);
            let result = format!(r#"{{"ok": true, "timestamp": "{ts}"}}"#);
            gate.record("read_file", args.as_bytes(), result.as_bytes(), "ok")
                .unwrap()
        };
        let a = run("2026-11-30T01:00:00Z", "r-1", "/tmp/tmp.aa11");
        let b = run("2026-12-01T09:30:00Z", "r-2", "/tmp/tmp.bb22");
        assert_eq!(a.span.args_sha256, b.span.args_sha256);
        assert_eq!(a.span.result_sha256, b.span.result_sha256);
        assert_eq!(
            a.args.text,
            r#"{"path":"[VOLATILE:temp_path]/repo/a.rs","request_id":"[VOLATILE:request_id]"}"#
        );
        let kept: Vec<(&str, &Value)> = (a.span.volatile.iter())
            .map(|s| (s.field_path.as_str(), &s.value))
            .collect();
        assert_eq!(
            kept,
            [
                ("$.args.path", &json!("/tmp/tmp.aa11/repo/a.rs")),
                ("$.args.request_id", &json!("r-1")),
                ("$.result.timestamp", &json!("2026-11-30T01:00:00Z")),
            ]
        );
        // A different file is still a different call.
        let c = gate
            .record(
                "read_file",
                br#"{"path": "/tmp/tmp.cc/repo/b.rs"}"#,
                b"1",
                "ok",
            )
            .unwrap();
        assert_ne!(c.span.args_sha256, a.span.args_sha256);
    }

    #[test]
    fn clean_payloads_hash_as_the_seed_and_numbers_stay_exact() {
        let gate = Gate::new(&GatePolicy::default()).unwrap();
        let args = br#"{"path": "src/a.rs", "n": 12345678901234567890, "f": 1.0, "g": 1e-07, "h": 0.1234567890123456789, "big": [1e400, -0.0]}"#;
        let rec = gate.record("t", args, b"[1, 2.5]", "ok").unwrap();
        let raw = Body::from_json(args, Form::Python).unwrap();
        assert_eq!(rec.args, raw);
        assert!(rec.args.text.contains("12345678901234567890"));
        // Values from serde (the JS path) agree with the text path.
        let v = tool_span_of_values("t", &json!({"a": 1}), &json!("x"), "ok").unwrap();
        let r = gate.record("t", br#"{"a":1}"#, br#""x""#, "ok").unwrap();
        assert_eq!(r.span, v);
        // A big number under a secret key is redacted with its own length.
        let r = (gate.record("t", br#"{"password": 123456789012345678901}"#, b"1", "ok")).unwrap();
        let placeholder = &r.span.receipts[0].replacement;
        assert_eq!(r.args.text, format!(r#"{{"password":"{placeholder}"}}"#));
        assert_eq!(r.span.receipts[0].original_len, 21);
        // Stripped big numbers come back exact (as their lexeme).
        let r = gate
            .record("t", br#"{"ts": 123456789012345678901}"#, b"1", "ok")
            .unwrap();
        assert_eq!(r.span.volatile[0].value, json!("123456789012345678901"));
    }

    #[test]
    fn a_thrown_error_is_a_result_body() {
        let text = error_result("ENOENT: no such file", Some("Error"), Some("ENOENT"));
        let gate = Gate::new(&GatePolicy::default()).unwrap();
        let rec = gate
            .record("read_file", b"{}", text.as_bytes(), "error")
            .unwrap();
        assert_eq!(
            rec.result.text,
            r#"{"error":{"code":"ENOENT","message":"ENOENT: no such file","name":"Error"}}"#
        );
        assert_eq!(
            error_result("x", None, None),
            r#"{"error":{"message":"x"}}"#
        );
    }

    #[test]
    fn jcs_and_errors_name_the_body() {
        let gate = Gate::new(&GatePolicy {
            form: Form::Jcs,
            ..GatePolicy::default()
        })
        .unwrap();
        let r = gate
            .record("t", br#"{"b": 1.0, "a": 1e21}"#, b"2", "ok")
            .unwrap();
        assert_eq!(r.args.text, r#"{"a":1e+21,"b":1}"#);
        let err = gate.record("t", b"{}", b"{oops", "ok").unwrap_err();
        assert!(err.to_string().starts_with("result: invalid JSON"), "{err}");
        assert_eq!(err.code(), "invalid_json");
        let err = gate
            .record("t", br#"["\u0001N0"]"#, b"1", "ok")
            .unwrap_err();
        assert_eq!(err.code(), "unsupported_payload");
    }
}
