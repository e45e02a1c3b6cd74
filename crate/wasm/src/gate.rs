//! JS binding of the gate: `toolSpan`, `writeBodies`, `bodyAction`, `exportReady`,
//! `manifest`, `diffManifests`, `readBack`, and the adapter that lets a JS `Map` (or any
//! object with `get` and `set`/`put`) serve as the body store.

use serde::Deserialize;
use serde_json::Value;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

use super::canonical::{form_of, json_of, json_text_of};
use super::{bytes_of, error_with_code, from_js, into_error, options_of, to_js};
use toolslice::canonical::Form;
use toolslice::gate::{
    self, body_action, BodyAction, BodyStore, ManifestEntry, StoreError, ToolSpan,
};

#[wasm_bindgen(typescript_custom_section)]
const TS_GATE: &'static str = r#"
/** The seed's span record: what leaves the machine. */
export interface ToolSpan {
  name: string;
  status: string;
  args_sha256: string;
  /** UTF-8 bytes of the canonical arguments. */
  args_len: number;
  result_sha256: string;
  result_len: number;
}

export interface PayloadOptions {
  /** Canonical form to hash (default "python", the seeds'). */
  form?: CanonicalForm;
  /**
   * When true, `args` and `result` are JSON *texts* (strings or UTF-8 bytes), canonicalised
   * without loss (big integers stay exact). Otherwise they are JavaScript values.
   */
  json?: boolean;
}

/**
 * A synchronous body store: `get(digest)` returns the stored canonical text (or
 * undefined/null), `set(digest, text)` (or `put`) stores one; `has(digest)` is used when
 * present. A `Map<string, string>` fits. For an asynchronous store (an edge KV), read with
 * `await`, decide with `bodyAction`, and pass `exportReady` a `Set` of the digests present.
 */
export interface BodyStoreLike {
  get(digest: string): string | null | undefined;
  set?(digest: string, text: string): unknown;
  put?(digest: string, text: string): unknown;
  has?(digest: string): boolean;
}

/** Something that can answer "is this digest stored?": a `BodyStoreLike` or a `Set<string>`. */
export type DigestLookup = BodyStoreLike | { has(digest: string): boolean };

/** What a store should do with a body: write it, or keep what it has (the same text). */
export type BodyAction = "write" | "keep";

export type GateProblemKind = "open" | "missing" | "invalid_digest" | "invalid_span";

/** One reason the gate refuses export; `message` is the seed's `open:NAME` / `missing:DIGEST`. */
export interface GateProblem {
  kind: GateProblemKind;
  /** Index of the span in the input. */
  span: number;
  name: string | null;
  field: "args_sha256" | "result_sha256" | null;
  digest: string | null;
  message: string;
}

/** `[name, status, args_sha256, result_sha256]`, like the seed's tuples. */
export type ManifestEntry = [string | null, string | null, string | null, string | null];

export interface ManifestDiff {
  only_left: ManifestEntry[];
  only_right: ManifestEntry[];
}

export type ReadBackIssueKind = "missing_span" | "missing_field" | "changed_field" | "unexpected_span";

export interface ReadBackIssue {
  kind: ReadBackIssueKind;
  sent_index: number | null;
  fetched_index: number | null;
  name: string | null;
  field: string | null;
  sent: JsonValue | null;
  fetched: JsonValue | null;
  /** The fetched string is a strict prefix of the sent one: an attribute budget cut it. */
  truncated: boolean;
}

export interface ReadBack {
  /** True only when every sent span came back with every field intact. */
  ok: boolean;
  sent: number;
  fetched: number;
  intact: number;
  issues: ReadBackIssue[];
}
"#;

#[wasm_bindgen]
extern "C" {
    #[wasm_bindgen(typescript_type = "ToolSpan")]
    pub type JsToolSpan;
    #[wasm_bindgen(typescript_type = "ToolSpan[]")]
    pub type JsToolSpans;
    #[wasm_bindgen(typescript_type = "Array<ToolSpan | JsonValue>")]
    pub type JsSpanList;
    #[wasm_bindgen(typescript_type = "PayloadOptions")]
    pub type JsPayloadOptions;
    #[wasm_bindgen(typescript_type = "JsonValue | string | Uint8Array | ArrayBuffer")]
    pub type JsPayload;
    #[wasm_bindgen(typescript_type = "BodyStoreLike")]
    pub type JsBodyStore;
    #[wasm_bindgen(typescript_type = "DigestLookup")]
    pub type JsDigestLookup;
    #[wasm_bindgen(typescript_type = "BodyAction")]
    pub type JsBodyAction;
    #[wasm_bindgen(typescript_type = "GateProblem[]")]
    pub type JsGateProblems;
    #[wasm_bindgen(typescript_type = "ManifestEntry[]")]
    pub type JsManifest;
    #[wasm_bindgen(typescript_type = "ManifestDiff")]
    pub type JsManifestDiff;
    #[wasm_bindgen(typescript_type = "ReadBack")]
    pub type JsReadBack;
}

