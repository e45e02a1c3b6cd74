//! JS binding of the packer: `pack`, `getMore`, `getMoreFrom`, `registerTool`,
//! `pageStoreStats` and the streaming `StreamPacker`.
//!
//! The module holds one [`Packer`] (tool registry and bounded in-memory page store) per
//! instance, so a worker isolate keeps its pages between requests. It is borrowed only for
//! short steps that neither fail nor call JavaScript (reading the registry, storing a
//! result): a `countTokens` callback or a page store's `set` may call back into the module
//! while `pack` runs, and an error in the middle must leave the packer usable. A caller that
//! needs pages elsewhere (a JS `Map`, a KV binding) passes `store`: a `Map`-like object
//! adapted as the core's [`PageStore`], whose `set(id, record)` receives the page record
//! (the text and its page size; for an async KV, pass `returnStored: true`, `await
//! kv.put(stored.id, stored.record)`, then call `getMoreFrom(record, ...)`). Paging is the
//! core's `get_more_in` for every store, so it never depends on where the text is.

use std::cell::RefCell;

use serde::Deserialize;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

use super::canonical::json_text_of;
use super::check::JsInput;
use super::{bytes_of, error_with_code, from_js, into_error, options_from, to_js};
use toolslice::pack::{
    self, Body, Kind, PackOptions, Packed, Packer, PageStore, PageStoreError, ShapeOptions,
    StoredPage, TenantPolicy, ToolResult, ToolSpec,
};
use toolslice::redact::Policy;
use toolslice::truncate::{TokenCounter, Unit};

#[wasm_bindgen(typescript_custom_section)]
const TS_PACK: &'static str = r#"
/** The kind of output a tool produces; it chooses the cut. */
export type PackKind = "terminal" | "search" | "file" | "json" | "text";

/** One finished tool call. Exactly one of `text`, `json`, `binary`, `raw`. */
export interface PackInput {
  tool: string;
  /** Echoed as `tool_call_id` (parallel results may land out of order). */
  callId: string;
  text?: string;
  /**
   * Output of unknown kind (a CLI's stdin): packed as JSON when the whole text is one JSON
   * value (64-bit integers kept exact), else as text. The core decides, for every front end.
   */
  raw?: string;
  json?: JsonValue;
  binary?: { bytes: number; mediaType?: string };
  /** Shown in a header above the output, never cut. */
  /** An integer from -2147483648 to 4294967295 (signed or unsigned 32-bit). */
  exitCode?: number;
  timedOut?: boolean;
  command?: string;
}

/** What to redact. Defaults: every secret rule and card numbers; no e-mails, no SSNs. */
export interface RedactPolicy {
  emails?: boolean;
  usSsn?: boolean;
  cardNumbers?: boolean;
  /** Rule ids to turn off, e.g. `["jwt"]`. */
  disable?: string[];
  /** More key names whose values are secret. */
  secretKeys?: string[];
  /** Also scan JSON-unescaped and percent-decoded forms (default true). */
  decode?: boolean;
}

export interface ShapePolicy {
  /** Keys removed at any depth (default: raw_http, raw, raw_response, headers, html, debug ...). */
  dropKeys?: string[];
  /** Outcome keys: never dropped or cut (default: status, ok, error, code, exit_code, id, receipt_id ...). */
  keepKeys?: string[];
  /** HTML pages to structured errors (default true). */
  html?: boolean;
  /** Stack traces to structured errors (default true). */
  stackTraces?: boolean;
}

/** A `Map` or anything with `set(id, record)` and `get(id)` (synchronous). */
export interface PageStoreLike {
  set(id: string, record: string): unknown;
  get(id: string): string | undefined | null | unknown;
}

