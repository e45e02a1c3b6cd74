//! JS binding of the OTLP pipeline (`toolslice::pipeline`): `otlpEncodingOf`, `otlpSplit`,
//! `otlpAnnotate`, `otlpMerge`, `otlpErrorBody`, `otlpJsonToProtobuf`, and the per-trace state `OtlpTrace`. The
//! endpoint's JavaScript (crate/wasm/js/otlp/) only moves bytes and stores state; every
//! decision about a span is made here, in the core.

use wasm_bindgen::prelude::*;

use super::{from_js, into_error, to_js};
use toolslice::pipeline::{self, Annotation, Encoding, TraceBatch, TraceState};

#[wasm_bindgen(typescript_custom_section)]
const TS_OTLP: &'static str = r#"
/** The two encodings of OTLP/HTTP. */
export type OtlpEncoding = "json" | "protobuf";

/** A tool span held for its verdict: a one-span export request in its encoding. */
export interface OtlpHeldSpan { key: string; body: Uint8Array; }

/** What one export request brings to one trace. */
export interface OtlpTraceBatch {
  /** Lowercase hex; "" for spans without a trace id. */
  traceId: string;
  /** The measures for `OtlpTrace.ingest`: the trace's tool and model calls, measured (no
   * span bytes), encoded compactly. Bytes: to send them to the trace in another isolate,
   * `slice()` them first (see `OtlpSplit`). */
  measures: Uint8Array;
  held: OtlpHeldSpan[];
}

/** An export request, split: what to forward now, and per trace what to hold.
 *
 * Every `Uint8Array` in it (`passthrough`, each trace's `measures`, each held span's
 * `body`) is a view of one buffer holding them all, end to end: reading one, passing it to
 * this package or to `fetch` uses its bytes only. A structured clone (`postMessage`, a
 * Durable Object's storage or RPC) copies a view's whole buffer, and a kept view keeps that
 * buffer alive: `slice()` one to send it, store it, or keep it apart from a large request. */
export interface OtlpSplit {
  /** The encoding the passthrough and the held spans are written in. */
  encoding: OtlpEncoding;
  /** The request without the held tool spans; absent when nothing is left. */
  passthrough?: Uint8Array;
  traces: OtlpTraceBatch[];
  spans: number;
  tools: number;
  models: number;
}

/** The verdict written on a tool span as `toolslice.*` attributes. */
export interface OtlpAnnotation {
  status: "silent_clip" | "incomplete" | "hash_mismatch" | "clipped" | "ok" | "skipped";
  detail: string;
  observed_bytes: number | null;
  injected_bytes: number | null;
  join: "tool_call_id" | "order" | "unmatched";
}

export interface OtlpDecision { key: string; annotation: OtlpAnnotation; }

export interface OtlpIngested {
  /** Keys of the held spans taken (store their bodies); the others were a retry. */
  accepted: string[];
  decisions: OtlpDecision[];
}

/** A trace's run summary. */
export interface OtlpTraceSummary {
  trace_id: string;
  counts: Record<string, number>;
  decided: number;
  waiting: number;
  model_calls: number;
  silent_clips_per_100: number;
  expired_at_deadline: number;
  over_limit: number;
}
"#;

#[wasm_bindgen]
extern "C" {
    #[wasm_bindgen(typescript_type = "OtlpEncoding")]
    pub type JsOtlpEncoding;
    #[wasm_bindgen(typescript_type = "OtlpSplit")]
    pub type JsOtlpSplit;
    #[wasm_bindgen(typescript_type = "OtlpAnnotation")]
    pub type JsOtlpAnnotation;
    #[wasm_bindgen(typescript_type = "Uint8Array[]")]
    pub type JsBodies;
    #[wasm_bindgen(typescript_type = "OtlpIngested")]
    pub type JsOtlpIngested;
    #[wasm_bindgen(typescript_type = "OtlpDecision[]")]
    pub type JsOtlpDecisions;
    #[wasm_bindgen(typescript_type = "OtlpTraceSummary")]
    pub type JsOtlpTraceSummary;
    #[wasm_bindgen(typescript_type = "Uint8Array | string")]
    pub type JsOtlpMeasures;

    /// A fresh plain object of a split's result.
    type Plain;
    /// `this[key] = value`. Not `Reflect.set`, which js_sys imports behind an exception
    /// catch (a wrapper called with `arguments` for each property): a tenth of a split's
    /// time, for a set that cannot throw on a fresh plain object.
    #[wasm_bindgen(method, structural, indexing_setter)]
    fn set(this: &Plain, key: &JsValue, value: &JsValue);
}

