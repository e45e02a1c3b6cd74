//! JS binding of the gate: `toolSpan`, `writeBodies`, `bodyAction`, `exportReady`,
//! `manifest`, `diffManifests`, `readBack`, and the adapter that lets a JS `Map` (or any
//! object with `get` and `set`/`put`) serve as the body store.

use serde::Deserialize;
use serde_json::Value;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

use super::canonical::{form_of, json_of, json_text_of};
use super::pack::JsPolicy;
use super::{bytes_of, error_with_code, from_js, into_error, options_of, to_js};
use toolslice::gate::{
    self, body_action, BodyAction, BodyStore, ManifestEntry, StoreError, ToolSpan, VolatilePolicy,
};
use toolslice::redact::Policy;

#[wasm_bindgen(typescript_custom_section)]
const TS_GATE: &'static str = r#"
/** Why a value was taken out of a hashed body. */
export type VolatileKind = "timestamp" | "request_id" | "temp_path" | "key" | "path";

/** A value stripped before hashing: kept beside the record, never in a hash. */
export interface StrippedValue {
  /** `$.args...` or `$.result...`. */
  field_path: string;
  kind: VolatileKind;
  value: JsonValue;
}

/** A redaction receipt of the gate: `field_path` starts with `$.args` or `$.result`. */
export interface GateReceipt {
  field_path: string;
  rule_id: string;
  original_len: number;
  replacement: string;
  offset?: number;
}

/**
 * The seed's span record: what leaves the machine. `receipts` and `volatile` are present
 * only when something was redacted or stripped; they are not part of any hash or manifest.
 */
export interface ToolSpan {
  name: string;
  status: string;
  args_sha256: string;
  /** UTF-8 bytes of the canonical arguments. */
  args_len: number;
  result_sha256: string;
  result_len: number;
  receipts?: GateReceipt[];
  volatile?: StrippedValue[];
}

/**
 * Which values change on every run without the call changing. Default: timestamp and
 * request-id key names (`timestamp`, `created_at`, `request_id`, `trace_id`, `nonce` ...,
 * compared without case and separators) and absolute temp paths.
 */
export interface VolatilePolicy {
  /** Use the default key names (default true). */
  defaults?: boolean;
  /** More volatile key names. */
  keys?: string[];
  /** Default key names that are data here (`time` in a timetable). */
  keep?: string[];
  /** JSON paths: `$.meta.run`, `$.items[*].seen`, `$.*.ts`. */
  paths?: string[];
  /** Replace `/tmp/<random>`, `/var/folders/../T/<random>`, `%TEMP%\<random>` (default true). */
  tempPaths?: boolean;
}

