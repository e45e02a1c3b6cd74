//! The trace-format readers through the JS binding, run by wasm-bindgen-test in Node and in
//! headless Chromium (scripts/test runs both).
#![cfg(target_arch = "wasm32")]

use js_sys::{Reflect, Uint8Array, JSON};
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_test::*;

use toolslice_wasm::check::{check_spans, Checker, JsCheckOptions, JsInput};
use toolslice_wasm::formats::{convert_to_spans, JsConvertOptions};

const LANGFUSE: &str = include_str!("../../core/tests/fixtures/formats/langfuse.json");
const COLLECTOR: &str =
    include_str!("../../core/tests/fixtures/formats/otlp-collector-events.jsonl");

fn input(value: impl Into<JsValue>) -> JsInput {
    value.into().unchecked_into()
}

fn get(obj: &JsValue, path: &str) -> JsValue {
    path.split('.')
        .fold(obj.clone(), |o, k| Reflect::get(&o, &k.into()).unwrap())
}

fn options<T: JsCast>(json: &str) -> T {
    JSON::parse(json).unwrap().unchecked_into()
}

#[wasm_bindgen_test]
fn check_spans_reads_every_format() {
    let report = check_spans(&input(LANGFUSE), None).unwrap();
    let data: JsValue = report.to_json().unwrap().into();
    assert_eq!(
        get(&data, "format").as_string().as_deref(),
        Some("langfuse")
    );
    assert_eq!(
        get(&data, "read_as.layout").as_string().as_deref(),
        Some("document")
    );
    assert_eq!(get(&data, "counts.silent_clip").as_f64(), Some(2.0));
    let first = Reflect::get(&get(&data, "rows"), &0.into()).unwrap();
    assert!(get(&first, "join").is_string());
    assert_eq!(
        get(&first, "injected_tokens_estimated").as_bool(),
        Some(true)
    );
    assert_eq!(report.exit_code(), 1);
}

#[wasm_bindgen_test]
fn streaming_the_collector_layout_in_bytes_equals_one_shot() {
    let whole = check_spans(&input(COLLECTOR), None).unwrap().json();
    for size in [1usize, 7, 300] {
        let mut checker = Checker::new(None).unwrap();
        for chunk in COLLECTOR.as_bytes().chunks(size) {
            checker.push(&input(Uint8Array::from(chunk))).unwrap();
        }
        assert_eq!(checker.finish().unwrap().json(), whole, "chunk size {size}");
    }
}

#[wasm_bindgen_test]
fn the_format_option_forces_a_reader() {
    let forced: JsCheckOptions = options(r#"{"format":"otlp"}"#);
    let data: JsValue = check_spans(&input(LANGFUSE), Some(forced))
        .unwrap()
        .to_json()
        .unwrap()
        .into();
    assert_eq!(get(&data, "format").as_string().as_deref(), Some("otlp"));
    assert_eq!(get(&data, "counts.invalid").as_f64(), Some(1.0));

    let bad: JsCheckOptions = options(r#"{"format":"jaeger"}"#);
    let err = check_spans(&input(LANGFUSE), Some(bad)).err().unwrap();
    assert!(err.is_instance_of::<js_sys::Error>());
    assert_eq!(
        get(&err, "code").as_string().as_deref(),
        Some("unknown_format")
    );
}

#[wasm_bindgen_test]
fn convert_to_spans_writes_seed_records() {
    let out: JsValue = convert_to_spans(&input(COLLECTOR), None).unwrap().into();
    assert_eq!(get(&out, "format").as_string().as_deref(), Some("otlp"));
    assert_eq!(get(&out, "records").as_f64(), Some(5.0));
    let jsonl = get(&out, "jsonl").as_string().unwrap();
    let again: JsValue = check_spans(&input(jsonl.as_str()), None)
        .unwrap()
        .to_json()
        .unwrap()
        .into();
    assert_eq!(get(&again, "format").as_string().as_deref(), Some("spans"));
    assert_eq!(get(&again, "counts.silent_clip").as_f64(), Some(1.0));
    let opts: JsConvertOptions = options(r#"{"format":"nope"}"#);
    let err = convert_to_spans(&input(COLLECTOR), Some(opts))
        .err()
        .unwrap();
    assert_eq!(
        get(&err, "code").as_string().as_deref(),
        Some("unknown_format")
    );
}

#[wasm_bindgen_test]
fn a_trace_without_tool_calls_is_not_green_unless_allowed() {
    const NO_TOOLS: &str =
        include_str!("../../../pkg-tests/producers/corpus/ai-sdk-no-tools.otlp.jsonl");
    let strict = check_spans(&input(NO_TOOLS), None).unwrap();
    assert_eq!(strict.exit_code(), 1);
    let line = strict.nothing_checked().unwrap();
    assert!(
        line.starts_with("nothing checked: no tool call in 2 entries read as otlp: "),
        "{line}"
    );
    let allowed: JsCheckOptions = options(r#"{"allowEmpty":true}"#);
    let report = check_spans(&input(NO_TOOLS), Some(allowed)).unwrap();
    assert_eq!(report.exit_code(), 0);
    assert_eq!(report.nothing_checked(), Some(line));
}
