//! JS binding of the emitter: `emitToolSpan`, the clip-aware span record built from the two
//! strings a tool boundary has, for users who do not use `pack`.

use serde::Deserialize;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

use super::{error_with_code, from_js, to_js};
use toolslice::span::emit::{emit_tool_span, span_line, ToolBoundary};
use toolslice::span::ClipReason;

#[wasm_bindgen(typescript_custom_section)]
const TS_EMIT: &'static str = r#"
/** What a tool boundary knows about one finished call. */
export interface ToolBoundary {
  spanId: string;
  parentId?: string | null;
  name: string;
  /** What the tool returned. */
  observed: string;
  /** The exact string the prompt builder put into the model's context. */
  injected: string;
  /** The closed enum; anything else throws `unknown_clip_reason`. */
  reason: ClipReason;
  /** Tokens the API accepted for `injected`. */
  tokenCount: number;
  builderVersion?: string | null;
}

export interface EmittedSpan {
  /** The seed-000 span record (lengths in UTF-8 bytes, 16-hex SHA-256 prefixes, 128-char preview). */
  record: SpanRecord;
  /** The record as the seed's emit_tool_span writes it: one JSONL line, newline included. */
  line: string;
}

"#;

#[wasm_bindgen]
extern "C" {
    #[wasm_bindgen(typescript_type = "ToolBoundary")]
    pub type JsToolBoundary;
    #[wasm_bindgen(typescript_type = "EmittedSpan")]
    pub type JsEmittedSpan;
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct Boundary {
    span_id: String,
    #[serde(default)]
    parent_id: Option<String>,
    name: String,
    observed: String,
    injected: String,
    reason: String,
    token_count: u64,
    #[serde(default)]
    builder_version: Option<String>,
}

/// The seed's `emit_tool_span`: measures both strings and returns the record and its line.
#[wasm_bindgen(js_name = emitToolSpan)]
pub fn emit_tool_span_js(boundary: JsToolBoundary) -> Result<JsEmittedSpan, JsValue> {
    let b: Boundary = from_js(boundary.into(), "tool boundary")?;
    let reason = ClipReason::parse(&b.reason).ok_or_else(|| {
        error_with_code(
            &format!(
                "unknown clip_reason {:?}: the enum is closed ({})",
                b.reason,
                ClipReason::ALL.map(ClipReason::as_str).join(", ")
            ),
            "unknown_clip_reason",
        )
    })?;
    let record = emit_tool_span(&ToolBoundary {
        span_id: &b.span_id,
        parent_id: b.parent_id.as_deref(),
        name: &b.name,
        observed: &b.observed,
        injected: &b.injected,
        reason,
        token_count: b.token_count,
        builder_version: b.builder_version.as_deref(),
    });
    let line = span_line(&record);
    let out = serde_json::json!({ "record": record, "line": line });
    Ok(to_js(&out)?.unchecked_into())
}
