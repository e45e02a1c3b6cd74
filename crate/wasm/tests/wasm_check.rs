//! The checker through its JS binding, run by wasm-bindgen-test in Node and in headless
//! Chromium (scripts/test runs both).
#![cfg(target_arch = "wasm32")]

use js_sys::{Reflect, Uint8Array, JSON};
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_test::*;

use toolslice_wasm::check::{check_spans, Checker, JsCheckOptions, JsInput};

const RUN: &str = concat!(
    r#"{"span_id":"tool-14","parent_id":"turn-3","name":"read_file","status":"ok","observed_bytes":96412,"injected_bytes":12040,"injected_tokens":8192,"clip_reason":"none","injected_preview":"caf\u00e9 ☕"}"#,
    "\n",
    r#"{"span_id":"tool-15","name":"ls","observed_bytes":10,"injected_bytes":10,"injected_tokens":3,"injected_preview":"☕☕☕"}"#,
    "\n[1]\n"
);

fn input(value: impl Into<JsValue>) -> JsInput {
    value.into().unchecked_into()
}

fn get(obj: &JsValue, path: &str) -> JsValue {
    path.split('.')
        .fold(obj.clone(), |o, k| Reflect::get(&o, &k.into()).unwrap())
}

#[wasm_bindgen_test]
fn check_spans_from_a_string() {
    let report = check_spans(&input(RUN), None).unwrap();
    assert_eq!(report.exit_code(), 1);
    let data: JsValue = report.to_json().unwrap().into();
    assert_eq!(get(&data, "counts.silent_clip").as_f64(), Some(1.0));
    assert_eq!(get(&data, "counts.invalid").as_f64(), Some(1.0));
    assert_eq!(get(&data, "counts.lines").as_f64(), Some(3.0));
    let first = Reflect::get(&get(&data, "rows"), &0.into()).unwrap();
    assert_eq!(
        get(&first, "status").as_string().as_deref(),
        Some("silent_clip")
    );
    assert_eq!(
        get(&first, "injected_preview").as_string().as_deref(),
        Some("café ☕")
    );
    // JSON.stringify uses toJSON, with the seed's snake_case names.
    let text = JSON::stringify(&data).unwrap().as_string().unwrap();
    assert!(text.contains("\"exit_code\":1"));
    assert!(report
        .table()
        .contains("silent_clip      tool-14      read_file           96412    12040 ratio=0.88"));
}

#[wasm_bindgen_test]
fn streaming_in_bytes_split_inside_characters_equals_one_shot() {
    let whole = check_spans(&input(RUN), None).unwrap().json();
    let bytes = RUN.as_bytes();
    for size in [1usize, 2, 3, 7, 64] {
        let mut checker = Checker::new(None).unwrap();
        for chunk in bytes.chunks(size) {
            checker.push(&input(Uint8Array::from(chunk))).unwrap();
        }
        assert_eq!(checker.bytes_read(), bytes.len() as f64);
        assert_eq!(checker.finish().unwrap().json(), whole, "chunk size {size}");
    }
}

#[wasm_bindgen_test]
fn flagged_only_option_is_read_in_camel_case() {
    let options: JsCheckOptions = JSON::parse(r#"{"flaggedOnly":true}"#)
        .unwrap()
        .unchecked_into();
    let report = check_spans(&input(RUN), Some(options)).unwrap();
    let data: JsValue = report.to_json().unwrap().into();
    assert_eq!(
        Reflect::get(&get(&data, "rows"), &"length".into())
            .unwrap()
            .as_f64(),
        Some(1.0)
    );
    assert_eq!(get(&data, "counts.ok").as_f64(), Some(1.0));
}

#[wasm_bindgen_test]
fn errors_are_error_objects_with_a_code() {
    let mut checker = Checker::new(None).unwrap();
    checker.finish().unwrap();
    let err = checker.finish().err().unwrap();
    assert!(err.is_instance_of::<js_sys::Error>());
    assert_eq!(
        get(&err, "code").as_string().as_deref(),
        Some("checker_finished")
    );
    let err = check_spans(&input(JsValue::from(42)), None).err().unwrap();
    assert_eq!(
        get(&err, "code").as_string().as_deref(),
        Some("invalid_argument")
    );
}