fn encoding(value: &str) -> Result<Encoding, JsValue> {
    match value {
        "json" => Ok(Encoding::Json),
        "protobuf" => Ok(Encoding::Protobuf),
        other => Err(super::error_with_code(
            &format!("unknown OTLP encoding {other:?} (expected json or protobuf)"),
            "invalid_argument",
        )),
    }
}

fn set(obj: &js_sys::Object, key: &JsValue, value: &JsValue) {
    obj.unchecked_ref::<Plain>().set(key, value);
}

/// The property names of `otlpSplit`'s result, made into JS strings once per instance: the
/// endpoint splits every request it receives, and writing a name from the module on each
/// property (a call out of the module and a UTF-8 decode) was a sizeable part of a small
/// request's split.
struct SplitKeys {
    encoding: JsValue,
    passthrough: JsValue,
    traces: JsValue,
    spans: JsValue,
    tools: JsValue,
    models: JsValue,
    trace_id: JsValue,
    measures: JsValue,
    held: JsValue,
    key: JsValue,
    body: JsValue,
}

thread_local! {
    static SPLIT_KEYS: SplitKeys = SplitKeys {
        encoding: JsValue::from_str("encoding"),
        passthrough: JsValue::from_str("passthrough"),
        traces: JsValue::from_str("traces"),
        spans: JsValue::from_str("spans"),
        tools: JsValue::from_str("tools"),
        models: JsValue::from_str("models"),
        trace_id: JsValue::from_str("traceId"),
        measures: JsValue::from_str("measures"),
        held: JsValue::from_str("held"),
        key: JsValue::from_str("key"),
        body: JsValue::from_str("body"),
    };
}

/// The encoding a `Content-Type` names (`application/json`, `application/x-protobuf`), or
/// `undefined` for any other type.
#[wasm_bindgen(js_name = otlpEncodingOf)]
pub fn otlp_encoding_of(content_type: &str) -> Option<String> {
    Encoding::of_content_type(content_type).map(|e| e.as_str().to_string())
}

