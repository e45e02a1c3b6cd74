//! The packer and redaction through their JS binding, run by wasm-bindgen-test in Node and
//! in headless Chromium (scripts/test runs both).
#![cfg(target_arch = "wasm32")]

use js_sys::{Reflect, JSON};
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_test::*;

use toolslice_wasm::check::JsInput;
use toolslice_wasm::pack::{
    get_more, pack, JsPackInput, JsPackOptions, JsRedactPolicy, StreamPacker,
};
use toolslice_wasm::redact::redact;

const GH: &str = "ghp_aB3dE5fG7hI9jK1lM3nO5pQ7rS9tU1vW3xY5";

fn obj(json: &str) -> JsValue {
    JSON::parse(json).unwrap()
}

fn get(o: &JsValue, path: &str) -> JsValue {
    path.split('.')
        .fold(o.clone(), |o, k| Reflect::get(&o, &k.into()).unwrap())
}

fn code<T>(result: Result<T, JsValue>) -> String {
    match result {
        Ok(_) => panic!("expected an error"),
        Err(err) => get(&err, "code").as_string().unwrap_or_default(),
    }
}

#[wasm_bindgen_test]
fn packs_json_and_text() {
    let input: JsPackInput =
        obj(r#"{"tool":"get_job","callId":"c1","json":{"ok":true,"id":3}}"#).unchecked_into();
    let r: JsValue = pack(&input, None).unwrap().into();
    assert_eq!(
        get(&r, "envelope.content").as_string().unwrap(),
        r#"{"ok":true,"id":3}"#
    );
    assert_eq!(get(&r, "envelope.truncated").as_bool(), Some(false));
    assert_eq!(
        get(&r, "span.clip_reason").as_string().as_deref(),
        Some("none")
    );

    let text = format!("line token={GH}\n").repeat(100);
    let input: JsPackInput = obj(&format!(
        r#"{{"tool":"logs","callId":"c2","text":{}}}"#,
        serde_json::to_string(&text).unwrap()
    ))
    .unchecked_into();
    let opts: JsPackOptions = obj(r#"{"limit":300}"#).unchecked_into();
    let r: JsValue = pack(&input, Some(opts)).unwrap().into();
    let content = get(&r, "envelope.content").as_string().unwrap();
    assert!(content.len() <= 300);
    assert!(!content.contains("aB3dE5"));
    let next = get(&r, "envelope.next_offset").as_f64().unwrap();
    let page: JsValue = get_more("c2", next, Some("c3".into()), None)
        .unwrap()
        .into();
    assert_eq!(
        get(&page, "envelope.name").as_string().as_deref(),
        Some("get_more")
    );
}

#[wasm_bindgen_test]
fn errors_have_codes() {
    let input: JsPackInput = obj(r#"{"tool":"t","callId":"c"}"#).unchecked_into();
    assert_eq!(code(pack(&input, None)), "invalid_argument");
    assert_eq!(code(get_more("missing", 0.0, None, None)), "not_found");
    let policy: JsRedactPolicy = obj(r#"{"disable":["nope"]}"#).unchecked_into();
    assert_eq!(code(redact(&"x".into(), Some(policy))), "invalid_policy");
}

#[wasm_bindgen_test]
fn streams_and_redacts() {
    let opts: JsPackOptions = obj(r#"{"limit":1024}"#).unchecked_into();
    let mut s = StreamPacker::new("build", "s1", None, Some(opts)).unwrap();
    for i in 0..20_000 {
        let line = if i == 9_000 {
            format!("error: boom {GH}\n")
        } else {
            format!("ok {i}\n")
        };
        let chunk: JsInput = JsValue::from_str(&line).unchecked_into();
        s.push(&chunk).unwrap();
    }
    let r: JsValue = s.finish(Some(1.0), None).unwrap().into();
    let content = get(&r, "envelope.content").as_string().unwrap();
    assert!(content.len() <= 1024);
    assert!(
        content.contains("9001: error: boom [REDACTED:github_token]"),
        "{content}"
    );
    let red: JsValue = redact(&format!("k {GH}").into(), None).unwrap().into();
    assert_eq!(
        get(&red, "text").as_string().unwrap(),
        "k [REDACTED:github_token]"
    );
}
