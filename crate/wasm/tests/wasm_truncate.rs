//! The truncators through their JS binding, run by wasm-bindgen-test in Node and in headless
//! Chromium: options in camelCase, results in snake_case with UTF-16 offsets, a JS token
//! counter, errors as `Error` objects with a stable `code`.
#![cfg(target_arch = "wasm32")]

// The truncation fixtures are shared with the core's native tests.
#[path = "../../core/tests/fixtures/mod.rs"]
mod fixtures;

use js_sys::{Array, Function, JsString, Reflect, Uint8Array, JSON};
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_test::*;

use toolslice_wasm::check::JsInput;
use toolslice_wasm::truncate::{
    audit_summary_js, estimate_tokens_js, is_error_line_js, truncate_js, JsAuditRecords,
    JsTokenCounter, JsTruncateOptions,
};

fn input(value: impl Into<JsValue>) -> JsInput {
    value.into().unchecked_into()
}

fn options(json: &str) -> Option<JsTruncateOptions> {
    Some(JSON::parse(json).unwrap().unchecked_into())
}

fn get(obj: &JsValue, path: &str) -> JsValue {
    path.split('.')
        .fold(obj.clone(), |o, k| Reflect::get(&o, &k.into()).unwrap())
}

fn num(obj: &JsValue, path: &str) -> f64 {
    get(obj, path).as_f64().unwrap()
}

fn text(obj: &JsValue) -> String {
    get(obj, "text").as_string().unwrap()
}

fn code_of(err: JsValue) -> String {
    assert!(
        err.is_instance_of::<js_sys::Error>(),
        "errors are Error objects"
    );
    get(&err, "code").as_string().unwrap()
}

/// Words plus newlines: a stand-in tokenizer written in JavaScript, not additive over
/// concatenation (two pieces can merge into one word).
fn js_counter() -> JsTokenCounter {
    Function::new_with_args(
        "text",
        "return text.split(/\\s+/).filter(Boolean).length + (text.match(/\\n/g) || []).length;",
    )
    .unchecked_into()
}