/// Splits an export request: the part to forward now, and per trace the tool spans to hold
/// and the measures for the trace's state. With `toProtobuf` (an upstream that takes
/// protobuf only), a JSON request is written as protobuf first and its parts are protobuf
/// (`encoding` in the result). Throws `malformed_export` (answer 400) for a body that is not
/// a request in its encoding, for a JSON body with an object of more than 1024 members, and
/// with `toProtobuf` for one protobuf cannot hold (an id that is not hex). The result's byte
/// arrays are views of one buffer (see `OtlpSplit`).
#[wasm_bindgen(js_name = otlpSplit)]
pub fn otlp_split(
    body: &[u8],
    encoding_name: &str,
    #[wasm_bindgen(js_name = toProtobuf)] to_protobuf: Option<bool>,
) -> Result<JsOtlpSplit, JsValue> {
    let (split, wire) =
        pipeline::split_export_for(body, encoding(encoding_name)?, to_protobuf.unwrap_or(false))
            .map_err(into_error)?;
    // Every byte array of the result is a view of one buffer: the passthrough, then per
    // trace its measures and its held spans, end to end. A `Uint8Array` of its own costs V8
    // a backing store (malloc, zeroing, a sweep when collected: about 1-2 µs in Node 20
    // whatever its size past 64 bytes), and a split made one per array (about a fifth of
    // its time in a CPU profile): on the 17,625 requests of the bench's 50 MB OTLP file, 3.7
    // arrays a request, one buffer took the split from 0.347 to 0.294 s (medians of 7
    // interleaved processes; scripts/bench-endpoint.mjs). Who keeps a view long or clones it
    // copies it first (crate/wasm/js/otlp/keeper.js, the worker's Durable Object calls).
    let mut all = Vec::with_capacity(split_bytes(&split));
    let passthrough = split.passthrough.as_deref().map(|p| append(&mut all, p));
    let traces: Vec<(Range, Vec<Range>)> = split
        .traces
        .iter()
        .map(|t| {
            let from = all.len();
            t.write_measures(&mut all);
            let measures = (from as u32, all.len() as u32);
            (
                measures,
                t.held.iter().map(|h| append(&mut all, &h.body)).collect(),
            )
        })
        .collect();
    let buffer = js_sys::Uint8Array::from(&all[..]);
    drop(all);
    let view = |(from, to): Range| JsValue::from(buffer.subarray(from, to));
    Ok(SPLIT_KEYS.with(|k| {
        let out = js_sys::Object::new();
        set(&out, &k.encoding, &JsValue::from_str(wire.as_str()));
        if let Some(p) = passthrough {
            set(&out, &k.passthrough, &view(p));
        }
        let list = js_sys::Array::new();
        for (t, (measures, held_at)) in split.traces.iter().zip(traces) {
            let o = js_sys::Object::new();
            set(&o, &k.trace_id, &JsValue::from_str(&t.trace_id));
            set(&o, &k.measures, &view(measures));
            let held = js_sys::Array::new();
            for (h, at) in t.held.iter().zip(held_at) {
                let ho = js_sys::Object::new();
                set(&ho, &k.key, &JsValue::from_str(&h.key));
                set(&ho, &k.body, &view(at));
                held.push(&ho);
            }
            set(&o, &k.held, &held);
            list.push(&o);
        }
        set(&out, &k.traces, &list);
        set(&out, &k.spans, &JsValue::from_f64(split.spans as f64));
        set(&out, &k.tools, &JsValue::from_f64(split.tools as f64));
        set(&out, &k.models, &JsValue::from_f64(split.models as f64));
        JsValue::from(out).into()
    }))
}

/// Where a part of a split's buffer is: `from..to`.
type Range = (u32, u32);

/// Appends `bytes` to the split's buffer; where they are in it.
fn append(all: &mut Vec<u8>, bytes: &[u8]) -> Range {
    let from = all.len() as u32;
    all.extend_from_slice(bytes);
    (from, all.len() as u32)
}

/// Room for the split's buffer: its spans' bytes, and about what the measures take (as
/// `TraceBatch::measures` reserves).
fn split_bytes(split: &pipeline::Split) -> usize {
    let traces: usize = split
        .traces
        .iter()
        .map(|t| {
            let held: usize = t.held.iter().map(|h| h.body.len()).sum();
            held + 64 + 256 * (t.tool_count() + t.model_count())
        })
        .sum();
    split.passthrough.as_ref().map_or(0, Vec::len) + traces
}

/// Writes the verdict on a held span as `toolslice.*` attributes, in its encoding.
#[wasm_bindgen(js_name = otlpAnnotate)]
pub fn otlp_annotate(
    body: &[u8],
    encoding_name: &str,
    annotation: JsOtlpAnnotation,
) -> Result<Vec<u8>, JsValue> {
    let note: Annotation = from_js(annotation.into(), "annotation")?;
    pipeline::annotate(body, encoding(encoding_name)?, &note).map_err(into_error)
}

/// One export request holding the spans of several of the same encoding.
#[wasm_bindgen(js_name = otlpMerge)]
pub fn otlp_merge(bodies: JsBodies, encoding_name: &str) -> Result<Vec<u8>, JsValue> {
    let list: js_sys::Array = JsValue::from(bodies).into();
    let all: Vec<Vec<u8>> = list
        .iter()
        .map(|b| js_sys::Uint8Array::new(&b).to_vec())
        .collect();
    pipeline::merge(&all, encoding(encoding_name)?).map_err(into_error)
}

/// An OTLP JSON export request as protobuf, for upstreams that take protobuf only. Throws
/// `malformed_export` (answer 400) for a body that is not a JSON request, with an object of
/// more than 1024 members, or with a value protobuf cannot hold, naming its place and field
/// (`resourceSpans[0].scopeSpans[0].spans[2]: traceId is not hex`).
#[wasm_bindgen(js_name = otlpJsonToProtobuf)]
pub fn otlp_json_to_protobuf(body: &[u8]) -> Result<Vec<u8>, JsValue> {
    pipeline::json_to_protobuf(body).map_err(into_error)
}

