//! The span record that leaves the machine, and the canonical bodies that stay.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::canonical::{canonicalize, canonicalize_value, CanonicalError, Form};
use crate::hash::sha256_hex;
use crate::redact::Receipt;

use super::volatile::Stripped;

/// A canonical body: its text (what the store holds), SHA-256 hex and UTF-8 byte length.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Body {
    pub text: String,
    pub sha256: String,
    pub len: usize,
}

impl Body {
    /// Canonicalises JSON text (nothing lost: big integers, number lexemes) and hashes it.
    pub fn from_json(json: &[u8], form: Form) -> Result<Body, CanonicalError> {
        Ok(Body::from_canonical(canonicalize(json, form)?))
    }

    /// Canonicalises an already parsed value and hashes it.
    pub fn from_value(value: &Value, form: Form) -> Result<Body, CanonicalError> {
        Ok(Body::from_canonical(canonicalize_value(value, form)?))
    }

    /// Hashes a text that is already canonical.
    pub fn from_canonical(text: String) -> Body {
        Body {
            sha256: sha256_hex(text.as_bytes()),
            len: text.len(),
            text,
        }
    }
}

/// The seed's span record: `name`, `status`, `args_sha256`, `args_len`, `result_sha256`,
/// `result_len`, serialised in that order; then, only when there are any, the redaction
/// receipts and the volatile values stripped before hashing (see [`super::Gate`]). Neither
/// enters a hash or a manifest, so a record without them is the seed's record exactly.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolSpan {
    pub name: String,
    pub status: String,
    pub args_sha256: String,
    pub args_len: u64,
    pub result_sha256: String,
    pub result_len: u64,
    /// One per replaced secret; `field_path` starts `$.args` or `$.result`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub receipts: Vec<Receipt>,
    /// Values taken out of the hashed bodies (timestamps, request ids, temp paths).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub volatile: Vec<Stripped>,
}

/// The span for one tool call whose arguments and result are already canonical bodies.
pub fn tool_span(name: &str, args: &Body, result: &Body, status: &str) -> ToolSpan {
    ToolSpan {
        name: name.to_string(),
        status: status.to_string(),
        args_sha256: args.sha256.clone(),
        args_len: args.len as u64,
        result_sha256: result.sha256.clone(),
        result_len: result.len as u64,
        receipts: Vec::new(),
        volatile: Vec::new(),
    }
}

/// The seed's `tool_span(name, args, result, status)` over parsed values, in the python
/// form, so the digests equal the seed's for the same inputs.
pub fn tool_span_of_values(
    name: &str,
    args: &Value,
    result: &Value,
    status: &str,
) -> Result<ToolSpan, CanonicalError> {
    let args = Body::from_value(args, Form::Python)?;
    let result = Body::from_value(result, Form::Python)?;
    Ok(tool_span(name, &args, &result, status))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn span_fields_and_order() {
        let span = tool_span_of_values("read_file", &json!({"path": "a.txt"}), &json!("hi"), "ok")
            .unwrap();
        assert_eq!(span.args_len, r#"{"path":"a.txt"}"#.len() as u64);
        assert_eq!(span.result_sha256, sha256_hex(b"\"hi\""));
        let text = serde_json::to_string(&span).unwrap();
        assert!(text.starts_with(r#"{"name":"read_file","status":"ok","args_sha256":""#));
    }
}
