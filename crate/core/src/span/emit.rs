//! The emitter: the span record built at the tool boundary, for users who do not use `pack`.
//!
//! Seed 000: "Wrap the executor so spans cannot omit lengths. Hash both strings before the
//! prompt is built. Write the JSONL line before the next model call." The boundary has two
//! strings, what the tool returned (`observed`) and the exact string the prompt builder
//! used (`injected`), plus the clip reason, the token count the API accepted and the
//! builder's version. [`emit_tool_span`] measures both strings as the seed's
//! `emit_tool_span` does (UTF-8 bytes, 16-hex SHA-256 prefixes, a 128-character preview),
//! and [`span_line`] writes the record as the seed's `json.dumps(rec, ensure_ascii=False)`
//! does, byte for byte, so files from either can be mixed.
//!
//! One difference by design: the reason is a [`ClipReason`], the closed enum, so a
//! free-text excuse cannot be written at all (the seed's function writes whatever it is
//! given).

use std::fmt::Write;

use super::{ClipReason, SpanRecord};
use crate::hash::sha256_hex;

/// What a tool boundary knows about one finished call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolBoundary<'a> {
    pub span_id: &'a str,
    pub parent_id: Option<&'a str>,
    pub name: &'a str,
    /// What the tool returned.
    pub observed: &'a str,
    /// The exact string the prompt builder put into the model's context.
    pub injected: &'a str,
    pub reason: ClipReason,
    /// Tokens the API accepted for `injected`.
    pub token_count: u64,
    pub builder_version: Option<&'a str>,
}

/// Characters of `injected` kept as `injected_preview` (the seed's `injected[:128]`).
pub const PREVIEW_CHARS: usize = 128;

/// The seed's `sha256_text`: the first 16 hex digits of SHA-256 over the UTF-8 bytes.
pub fn sha256_text(text: &str) -> String {
    let mut hex = sha256_hex(text.as_bytes());
    hex.truncate(16);
    hex
}

/// The clip-aware span record of one finished call (status `ok`, as the seed writes it).
pub fn emit_tool_span(b: &ToolBoundary<'_>) -> SpanRecord {
    SpanRecord {
        span_id: Some(b.span_id.to_string()),
        parent_id: b.parent_id.map(str::to_string),
        name: Some(b.name.to_string()),
        status: Some("ok".to_string()),
        observed_bytes: Some(b.observed.len() as u64),
        injected_bytes: Some(b.injected.len() as u64),
        injected_tokens: Some(b.token_count),
        clip_reason: Some(b.reason.as_str().to_string()),
        sha256_observed: Some(sha256_text(b.observed)),
        sha256_injected: Some(sha256_text(b.injected)),
        injected_preview: Some(b.injected.chars().take(PREVIEW_CHARS).collect()),
        prompt_builder_version: b.builder_version.map(str::to_string),
        model_context_limit_tokens: None,
    }
}

/// The record as one JSONL line (with the newline), laid out as Python's
/// `json.dumps(rec, ensure_ascii=False)`: `", "` and `": "` separators, the seed's key
/// order, non-ASCII written raw, controls escaped as Python escapes them.
pub fn span_line(rec: &SpanRecord) -> String {
    let value = serde_json::to_value(rec).unwrap_or_default();
    let mut out = String::from("{");
    if let Some(map) = value.as_object() {
        for (i, (k, v)) in map.iter().enumerate() {
            if i > 0 {
                out.push_str(", ");
            }
            // serde_json escapes strings exactly as Python does with ensure_ascii=False
            // (`\"`, `\\`, `\n` ..., other controls as lowercase `\u00xx`).
            let _ = write!(out, "{}: {}", serde_json::Value::from(k.as_str()), v);
        }
    }
    out.push_str("}\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn measures_both_strings_and_writes_the_seed_line() {
        let observed = "app:\n  name: billing\n  port: 8443\n";
        let injected = "app:\n  name: billing\n";
        let rec = emit_tool_span(&ToolBoundary {
            span_id: "tool-14",
            parent_id: Some("turn-3"),
            name: "read_file",
            observed,
            injected,
            reason: ClipReason::PromptTokenCap,
            token_count: 7,
            builder_version: Some("cap-v3"),
        });
        assert_eq!(rec.observed_bytes, Some(observed.len() as u64));
        assert_eq!(
            rec.sha256_injected.as_deref(),
            Some(&sha256_hex(injected.as_bytes())[..16])
        );
        let line = span_line(&rec);
        assert!(line.starts_with(r#"{"span_id": "tool-14", "parent_id": "turn-3", "name": "read_file", "status": "ok", "observed_bytes": 34, "#), "{line}");
        assert!(
            line.ends_with(
                "\"injected_preview\": \"app:\\n  name: billing\\n\", \"prompt_builder_version\": \"cap-v3\"}\n"
            ),
            "{line}"
        );
        // The checker reads it back as a declared clip.
        let report = crate::check::check_bytes(line.as_bytes(), Default::default());
        assert_eq!(report.rows.row(0).status, crate::check::Status::Clipped);
        assert_eq!(report.exit_code, 0);
    }

    #[test]
    fn preview_is_128_characters_not_bytes() {
        let injected = "é".repeat(200);
        let rec = emit_tool_span(&ToolBoundary {
            span_id: "s",
            parent_id: None,
            name: "t",
            observed: &injected,
            injected: &injected,
            reason: ClipReason::None,
            token_count: 1,
            builder_version: None,
        });
        assert_eq!(
            rec.injected_preview.as_deref().map(|p| p.chars().count()),
            Some(128)
        );
        assert!(span_line(&rec).contains(r#""parent_id": null"#));
    }
}
