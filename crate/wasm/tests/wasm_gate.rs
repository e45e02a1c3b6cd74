//! The proof path through its JS binding (canonical JSON, SHA-256, the gate with a JS `Map`
//! as the body store, the hop classifier), run by wasm-bindgen-test in Node and in headless
//! Chromium.
#![cfg(target_arch = "wasm32")]

use js_sys::{Array, Map, Object, Reflect, Set, Uint32Array, Uint8Array, JSON};
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_test::*;

use toolslice_wasm::canonical::{canonicalize_js, canonicalize_value_js, canonicalize_with_report};
use toolslice_wasm::gate::{
    body_action_js, diff_manifests_js, export_ready_js, manifest, read_back_js, tool_span_js,
    write_bodies_js,
};
use toolslice_wasm::hash::{
    sha256_batch_js, sha256_hex_batch_js, sha256_hex_js, sha256_js, sha256_many_js,
    sha256_short_js, JsBatchData, JsBatchLengths, Sha256Js,
};
use toolslice_wasm::hop::{classify_hop_js, compare_runs_js, recompute_hop, HopStream};

fn js<T: JsCast>(value: impl Into<JsValue>) -> T {
    value.into().unchecked_into()
}

fn parse<T: JsCast>(json: &str) -> T {
    JSON::parse(json).unwrap().unchecked_into()
}

fn get(obj: &JsValue, path: &str) -> JsValue {
    path.split('.')
        .fold(obj.clone(), |o, k| Reflect::get(&o, &k.into()).unwrap())
}

fn code(err: JsValue) -> String {
    get(&err, "code").as_string().unwrap_or_default()
}

fn stringify(value: &JsValue) -> String {
    JSON::stringify(value).unwrap().as_string().unwrap()
}

const ABC: &str = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad";

