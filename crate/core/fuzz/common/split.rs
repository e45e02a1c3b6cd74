//! What the OTLP endpoint's split must hold on any request it accepts, in either encoding:
//! shared by the `otlp_split` (JSON) and `otlp_split_protobuf` fuzz targets.

use toolslice::pipeline::{annotate, merge, split_export, Annotation, Encoding, Split};

/// A request holding an agent span, a tool span and a model call whose input answers it.
pub const REQUEST: &str = r#"{"resourceSpans":[{"resource":{"attributes":[{"key":"service.name","value":{"stringValue":"a"}}]},"scopeSpans":[{"scope":{"name":"t"},"spans":[{"traceId":"aa01","spanId":"01","name":"invoke_agent","startTimeUnixNano":"1","endTimeUnixNano":"9","attributes":[{"key":"gen_ai.operation.name","value":{"stringValue":"invoke_agent"}}]},{"traceId":"aa01","spanId":"02","name":"execute_tool ls","startTimeUnixNano":"2","endTimeUnixNano":"3","attributes":[{"key":"gen_ai.operation.name","value":{"stringValue":"execute_tool"}},{"key":"gen_ai.tool.call.id","value":{"stringValue":"call_1"}},{"key":"gen_ai.tool.call.result","value":{"stringValue":"a.txt b.txt"}}]},{"traceId":"aa01","spanId":"03","name":"chat","startTimeUnixNano":"4","endTimeUnixNano":"5","attributes":[{"key":"gen_ai.operation.name","value":{"stringValue":"chat"}},{"key":"gen_ai.input.messages","value":{"stringValue":"[{\"role\":\"tool\",\"parts\":[{\"type\":\"tool_call_response\",\"id\":\"call_1\",\"response\":\"a.txt\"}]}]"}}]}]}],"schemaUrl":"s"}]}"#;

/// Splits `body`; when it is accepted: every tool span is held once, the forwarded rest holds
/// exactly the spans not held, each held request is one tool span that annotates and merges
/// into requests that read the same way. The split, or `None` for a refused body.
pub fn holds(body: &[u8], encoding: Encoding) -> Option<Split> {
    let split = split_export(body, encoding).ok()?;
    let held: Vec<Vec<u8>> = split.traces.iter().flat_map(|t| &t.held).map(|h| h.body.clone()).collect();
    assert_eq!(held.len() as u64, split.tools);
    match &split.passthrough {
        Some(rest) => {
            let again = split_export(rest, encoding).expect("the forwarded rest reads");
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
        let again = split_export(one, encoding).expect("a held span reads");
        assert_eq!((again.spans, again.tools), (1, 1));
        let with = annotate(one, encoding, &note).expect("a held span annotates");
        let again = split_export(&with, encoding).expect("an annotated span reads");
        assert_eq!((again.spans, again.tools), (1, 1));
        annotated.push(with);
    }
    if !annotated.is_empty() {
        let merged = merge(&annotated, encoding).expect("held spans merge");
        let again = split_export(&merged, encoding).expect("merged spans read");
        assert_eq!((again.spans, again.tools), (split.tools, split.tools));
    }
    Some(split)
}