#[derive(Deserialize, Default)]
#[serde(default, deny_unknown_fields)]
struct PayloadOptions {
    form: Option<String>,
    json: bool,
}

fn payload_options(value: Option<JsPayloadOptions>) -> Result<(Form, bool), JsValue> {
    let opts: PayloadOptions = options_of(value, "payload options")?;
    let form = form_of(opts.form.map(JsValue::from).as_ref())?;
    Ok((form, opts.json))
}

/// The canonical body of one payload (a JS value, or JSON text when `json` is set).
fn body(value: &JsValue, form: Form, json: bool, what: &str) -> Result<gate::Body, JsValue> {
    let text = if json {
        bytes_of(value, what)?
    } else {
        json_text_of(value)?.into_bytes()
    };
    gate::Body::from_json(&text, form).map_err(into_error)
}

/// The seed's `tool_span(name, args, result, status)`: two canonical hashes and lengths.
#[wasm_bindgen(js_name = toolSpan)]
pub fn tool_span_js(
    name: &str,
    args: &JsPayload,
    result: &JsPayload,
    status: &str,
    options: Option<JsPayloadOptions>,
) -> Result<JsToolSpan, JsValue> {
    let (form, json) = payload_options(options)?;
    let a = body(args, form, json, "args")?;
    let r = body(result, form, json, "result")?;
    Ok(to_js(&gate::tool_span(name, &a, &r, status))?.unchecked_into())
}

/// The seed's `write_bodies(store, span, args, result)`: stores the canonical bodies under
/// the span's digests. Throws `unstable_canonical_form` when a different text is already
/// stored under a digest, and `digest_mismatch` when a body does not hash to the span's
/// digest.
#[wasm_bindgen(js_name = writeBodies)]
pub fn write_bodies_js(
    store: &JsBodyStore,
    span: &JsToolSpan,
    args: &JsPayload,
    result: &JsPayload,
    options: Option<JsPayloadOptions>,
) -> Result<(), JsValue> {
    let (form, json) = payload_options(options)?;
    let span: ToolSpan = from_js(span.into(), "span")?;
    let a = body(args, form, json, "args")?;
    let r = body(result, form, json, "result")?;
    let mut store = JsStore::new(store)?;
    gate::write_bodies(&mut store, &span, &a, &r).map_err(into_error)
}

/// What a store should do with `text` under `digest`, given what it holds there
/// (`existing`, or null/undefined). Throws `unstable_canonical_form` for a different text,
/// `digest_mismatch` when `text` does not hash to `digest`, `invalid_digest` for anything
/// that is not a SHA-256 hex digest. For asynchronous stores.
#[wasm_bindgen(js_name = bodyAction)]
pub fn body_action_js(
    digest: &str,
    text: &str,
    existing: Option<String>,
) -> Result<JsBodyAction, JsValue> {
    let action = body_action(digest, text, existing.as_deref()).map_err(into_error)?;
    let name = match action {
        BodyAction::Write => "write",
        BodyAction::Keep => "keep",
    };
    Ok(JsValue::from_str(name).unchecked_into())
}

fn spans_of(value: &JsValue, what: &str) -> Result<Vec<Value>, JsValue> {
    match json_of(value)? {
        Value::Array(items) => Ok(items),
        _ => Err(error_with_code(
            &format!("{what} must be an array of spans"),
            "invalid_argument",
        )),
    }
}

/// Every problem that blocks export: open spans, bodies missing from the store, digests
/// that are not digests. An empty array means the spans may leave the machine.
#[wasm_bindgen(js_name = exportReady)]
pub fn export_ready_js(
    spans: &JsSpanList,
    store: &JsDigestLookup,
) -> Result<JsGateProblems, JsValue> {
    let spans = spans_of(spans, "spans")?;
    let store = JsStore::new(store)?;
    let problems = gate::export_ready(&spans, &store).map_err(into_error)?;
    Ok(to_js(&problems)?.unchecked_into())
}

