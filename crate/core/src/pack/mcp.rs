//! MCP tool results packed at the edge: the decisions of the packing proxy.
//!
//! A proxy between an MCP client and an MCP server (Streamable HTTP) carries JSON-RPC
//! messages. It changes exactly three things, all decided here so that the worker and the
//! Node entry run the same code:
//!
//! - a `tools/call` result ([`pack_call_tool_result`]): each content item is packed with
//!   the tool's policy ([`McpConfig`]) — text (and embedded text resources) through
//!   redaction and the truncators, `structuredContent` through the JSON pattern, image,
//!   audio and blob items replaced by a declaration of their size and type — all items
//!   sharing the tool's one budget; the clip-aware span record goes under the result's
//!   `_meta["toolslice/span"]`, what was cut and how to page under `_meta["toolslice/pack"]`;
//! - a `tools/list` result gains the `get_more` tool ([`super::get_more`]);
//! - a `tools/call` of `get_more` is answered from the page store ([`get_more_result`]),
//!   never sent upstream.
//!
//! Everything else (requests, notifications, errors, other results) is left as it was;
//! [`pack_message`] returns `None` for a message it did not change, so the proxy forwards
//! the upstream's bytes.
//!
//! ## One budget per call
//!
//! The tool's `max_bytes` is the observation's size, however many items the result has.
//! Declarations and untouched items (resource links) are counted first; the rest is shared
//! among the packable items by water-filling: items smaller than an equal share stay whole,
//! the larger ones split what is left (never less than [`MIN_SHARE`] each).
//!
//! ## The span record
//!
//! One record per call. With one item it is that item's record from [`super::pack`].
//! With several, lengths and tokens are the items' sums, the clip reason the strongest
//! among them (`tool_result_char_limit`, then `binary_omitted`, then `redaction`), and the
//! two digests are SHA-256 over the items' digests (one per line): equal exactly when every
//! item came through unchanged. Either way the record passes `toolslice check` as `ok` or a
//! declared clip.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::{json, Map, Value};

use super::get_more::{self, Format};
use super::{
    get_more_from, pack, Body, Kind, MemoryPageStore, PackError, PackOptions, Packed, Registry,
    ShapeOptions, ToolResult, ToolSpec, DEFAULT_STORE_BYTES, DEFAULT_STORE_ENTRIES, GET_MORE,
};
use crate::hash::sha256;
use crate::redact::{Policy, Receipt};
use crate::span::{ClipReason, SpanRecord};
use crate::truncate::estimate_tokens;

/// The `_meta` key of the span record.
pub const META_SPAN: &str = "toolslice/span";
/// The `_meta` key of the packing report (cut items, next offsets, hints, receipts).
pub const META_PACK: &str = "toolslice/pack";

/// The smallest share of the budget a cut item gets: room for a marker and some content.
pub const MIN_SHARE: usize = 512;

/// Default time a stored result stays readable in a store that expires entries (KV).
pub const DEFAULT_STORE_TTL_SECONDS: u64 = 3600;

/// Bounds of the page store the proxy writes cut results to.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct StoreBounds {
    /// Bytes of stored text at most (in-memory store); also the largest single result
    /// that is offered for paging (a larger one gets "narrow the query").
    pub max_bytes: usize,
    /// Stored results at most (in-memory store); the oldest is evicted first.
    pub max_entries: usize,
    /// Seconds an entry stays readable in a store that expires entries (Workers KV).
    pub ttl_seconds: u64,
}

impl Default for StoreBounds {
    fn default() -> Self {
        StoreBounds {
            max_bytes: DEFAULT_STORE_BYTES,
            max_entries: DEFAULT_STORE_ENTRIES,
            ttl_seconds: DEFAULT_STORE_TTL_SECONDS,
        }
    }
}

/// The proxy's configuration: per-tool budgets and kinds (the registry), the default for
/// unknown tools, the redaction policy and the page store's bounds. All optional.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct McpConfig {
    pub tools: BTreeMap<String, ToolSpec>,
    /// For tools not in `tools` (default: 4096 bytes, kind sniffed, pageable).
    pub default: ToolSpec,
    pub redact: Policy,
    pub store: StoreBounds,
}

impl McpConfig {
    /// Reads a configuration from JSON text; errors name the field, line and column.
    pub fn parse(text: &str) -> Result<McpConfig, PackError> {
        let config: McpConfig = serde_json::from_str(text)
            .map_err(|e| PackError::InvalidOptions(format!("MCP proxy configuration: {e}")))?;
        config.validate()?;
        Ok(config)
    }

    fn validate(&self) -> Result<(), PackError> {
        let bad = |what: String| Err(PackError::InvalidOptions(what));
        for (name, spec) in self
            .tools
            .iter()
            .map(|(n, s)| (format!("tools.{n}"), s))
            .chain([("default".to_string(), &self.default)])
        {
            if spec.max_bytes == 0 {
                return bad(format!("{name}.max_bytes must be at least 1"));
            }
            if spec.page_bytes == Some(0) {
                return bad(format!("{name}.page_bytes must be at least 1"));
            }
        }
        if self.store.max_bytes == 0 || self.store.max_entries == 0 {
            return bad("store.max_bytes and store.max_entries must be at least 1".into());
        }
        Ok(())
    }

    pub fn registry(&self) -> Registry {
        Registry {
            tools: self.tools.clone(),
            default: self.default.clone(),
        }
    }
}