export interface PackOptions {
  /** Budget of the content, overriding the tool's `maxBytes`. */
  limit?: number;
  unit?: "bytes" | "chars" | "utf16" | "tokens";
  kind?: PackKind;
  redact?: RedactPolicy;
  shape?: ShapePolicy;
  pageBytes?: number;
  /** Whether `get_more` is on the allowlist (default true). */
  pageable?: boolean;
  spanId?: string;
  parentId?: string;
  builderVersion?: string;
  modelContextLimitTokens?: number;
  /** Seed 000's 16-hex short digests instead of full SHA-256. */
  shortHashes?: boolean;
  /**
   * `StreamPacker`: the most redacted output kept so the result can be paged (default and
   * most: the page store's 16 MiB). A longer stream gets the short error.
   */
  streamCap?: number;
  /**
   * Seed 004: "Do not paste other tenants' rows". Rows (objects) whose `key` (default
   * `tenant_id`) names another tenant are dropped before anything else sees the result, each
   * with a receipt (`rule_id: "foreign_tenant"`, no character of the row).
   */
  tenant?: { tenant: string; key?: string; requireKey?: boolean };
  /** Counts tokens (for `unit: "tokens"` and `injected_tokens`); default: the estimate. */
  countTokens?: (text: string) => number;
  /** Where the text for `get_more` goes (default: the module's bounded store). */
  store?: PageStoreLike;
  /**
   * Keep nothing in the module: return the page record as `result.stored`, for a store
   * only you can write (an async KV: `await kv.put(stored.id, stored.record)`, then
   * `getMoreFrom(record, id, offset)`).
   */
  returnStored?: boolean;
  /**
   * Also return `result.cut`: the redacted, shaped text that was cut and the truncator's
   * segments over it and over the content, in UTF-16 offsets (for a view of both ends).
   */
  segments?: boolean;
}

export interface ToolSpec {
  kind?: PackKind;
  /** The largest observation, bytes (default 4096). */
  maxBytes?: number;
  pageBytes?: number;
  pageable?: boolean;
}

export interface Receipt {
  field_path: string;
  rule_id: string;
  original_len: number;
  replacement: string;
  offset?: number;
}

export interface Envelope {
  role: "tool";
  tool_call_id: string;
  name: string;
  /** Exactly what the model reads. */
  content: string;
  truncated: boolean;
  redacted: boolean;
  omitted: { bytes: number; lines: number; keys: number; shaped_bytes: number };
  next_offset?: number;
  hint?: string;
  outcome: { [key: string]: JsonValue };
  error?: "result_too_large";
}

/** Seed 000's clip-aware span record. */
export interface SpanRecord {
  span_id: string | null;
  parent_id: string | null;
  name: string | null;
  status: string | null;
  observed_bytes: number | null;
  injected_bytes: number | null;
  injected_tokens: number | null;
  clip_reason: ClipReason | null;
  sha256_observed: string | null;
  sha256_injected: string | null;
  injected_preview: string | null;
  prompt_builder_version: string | null;
  model_context_limit_tokens?: number;
}

export interface ShapeReport {
  dropped: Array<{ path: string; bytes: number }>;
  html_pages: number;
  stack_traces: number;
  summarized_bytes: number;
}

export interface PackResult {
  envelope: Envelope;
  span: SpanRecord;
  receipts: Receipt[];
  shape: ShapeReport;
  pattern: string;
  /**
   * With `returnStored`, when cut: the page record to keep under `id` (the full redacted
   * text `get_more` pages through, after a header line with its page size).
   */
  stored?: { id: string; page_bytes: number; record: string };
  /** With `segments`: how the content was made from the result. */
  cut?: PackCut;
}

/** Offsets are UTF-16 code units: slice `source` and `envelope.content` with them. */
export interface PackCut {
  /** The result after redaction and shaping: the text that was cut. */
  source: string;
  /** `output`: a range of the content; `source` (kept text only): where it came from. */
  segments: Array<{ kind: "header" | "kept" | "marker" | "annotation"; output: [number, number]; source?: [number, number] }>;
  /** Redaction placeholders in `source` (a text result only). */
  redacted: Array<[number, number]>;
  offsets: "utf16";
}

export interface PageStoreStats { entries: number; bytes: number; maxBytes: number; maxEntries: number; evicted: number; }

export interface Redacted { text: string; receipts: Receipt[]; }
export interface RedactedJson { value: JsonValue; receipts: Receipt[]; }
"#;