/// The body of an OTLP error response (`google.rpc.Status`) in the request's encoding.
#[wasm_bindgen(js_name = otlpErrorBody)]
pub fn otlp_error_body(message: &str, code: i32, encoding_name: &str) -> Result<Vec<u8>, JsValue> {
    Ok(pipeline::error_body(
        message,
        code,
        encoding(encoding_name)?,
    ))
}

/// One trace's state in the pipeline: held tool spans wait here for the next model call of
/// their trace, or their deadline. Store it with `toJson()` between requests.
#[wasm_bindgen]
pub struct OtlpTrace {
    state: TraceState,
}

#[wasm_bindgen]
impl OtlpTrace {
    #[wasm_bindgen(constructor)]
    pub fn new(trace_id: &str) -> OtlpTrace {
        OtlpTrace {
            state: TraceState::new(trace_id),
        }
    }

    /// Restores a state saved with `toJson()`.
    #[wasm_bindgen(js_name = fromJson)]
    pub fn from_json(text: &str) -> Result<OtlpTrace, JsValue> {
        Ok(OtlpTrace {
            state: TraceState::from_json(text).map_err(into_error)?,
        })
    }

    #[wasm_bindgen(js_name = toJson)]
    pub fn to_json(&self) -> String {
        self.state.to_json()
    }

    /// `toJson()` cut into pieces where its content says (each at most 60,000 UTF-8 bytes):
    /// joined, they are `toJson()`; after a request, most are the pieces of the state saved
    /// before it, so storage that keeps pieces by key writes only the new ones.
    #[wasm_bindgen(js_name = toJsonPieces)]
    pub fn to_json_pieces(&self) -> Vec<String> {
        self.state.to_json_pieces()
    }

    /// Takes one request's batch of this trace (`OtlpTraceBatch.measures`; or the JSON
    /// string an earlier version's split gave); returns the held spans taken and the
    /// verdicts now known. Throws `malformed_export` for measures that are neither.
    pub fn ingest(
        &mut self,
        measures: JsOtlpMeasures,
        now_ms: f64,
        deadline_ms: f64,
    ) -> Result<JsOtlpIngested, JsValue> {
        let measures = JsValue::from(measures);
        let batch = match measures.as_string() {
            Some(json) => TraceBatch::from_measures_json(&json),
            None => match measures.dyn_ref::<js_sys::Uint8Array>() {
                Some(bytes) => TraceBatch::from_measures(&bytes.to_vec()),
                None => Err(pipeline::MalformedExport(
                    "trace batch measures: expected the Uint8Array of a split's measures".into(),
                )),
            },
        }
        .map_err(into_error)?;
        let got = self.state.ingest(batch, now_ms as u64, deadline_ms as u64);
        Ok(to_js(&got)?.into())
    }

    /// Decides every held span whose deadline has passed (`incomplete`, saying why).
    pub fn expire(&mut self, now_ms: f64, deadline_ms: f64) -> Result<JsOtlpDecisions, JsValue> {
        Ok(to_js(&self.state.expire(now_ms as u64, deadline_ms as u64))?.into())
    }

    /// Decides every held span now (the endpoint is shutting down and forwards what it holds).
    #[wasm_bindgen(js_name = releaseAll)]
    pub fn release_all(&mut self) -> Result<JsOtlpDecisions, JsValue> {
        Ok(to_js(&self.state.release_all())?.into())
    }

    /// When the next held span's deadline passes (ms since the epoch), if any waits.
    #[wasm_bindgen(js_name = nextDue)]
    pub fn next_due(&self) -> Option<f64> {
        self.state.next_due().map(|d| d as f64)
    }

    /// Held spans still waiting.
    pub fn waiting(&self) -> u32 {
        self.state.waiting() as u32
    }

    pub fn summary(&self) -> Result<JsOtlpTraceSummary, JsValue> {
        Ok(to_js(&self.state.summary())?.into())
    }
}