#[wasm_bindgen_test]
fn canonical_forms_and_errors() {
    let doc = r#"{"b":1,"a":[1.0,1e-7,12345678901234567890]}"#;
    assert_eq!(
        canonicalize_js(&js(doc), None).unwrap(),
        r#"{"a":[1.0,1e-07,12345678901234567890],"b":1}"#
    );
    let err = canonicalize_js(&js(doc), Some(js("jcs"))).unwrap_err();
    assert_eq!(code(err), "unsafe_integer");
    let bytes = Uint8Array::from(br#"{"x":[1.50,-0]}"#.as_slice());
    assert_eq!(
        canonicalize_js(&js(bytes), Some(js("jcs"))).unwrap(),
        r#"{"x":[1.5,0]}"#
    );
    let err = canonicalize_js(&js(r#"{"a":1,"a":2}"#), Some(js("jcs"))).unwrap_err();
    assert_eq!(code(err.clone()), "duplicate_key");
    assert!(get(&err, "message")
        .as_string()
        .unwrap()
        .contains("at $.a (line 1"));
    assert_eq!(
        code(canonicalize_js(&js("{"), None).unwrap_err()),
        "invalid_json"
    );
    assert_eq!(
        code(canonicalize_js(&js("1"), Some(js("xml"))).unwrap_err()),
        "unknown_form"
    );
    let report: JsValue = canonicalize_with_report(&js(r#"{"a":1,"a":2}"#), None)
        .unwrap()
        .into();
    assert_eq!(
        stringify(&report),
        r#"{"text":"{\"a\":2}","duplicate_keys":["$.a"]}"#
    );
}

#[wasm_bindgen_test]
fn canonical_values_from_js() {
    let value: JsValue =
        JSON::parse(r#"{"b":[1,2.5,"x"],"a":{"z":null,"\ufb33":1,"😀":2}}"#).unwrap();
    assert_eq!(
        canonicalize_value_js(&js(value.clone()), None).unwrap(),
        "{\"a\":{\"z\":null,\"\u{fb33}\":1,\"😀\":2},\"b\":[1,2.5,\"x\"]}"
    );
    assert_eq!(
        canonicalize_value_js(&js(value), Some(js("jcs"))).unwrap(),
        "{\"a\":{\"z\":null,\"😀\":2,\"\u{fb33}\":1},\"b\":[1,2.5,\"x\"]}"
    );
    // undefined properties are left out, as JSON.stringify does; NaN is refused, not nulled.
    let obj = Object::new();
    Reflect::set(&obj, &"u".into(), &JsValue::UNDEFINED).unwrap();
    Reflect::set(&obj, &"n".into(), &JsValue::from_f64(1.0)).unwrap();
    assert_eq!(
        canonicalize_value_js(&js(obj.clone()), None).unwrap(),
        r#"{"n":1}"#
    );
    Reflect::set(&obj, &"x".into(), &JsValue::from_f64(f64::NAN)).unwrap();
    let err = canonicalize_value_js(&js(obj), None).unwrap_err();
    assert_eq!(code(err.clone()), "non_finite_number");
    assert!(get(&err, "message")
        .as_string()
        .unwrap()
        .contains("key \"x\""));
    // What JSON.stringify would turn into {} or refuse is refused, with a code.
    let with_map = Array::of1(&Map::new());
    assert_eq!(
        code(canonicalize_value_js(&js(with_map), None).unwrap_err()),
        "invalid_json_value"
    );
    let big = js_sys::BigInt::from(1u64 << 60);
    assert_eq!(
        code(canonicalize_value_js(&js(big), None).unwrap_err()),
        "invalid_json_value"
    );
    assert_eq!(
        code(canonicalize_value_js(&js(JsValue::UNDEFINED), None).unwrap_err()),
        "invalid_json_value"
    );
    let lone = js_sys::JsString::from_char_code1(0xD800);
    assert_eq!(
        code(canonicalize_value_js(&js(lone), None).unwrap_err()),
        "lone_surrogate"
    );
}

#[wasm_bindgen_test]
fn sha256_every_shape() {
    assert_eq!(sha256_hex_js(&js("abc")).unwrap(), ABC);
    assert_eq!(sha256_short_js(&js("abc")).unwrap(), &ABC[..16]);
    assert_eq!(
        sha256_js(&js(Uint8Array::from(b"abc".as_slice())))
            .unwrap()
            .len(),
        32
    );
    let buffer = Uint8Array::from(b"abc".as_slice()).buffer();
    assert_eq!(sha256_hex_js(&js(buffer)).unwrap(), ABC);
    assert_eq!(code(sha256_hex_js(&js(3)).unwrap_err()), "invalid_argument");

    // Incremental, with a chunk larger than the copy step.
    let big = vec![b'a'; 1_000_000];
    let mut h = Sha256Js::new();
    h.update(&js(Uint8Array::from(&big[..300_000]))).unwrap();
    h.update(&js(std::str::from_utf8(&big[300_000..]).unwrap()))
        .unwrap();
    assert_eq!(h.length(), 1_000_000.0);
    assert_eq!(
        h.digest_hex().unwrap(),
        "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0"
    );
    assert_eq!(code(h.update(&js("x")).unwrap_err()), "hasher_finished");

    // The batch functions take JS arrays (checked element by element), as callers pass them.
    let data = |b: &[u8]| -> JsBatchData { Uint8Array::from(b).unchecked_into() };
    let lengths = |l: &[u32]| -> JsBatchLengths { Uint32Array::from(l).unchecked_into() };
    let raw = sha256_batch_js(&data(b"abcxy"), &lengths(&[3, 2])).unwrap();
    assert_eq!(raw.len(), 64);
    let hex = sha256_hex_batch_js(&data(b"abcxy"), &lengths(&[3, 2])).unwrap();
    assert_eq!(&hex[..64], ABC);
    assert_eq!(
        code(sha256_batch_js(&data(b"abc"), &lengths(&[4])).unwrap_err()),
        "invalid_batch"
    );
    let many = Array::of2(&"abc".into(), &Uint8Array::from(b"xy".as_slice()));
    let out = sha256_many_js(&js(many)).unwrap();
    assert_eq!(out[0], ABC);
    assert_eq!(out[1], &hex[64..]);
    let _ = Uint32Array::new_with_length(0);
}

#[wasm_bindgen_test]
fn gate_with_a_map_store() {
    let args: JsValue = JSON::parse(r#"{"path":"a.txt","n":1}"#).unwrap();
    let result: JsValue = "hi".into();
    let span = tool_span_js(
        "read_file",
        &js(args.clone()),
        &js(result.clone()),
        "ok",
        None,
    )
    .unwrap();
    let span_v: JsValue = span.clone();
    assert_eq!(
        get(&span_v, "args_len").as_f64(),
        Some(r#"{"n":1,"path":"a.txt"}"#.len() as f64)
    );
    // The JSON-text path gives the same span.
    let opts = parse(r#"{"json":true}"#);
    let by_text = tool_span_js(
        "read_file",
        &js(r#"{"path": "a.txt", "n": 1}"#),
        &js("\"hi\""),
        "ok",
        Some(opts),
    )
    .unwrap();
    assert_eq!(stringify(&by_text.into()), stringify(&span_v));

    let store = Map::new();
    write_bodies_js(
        &js(store.clone()),
        &span,
        &js(args.clone()),
        &js(result.clone()),
        None,
    )
    .unwrap();
    assert_eq!(store.size(), 2);
    let digest = get(&span_v, "result_sha256");
    assert_eq!(store.get(&digest).as_string().as_deref(), Some("\"hi\""));

    let spans = Array::of1(&span_v);
    let problems: JsValue = export_ready_js(&js(spans.clone()), &js(store.clone()))
        .unwrap()
        .into();
    assert_eq!(Array::from(&problems).length(), 0);
    // A Set of present digests serves as the lookup too (for async stores).
    let present = Set::new(&JsValue::UNDEFINED);
    present.add(&get(&span_v, "args_sha256"));
    let problems: JsValue = export_ready_js(&js(spans.clone()), &js(present))
        .unwrap()
        .into();
    let first = Array::from(&problems).get(0);
    assert_eq!(get(&first, "kind").as_string().as_deref(), Some("missing"));

    store.set(&digest, &"\"hj\"".into());
    let err = write_bodies_js(&js(store.clone()), &span, &js(args), &js(result), None).unwrap_err();
    assert_eq!(code(err), "unstable_canonical_form");
    let d = digest.as_string().unwrap();
    assert_eq!(
        body_action_js(&d, "\"hi\"", None)
            .unwrap()
            .as_string()
            .as_deref(),
        Some("write")
    );
    assert_eq!(
        body_action_js(&d, "\"hi\"", Some("\"hi\"".into()))
            .unwrap()
            .as_string()
            .as_deref(),
        Some("keep")
    );
    let err = body_action_js("../x", "1", None).err().unwrap();
    assert_eq!(code(err), "invalid_digest");

    let m = manifest(&js(Array::of2(&span_v, &span_v))).unwrap();
    let one = manifest(&js(spans.clone())).unwrap();
    let diff: JsValue = diff_manifests_js(&m, &one).unwrap().into();
    assert_eq!(Array::from(&get(&diff, "only_left")).length(), 1);
    assert_eq!(Array::from(&get(&diff, "only_right")).length(), 0);

    let cut: JsValue = JSON::parse(&stringify(&span_v).replace(&d, &d[..10])).unwrap();
    let rb: JsValue = read_back_js(&js(spans), &js(Array::of1(&cut)))
        .unwrap()
        .into();
    assert_eq!(get(&rb, "ok").as_bool(), Some(false));
    let issue = Array::from(&get(&rb, "issues")).get(0);
    assert_eq!(get(&issue, "truncated").as_bool(), Some(true));
}

#[wasm_bindgen_test]
fn hop_rows_stream_and_compare() {
    let wrap = classify_hop_js(
        &js(r#"{"ok":true,"rows":2}"#),
        &js(r#"{"ok":true,"rows":2}"#),
        &js(r#"{"type":"tool_result","body":{"ok":true,"rows":2}}"#),
        Some(parse(r#"{"toolCallId":"call_91","toolName":"read_file"}"#)),
    )
    .unwrap();
    let wrap_v: JsValue = wrap.clone();
    assert_eq!(
        get(&wrap_v, "mutation_hop").as_string().as_deref(),
        Some("prompt_builder_wrap")
    );
    assert_eq!(
        get(&wrap_v, "tool_call_id").as_string().as_deref(),
        Some("call_91")
    );
    assert_eq!(
        recompute_hop(&wrap).unwrap().as_string().as_deref(),
        Some("prompt_builder_wrap")
    );

    let mut stream = HopStream::new(None).unwrap();
    stream.push(&js(r#"{"rows": 2,"#)).unwrap();
    stream
        .push(&js(Uint8Array::from(br#" "ok": true}"#.as_slice())))
        .unwrap();
    assert_eq!(stream.length(), 23.0);
    let row: JsValue = stream
        .close(
            &js(r#"{"ok":true,"rows":2}"#),
            &js(r#"{"ok":true,"rows":2}"#),
            None,
        )
        .unwrap()
        .into();
    assert_eq!(
        get(&row, "mutation_hop").as_string().as_deref(),
        Some("adapter_shrink")
    );
    assert_eq!(
        get(&row, "adapter_change").as_string().as_deref(),
        Some("format_only")
    );
    assert_eq!(code(stream.push(&js("x")).unwrap_err()), "stream_closed");

    let receipt = r#"[{"field_path":"$.token","rule_id":"secret-v2","original_len":40,"replacement":"[REDACTED]"}]"#;
    let drifted =
        JSON::parse(&stringify(&wrap_v).replacen('{', &format!("{{\"redactions\":{receipt},"), 1))
            .unwrap();
    let cmp: JsValue = compare_runs_js(&js(Array::of1(&wrap_v)), &js(Array::of1(&drifted)))
        .unwrap()
        .into();
    assert_eq!(get(&cmp, "policy_drift").as_f64(), Some(1.0));
}