/// A cut item's full text, for the page store.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct McpStored {
    /// The id `get_more` is called with.
    pub id: String,
    pub text: String,
    /// UTF-8 bytes of `text` (what a store's byte bound counts).
    pub bytes: usize,
    /// The page size of the tool that produced it.
    pub page_bytes: usize,
}

/// One packed `tools/call` result (or `get_more` answer).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct McpPacked {
    /// The `CallToolResult` to send to the client.
    pub result: Value,
    pub span: SpanRecord,
    /// Texts to put in the page store.
    pub stored: Vec<McpStored>,
}

/// The proxy's in-memory page store: the core's bounded [`MemoryPageStore`] (at most
/// `store.max_bytes` of text and `store.max_entries` results, oldest evicted first), which
/// keeps each result's page size with its text. Used when the platform gives the proxy no
/// store of its own (Node, a worker without KV); the texts then never leave the module.
#[derive(Debug, Clone)]
pub struct McpPages {
    store: MemoryPageStore,
}

impl McpPages {
    pub fn new(bounds: &StoreBounds) -> McpPages {
        McpPages {
            store: MemoryPageStore::new(bounds.max_bytes, bounds.max_entries),
        }
    }

    /// Keeps a cut result; false when it is larger than the whole store (not kept).
    pub fn put(&mut self, stored: McpStored) -> bool {
        self.store
            .insert(&stored.id, stored.text, stored.page_bytes)
    }

    /// The stored text of `id` and its page size.
    pub fn get(&self, id: &str) -> Option<(&str, usize)> {
        self.store.page(id)
    }

    /// Entries, bytes held, evictions so far.
    pub fn stats(&self) -> (usize, usize, u64) {
        (self.store.len(), self.store.bytes(), self.store.evicted())
    }
}

/// What a proxy remembers of a request until its response arrives.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Pending {
    pub method: String,
    /// `tools/call`: the tool's name.
    #[serde(default)]
    pub tool: Option<String>,
    /// `tools/call`: a call id unique to this proxy (JSON-RPC ids repeat across sessions);
    /// it names the span and the stored pages.
    #[serde(default)]
    pub call_id: Option<String>,
}

/// One request of a client message, as the proxy needs to know it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RequestInfo {
    /// The JSON-RPC id as compact JSON (`1`, `"a"`): the key responses are matched by.
    pub key: String,
    pub method: String,
    /// `tools/call`: the tool's name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool: Option<String>,
    /// `tools/call` of `get_more`: the checked arguments, or why they are wrong.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub get_more: Option<GetMoreCall>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum GetMoreCall {
    Page { id: String, offset: u64 },
    Invalid { message: String },
}

/// A message of the proxy that changed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MessageOutcome {
    /// The message to send instead; `None` when it is unchanged (forward the bytes).
    pub text: Option<String>,
    pub spans: Vec<SpanRecord>,
    pub stored: Vec<McpStored>,
    /// Things the proxy's log should say (an upstream tool named `get_more` shadowed ...).
    pub warnings: Vec<String>,
}

fn invalid_json(e: serde_json::Error) -> PackError {
    PackError::InvalidOptions(format!("not a JSON-RPC message: {e}"))
}

/// The requests in a client message (one object or a batch): their ids, methods, tool
/// names and `get_more` arguments. Notifications and responses are skipped. Fails only
/// when the text is not JSON (the proxy then forwards it as it is).
pub fn inspect_request(text: &str) -> Result<Vec<RequestInfo>, PackError> {
    let value: Value = serde_json::from_str(text).map_err(invalid_json)?;
    let messages = match &value {
        Value::Array(a) => a.iter().collect(),
        v => vec![v],
    };
    Ok(messages
        .into_iter()
        .filter_map(|m| {
            let id = m.get("id").filter(|v| !v.is_null())?;
            let method = m.get("method")?.as_str()?.to_string();
            let params = m.get("params");
            let tool = (method == "tools/call")
                .then(|| params.and_then(|p| p.get("name")).and_then(Value::as_str))
                .flatten()
                .map(str::to_string);
            let get_more = (tool.as_deref() == Some(GET_MORE)).then(|| {
                match get_more::arguments(params.and_then(|p| p.get("arguments"))) {
                    Ok((id, offset)) => GetMoreCall::Page { id, offset },
                    Err(message) => GetMoreCall::Invalid { message },
                }
            });
            Some(RequestInfo {
                key: id.to_string(),
                method,
                tool,
                get_more,
            })
        })
        .collect())
}