#[wasm_bindgen_test]
fn terminal_keeps_failure_and_exit_code_in_header() {
    let log = fixtures::npm_build_failure();
    let t: JsValue = truncate_js(
        &input(log.as_str()),
        options(r#"{"pattern":"terminal","budget":{"utf16":2000},"exitCode":1,"command":"npm run build","header":true,"fetch":{"id":"call_7"}}"#),
        None,
    )
    .unwrap()
    .into();
    let out = text(&t);
    assert!(JsString::from(out.as_str()).length() <= 2000);
    assert_eq!(
        num(&t, "size"),
        JsString::from(out.as_str()).length() as f64
    );
    assert!(out.starts_with("Tool: terminal\nCommand: npm run build\nExit code: 1\nOutput:\n"));
    assert!(out.ends_with(&format!(
        "{}\n{}\n",
        fixtures::NPM_FAILURE,
        fixtures::NPM_EXIT
    )));
    assert!(out.contains("get_more(id=\"call_7\", offset="));
    assert_eq!(get(&t, "pattern").as_string().as_deref(), Some("terminal"));
    assert_eq!(get(&t, "truncated").as_bool(), Some(true));
    assert_eq!(num(&t, "exit_code"), 1.0);
    assert_eq!(num(&t, "error_lines.dropped"), 0.0);
    assert_eq!(get(&t, "audit.exit_code_preserved").as_bool(), Some(true));
    assert_eq!(get(&t, "offsets").as_string().as_deref(), Some("utf16"));
}

#[wasm_bindgen_test]
fn fits_is_unchanged_and_defaults_apply() {
    let t: JsValue = truncate_js(&input("small output\n"), None, None)
        .unwrap()
        .into();
    assert_eq!(text(&t), "small output\n");
    assert_eq!(get(&t, "truncated").as_bool(), Some(false));
    assert_eq!(get(&t, "pattern").as_string().as_deref(), Some("none"));
    assert_eq!(num(&t, "limit"), 8192.0);
}

#[wasm_bindgen_test]
fn utf16_offsets_slice_javascript_strings() {
    let mut log = String::new();
    for i in 0..300 {
        log.push_str(&format!("line {i} 😀 e\u{301} 日本\n"));
    }
    log.push_str("error: boom 🇩🇪\n");
    let js_input = JsString::from(log.as_str());
    let t: JsValue = truncate_js(
        &input(log.as_str()),
        options(r#"{"pattern":"terminal","budget":{"chars":600}}"#),
        None,
    )
    .unwrap()
    .into();
    let out = JsString::from(text(&t).as_str());
    let segments: Array = get(&t, "segments").unchecked_into();
    let mut kept = 0;
    for seg in segments.iter() {
        if get(&seg, "kind").as_string().as_deref() != Some("kept") {
            continue;
        }
        let o: Array = get(&seg, "output").unchecked_into();
        let s: Array = get(&seg, "source").unchecked_into();
        let a = out.slice(
            o.get(0).as_f64().unwrap() as u32,
            o.get(1).as_f64().unwrap() as u32,
        );
        let b = js_input.slice(
            s.get(0).as_f64().unwrap() as u32,
            s.get(1).as_f64().unwrap() as u32,
        );
        assert_eq!(String::from(a), String::from(b));
        kept += 1;
    }
    assert!(kept >= 2);
    assert!(text(&t).ends_with("error: boom 🇩🇪\n"));
}

/// Strings cross into wasm by `TextEncoder.encodeInto` in up to two passes (one byte per
/// unit first): every shape of string arrives whole, lone surrogates as U+FFFD, and an
/// ASCII input's offsets are its own.
#[wasm_bindgen_test]
fn strings_arrive_whole_across_the_encoding_passes() {
    let utf16 = |s: &str| s.encode_utf16().collect::<Vec<u16>>();
    let ascii = |n: usize| utf16(&"a".repeat(n));
    let join = |parts: &[&[u16]]| parts.concat();
    let cases: Vec<Vec<u16>> = vec![
        vec![],
        ascii(3),
        join(&[&ascii(1000), &utf16("é")]),
        join(&[&utf16("é"), &ascii(1000)]),
        join(&[&ascii(999), &utf16("😀")]),
        join(&[&ascii(10), &[0xD800]]),
        join(&[&ascii(10), &[0xDC00], &ascii(5)]),
        utf16(&"日本😀\n🇩🇪 e\u{301}\r\n".repeat(200)),
    ];
    for units in cases {
        let js = JsString::from_char_code(&units);
        let want = String::from_utf16_lossy(&units);
        let t: JsValue = truncate_js(
            &input(js),
            options(r#"{"pattern":"terminal","budget":{"bytes":1000000}}"#),
            None,
        )
        .unwrap()
        .into();
        assert_eq!(text(&t), want);
        assert_eq!(num(&t, "full_bytes") as usize, want.len());
        let kept: Array = get(&t, "kept").unchecked_into();
        if !units.is_empty() {
            let k: Array = kept.get(0).unchecked_into();
            assert_eq!(k.get(1).as_f64().unwrap() as usize, units.len());
        }
    }
}

#[wasm_bindgen_test]
fn bytes_input_and_byte_budget() {
    let log = "compiling\n".repeat(500) + "FAILED: 1 test\n";
    let bytes = Uint8Array::from(log.as_bytes());
    let t: JsValue = truncate_js(
        &input(bytes),
        options(r#"{"pattern":"tail","budget":{"bytes":200}}"#),
        None,
    )
    .unwrap()
    .into();
    assert!(num(&t, "output_bytes") <= 200.0);
    assert!(text(&t).ends_with("FAILED: 1 test\n"));
    assert_eq!(num(&t, "full_bytes"), log.len() as f64);
}

#[wasm_bindgen_test]
fn token_budget_with_a_js_counter() {
    let log = fixtures::root_cause_in_middle();
    let counter = js_counter();
    let f: &Function = counter.unchecked_ref();
    for limit in [150, 400, 1200] {
        let t: JsValue = truncate_js(
            &input(log.as_str()),
            options(&format!(
                r#"{{"pattern":"terminal","budget":{{"tokens":{limit}}},"exitCode":2}}"#
            )),
            Some(js_counter()),
        )
        .unwrap()
        .into();
        let counted = f
            .call1(&JsValue::NULL, &get(&t, "text"))
            .unwrap()
            .as_f64()
            .unwrap();
        assert!(counted <= limit as f64, "{counted} > {limit}");
        assert_eq!(num(&t, "size"), counted);
        assert!(text(&t).contains(fixtures::MIDDLE_EXIT));
    }
}

#[wasm_bindgen_test]
fn counter_errors_and_budget_errors_have_codes() {
    let log = "x\n".repeat(1000);
    let throwing: JsTokenCounter =
        Function::new_with_args("text", "throw new Error('tokenizer not loaded');")
            .unchecked_into();
    let err = truncate_js(
        &input(log.as_str()),
        options(r#"{"budget":{"tokens":10}}"#),
        Some(throwing),
    )
    .err()
    .unwrap();
    assert_eq!(code_of(err.clone()), "token_counter_failed");
    assert!(get(&err, "message")
        .as_string()
        .unwrap()
        .contains("tokenizer not loaded"));

    let bad: JsTokenCounter = Function::new_with_args("text", "return 'many';").unchecked_into();
    let err = truncate_js(
        &input(log.as_str()),
        options(r#"{"budget":{"tokens":10}}"#),
        Some(bad),
    )
    .err()
    .unwrap();
    assert_eq!(code_of(err), "token_counter_failed");

    let err = truncate_js(
        &input(log.as_str()),
        options(r#"{"pattern":"terminal","budget":{"bytes":8}}"#),
        None,
    )
    .err()
    .unwrap();
    assert_eq!(code_of(err), "budget_too_small");

    let err = truncate_js(
        &input(log.as_str()),
        options(r#"{"budgte":{"bytes":8}}"#),
        None,
    )
    .err()
    .unwrap();
    assert_eq!(code_of(err), "invalid_options");

    let err = truncate_js(
        &input(log.as_str()),
        options(r#"{"terminal":{"headShare":2}}"#),
        None,
    )
    .err()
    .unwrap();
    assert_eq!(code_of(err), "invalid_options");

    let err = truncate_js(
        &input("[1,"),
        options(r#"{"pattern":"json","budget":{"bytes":2}}"#),
        None,
    )
    .err()
    .unwrap();
    assert_eq!(code_of(err), "invalid_json");
}

#[wasm_bindgen_test]
fn json_stays_json() {
    let mut doc = String::from(r#"{"status":"failed","receipt_id":"r-9","items":["#);
    for i in 0..500 {
        if i > 0 {
            doc.push(',');
        }
        doc.push_str(&format!(r#"{{"n":{i},"name":"item {i}"}}"#));
    }
    doc.push_str("]}");
    let t: JsValue = truncate_js(
        &input(doc.as_str()),
        options(r#"{"budget":{"bytes":400}}"#),
        None,
    )
    .unwrap()
    .into();
    assert_eq!(get(&t, "pattern").as_string().as_deref(), Some("json"));
    let parsed = JSON::parse(&text(&t)).unwrap();
    assert_eq!(
        get(&parsed, "status").as_string().as_deref(),
        Some("failed")
    );
    assert_eq!(
        get(&parsed, "receipt_id").as_string().as_deref(),
        Some("r-9")
    );
    assert!(text(&t).contains("more items"));
}

#[wasm_bindgen_test]
fn audit_summary_and_helpers() {
    let records: JsAuditRecords = JSON::parse(
        r#"[{"tool":"terminal","full_bytes":1000,"truncated_bytes":100,"truncation_ratio":0.1,"was_truncated":true,"pattern":"head","exit_code_preserved":false,"errors_in_dropped_region":true},
            {"tool":"web_search","full_bytes":10,"truncated_bytes":10,"truncation_ratio":1.0,"was_truncated":false,"pattern":"none","exit_code_preserved":false,"errors_in_dropped_region":false}]"#,
    )
    .unwrap()
    .unchecked_into();
    let s: JsValue = audit_summary_js(&records).unwrap().into();
    assert_eq!(num(&s, "calls"), 2.0);
    assert_eq!(num(&s, "share_lost_error_line"), 1.0);
    assert_eq!(num(&s, "share_exit_code_preserved"), 0.0);
    let warnings: Array = get(&s, "warnings").unchecked_into();
    assert!(warnings.length() >= 3);
    assert_eq!(estimate_tokens_js("abcdef"), 2.0);
    assert!(is_error_line_js("npm ERR! code 1"));
    assert!(!is_error_line_js("Compiling serde"));
}