#[wasm_bindgen]
extern "C" {
    #[wasm_bindgen(typescript_type = "PackInput")]
    pub type JsPackInput;
    #[wasm_bindgen(typescript_type = "PackOptions")]
    pub type JsPackOptions;
    #[wasm_bindgen(typescript_type = "PackResult")]
    pub type JsPackResult;
    #[wasm_bindgen(typescript_type = "ToolSpec")]
    pub type JsToolSpec;
    #[wasm_bindgen(typescript_type = "PageStoreStats")]
    pub type JsPageStoreStats;
    #[wasm_bindgen(typescript_type = "RedactPolicy")]
    pub type JsRedactPolicy;
    #[wasm_bindgen(typescript_type = "Redacted")]
    pub type JsRedacted;
    #[wasm_bindgen(typescript_type = "RedactedJson")]
    pub type JsRedactedJson;
    #[wasm_bindgen(typescript_type = "JsonValue")]
    pub type JsJsonValue;
}

thread_local! {
    static PACKER: RefCell<Packer> = RefCell::new(Packer::default());
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase", default, deny_unknown_fields)]
pub(crate) struct JsPolicy {
    emails: Option<bool>,
    us_ssn: Option<bool>,
    card_numbers: Option<bool>,
    disable: Option<Vec<String>>,
    secret_keys: Option<Vec<String>>,
    decode: Option<bool>,
}

impl JsPolicy {
    pub(crate) fn into_core(self) -> Policy {
        let d = Policy::default();
        Policy {
            emails: self.emails.unwrap_or(d.emails),
            us_ssn: self.us_ssn.unwrap_or(d.us_ssn),
            card_numbers: self.card_numbers.unwrap_or(d.card_numbers),
            disable: self.disable.unwrap_or(d.disable),
            secret_keys: self.secret_keys.unwrap_or(d.secret_keys),
            decode: self.decode.unwrap_or(d.decode),
        }
    }
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase", default, deny_unknown_fields)]
struct JsShape {
    drop_keys: Option<Vec<String>>,
    keep_keys: Option<Vec<String>>,
    html: Option<bool>,
    stack_traces: Option<bool>,
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase", default, deny_unknown_fields)]
struct JsOptions {
    limit: Option<usize>,
    unit: Option<Unit>,
    kind: Option<Kind>,
    redact: Option<JsPolicy>,
    shape: Option<JsShape>,
    page_bytes: Option<usize>,
    pageable: Option<bool>,
    span_id: Option<String>,
    parent_id: Option<String>,
    builder_version: Option<String>,
    model_context_limit_tokens: Option<u64>,
    short_hashes: Option<bool>,
    stream_cap: Option<usize>,
    return_stored: Option<bool>,
    segments: Option<bool>,
    tenant: Option<JsTenant>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct JsTenant {
    tenant: String,
    key: Option<String>,
    require_key: Option<bool>,
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase", default, deny_unknown_fields)]
struct JsSpec {
    kind: Option<Kind>,
    max_bytes: Option<usize>,
    page_bytes: Option<usize>,
    pageable: Option<bool>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct JsBinary {
    bytes: u64,
    #[serde(default)]
    media_type: Option<String>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct JsInputMeta {
    tool: String,
    call_id: String,
    #[serde(default)]
    text: Option<String>,
    #[serde(default)]
    binary: Option<JsBinary>,
    #[serde(default)]
    exit_code: Option<f64>,
    #[serde(default)]
    timed_out: bool,
    #[serde(default)]
    command: Option<String>,
}

/// Options from JS, plus the two members that are functions or objects (not data).
struct Parsed {
    opts: PackOptions,
    counter: Option<js_sys::Function>,
    store: Option<JsValue>,
    return_stored: bool,
}

/// The same error with its message redacted: a decoding error quotes the value it could
/// not read (`invalid type: string "ghp_...", expected u64`), and an error is output too.
fn scrubbed(err: JsValue) -> JsValue {
    let Some(e) = err.dyn_ref::<js_sys::Error>() else {
        return err;
    };
    let message = String::from(e.message());
    let clean = toolslice::redact::Redactor::default().text(&message).text;
    if clean == message {
        return err;
    }
    let code = get(&err, "code").as_string().unwrap_or_default();
    error_with_code(&clean, &code)
}

fn invalid(m: impl std::fmt::Display) -> JsValue {
    error_with_code(&format!("invalid pack options: {m}"), "invalid_options")
}

fn get(obj: &JsValue, key: &str) -> JsValue {
    js_sys::Reflect::get(obj, &JsValue::from_str(key)).unwrap_or(JsValue::UNDEFINED)
}

fn parse_options(value: Option<JsPackOptions>) -> Result<Parsed, JsValue> {
    let value: JsValue = match value {
        Some(v) if !v.is_undefined() && !v.is_null() => v.into(),
        _ => {
            return Ok(Parsed {
                opts: PackOptions::default(),
                counter: None,
                store: None,
                return_stored: false,
            })
        }
    };
    if !value.is_object() {
        return Err(invalid("options must be an object"));
    }
    // Functions and stores are taken out before the data is read.
    let counter = get(&value, "countTokens");
    let counter = if counter.is_undefined() {
        None
    } else {
        Some(
            counter
                .dyn_into::<js_sys::Function>()
                .map_err(|_| invalid("countTokens must be a function"))?,
        )
    };
    let store = Some(get(&value, "store")).filter(|s| !s.is_undefined() && !s.is_null());
    if let Some(s) = &store {
        if !get(s, "set").is_function() || !get(s, "get").is_function() {
            return Err(invalid("store must have get(id) and set(id, text)"));
        }
    }
    let data = js_sys::Object::assign(&js_sys::Object::new(), value.unchecked_ref());
    let _ = js_sys::Reflect::delete_property(&data, &JsValue::from_str("countTokens"));
    let _ = js_sys::Reflect::delete_property(&data, &JsValue::from_str("store"));
    let o: JsOptions = options_from(&data.into(), "pack options").map_err(scrubbed)?;
    // Zero would make every page too small for its own trailer: refused as an option.
    if o.page_bytes == Some(0) {
        return Err(invalid("pageBytes must be at least 1"));
    }
    let d = PackOptions::default();
    let sd = ShapeOptions::default();
    let shape = o.shape.unwrap_or_default();
    Ok(Parsed {
        opts: PackOptions {
            limit: o.limit,
            unit: o.unit.unwrap_or(d.unit),
            kind: o.kind,
            redact: o.redact.unwrap_or_default().into_core(),
            shape: ShapeOptions {
                drop_keys: shape.drop_keys.unwrap_or(sd.drop_keys),
                keep_keys: shape.keep_keys.unwrap_or(sd.keep_keys),
                html: shape.html.unwrap_or(sd.html),
                stack_traces: shape.stack_traces.unwrap_or(sd.stack_traces),
            },
            page_bytes: o.page_bytes,
            pageable: o.pageable,
            span_id: o.span_id,
            parent_id: o.parent_id,
            builder_version: o.builder_version,
            model_context_limit_tokens: o.model_context_limit_tokens,
            short_hashes: o.short_hashes.unwrap_or(false),
            segments: o.segments.unwrap_or(false),
            stream_cap: o.stream_cap,
            tenant: o.tenant.map(|t| {
                let d = TenantPolicy::default();
                TenantPolicy {
                    tenant: t.tenant,
                    key: t.key.unwrap_or(d.key),
                    require_key: t.require_key.unwrap_or(d.require_key),
                }
            }),
        },
        counter,
        store,
        return_stored: o.return_stored.unwrap_or(false),
    })
}

struct JsCounter<'a>(&'a js_sys::Function);

impl TokenCounter for JsCounter<'_> {
    fn count(&self, text: &str) -> Result<usize, String> {
        let value = self
            .0
            .call1(&JsValue::NULL, &JsValue::from_str(text))
            .map_err(|e| {
                e.dyn_ref::<js_sys::Error>()
                    .map(|e| String::from(e.message()))
                    .unwrap_or_else(|| "countTokens threw".into())
            })?;
        match value.as_f64() {
            Some(n) if n.is_finite() && n >= 0.0 && n.fract() == 0.0 => Ok(n as usize),
            _ => Err("countTokens must return a non-negative integer".into()),
        }
    }
}

fn parse_input(input: &JsPackInput) -> Result<ToolResult, JsValue> {
    let value: &JsValue = input.as_ref();
    if !value.is_object() {
        return Err(error_with_code(
            "pack input must be an object {tool, callId, text | json | binary}",
            "invalid_argument",
        ));
    }
    let json = get(value, "json");
    // The text is read apart from the other fields with `encodeInto` (see `string_of`):
    // serde-wasm-bindgen copies strings a character at a time, which on a multi-megabyte
    // tool result costs more than packing it.
    let string_field = |key: &str| match get(value, key) {
        t if t.is_undefined() || t.is_null() => Ok(None),
        t => match t.dyn_ref::<js_sys::JsString>() {
            // Checked before the copy: every UTF-16 unit is at least one UTF-8 byte.
            Some(s) if s.length() as usize > pack::MAX_INPUT_BYTES => {
                Err(into_error(pack::PackError::TooLarge {
                    bytes: u64::from(s.length()),
                    max: pack::MAX_INPUT_BYTES as u64,
                }))
            }
            Some(s) => Ok(Some(super::string_of(s))),
            None => Err(error_with_code(
                &format!("invalid pack input: {key} must be a string"),
                "invalid_argument",
            )),
        },
    };
    let text = string_field("text")?;
    let raw = string_field("raw")?;
    let meta_obj = js_sys::Object::assign(&js_sys::Object::new(), value.unchecked_ref());
    for key in ["json", "text", "raw"] {
        let _ = js_sys::Reflect::delete_property(&meta_obj, &JsValue::from_str(key));
    }
    let mut meta: JsInputMeta = from_js(meta_obj.into(), "pack input").map_err(scrubbed)?;
    meta.text = text;
    let given = usize::from(meta.text.is_some())
        + usize::from(meta.binary.is_some())
        + usize::from(raw.is_some())
        + usize::from(!json.is_undefined());
    if given != 1 {
        return Err(error_with_code(
            "pack input needs exactly one of text, json, binary, raw",
            "invalid_argument",
        ));
    }
    let body = if let Some(r) = raw {
        Body::sniff(r)
    } else if let Some(t) = meta.text {
        Body::Text(t)
    } else if let Some(b) = meta.binary {
        Body::Binary {
            bytes: b.bytes,
            media_type: b.media_type,
        }
    } else {
        pack::json_body(json_text_of(&json)?).map_err(into_error)?
    };
    Ok(ToolResult {
        tool: meta.tool,
        call_id: meta.call_id,
        body,
        exit_code: meta.exit_code.map(exit_code_of).transpose()?,
        timed_out: meta.timed_out,
        command: meta.command,
    })
}

/// From this many receipts on, they reach JS as one JSON text for `JSON.parse`.
const RECEIPTS_AS_JSON: usize = 8;

/// The result as a JS object. Its receipts, when there are many, are written as one JSON
/// text and parsed by the engine: a pack that redacted hundreds of secrets has as many, and
/// building them field by field crossed the boundary some ten times per receipt (a call per
/// property, a decode per string): packing a 4 MiB log with 727 receipts went from 341.4M
/// to 332.7M instructions. Fewer receipts keep the direct way, which they did before (on a
/// small result the difference was lost in the noise of the count). Either way the objects
/// are the same (plain objects with the same keys in the same order).
fn result_to_js(mut packed: Packed) -> Result<JsPackResult, JsValue> {
    if packed.receipts.len() < RECEIPTS_AS_JSON {
        return Ok(super::to_js_json(&packed)?.unchecked_into());
    }
    let serialize = |e: serde_json::Error| error_with_code(&e.to_string(), "serialize");
    let receipts = serde_json::to_string(&packed.receipts).map_err(serialize)?;
    // The rest with an empty list in the receipts' place, which the parsed list then takes
    // (an existing key keeps its position).
    packed.receipts = Vec::new();
    let out = super::to_js_json(&packed)?;
    js_sys::Reflect::set(
        &out,
        &JsValue::from_str("receipts"),
        &js_sys::JSON::parse(&receipts)?,
    )?;
    Ok(out.unchecked_into())
}

/// A caller's `Map`-like object as the core's [`PageStore`]: it holds page records
/// ([`StoredPage::to_record`]), so the page size travels with the text.
struct JsPageStore<'a>(&'a JsValue);

impl JsPageStore<'_> {
    fn call(&self, name: &str, args: &[JsValue]) -> Result<JsValue, PageStoreError> {
        let f = get(self.0, name).unchecked_into::<js_sys::Function>();
        let out = match args {
            [a] => f.call1(self.0, a),
            [a, b] => f.call2(self.0, a, b),
            _ => f.call0(self.0),
        }
        .map_err(|e| PageStoreError::Backend {
            message: e
                .dyn_ref::<js_sys::Error>()
                .map(|e| String::from(e.message()))
                .or_else(|| e.as_string())
                .unwrap_or_else(|| "the store threw".into()),
        })?;
        if out.is_instance_of::<js_sys::Promise>() && name == "get" {
            return Err(PageStoreError::Backend {
                message: "the store's get returned a Promise; read the record yourself and call getMoreFrom".into(),
            });
        }
        Ok(out)
    }
}

impl PageStore for JsPageStore<'_> {
    fn put(&mut self, id: &str, page: StoredPage<'_>) -> Result<bool, PageStoreError> {
        self.call(
            "set",
            &[JsValue::from_str(id), JsValue::from_str(&page.to_record())],
        )?;
        Ok(true)
    }

    fn get(&self, id: &str) -> Result<Option<StoredPage<'_>>, PageStoreError> {
        let value = self.call("get", &[JsValue::from_str(id)])?;
        if value.is_undefined() || value.is_null() {
            return Ok(None);
        }
        let record = value
            .as_string()
            .ok_or_else(|| PageStoreError::InvalidRecord {
                id: id.to_string(),
                why: "it is not a string".into(),
            })?;
        let page = StoredPage::from_record(id, &record)?;
        Ok(Some(StoredPage {
            text: std::borrow::Cow::Owned(page.text.into_owned()),
            page_bytes: page.page_bytes,
        }))
    }
}

/// Packs one tool result: redact, shape, cut to the budget, envelope, span record. When the
/// content was cut, the full redacted text is kept for `getMore` (the module's bounded store,
/// or `options.store`), with its page size.
#[wasm_bindgen]
pub fn pack(input: &JsPackInput, options: Option<JsPackOptions>) -> Result<JsPackResult, JsValue> {
    let result = parse_input(input)?;
    let parsed = parse_options(options)?;
    let counter = parsed.counter.as_ref().map(JsCounter);
    let counter_ref = counter.as_ref().map(|c| c as &dyn TokenCounter);
    // The registry is copied out: no borrow is held while the counter (JS) runs.
    let (registry, store_max) = with_packer(|p| (p.registry.clone(), p.store.max_bytes))?;
    let store_limit = (!parsed.return_stored && parsed.store.is_none()).then_some(store_max);
    let mut packed = pack::pack(&result, &parsed.opts, &registry, counter_ref, store_limit)
        .map_err(into_error)?;
    let stored = keep(&mut packed, &parsed)?;
    // JavaScript slices its strings in UTF-16 units.
    packed.cut = (packed.cut.take()).map(|c| c.into_utf16_offsets(&packed.envelope.content));
    let out = result_to_js(packed)?;
    if let Some(value) = stored {
        js_sys::Reflect::set(&out, &JsValue::from_str("stored"), &value)?;
    }
    Ok(out)
}

/// Where the text to page through goes: the caller's `store` (as a page record), back to
/// the caller (`returnStored`: the page record, returned for the caller to keep), or the
/// module's store (borrowed only to put it there). Never copied back across the boundary
/// otherwise.
fn keep(packed: &mut Packed, parsed: &Parsed) -> Result<Option<JsValue>, JsValue> {
    let Some(s) = packed.stored.take() else {
        return Ok(None);
    };
    if parsed.return_stored {
        let record = StoredPage {
            text: std::borrow::Cow::Borrowed(&s.text),
            page_bytes: s.page_bytes,
        }
        .to_record();
        let value = to_js(&serde_json::json!({
            "id": s.id, "page_bytes": s.page_bytes, "record": record
        }))?;
        return Ok(Some(value));
    }
    match &parsed.store {
        Some(store) => {
            pack::keep(&mut JsPageStore(store), &s).map_err(into_error)?;
        }
        None => with_packer_mut(|p| p.keep_stored(s))?.map_err(into_error)?,
    }
    Ok(None)
}

/// Reads the module's packer. `try_borrow`, so that a call made while another holds it
/// (which the short borrows above rule out) is an error, never a panic.
fn with_packer<T>(f: impl FnOnce(&Packer) -> T) -> Result<T, JsValue> {
    PACKER.with(|p| match p.try_borrow() {
        Ok(p) => Ok(f(&p)),
        Err(_) => Err(busy()),
    })
}

fn with_packer_mut<T>(f: impl FnOnce(&mut Packer) -> T) -> Result<T, JsValue> {
    PACKER.with(|p| match p.try_borrow_mut() {
        Ok(mut p) => Ok(f(&mut p)),
        Err(_) => Err(busy()),
    })
}

fn busy() -> JsValue {
    error_with_code(
        "the packer is in use by the call that is calling back into it",
        "reentrant_call",
    )
}

/// An exit code from JS: an integer that fits a signed or unsigned 32-bit code. Anything
/// else (`NaN`, `2**32`, `1.5`) is refused rather than wrapped to a different code.
fn exit_code_of(n: f64) -> Result<i64, JsValue> {
    if n.is_finite() && n.fract() == 0.0 && (-2_147_483_648.0..=4_294_967_295.0).contains(&n) {
        Ok(n as i64)
    } else {
        Err(error_with_code(
            &format!("exit code must be an integer from -2147483648 to 4294967295, got {n}"),
            "invalid_argument",
        ))
    }
}

/// The next page of a result `pack` cut, as the observation of a `get_more` call, from the
/// module's store or `options.store`, at the page size kept with it.
#[wasm_bindgen(js_name = getMore)]
pub fn get_more(
    id: &str,
    offset: f64,
    call_id: Option<String>,
    options: Option<JsPackOptions>,
) -> Result<JsPackResult, JsValue> {
    let parsed = parse_options(options)?;
    let offset = offset_of(offset)?;
    let call_id = call_id.unwrap_or_else(|| id.to_string());
    let packed = match &parsed.store {
        None => with_packer(|p| p.get_more(id, offset, &call_id, &parsed.opts))?,
        Some(store) => pack::get_more_in(&JsPageStore(store), id, offset, &call_id, &parsed.opts),
    }
    .map_err(into_error)?;
    result_to_js(packed)
}

/// A page of a page record (`result.stored.record` of a `returnStored` pack, read back from
/// a KV) as the observation of a `get_more` call, at the page size the record holds
/// (`options.pageBytes` overrides it).
#[wasm_bindgen(js_name = getMoreFrom)]
pub fn get_more_from(
    record: &str,
    id: &str,
    offset: f64,
    call_id: Option<String>,
    options: Option<JsPackOptions>,
) -> Result<JsPackResult, JsValue> {
    let parsed = parse_options(options)?;
    let call_id = call_id.unwrap_or_else(|| id.to_string());
    let page =
        StoredPage::from_record(id, record).map_err(|e| into_error(pack::PackError::Store(e)))?;
    let size = parsed.opts.page_bytes.unwrap_or(page.page_bytes);
    let packed = pack::get_more_from(
        &page.text,
        id,
        offset_of(offset)?,
        &call_id,
        size,
        &parsed.opts,
    )
    .map_err(into_error)?;
    result_to_js(packed)
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

/// Declares a tool in the module's registry (its kind and its maximum observation size).
#[wasm_bindgen(js_name = registerTool)]
pub fn register_tool(name: &str, spec: JsToolSpec) -> Result<(), JsValue> {
    let s: JsSpec = options_from(spec.as_ref(), "tool spec").map_err(scrubbed)?;
    let d = ToolSpec::default();
    let spec = ToolSpec {
        kind: s.kind,
        max_bytes: s.max_bytes.unwrap_or(d.max_bytes),
        page_bytes: s.page_bytes,
        pageable: s.pageable.unwrap_or(d.pageable),
    };
    if spec.max_bytes == 0 {
        return Err(invalid("maxBytes must be at least 1"));
    }
    with_packer_mut(|p| {
        p.registry.register(name, spec);
    })?;
    Ok(())
}

/// The module's page store: entries, bytes held, bounds, evictions so far.
#[wasm_bindgen(js_name = pageStoreStats)]
pub fn page_store_stats() -> Result<JsPageStoreStats, JsValue> {
    let stats = with_packer(|p| {
        let s = &p.store;
        serde_json::json!({
            "entries": s.len(), "bytes": s.bytes(), "maxBytes": s.max_bytes,
            "maxEntries": s.max_entries, "evicted": s.evicted()
        })
    })?;
    Ok(to_js(&stats)?.unchecked_into())
}

/// Packs a byte stream (a fetch body, a process's stdout) with memory bounded by a stated
/// cap (`streamCap`, at most the page store's size): within it the result is packed and
/// paged like `pack`'s, beyond it the content is the short error.
#[wasm_bindgen]
pub struct StreamPacker {
    inner: Option<pack::StreamPacker>,
    parsed: Parsed,
    scratch: Vec<u8>,
}

#[wasm_bindgen]
impl StreamPacker {
    #[wasm_bindgen(constructor)]
    pub fn new(
        tool: &str,
        call_id: &str,
        command: Option<String>,
        options: Option<JsPackOptions>,
    ) -> Result<StreamPacker, JsValue> {
        let parsed = parse_options(options)?;
        if parsed.counter.is_some() {
            return Err(invalid(
                "a streamed result is packed to a byte budget: countTokens does not apply",
            ));
        }
        let (registry, store_max) = with_packer(|p| (p.registry.clone(), p.store.max_bytes))?;
        let store_limit = (!parsed.return_stored && parsed.store.is_none()).then_some(store_max);
        let inner =
            pack::StreamPacker::new(tool, call_id, command, &parsed.opts, &registry, store_limit)
                .map_err(into_error)?;
        Ok(StreamPacker {
            inner: Some(inner),
            parsed,
            scratch: Vec::new(),
        })
    }

    /// Feeds the next chunk: a string, a `Uint8Array` or an `ArrayBuffer`.
    pub fn push(&mut self, chunk: &JsInput) -> Result<(), JsValue> {
        let inner = self.inner.as_mut().ok_or_else(finished)?;
        if let Some(view) = chunk.dyn_ref::<js_sys::Uint8Array>() {
            self.scratch.resize(view.length() as usize, 0);
            view.copy_to(&mut self.scratch);
            inner.push(&self.scratch);
            if self.scratch.len() > 1 << 20 {
                // A huge chunk's copy is not kept for the next one.
                self.scratch = Vec::new();
            }
        } else {
            inner.push(&bytes_of(chunk, "chunk")?);
        }
        Ok(())
    }

    /// Bytes received so far.
    #[wasm_bindgen(getter, js_name = bytesRead)]
    pub fn bytes_read(&self) -> f64 {
        self.inner.as_ref().map_or(0.0, |s| s.bytes_read() as f64)
    }

    /// Bytes held for the output (at most `cap`).
    #[wasm_bindgen(getter, js_name = heldBytes)]
    pub fn held_bytes(&self) -> f64 {
        self.inner.as_ref().map_or(0.0, |s| s.held_bytes() as f64)
    }

    /// The most redacted output kept for paging; a longer stream gets the short error.
    #[wasm_bindgen(getter)]
    pub fn cap(&self) -> f64 {
        self.inner.as_ref().map_or(0.0, |s| s.cap() as f64)
    }

    /// Ends the stream with the command's outcome and returns the packed result. The exit
    /// code is an integer from -2147483648 to 4294967295 (anything else is refused).
    pub fn finish(
        &mut self,
        exit_code: Option<f64>,
        timed_out: Option<bool>,
    ) -> Result<JsPackResult, JsValue> {
        let exit_code = exit_code.map(exit_code_of).transpose()?;
        let inner = self.inner.take().ok_or_else(finished)?;
        self.scratch = Vec::new();
        let mut packed = inner
            .finish(exit_code, timed_out.unwrap_or(false))
            .map_err(into_error)?;
        let stored = keep(&mut packed, &self.parsed)?;
        let out = result_to_js(packed)?;
        if let Some(value) = stored {
            js_sys::Reflect::set(&out, &JsValue::from_str("stored"), &value)?;
        }
        Ok(out)
    }
}

fn finished() -> JsValue {
    error_with_code("this StreamPacker has already finished", "packer_finished")
}