/// Packs the responses in an upstream message (one object or a batch) whose ids are in
/// `pending`: `tools/call` results packed, `tools/list` results given `get_more`.
pub fn pack_message(
    text: &str,
    pending: &BTreeMap<String, Pending>,
    config: &McpConfig,
) -> Result<MessageOutcome, PackError> {
    let mut out = MessageOutcome {
        text: None,
        spans: Vec::new(),
        stored: Vec::new(),
        warnings: Vec::new(),
    };
    if pending.is_empty() {
        return Ok(out);
    }
    let mut value: Value = serde_json::from_str(text).map_err(invalid_json)?;
    let mut changed = false;
    let registry = config.registry();
    let mut one = |m: &mut Value| -> Result<(), PackError> {
        let Some(obj) = m.as_object_mut() else {
            return Ok(());
        };
        let Some(p) = obj.get("id").and_then(|id| pending.get(&id.to_string())) else {
            return Ok(());
        };
        let Some(result) = obj.get_mut("result") else {
            return Ok(()); // a JSON-RPC error: passed through
        };
        match p.method.as_str() {
            "tools/call" => {
                let tool = p.tool.as_deref().unwrap_or("tool");
                let call_id = p.call_id.clone().unwrap_or_else(|| tool.to_string());
                match pack_call_tool_result(result, tool, &call_id, config, &registry)? {
                    Some(packed) => {
                        *result = packed.result;
                        out.spans.push(packed.span);
                        out.stored.extend(packed.stored);
                        changed = true;
                    }
                    None => out.warnings.push(format!(
                        "tools/call {tool}: the result is not a CallToolResult (no content array); passed through"
                    )),
                }
            }
            "tools/list" => {
                if let Some(w) = add_get_more(result) {
                    out.warnings.push(w);
                }
                changed = true;
            }
            _ => {}
        }
        Ok(())
    };
    match &mut value {
        Value::Array(items) => {
            for m in items {
                one(m)?;
            }
        }
        m => one(m)?,
    }
    if changed {
        out.text = Some(value.to_string());
    }
    Ok(out)
}

/// Adds the `get_more` tool to a `tools/list` result (replacing an upstream tool of that
/// name, which the proxy would shadow anyway: calls to `get_more` never reach upstream).
pub fn add_get_more(result: &mut Value) -> Option<String> {
    let tools = result.get_mut("tools")?.as_array_mut()?;
    let before = tools.len();
    tools.retain(|t| t.get("name").and_then(Value::as_str) != Some(GET_MORE));
    tools.push(get_more::definition(Format::Mcp));
    (tools.len() <= before)
        .then(|| format!("the upstream's own {GET_MORE} tool is shadowed by the proxy's pager"))
}

/// How one content item is packed.
enum Item {
    /// A text item (`path` names where its text lives: `text`, or `resource.text`).
    Text { text: String, resource: bool },
    /// Image, audio or blob resource: declared, not shown.
    Binary {
        bytes: u64,
        media_type: Option<String>,
    },
    /// Anything else (resource links, unknown types): kept as it is.
    Keep,
}

fn classify(item: &Value) -> Item {
    let kind = item.get("type").and_then(Value::as_str).unwrap_or("");
    let str_of = |v: Option<&Value>| v.and_then(Value::as_str).map(str::to_string);
    match kind {
        "text" => match str_of(item.get("text")) {
            Some(text) => Item::Text {
                text,
                resource: false,
            },
            None => Item::Keep,
        },
        "image" | "audio" => match item.get("data").and_then(Value::as_str) {
            Some(data) => Item::Binary {
                bytes: base64_len(data),
                media_type: str_of(item.get("mimeType")),
            },
            None => Item::Keep,
        },
        "resource" => {
            let r = item.get("resource");
            if let Some(text) = str_of(r.and_then(|r| r.get("text"))) {
                Item::Text {
                    text,
                    resource: true,
                }
            } else if let Some(blob) = r.and_then(|r| r.get("blob")).and_then(Value::as_str) {
                Item::Binary {
                    bytes: base64_len(blob),
                    media_type: str_of(r.and_then(|r| r.get("mimeType"))),
                }
            } else {
                Item::Keep
            }
        }
        _ => Item::Keep,
    }
}

/// Bytes a base64 string decodes to (whitespace ignored).
fn base64_len(data: &str) -> u64 {
    let chars = data.bytes().filter(|b| !b.is_ascii_whitespace()).count();
    let pad = data
        .trim_end()
        .bytes()
        .rev()
        .take_while(|b| *b == b'=')
        .count();
    ((chars / 4) * 3 + (chars % 4).saturating_sub(1)).saturating_sub(pad) as u64
}

/// Shares of `budget` for items of sizes `needs`: water-filling, smallest first. An item
/// that fits its equal share gets the whole share as its limit (redaction may lengthen it
/// a little) and is charged its size; a larger item gets the share, at least [`MIN_SHARE`].
fn shares(needs: &[usize], budget: usize) -> Vec<usize> {
    // Smallest first, by selection: results have a handful of items, and a sort would add
    // its own code to the wasm module for no gain.
    let mut out: Vec<Option<usize>> = vec![None; needs.len()];
    let mut left = budget;
    for k in 0..needs.len() {
        let Some(i) = (0..needs.len())
            .filter(|&i| out[i].is_none())
            .min_by_key(|&i| needs[i])
        else {
            break;
        };
        let fair = left / (needs.len() - k);
        out[i] = Some(fair.max(MIN_SHARE));
        left = left.saturating_sub(needs[i].min(fair));
    }
    out.into_iter().map(Option::unwrap_or_default).collect()
}

/// What packing one piece gave.
struct Piece {
    packed: Packed,
    /// Where the piece goes: a content index, or `None` for `structuredContent`.
    index: Option<usize>,
    /// The stored id, when more than one piece could be cut.
    id: String,
}