/// The manifest of a run: `[name, status, args_sha256, result_sha256]` per span.
#[wasm_bindgen]
pub fn manifest(spans: &JsSpanList) -> Result<JsManifest, JsValue> {
    let spans = spans_of(spans, "spans")?;
    Ok(to_js(&gate::manifest(&spans).map_err(into_error)?)?.unchecked_into())
}

/// The multiset difference of two manifests, each side sorted as Python sorts tuples.
#[wasm_bindgen(js_name = diffManifests)]
pub fn diff_manifests_js(left: &JsManifest, right: &JsManifest) -> Result<JsManifestDiff, JsValue> {
    let left: Vec<ManifestEntry> = from_js(left.into(), "left manifest")?;
    let right: Vec<ManifestEntry> = from_js(right.into(), "right manifest")?;
    Ok(to_js(&gate::diff_manifests(&left, &right))?.unchecked_into())
}

/// Compares the spans sent to a collector with the spans fetched back: every hash that went
/// missing or changed is an issue, and `ok` is false unless every sent span came back intact.
#[wasm_bindgen(js_name = readBack)]
pub fn read_back_js(sent: &JsSpanList, fetched: &JsSpanList) -> Result<JsReadBack, JsValue> {
    let sent = spans_of(sent, "sent")?;
    let fetched = spans_of(fetched, "fetched")?;
    Ok(super::to_js_json(&gate::read_back(&sent, &fetched))?.unchecked_into())
}

/// A JS object used as a [`BodyStore`]: `get`, `set` or `put`, and `has` when present.
struct JsStore {
    target: JsValue,
    get: Option<js_sys::Function>,
    set: Option<js_sys::Function>,
    has: Option<js_sys::Function>,
}

impl JsStore {
    fn new(target: &JsValue) -> Result<JsStore, JsValue> {
        if !target.is_object() {
            return Err(error_with_code(
                "store must be an object with get(digest) and set(digest, text), such as a Map",
                "invalid_argument",
            ));
        }
        let method = |name: &str| -> Option<js_sys::Function> {
            js_sys::Reflect::get(target, &JsValue::from_str(name))
                .ok()?
                .dyn_into()
                .ok()
        };
        let store = JsStore {
            target: target.clone(),
            get: method("get"),
            set: method("set").or_else(|| method("put")),
            has: method("has"),
        };
        if store.get.is_none() && store.has.is_none() {
            return Err(error_with_code(
                "store must have get(digest) (or, for exportReady, has(digest)), such as a Map or a Set",
                "invalid_argument",
            ));
        }
        Ok(store)
    }

    fn call(&self, f: &js_sys::Function, args: &[&JsValue]) -> Result<JsValue, StoreError> {
        let out = match args {
            [a] => f.call1(&self.target, a),
            [a, b] => f.call2(&self.target, a, b),
            _ => f.call0(&self.target),
        }
        .map_err(|e| StoreError::Backend {
            message: describe(&e),
        })?;
        if out.is_instance_of::<js_sys::Promise>() {
            return Err(StoreError::Backend {
                message: "the store returned a Promise; this function needs a synchronous store (use bodyAction and a Set of present digests for an async one)".into(),
            });
        }
        Ok(out)
    }
}

fn describe(err: &JsValue) -> String {
    err.dyn_ref::<js_sys::Error>()
        .map(|e| String::from(e.message()))
        .or_else(|| err.as_string())
        .unwrap_or_else(|| "a JS exception".into())
}

impl BodyStore for JsStore {
    fn get(&self, digest: &str) -> Result<Option<String>, StoreError> {
        let Some(get) = &self.get else {
            return Err(StoreError::Backend {
                message: "the store has no get(digest)".into(),
            });
        };
        let out = self.call(get, &[&JsValue::from_str(digest)])?;
        if out.is_undefined() || out.is_null() {
            return Ok(None);
        }
        out.as_string()
            .map(Some)
            .ok_or_else(|| StoreError::Backend {
                message: format!("the store holds something other than a string under {digest}"),
            })
    }

    fn put(&mut self, digest: &str, text: &str) -> Result<(), StoreError> {
        let Some(set) = &self.set else {
            return Err(StoreError::Backend {
                message: "the store has no set(digest, text) or put(digest, text)".into(),
            });
        };
        self.call(set, &[&JsValue::from_str(digest), &JsValue::from_str(text)])?;
        Ok(())
    }

    fn contains(&self, digest: &str) -> Result<bool, StoreError> {
        match &self.has {
            Some(has) => Ok(self.call(has, &[&JsValue::from_str(digest)])?.is_truthy()),
            None => Ok(self.get(digest)?.is_some()),
        }
    }
}