export interface PayloadOptions {
  /** Canonical form to hash (default "python", the seeds'). */
  form?: CanonicalForm;
  /**
   * When true, `args` and `result` are JSON *texts* (strings or UTF-8 bytes), canonicalised
   * without loss (big integers stay exact). Otherwise they are JavaScript values.
   */
  json?: boolean;
  /**
   * Redaction before hashing (the seed's order: redact, canonicalise, hash, store), with the
   * same rules as `pack`. On by default; `false` turns it off (the secret is then hashed and
   * stored), a policy object configures it.
   */
  redact?: boolean | RedactPolicy;
  /** Volatile values stripped before hashing. On by default; `false` turns it off. */
  volatile?: boolean | VolatilePolicy;
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

/// `true`/absent: the default policy; `false`: off; an object: that policy.
#[derive(Deserialize)]
#[serde(untagged)]
enum Toggle<T> {
    On(bool),
    Policy(T),
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase", default, deny_unknown_fields)]
struct JsVolatile {
    defaults: Option<bool>,
    keys: Option<Vec<String>>,
    keep: Option<Vec<String>>,
    paths: Option<Vec<String>>,
    temp_paths: Option<bool>,
}

#[derive(Deserialize, Default)]
#[serde(default, deny_unknown_fields)]
struct PayloadOptions {
    form: Option<String>,
    json: bool,
    redact: Option<Toggle<JsPolicy>>,
    volatile: Option<Toggle<JsVolatile>>,
}

/// The options of every gate function: the compiled gate and whether payloads are JSON text.
fn payload_options(value: Option<JsPayloadOptions>) -> Result<(gate::Gate, bool), JsValue> {
    let opts: PayloadOptions = options_of(value, "payload options")?;
    let form = form_of(opts.form.map(JsValue::from).as_ref())?;
    let redact = match opts.redact {
        None | Some(Toggle::On(true)) => Some(Policy::default()),
        Some(Toggle::On(false)) => None,
        Some(Toggle::Policy(p)) => Some(p.into_core()),
    };
    let volatile = match opts.volatile {
        None | Some(Toggle::On(true)) => Some(VolatilePolicy::default()),
        Some(Toggle::On(false)) => None,
        Some(Toggle::Policy(v)) => {
            let d = VolatilePolicy::default();
            Some(VolatilePolicy {
                defaults: v.defaults.unwrap_or(d.defaults),
                keys: v.keys.unwrap_or(d.keys),
                keep: v.keep.unwrap_or(d.keep),
                paths: v.paths.unwrap_or(d.paths),
                temp_paths: v.temp_paths.unwrap_or(d.temp_paths),
            })
        }
    };
    let policy = gate::GatePolicy {
        form,
        redact,
        volatile,
    };
    Ok((gate::Gate::new(&policy).map_err(into_error)?, opts.json))
}

/// The JSON text of one payload (a JS value, or JSON text when `json` is set).
fn payload(value: &JsValue, json: bool, what: &str) -> Result<Vec<u8>, JsValue> {
    if json {
        bytes_of(value, what)
    } else {
        Ok(json_text_of(value)?.into_bytes())
    }
}

fn record(
    gate: &gate::Gate,
    json: bool,
    name: &str,
    args: &JsValue,
    result: &JsValue,
    status: &str,
) -> Result<gate::Recorded, JsValue> {
    let a = payload(args, json, "args")?;
    let r = payload(result, json, "result")?;
    gate.record(name, &a, &r, status).map_err(into_error)
}

/// The seed's `tool_span(name, args, result, status)`: two canonical hashes and lengths,
/// taken after redaction and volatile stripping (both on by default).
#[wasm_bindgen(js_name = toolSpan)]
pub fn tool_span_js(
    name: &str,
    args: &JsPayload,
    result: &JsPayload,
    status: &str,
    options: Option<JsPayloadOptions>,
) -> Result<JsToolSpan, JsValue> {
    let (gate, json) = payload_options(options)?;
    let rec = record(&gate, json, name, args, result, status)?;
    Ok(to_js(&rec.span)?.unchecked_into())
}

/// The seed's `write_bodies(store, span, args, result)`: stores the canonical bodies (after
/// redaction and volatile stripping, with the same options as `toolSpan`) under the span's
/// digests. Throws `unstable_canonical_form` when a different text is already stored under a
/// digest, and `digest_mismatch` when a body does not hash to the span's digest.
#[wasm_bindgen(js_name = writeBodies)]
pub fn write_bodies_js(
    store: &JsBodyStore,
    span: &JsToolSpan,
    args: &JsPayload,
    result: &JsPayload,
    options: Option<JsPayloadOptions>,
) -> Result<(), JsValue> {
    let (gate, json) = payload_options(options)?;
    let span: ToolSpan = from_js(span.into(), "span")?;
    let rec = record(&gate, json, &span.name, args, result, &span.status)?;
    let mut store = JsStore::new(store)?;
    gate::write_bodies(&mut store, &span, &rec.args, &rec.result).map_err(into_error)
}

/// `toolSpan` and `writeBodies` in one call, as the seed's runner wiring asks: the span of
/// the call (redacted, volatile values stripped) and its bodies in `store`.
#[wasm_bindgen(js_name = recordCall)]
pub fn record_call_js(
    store: &JsBodyStore,
    name: &str,
    args: &JsPayload,
    result: &JsPayload,
    status: &str,
    options: Option<JsPayloadOptions>,
) -> Result<JsToolSpan, JsValue> {
    let (gate, json) = payload_options(options)?;
    let rec = record(&gate, json, name, args, result, status)?;
    let mut store = JsStore::new(store)?;
    gate::write_bodies(&mut store, &rec.span, &rec.args, &rec.result).map_err(into_error)?;
    Ok(to_js(&rec.span)?.unchecked_into())
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
pub(crate) struct JsStore {
    target: JsValue,
    get: Option<js_sys::Function>,
    set: Option<js_sys::Function>,
    has: Option<js_sys::Function>,
}

impl JsStore {
    pub(crate) fn new(target: &JsValue) -> Result<JsStore, JsValue> {
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

#[wasm_bindgen(typescript_custom_section)]
const TS_GATED: &'static str = r#"
export interface GateToolOptions extends PayloadOptions {
  /** Where the bodies go (a `Map`, or any `BodyStoreLike`); default: a new `Map`. */
  store?: BodyStoreLike;
  /** Called with every span, right after the call settles and its bodies are stored. */
  onSpan?: (span: ToolSpan) => void;
}

/**
 * The tool function wrapped at the boundary: same argument, same (awaited) result or
 * rejection, and every call recorded by `recordCall` (arguments hashed before the tool runs;
 * status `ok`, or `error` with the thrown error as the result body).
 */
export type GatedTool<A, R> = (args: A) => Promise<Awaited<R>>;
"#;

#[wasm_bindgen]
extern "C" {
    #[wasm_bindgen(typescript_type = "GateToolOptions")]
    pub type JsGateToolOptions;
    #[wasm_bindgen(typescript_type = "(args: any) => any")]
    pub type JsToolFunction;
    #[wasm_bindgen(typescript_type = "GatedTool<any, any>")]
    pub type JsGatedTool;
}

/// The state one gated tool shares between its calls.
struct Gated {
    name: String,
    tool: js_sys::Function,
    store: JsValue,
    on_span: Option<js_sys::Function>,
    gate: gate::Gate,
    json: bool,
}

impl Gated {
    /// Records one settled call: bodies into the store, the span to `onSpan`.
    fn settle(&self, args: &[u8], result: &[u8], status: &str) -> Result<(), JsValue> {
        let rec = self
            .gate
            .record(&self.name, args, result, status)
            .map_err(into_error)?;
        let mut store = JsStore::new(&self.store)?;
        gate::write_bodies(&mut store, &rec.span, &rec.args, &rec.result).map_err(into_error)?;
        if let Some(f) = &self.on_span {
            f.call1(&JsValue::NULL, &to_js(&rec.span)?)?;
        }
        Ok(())
    }

    /// The result body of a value the tool returned (undefined is JSON null).
    fn result_text(&self, value: &JsValue) -> Result<Vec<u8>, JsValue> {
        if value.is_undefined() {
            return Ok(b"null".to_vec());
        }
        payload(value, self.json, "result")
    }
}

/// The result body of what a tool threw.
fn thrown(err: &JsValue) -> Vec<u8> {
    let get = |key: &str| {
        js_sys::Reflect::get(err, &JsValue::from_str(key))
            .ok()
            .and_then(|v| v.as_string())
    };
    let (message, name, code) = if err.is_instance_of::<js_sys::Error>() {
        (describe(err), get("name"), get("code"))
    } else {
        let text = err.as_string().unwrap_or_else(|| describe(err));
        (text, None, None)
    };
    gate::error_result(&message, name.as_deref(), code.as_deref()).into_bytes()
}

/// Wraps a tool function (sync or async) so that the same call both invokes the tool and
/// records it (seed 002: "wire it to the agent runner so the same function both invokes the
/// tool and calls tool_span plus write_bodies"). The wrapper returns a Promise of the tool's
/// result, or rejects with what it threw, after the span is recorded.
#[wasm_bindgen(js_name = gateTool)]
pub fn gate_tool(
    name: &str,
    tool: JsToolFunction,
    options: Option<JsGateToolOptions>,
) -> Result<JsGatedTool, JsValue> {
    let tool: js_sys::Function = JsValue::from(tool)
        .dyn_into()
        .map_err(|_| error_with_code("the tool must be a function", "invalid_argument"))?;
    // `store` and `onSpan` are JS objects: read them here; the rest are payload options.
    let opts: JsValue = options.map(JsValue::from).unwrap_or(JsValue::UNDEFINED);
    let (mut store, mut on_span, mut rest) = (JsValue::UNDEFINED, None, JsValue::UNDEFINED);
    if opts.is_object() {
        let copy = js_sys::Object::assign(&js_sys::Object::new(), opts.unchecked_ref());
        let key = |k: &str| JsValue::from_str(k);
        store = js_sys::Reflect::get(&copy, &key("store"))?;
        let f = js_sys::Reflect::get(&copy, &key("onSpan"))?;
        if !f.is_undefined() {
            on_span =
                Some(f.dyn_into::<js_sys::Function>().map_err(|_| {
                    error_with_code("onSpan must be a function", "invalid_argument")
                })?);
        }
        js_sys::Reflect::delete_property(&copy, &key("store"))?;
        js_sys::Reflect::delete_property(&copy, &key("onSpan"))?;
        rest = copy.into();
    }
    if store.is_undefined() {
        store = js_sys::Map::new().into();
    }
    JsStore::new(&store)?;
    let (gate, json) = payload_options(Some(rest.unchecked_into()))?;
    let state = std::rc::Rc::new(Gated {
        name: name.to_string(),
        tool,
        store,
        on_span,
        gate,
        json,
    });
    let call = move |args: JsValue| -> Result<JsValue, JsValue> {
        // Hash what the tool received, before it can mutate it.
        let args_text = payload(&args, state.json, "args")?;
        let out = match state.tool.call1(&JsValue::NULL, &args) {
            Ok(out) => out,
            Err(err) => {
                state.settle(&args_text, &thrown(&err), "error")?;
                return Ok(js_sys::Promise::reject(&err).into());
            }
        };
        let promise = js_sys::Promise::resolve(&out);
        let (ok_state, err_state) = (state.clone(), state.clone());
        let ok_args = args_text.clone();
        let on_ok = Closure::once_into_js(move |value: JsValue| -> Result<JsValue, JsValue> {
            let result = ok_state.result_text(&value)?;
            ok_state.settle(&ok_args, &result, "ok")?;
            Ok(value)
        });
        let on_err = Closure::once_into_js(move |err: JsValue| -> Result<JsValue, JsValue> {
            err_state.settle(&args_text, &thrown(&err), "error")?;
            Err(err)
        });
        // `then` called by name: it takes the two leaked closures as plain functions.
        let then: js_sys::Function =
            js_sys::Reflect::get(&promise, &JsValue::from_str("then"))?.dyn_into()?;
        then.call2(&promise, &on_ok, &on_err)
    };
    let closure = Closure::<dyn FnMut(JsValue) -> Result<JsValue, JsValue>>::new(call);
    Ok(closure.into_js_value().unchecked_into())
}

#[wasm_bindgen(typescript_custom_section)]
const TS_GENERATION: &'static str = r#"
export interface GenerationOptions {
  /** The model turn (pairs records across runs when `id` is absent). */
  turn?: number;
  /** A stable id of the generation (pairs records across runs). */
  id?: string;
  /** Redaction before hashing (default on, the gate's rules); `false` turns it off. */
  redact?: boolean | RedactPolicy;
}

/**
 * The fingerprint of generation text that never passed through a tool: one line of the
 * file kept beside the manifest (seed 002), never part of a tool hash.
 */
export interface GenerationFingerprint {
  id?: string;
  turn?: number;
  /** SHA-256 of the (redacted) text's UTF-8 bytes. */
  generation_sha256: string;
  generation_len: number;
  receipts?: GateReceipt[];
}
"#;

#[wasm_bindgen]
extern "C" {
    #[wasm_bindgen(typescript_type = "GenerationOptions")]
    pub type JsGenerationOptions;
    #[wasm_bindgen(typescript_type = "GenerationFingerprint")]
    pub type JsGenerationFingerprint;
}

#[derive(Deserialize, Default)]
#[serde(default, deny_unknown_fields)]
struct GenerationOptions {
    turn: Option<u64>,
    id: Option<String>,
    redact: Option<Toggle<JsPolicy>>,
}

/// Fingerprints one turn's generation text (redacted first, by default).
#[wasm_bindgen(js_name = generationFingerprint)]
pub fn generation_fingerprint_js(
    text: &JsPayload,
    options: Option<JsGenerationOptions>,
) -> Result<JsGenerationFingerprint, JsValue> {
    let opts: GenerationOptions = options_of(options, "generation options")?;
    let bytes = bytes_of(text, "text")?;
    let text = String::from_utf8(bytes).map_err(|e| {
        error_with_code(
            &format!(
                "text is not valid UTF-8 (bad byte at offset {})",
                e.utf8_error().valid_up_to()
            ),
            "invalid_utf8",
        )
    })?;
    let redactor = match opts.redact {
        None | Some(Toggle::On(true)) => Some(toolslice::redact::Redactor::default()),
        Some(Toggle::On(false)) => None,
        Some(Toggle::Policy(p)) => {
            Some(toolslice::redact::Redactor::new(&p.into_core()).map_err(into_error)?)
        }
    };
    let fp = gate::generation_fingerprint(&text, opts.turn, opts.id.as_deref(), redactor.as_ref());
    Ok(to_js(&fp)?.unchecked_into())
}