/// Packs one `CallToolResult` (see the module docs). `None` when `result` is not one (no
/// `content` array): the proxy passes it through and logs why.
pub fn pack_call_tool_result(
    result: &Value,
    tool: &str,
    call_id: &str,
    config: &McpConfig,
    registry: &Registry,
) -> Result<Option<McpPacked>, PackError> {
    let Some(content) = result.get("content").and_then(Value::as_array) else {
        return Ok(None);
    };
    let is_error = result.get("isError") == Some(&Value::Bool(true));
    let spec = registry.spec(tool).clone();
    let structured = result.get("structuredContent").filter(|v| !v.is_null());

    // Options shared by every piece. Error results are not shaped: the error's own words
    // (its HTML page, its stack trace, its headers) are the evidence, kept whole within
    // the budget and cut with a marker past it.
    let mut base = PackOptions {
        redact: config.redact.clone(),
        span_id: Some(call_id.to_string()),
        ..PackOptions::default()
    };
    if is_error {
        base.shape = ShapeOptions {
            drop_keys: Vec::new(),
            html: false,
            stack_traces: false,
            ..ShapeOptions::default()
        };
    }
    let items: Vec<Item> = content.iter().map(classify).collect();
    let packable = items
        .iter()
        .filter(|i| matches!(i, Item::Text { .. }))
        .count()
        + usize::from(structured.is_some());
    let piece_id = |index: Option<usize>| match (packable, index) {
        (0 | 1, _) => call_id.to_string(),
        (_, Some(i)) => format!("{call_id}.{i}"),
        (_, None) => format!("{call_id}.structured"),
    };
    let store_limit = Some(config.store.max_bytes);
    let item_result = |id: &str, body: Body| ToolResult {
        tool: tool.to_string(),
        call_id: id.to_string(),
        body,
        exit_code: None,
        timed_out: false,
        command: None,
    };

    // 1. Fixed costs: declarations of binary items, untouched items. Pieces are kept by
    //    content index (then structuredContent), so they come out in the result's order.
    let mut slots: Vec<Option<Piece>> = (0..content.len()).map(|_| None).collect();
    let mut structured_piece: Option<Piece> = None;
    let mut fixed = 0usize;
    let mut kept: Vec<(usize, String)> = Vec::new();
    for (i, item) in items.iter().enumerate() {
        match item {
            Item::Binary { bytes, media_type } => {
                let id = piece_id(Some(i));
                let body = Body::Binary {
                    bytes: *bytes,
                    media_type: media_type.clone(),
                };
                let packed = pack(&item_result(&id, body), &base, registry, None, store_limit)?;
                fixed += packed.envelope.content.len();
                slots[i] = Some(Piece {
                    packed,
                    index: Some(i),
                    id,
                });
            }
            Item::Keep => {
                let text = content[i].to_string();
                fixed += text.len();
                kept.push((i, text));
            }
            Item::Text { .. } => {}
        }
    }

    // 2. The packable pieces share what is left.
    let mut needs: Vec<(Option<usize>, usize)> = items
        .iter()
        .enumerate()
        .filter_map(|(i, item)| match item {
            Item::Text { text, .. } => Some((Some(i), text.len())),
            _ => None,
        })
        .collect();
    let structured_text = structured.map(Value::to_string);
    if let Some(s) = &structured_text {
        needs.push((None, s.len()));
    }
    let limits = shares(
        &needs.iter().map(|n| n.1).collect::<Vec<_>>(),
        spec.max_bytes.saturating_sub(fixed),
    );
    for ((index, _), limit) in needs.iter().zip(limits) {
        let id = piece_id(*index);
        let (body, kind) = match index {
            Some(i) => match &items[*i] {
                Item::Text { text, .. } => (Body::Text(text.clone()), None),
                _ => unreachable!("needs lists text items only"),
            },
            None => (
                Body::Json(structured.cloned().unwrap_or(Value::Null)),
                Some(Kind::Json),
            ),
        };
        let mut opts = base.clone();
        opts.limit = Some(limit);
        opts.kind = kind.or(opts.kind);
        let input = item_result(&id, body);
        let packed = match pack(&input, &opts, registry, None, store_limit) {
            // Not even the short "too large" error (with its outcomes) fits the share:
            // give it the room it needs rather than lose the result.
            Err(PackError::BudgetTooSmall { needed, .. }) => {
                opts.limit = Some(needed);
                pack(&input, &opts, registry, None, store_limit)?
            }
            other => other?,
        };
        let piece = Piece {
            packed,
            index: *index,
            id,
        };
        match index {
            Some(i) => slots[*i] = Some(piece),
            None => structured_piece = Some(piece),
        }
    }
    let pieces: Vec<Piece> = slots
        .into_iter()
        .flatten()
        .chain(structured_piece)
        .collect();

    // 3. The new result: every field of the old one, packed pieces in place.
    let mut out = result.clone();
    let mut new_content = content.clone();
    let mut report_items = Vec::new();
    let mut receipts: Vec<Receipt> = Vec::new();
    let mut stored = Vec::new();
    for p in &pieces {
        let env = &p.packed.envelope;
        match p.index {
            Some(i) => {
                let item = &mut new_content[i];
                match &items[i] {
                    Item::Text {
                        resource: false, ..
                    } => item["text"] = Value::String(env.content.clone()),
                    Item::Text { resource: true, .. } => {
                        item["resource"]["text"] = Value::String(env.content.clone())
                    }
                    _ => {
                        *item = json!({"type": "text", "text": env.content});
                    }
                }
            }
            None => {
                out["structuredContent"] = match serde_json::from_str::<Value>(&env.content) {
                    Ok(v @ Value::Object(_)) => v,
                    // The short "too large" error is not an object; structuredContent must be.
                    _ => json!({"error": "result_too_large", "message": env.content}),
                };
            }
        }
        if let Some(s) = &p.packed.stored {
            stored.push(McpStored {
                id: s.id.clone(),
                text: s.text.clone(),
                bytes: s.text.len(),
                page_bytes: spec.page_bytes(),
            });
        }
        for r in &p.packed.receipts {
            let mut r = r.clone();
            r.field_path = match p.index {
                Some(i) => format!("content[{i}].{}", r.field_path),
                None => format!("structuredContent.{}", r.field_path),
            };
            receipts.push(r);
        }
        let mut entry = Map::new();
        entry.insert(
            "item".into(),
            match p.index {
                Some(i) => json!(format!("content[{i}]")),
                None => json!("structuredContent"),
            },
        );
        entry.insert("pattern".into(), json!(p.packed.pattern));
        entry.insert("truncated".into(), json!(env.truncated));
        entry.insert("redacted".into(), json!(env.redacted));
        entry.insert(
            "omitted".into(),
            serde_json::to_value(&env.omitted).unwrap_or_default(),
        );
        if env.truncated && env.next_offset.is_some() {
            entry.insert("id".into(), json!(p.id));
        }
        if let Some(n) = env.next_offset {
            entry.insert("next_offset".into(), json!(n));
        }
        if let Some(h) = &env.hint {
            entry.insert("hint".into(), json!(h));
        }
        if let Some(e) = &env.error {
            entry.insert("error".into(), json!(e));
        }
        report_items.push(Value::Object(entry));
    }
    out["content"] = Value::Array(new_content);

    let span = call_span(tool, call_id, is_error, &pieces, &kept);
    let truncated = pieces.iter().any(|p| p.packed.envelope.truncated);
    let meta = out
        .as_object_mut()
        .expect("a result with a content array is an object")
        .entry("_meta")
        .or_insert_with(|| Value::Object(Map::new()));
    if !meta.is_object() {
        *meta = Value::Object(Map::new());
    }
    meta[META_SPAN] = serde_json::to_value(&span).unwrap_or_default();
    meta[META_PACK] = json!({
        "truncated": truncated,
        "redacted": !receipts.is_empty(),
        "items": report_items,
        "receipts": receipts,
    });
    Ok(Some(McpPacked {
        result: out,
        span,
        stored,
    }))
}

