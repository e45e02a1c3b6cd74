//! The OTLP endpoint's protobuf split on hostile requests: the input spliced into a valid
//! protobuf request (written from a JSON request holding a tool span, a model call and an
//! agent span) at a byte the first input byte picks, and the input alone. No panic, and
//! whenever a request is accepted: every tool span is held once, the forwarded rest holds
//! exactly the spans not held, each held request is one tool span that annotates and merges
//! into requests that read the same way.
#![no_main]

use libfuzzer_sys::fuzz_target;
use std::sync::OnceLock;
use toolslice::pipeline::{annotate, json_to_protobuf, merge, split_export, Annotation, Encoding};

const REQUEST: &str = r#"{"resourceSpans":[{"resource":{"attributes":[{"key":"service.name","value":{"stringValue":"a"}}]},"scopeSpans":[{"scope":{"name":"t"},"spans":[{"traceId":"aa01","spanId":"01","name":"invoke_agent","startTimeUnixNano":"1","endTimeUnixNano":"9","attributes":[{"key":"gen_ai.operation.name","value":{"stringValue":"invoke_agent"}}]},{"traceId":"aa01","spanId":"02","name":"execute_tool ls","startTimeUnixNano":"2","endTimeUnixNano":"3","attributes":[{"key":"gen_ai.operation.name","value":{"stringValue":"execute_tool"}},{"key":"gen_ai.tool.call.id","value":{"stringValue":"call_1"}},{"key":"gen_ai.tool.call.result","value":{"stringValue":"a.txt b.txt"}}]},{"traceId":"aa01","spanId":"03","name":"chat","startTimeUnixNano":"4","endTimeUnixNano":"5","attributes":[{"key":"gen_ai.operation.name","value":{"stringValue":"chat"}},{"key":"gen_ai.input.messages","value":{"stringValue":"[{\"role\":\"tool\",\"parts\":[{\"type\":\"tool_call_response\",\"id\":\"call_1\",\"response\":\"a.txt\"}]}]"}}]}]}],"schemaUrl":"s"}]}"#;

fn request() -> &'static [u8] {
    static PB: OnceLock<Vec<u8>> = OnceLock::new();
    PB.get_or_init(|| json_to_protobuf(REQUEST.as_bytes()).expect("the request writes as protobuf"))
}

fn holds(body: &[u8]) {
    let Ok(split) = split_export(body, Encoding::Protobuf) else {
        return;
    };
    let held: Vec<Vec<u8>> = split.traces.iter().flat_map(|t| &t.held).map(|h| h.body.clone()).collect();
    assert_eq!(held.len() as u64, split.tools);
    match &split.passthrough {
        Some(rest) => {
            let again = split_export(rest, Encoding::Protobuf).expect("the forwarded rest reads");
            assert_eq!(again.tools, 0);
            assert_eq!(again.spans + split.tools, split.spans);
            assert_eq!(again.models, split.models);
        }
        None => assert_eq!(split.spans, split.tools),
    }
    let note = Annotation {
        status: "silent_clip".into(),
        detail: "d \"\\ \u{1}".into(),
        observed_bytes: Some(3),
        injected_bytes: None,
        join: "order".into(),
    };
    let mut annotated = Vec::new();
    for one in &held {
        let again = split_export(one, Encoding::Protobuf).expect("a held span reads");
        assert_eq!((again.spans, again.tools), (1, 1));
        let with = annotate(one, Encoding::Protobuf, &note).expect("a held span annotates");
        let again = split_export(&with, Encoding::Protobuf).expect("an annotated span reads");
        assert_eq!((again.spans, again.tools), (1, 1));
        annotated.push(with);
    }
    if !annotated.is_empty() {
        let merged = merge(&annotated, Encoding::Protobuf).expect("held spans merge");
        let again = split_export(&merged, Encoding::Protobuf).expect("merged spans read");
        assert_eq!((again.spans, again.tools), (split.tools, split.tools));
    }
}

fuzz_target!(|data: &[u8]| {
    let Some((&at, input)) = data.split_first() else {
        return;
    };
    let request = request();
    // Any byte position of the valid request, its end included: the input may land inside a
    // tag, a length or a nested message, which then reads it as its own bytes.
    let cut = usize::from(at) * request.len() / 255;
    let mut body = request[..cut].to_vec();
    body.extend_from_slice(input);
    body.extend_from_slice(&request[cut..]);
    holds(&body);
    holds(input);
});
