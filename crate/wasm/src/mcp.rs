//! JS binding of the MCP packing proxy's core (`toolslice::pack::mcp`) and of the `get_more`
//! tool definition (`toolslice::pack::get_more`): `McpPacker`, `getMoreTool`.
//!
//! The proxy's transport (HTTP, SSE framing, the page store's I/O) is JavaScript in
//! `js/mcp/`; every decision about a message is made here, in the core.

use std::collections::BTreeMap;

use serde::Deserialize;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

use super::canonical::json_text_of;
use super::{error_with_code, from_js, into_error, string_of, to_js};
use toolslice::pack::get_more::{self, Format};
use toolslice::pack::mcp::{self, McpConfig, McpPages, Pending};

#[wasm_bindgen(typescript_custom_section)]
const TS_MCP: &'static str = r#"
/** A tool's policy in the proxy's configuration (snake_case, as in the JSON file). */
export interface McpToolPolicy {
  kind?: PackKind;
  /** The observation's size, all content items together (default 4096). */
  max_bytes?: number;
  /** Page size of get_more (default: max_bytes). */
  page_bytes?: number;
  /** false: a result that does not fit is "result too large, narrow the query". */
  pageable?: boolean;
}

/** The MCP proxy's configuration: a JSON file or `TOOLSLICE_MCP_CONFIG`. Every field optional. */
export interface McpConfig {
  tools?: { [tool: string]: McpToolPolicy };
  /** For tools not in `tools`. */
  default?: McpToolPolicy;
  redact?: { emails?: boolean; us_ssn?: boolean; card_numbers?: boolean; disable?: string[]; secret_keys?: string[]; decode?: boolean };
  /** The page store's bounds: bytes and entries (in-memory store), seconds (KV). */
  store?: { max_bytes?: number; max_entries?: number; ttl_seconds?: number };
}

export interface McpPageStats { entries: number; bytes: number; evicted: number; }

export interface McpStoreBounds { maxBytes: number; maxEntries: number; ttlSeconds: number; }

/** A request of a client message. */
export interface McpRequestInfo {
  /** The JSON-RPC id as compact JSON: responses are matched by it. */
  key: string;
  method: string;
  tool?: string;
  get_more?: { page: { id: string; offset: number } } | { invalid: { message: string } };
}

/** What the proxy remembers of a request until its response comes. */
export interface McpPending { method: string; tool?: string; callId?: string; }

export interface McpStored { id: string; text: string; bytes: number; page_bytes: number; }

export interface McpMessageOutcome {
  /** The message to send instead; absent when unchanged (forward the upstream's bytes). */
  text?: string;
  spans: SpanRecord[];
  stored: McpStored[];
  warnings: string[];
}

export interface McpPacked { result: { [key: string]: JsonValue }; span: SpanRecord; stored: McpStored[]; }

/** The get_more tool in MCP `tools/list` shape. */
export interface McpTool { name: string; title?: string; description: string; inputSchema: { [key: string]: JsonValue }; annotations?: { [key: string]: boolean } }
/** The get_more tool as an OpenAI (Chat Completions) function tool. */
export interface OpenAiFunctionTool { type: "function"; function: { name: string; description: string; parameters: { [key: string]: JsonValue }; strict: boolean } }
/** The get_more tool as an Anthropic Messages API tool. */
export interface AnthropicTool { name: string; description: string; input_schema: { [key: string]: JsonValue } }

/** The `get_more` tool definition, to register as it is (default format: "mcp"). */
export function getMoreTool(format?: "mcp"): McpTool;
export function getMoreTool(format: "openai"): OpenAiFunctionTool;
export function getMoreTool(format: "anthropic"): AnthropicTool;
"#;