fn reason_rank(reason: &str) -> u8 {
    match ClipReason::parse(reason) {
        Some(ClipReason::ToolResultCharLimit | ClipReason::PromptTokenCap) => 3,
        Some(ClipReason::BinaryOmitted) => 2,
        Some(ClipReason::Redaction) => 1,
        _ => 0,
    }
}

/// The call's span record: the one piece's, or the pieces combined (see the module docs).
fn call_span(
    tool: &str,
    call_id: &str,
    is_error: bool,
    pieces: &[Piece],
    kept: &[(usize, String)],
) -> SpanRecord {
    let status = Some(if is_error { "error" } else { "ok" }.to_string());
    if pieces.len() == 1 && kept.is_empty() {
        let mut span = pieces[0].packed.span.clone();
        span.status = status;
        return span;
    }
    let hex = |s: &str| sha256(s.as_bytes()).hex();
    let mut observed = 0u64;
    let mut injected = 0u64;
    let mut tokens = 0u64;
    let mut reason = "none".to_string();
    let mut obs_digests = String::new();
    let mut inj_digests = String::new();
    let mut preview_text = String::new();
    let mut builder = None;
    // Content order, then structuredContent: both lists are already in that order.
    let mut parts: Vec<(Option<&Packed>, Option<&String>)> =
        Vec::with_capacity(pieces.len() + kept.len());
    let (mut p, mut k) = (0, 0);
    while p < pieces.len() || k < kept.len() {
        let piece_at = pieces.get(p).map(|x| x.index.unwrap_or(usize::MAX));
        match (piece_at, kept.get(k)) {
            (Some(at), Some((ki, _))) if at < *ki => {
                parts.push((Some(&pieces[p].packed), None));
                p += 1;
            }
            (_, Some((_, t))) => {
                parts.push((None, Some(t)));
                k += 1;
            }
            (Some(_), None) => {
                parts.push((Some(&pieces[p].packed), None));
                p += 1;
            }
            (None, None) => break,
        }
    }
    for (packed, kept) in parts {
        match (packed, kept) {
            (Some(p), _) => {
                let s = &p.span;
                observed += s.observed_bytes.unwrap_or(0);
                injected += s.injected_bytes.unwrap_or(0);
                tokens += s.injected_tokens.unwrap_or(0);
                if reason_rank(s.clip_reason_text()) > reason_rank(&reason) {
                    reason = s.clip_reason_text().to_string();
                }
                obs_digests.push_str(s.sha256_observed.as_deref().unwrap_or(""));
                inj_digests.push_str(s.sha256_injected.as_deref().unwrap_or(""));
                preview_text.push_str(&p.envelope.content);
                builder = builder.or_else(|| s.prompt_builder_version.clone());
            }
            (None, Some(t)) => {
                observed += t.len() as u64;
                injected += t.len() as u64;
                tokens += estimate_tokens(t) as u64;
                let d = hex(t);
                obs_digests.push_str(&d);
                inj_digests.push_str(&d);
                preview_text.push_str(t);
            }
            (None, None) => {}
        }
        obs_digests.push('\n');
        inj_digests.push('\n');
        preview_text.push('\n');
    }
    SpanRecord {
        span_id: Some(call_id.to_string()),
        parent_id: None,
        name: Some(tool.to_string()),
        status,
        observed_bytes: Some(observed),
        injected_bytes: Some(injected),
        injected_tokens: Some(tokens),
        clip_reason: Some(reason),
        sha256_observed: Some(hex(&obs_digests)),
        sha256_injected: Some(hex(&inj_digests)),
        injected_preview: Some(super::preview(&preview_text)),
        prompt_builder_version: builder,
        model_context_limit_tokens: None,
    }
}

/// The answer to a `get_more` call: the page of `stored` (the text a cut put in the page
/// store, `None` when the store does not hold `id`) at `offset`, as a `CallToolResult`
/// with its span record. A missing id is a tool error the model reads (`isError`), naming
/// the store's bounds, never a JSON-RPC error: the model asked, the model must be told.
pub fn get_more_result(
    stored: Option<&str>,
    id: &str,
    offset: u64,
    page_bytes: usize,
    call_id: &str,
    config: &McpConfig,
) -> Result<McpPacked, PackError> {
    let opts = PackOptions {
        span_id: Some(call_id.to_string()),
        ..PackOptions::default()
    };
    let Some(text) = stored else {
        let b = &config.store;
        return Ok(tool_error(
            &format!(
                "{GET_MORE}: no stored result for id {:?}: never cut, or evicted from the page store \
                 (it keeps {} MiB and {} results, oldest evicted first; in KV each for {} s). Call the tool again.",
                id,
                b.max_bytes >> 20,
                b.max_entries,
                b.ttl_seconds
            ),
            call_id,
        ));
    };
    let packed = get_more_from(text, id, offset, call_id, page_bytes, &opts)?;
    let env = &packed.envelope;
    let mut pack_report = json!({
        "truncated": env.truncated,
        "offset": offset.min(text.len() as u64),
        "total_bytes": text.len(),
        "id": id,
    });
    if let Some(n) = env.next_offset {
        pack_report["next_offset"] = json!(n);
    }
    if let Some(h) = &env.hint {
        pack_report["hint"] = json!(h);
    }
    let result = json!({
        "content": [{"type": "text", "text": env.content}],
        "_meta": {META_SPAN: packed.span, META_PACK: pack_report},
    });
    Ok(McpPacked {
        result,
        span: packed.span,
        stored: Vec::new(),
    })
}

/// A `CallToolResult` with `isError` carrying `message`, and its (unclipped) span.
pub fn tool_error(message: &str, call_id: &str) -> McpPacked {
    let span = SpanRecord {
        span_id: Some(call_id.to_string()),
        parent_id: None,
        name: Some(GET_MORE.to_string()),
        status: Some("error".into()),
        observed_bytes: Some(message.len() as u64),
        injected_bytes: Some(message.len() as u64),
        injected_tokens: Some(estimate_tokens(message) as u64),
        clip_reason: Some("none".into()),
        sha256_observed: Some(sha256(message.as_bytes()).hex()),
        sha256_injected: Some(sha256(message.as_bytes()).hex()),
        injected_preview: Some(super::preview(message)),
        prompt_builder_version: Some(super::BUILDER.to_string()),
        model_context_limit_tokens: None,
    };
    McpPacked {
        result: json!({
            "content": [{"type": "text", "text": message}],
            "isError": true,
            "_meta": {META_SPAN: span},
        }),
        span,
        stored: Vec::new(),
    }
}