#[wasm_bindgen]
extern "C" {
    #[wasm_bindgen(typescript_type = "McpConfig | string")]
    pub type JsMcpConfigInput;
    #[wasm_bindgen(typescript_type = "McpStoreBounds")]
    pub type JsMcpStoreBounds;
    #[wasm_bindgen(typescript_type = "McpRequestInfo[]")]
    pub type JsMcpRequests;
    #[wasm_bindgen(typescript_type = "{ [key: string]: McpPending }")]
    pub type JsMcpPendingMap;
    #[wasm_bindgen(typescript_type = "McpMessageOutcome")]
    pub type JsMcpMessageOutcome;
    #[wasm_bindgen(typescript_type = "McpPacked")]
    pub type JsMcpPacked;
    #[wasm_bindgen(typescript_type = "McpPageStats")]
    pub type JsMcpPageStats;
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct JsPending {
    method: String,
    #[serde(default)]
    tool: Option<String>,
    #[serde(default)]
    call_id: Option<String>,
}

/// The MCP proxy's packer: its configuration (per-tool budgets and kinds, redaction, the
/// page store's bounds) and the decisions for each message.
#[wasm_bindgen]
pub struct McpPacker {
    config: McpConfig,
    /// The in-module page store (used with `keep`; bounded by `config.store`).
    pages: McpPages,
}

#[wasm_bindgen]
impl McpPacker {
    /// `config`: an object, JSON text, or nothing (the registry's defaults for every tool).
    #[wasm_bindgen(constructor)]
    pub fn new(config: Option<JsMcpConfigInput>) -> Result<McpPacker, JsValue> {
        let value: JsValue = config.map(Into::into).unwrap_or(JsValue::UNDEFINED);
        let config = if value.is_undefined() || value.is_null() {
            McpConfig::default()
        } else if let Some(s) = value.dyn_ref::<js_sys::JsString>() {
            McpConfig::parse(&string_of(s)).map_err(into_error)?
        } else {
            McpConfig::parse(&json_text_of(&value)?).map_err(into_error)?
        };
        let pages = McpPages::new(&config.store);
        Ok(McpPacker { config, pages })
    }

    /// The page store's bounds from the configuration.
    #[wasm_bindgen(getter)]
    pub fn store(&self) -> Result<JsMcpStoreBounds, JsValue> {
        let b = &self.config.store;
        let v = serde_json::json!({
            "maxBytes": b.max_bytes, "maxEntries": b.max_entries, "ttlSeconds": b.ttl_seconds
        });
        Ok(to_js(&v)?.unchecked_into())
    }

    /// The requests in a client message. Throws (`invalid_options`) when it is not JSON.
    #[wasm_bindgen(js_name = inspectRequest)]
    pub fn inspect_request(&self, text: &js_sys::JsString) -> Result<JsMcpRequests, JsValue> {
        let infos = mcp::inspect_request(&string_of(text)).map_err(into_error)?;
        Ok(to_js(&infos)?.unchecked_into())
    }

    /// Packs the responses of an upstream message whose ids are pending. With `keep`, cut
    /// results go to the in-module page store (bounded by `store.max_bytes` and
    /// `store.max_entries`, oldest evicted first) and `stored` comes back empty; without it,
    /// the caller stores `stored` (a KV) and answers get_more with `getMore`.
    #[wasm_bindgen(js_name = packMessage)]
    pub fn pack_message(
        &mut self,
        text: &js_sys::JsString,
        pending: JsMcpPendingMap,
        keep: Option<bool>,
    ) -> Result<JsMcpMessageOutcome, JsValue> {
        let js: BTreeMap<String, JsPending> = from_js(pending.into(), "pending requests")?;
        let pending: BTreeMap<String, Pending> = js
            .into_iter()
            .map(|(k, p)| {
                (
                    k,
                    Pending {
                        method: p.method,
                        tool: p.tool,
                        call_id: p.call_id,
                    },
                )
            })
            .collect();
        let mut out =
            mcp::pack_message(&string_of(text), &pending, &self.config).map_err(into_error)?;
        if keep.unwrap_or(false) {
            for s in std::mem::take(&mut out.stored) {
                let (id, bytes) = (s.id.clone(), s.bytes);
                if !self.pages.put(s) {
                    out.warnings.push(format!(
                        "result {id} ({bytes} bytes) is larger than the page store; get_more will say so"
                    ));
                }
            }
        }
        Ok(to_js(&out)?.unchecked_into())
    }

    /// The answer to `get_more(id, offset)`: `stored` is the text the store holds for `id`
    /// (`undefined` when it holds none: the answer is then a tool error saying so).
    #[wasm_bindgen(js_name = getMore)]
    pub fn get_more(
        &self,
        stored: Option<js_sys::JsString>,
        id: &str,
        offset: f64,
        page_bytes: usize,
        call_id: &str,
    ) -> Result<JsMcpPacked, JsValue> {
        let offset = offset_of(offset)?;
        let text = stored.as_ref().map(string_of);
        let packed = mcp::get_more_result(
            text.as_deref(),
            id,
            offset,
            page_bytes.max(1),
            call_id,
            &self.config,
        )
        .map_err(into_error)?;
        Ok(to_js(&packed)?.unchecked_into())
    }

    /// The answer to `get_more(id, offset)` from the in-module page store (see `keep`).
    #[wasm_bindgen(js_name = getMoreKept)]
    pub fn get_more_kept(
        &self,
        id: &str,
        offset: f64,
        call_id: &str,
    ) -> Result<JsMcpPacked, JsValue> {
        let offset = offset_of(offset)?;
        let (text, page_bytes) = match self.pages.get(id) {
            Some((t, p)) => (Some(t), p),
            None => (None, 1),
        };
        let packed = mcp::get_more_result(text, id, offset, page_bytes, call_id, &self.config)
            .map_err(into_error)?;
        Ok(to_js(&packed)?.unchecked_into())
    }

    /// The in-module page store: entries, bytes held, evictions so far.
    #[wasm_bindgen(getter, js_name = pageStats)]
    pub fn page_stats(&self) -> Result<JsMcpPageStats, JsValue> {
        let (entries, bytes, evicted) = self.pages.stats();
        let v = serde_json::json!({ "entries": entries, "bytes": bytes, "evicted": evicted });
        Ok(to_js(&v)?.unchecked_into())
    }

    /// A `get_more` call whose arguments are wrong: a tool error naming the argument.
    #[wasm_bindgen(js_name = toolError)]
    pub fn tool_error(&self, message: &str, call_id: &str) -> Result<JsMcpPacked, JsValue> {
        Ok(to_js(&mcp::tool_error(message, call_id))?.unchecked_into())
    }

    /// JSON-RPC errors naming the upstream for every request in `request`; `undefined` when
    /// it holds no request.
    #[wasm_bindgen(js_name = upstreamError)]
    pub fn upstream_error(&self, request: &str, upstream: &str, reason: &str) -> Option<String> {
        mcp::upstream_error(request, upstream, reason)
    }
}

fn offset_of(offset: f64) -> Result<u64, JsValue> {
    if offset.is_finite() && offset >= 0.0 && offset.fract() == 0.0 {
        Ok(offset as u64)
    } else {
        Err(error_with_code(
            "offset must be a non-negative integer",
            "invalid_argument",
        ))
    }
}

/// The `get_more` tool definition in one of three shapes: `"mcp"` (default), `"openai"`,
/// `"anthropic"`.
#[wasm_bindgen(js_name = getMoreTool, skip_typescript)]
pub fn get_more_tool(format: Option<String>) -> Result<JsValue, JsValue> {
    let name = format.unwrap_or_else(|| "mcp".into());
    let f = Format::parse(&name).ok_or_else(|| {
        error_with_code(
            &format!("unknown tool format {name:?} (expected mcp, openai or anthropic)"),
            "invalid_argument",
        )
    })?;
    to_js(&get_more::definition(f))
}