/// JSON-RPC error responses for every request in `request` (one object or a batch), for
/// when the upstream cannot be reached or answers with something that is not MCP. `None`
/// when the message holds no request (notifications only) or is not JSON.
pub fn upstream_error(request: &str, upstream: &str, reason: &str) -> Option<String> {
    let infos = inspect_request(request).ok()?;
    let value: Value = serde_json::from_str(request).ok()?;
    let errors: Vec<Value> = infos
        .iter()
        .map(|info| {
            let id: Value = serde_json::from_str(&info.key).unwrap_or(Value::Null);
            json!({
                "jsonrpc": "2.0",
                "id": id,
                "error": {
                    "code": -32000,
                    "message": format!("upstream MCP server {upstream} failed: {reason}"),
                    "data": {"upstream": upstream, "method": info.method},
                },
            })
        })
        .collect();
    match (value.is_array(), errors.len()) {
        (_, 0) => None,
        (true, _) => Some(Value::Array(errors).to_string()),
        (false, _) => errors.into_iter().next().map(|e| e.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::check::{classify as check, Status};

    const GH: &str = "ghp_aB3dE5fG7hI9jK1lM3nO5pQ7rS9tU1vW3xY5";

    fn status(span: &SpanRecord) -> Status {
        let line = serde_json::to_string(span).unwrap();
        let rec = crate::span::parse_line(line.as_bytes()).unwrap();
        check(&rec.view()).status
    }

    fn config(json: &str) -> McpConfig {
        McpConfig::parse(json).unwrap()
    }

    fn pack_one(result: Value, tool: &str, cfg: &McpConfig) -> McpPacked {
        pack_call_tool_result(&result, tool, "call-1", cfg, &cfg.registry())
            .unwrap()
            .unwrap()
    }

    #[test]
    fn a_small_result_is_unchanged_but_for_the_span() {
        let cfg = McpConfig::default();
        let result = json!({"content": [{"type": "text", "text": "3"}]});
        let p = pack_one(result.clone(), "add", &cfg);
        assert_eq!(p.result["content"], result["content"]);
        assert_eq!(p.span.clip_reason.as_deref(), Some("none"));
        assert_eq!(status(&p.span), Status::Ok);
        assert_eq!(p.result["_meta"][META_SPAN]["observed_bytes"], 1);
        assert!(p.stored.is_empty());
    }

    #[test]
    fn a_large_text_is_redacted_cut_marked_and_stored() {
        let cfg = config(
            r#"{"tools": {"echo": {"kind": "file", "max_bytes": 1000, "page_bytes": 700}}}"#,
        );
        let text: String = (0..400).map(|i| format!("line {i} token={GH}\n")).collect();
        let p = pack_one(
            json!({"content": [{"type": "text", "text": text}]}),
            "echo",
            &cfg,
        );
        let content = p.result["content"][0]["text"].as_str().unwrap();
        assert!(content.len() <= 1000);
        assert!(!content.contains("aB3dE5"));
        assert!(content.contains("get_more(id=\"call-1\""), "{content}");
        assert_eq!(
            p.span.clip_reason.as_deref(),
            Some("tool_result_char_limit")
        );
        assert_eq!(status(&p.span), Status::Clipped);
        let pack = &p.result["_meta"][META_PACK];
        assert_eq!(pack["truncated"], true);
        assert_eq!(pack["redacted"], true);
        assert_eq!(pack["items"][0]["id"], "call-1");
        assert!(pack["receipts"][0]["field_path"]
            .as_str()
            .unwrap()
            .starts_with("content[0]"));
        assert_eq!(p.stored.len(), 1);
        assert_eq!(p.stored[0].page_bytes, 700);
        // The head, then every page, is the whole redacted text exactly once.
        let stored = &p.stored[0].text;
        let next = pack["items"][0]["next_offset"].as_u64().unwrap() as usize;
        assert!(content.starts_with(&stored[..next]));
        let mut at = next as u64;
        let mut rest = String::new();
        loop {
            let page = get_more_result(Some(stored), "call-1", at, 700, "m", &cfg).unwrap();
            assert_ne!(status(&page.span), Status::SilentClip);
            let meta = &page.result["_meta"][META_PACK];
            let text = page.result["content"][0]["text"].as_str().unwrap();
            assert!(text.len() <= 700);
            match meta["next_offset"].as_u64() {
                Some(n) => {
                    rest.push_str(&stored[at as usize..n as usize]);
                    assert!(text.starts_with(&stored[at as usize..n as usize]));
                    at = n;
                }
                None => {
                    rest.push_str(text);
                    break;
                }
            }
        }
        assert_eq!(format!("{}{rest}", &stored[..next]), *stored);
    }

    #[test]
    fn images_are_declared_and_items_share_the_budget() {
        let cfg = config(r#"{"default": {"max_bytes": 2000}}"#);
        let result = json!({
            "content": [
                {"type": "text", "text": "small one"},
                {"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png"},
                {"type": "text", "text": "x".repeat(5000)},
                {"type": "resource_link", "uri": "file:///a", "name": "a"},
            ],
            "structuredContent": {"ok": true, "rows": (0..300).collect::<Vec<_>>()},
        });
        let p = pack_one(result, "t", &cfg);
        let c = &p.result["content"];
        assert_eq!(c[0]["text"], "small one");
        assert_eq!(c[1]["type"], "text");
        assert!(
            c[1]["text"]
                .as_str()
                .unwrap()
                .contains("8 bytes of image/png"),
            "{}",
            c[1]
        );
        assert_eq!(c[3]["type"], "resource_link");
        let total: usize = c
            .as_array()
            .unwrap()
            .iter()
            .map(|i| i.to_string().len())
            .sum::<usize>()
            + p.result["structuredContent"].to_string().len();
        assert!(total < 2000 + 400, "{total}");
        assert_eq!(p.result["structuredContent"]["ok"], true);
        assert_eq!(
            p.span.clip_reason.as_deref(),
            Some("tool_result_char_limit")
        );
        assert_eq!(status(&p.span), Status::Clipped);
        let ids: Vec<&str> = p.stored.iter().map(|s| s.id.as_str()).collect();
        assert!(ids.contains(&"call-1.2"), "{ids:?}");
    }

    #[test]
    fn errors_are_not_shaped_and_keep_their_flag() {
        let cfg = McpConfig::default();
        let html = "<html><head><title>502 Bad Gateway</title></head><body>nginx</body></html>";
        let p = pack_one(
            json!({"content": [{"type": "text", "text": html}], "isError": true}),
            "fetch",
            &cfg,
        );
        assert_eq!(p.result["content"][0]["text"], html);
        assert_eq!(p.result["isError"], true);
        assert_eq!(p.span.status.as_deref(), Some("error"));
        assert_eq!(status(&p.span), Status::Ok);
    }

    #[test]
    fn messages_route_by_id() {
        let cfg = config(r#"{"tools": {"big": {"max_bytes": 600}}}"#);
        let reqs = inspect_request(
            r#"[{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"big"}},
                {"jsonrpc":"2.0","method":"notifications/initialized"},
                {"jsonrpc":"2.0","id":"g","method":"tools/call","params":{"name":"get_more","arguments":{"id":"x","offset":5}}},
                {"jsonrpc":"2.0","id":3,"method":"tools/list"}]"#,
        )
        .unwrap();
        assert_eq!(reqs.len(), 3);
        assert_eq!(reqs[0].key, "1");
        assert_eq!(reqs[0].tool.as_deref(), Some("big"));
        assert_eq!(reqs[1].key, "\"g\"");
        assert_eq!(
            reqs[1].get_more,
            Some(GetMoreCall::Page {
                id: "x".into(),
                offset: 5
            })
        );
        assert!(inspect_request("{not json").is_err());

        let mut pending = BTreeMap::new();
        pending.insert(
            "1".to_string(),
            Pending {
                method: "tools/call".into(),
                tool: Some("big".into()),
                call_id: Some("u-1".into()),
            },
        );
        pending.insert(
            "3".to_string(),
            Pending {
                method: "tools/list".into(),
                tool: None,
                call_id: None,
            },
        );
        let big = "y".repeat(3000);
        let response = json!([
            {"jsonrpc": "2.0", "id": 1, "result": {"content": [{"type": "text", "text": big}]}},
            {"jsonrpc": "2.0", "id": 2, "result": {"content": [{"type": "text", "text": big}]}},
            {"jsonrpc": "2.0", "id": 3, "result": {"tools": [{"name": "big", "inputSchema": {"type": "object"}}]}},
        ])
        .to_string();
        let out = pack_message(&response, &pending, &cfg).unwrap();
        let v: Value = serde_json::from_str(out.text.as_deref().unwrap()).unwrap();
        assert!(v[0]["result"]["content"][0]["text"].as_str().unwrap().len() <= 600);
        assert_eq!(v[1]["result"]["content"][0]["text"].as_str().unwrap(), big);
        assert_eq!(v[2]["result"]["tools"][1]["name"], "get_more");
        assert_eq!(out.spans.len(), 1);
        assert_eq!(out.spans[0].span_id.as_deref(), Some("u-1"));
        assert_eq!(out.stored[0].id, "u-1");
        // Nothing pending: nothing parsed, nothing changed.
        let none = pack_message("{garbage", &BTreeMap::new(), &cfg).unwrap();
        assert_eq!(none.text, None);
        // An error response is left alone.
        let err = r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"bad"}}"#;
        assert_eq!(pack_message(err, &pending, &cfg).unwrap().text, None);
    }

    #[test]
    fn get_more_for_an_unknown_id_is_a_tool_error() {
        let p = get_more_result(None, "gone", 0, 4096, "m1", &McpConfig::default()).unwrap();
        assert_eq!(p.result["isError"], true);
        assert!(p.result["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("\"gone\""));
        assert_eq!(status(&p.span), Status::Ok);
    }

    #[test]
    fn upstream_errors_answer_every_request() {
        let one = upstream_error(
            r#"{"jsonrpc":"2.0","id":7,"method":"tools/call"}"#,
            "http://127.0.0.1:9/mcp",
            "connection refused",
        )
        .unwrap();
        let v: Value = serde_json::from_str(&one).unwrap();
        assert_eq!(v["id"], 7);
        assert!(v["error"]["message"]
            .as_str()
            .unwrap()
            .contains("http://127.0.0.1:9/mcp"));
        assert_eq!(
            upstream_error(r#"{"jsonrpc":"2.0","method":"notifications/x"}"#, "u", "r"),
            None
        );
    }

    #[test]
    fn bad_config_names_the_field() {
        let e = McpConfig::parse(r#"{"tools": {"a": {"max_bytes": 10, "colour": 1}}}"#)
            .unwrap_err()
            .to_string();
        assert!(e.contains("colour"), "{e}");
        let e = McpConfig::parse(r#"{"tools": {"a": {"max_bytes": 0}}}"#)
            .unwrap_err()
            .to_string();
        assert!(e.contains("tools.a.max_bytes"), "{e}");
    }

    #[test]
    fn the_memory_store_evicts_oldest_and_keeps_page_sizes() {
        let bounds = StoreBounds {
            max_bytes: 10,
            max_entries: 8,
            ttl_seconds: 60,
        };
        let mut pages = McpPages::new(&bounds);
        let s = |id: &str, text: &str, page_bytes| McpStored {
            id: id.into(),
            text: text.into(),
            bytes: text.len(),
            page_bytes,
        };
        assert!(pages.put(s("a", "1234", 100)));
        assert!(pages.put(s("b", "5678", 200)));
        assert!(pages.put(s("c", "90ab", 300)));
        assert_eq!(pages.get("a"), None);
        assert_eq!(pages.get("b"), Some(("5678", 200)));
        assert!(!pages.put(s("big", "x".repeat(11).as_str(), 1)));
        assert_eq!(pages.stats(), (2, 8, 1));
    }

    #[test]
    fn base64_lengths() {
        assert_eq!(base64_len("iVBORw0KGgo="), 8);
        assert_eq!(base64_len("YQ=="), 1);
        assert_eq!(base64_len("YWI="), 2);
        assert_eq!(base64_len("YWJj"), 3);
        assert_eq!(base64_len(""), 0);
    }

    #[test]
    fn shares_fill_smallest_first() {
        assert_eq!(shares(&[10, 5000], 2000), vec![1000, 1990]);
        assert_eq!(shares(&[5000], 2000), vec![2000]);
        assert_eq!(shares(&[3000, 3000], 2000), vec![1000, 1000]);
        assert_eq!(shares(&[9000, 9000], 100), vec![MIN_SHARE, MIN_SHARE]);
    }
}
