//! Inputs at the edges of what pack can hold (issue 13, items 6 and 12): a result larger
//! than pack accepts is a coded `too_large` error before anything is allocated for it; a
//! JSON text with more values than a tree can hold, or nested deeper than the parser's
//! limit, is still packed (cut as text, deep nesting summarised), within the budget.

use toolslice::error::Coded;
use toolslice::pack::{json_body, pack, Body, PackOptions, Registry, ToolResult, MAX_INPUT_BYTES};

fn opts(limit: usize) -> PackOptions {
    PackOptions {
        limit: Some(limit),
        ..PackOptions::default()
    }
}

#[test]
fn a_result_over_the_input_bound_is_too_large() {
    let r = ToolResult::text("cat", "c", "a".repeat(MAX_INPUT_BYTES + 1));
    let err = pack(&r, &opts(4096), &Registry::new(), None, None).unwrap_err();
    assert_eq!(err.code(), "too_large");
    assert!(err.to_string().contains(&(MAX_INPUT_BYTES + 1).to_string()));
    let err = json_body("0".repeat(MAX_INPUT_BYTES + 1)).unwrap_err();
    assert_eq!(err.code(), "too_large");
}

#[test]
fn millions_of_values_are_packed_as_text() {
    // 10 million zeros: more values than the JSON tree is allowed to hold.
    let n = 10_000_000;
    let mut t = String::with_capacity(2 * n + 2);
    t.push('[');
    for i in 0..n {
        if i > 0 {
            t.push(',');
        }
        t.push('0');
    }
    t.push(']');
    let body = json_body(t.clone()).unwrap();
    assert!(matches!(body, Body::Text(_)));
    let r = ToolResult {
        body,
        ..ToolResult::text("query", "c", "")
    };
    let p = pack(&r, &opts(2048), &Registry::new(), None, None).unwrap();
    assert!(p.envelope.truncated);
    assert!(p.envelope.content.len() <= 2048);
    assert!(p.envelope.content.starts_with("[0,0,"));
    assert_eq!(p.span.observed_bytes, Some(t.len() as u64));
}

#[test]
fn json_nested_deeper_than_the_parser_limit_is_packed() {
    let depth = 130;
    let inner = format!(
        "{}{{\"status\":\"ok\",\"items\":[1,2,3],\"note\":\"{}\"}}{}",
        "{\"a\":".repeat(depth),
        "x".repeat(3000),
        "}".repeat(depth)
    );
    assert!(serde_json::from_str::<serde_json::Value>(&inner).is_err());
    let body = json_body(inner.clone()).unwrap();
    let r = ToolResult {
        body,
        ..ToolResult::text("query", "c", "")
    };
    for limit in [4096, 400] {
        // 4096 holds it whole (pattern `none`); 400 cuts it with the JSON pattern.
        let p = pack(&r, &opts(limit), &Registry::new(), None, None).unwrap();
        assert!(p.envelope.content.len() <= limit);
        if limit == 400 {
            assert_eq!(p.pattern, "json");
            assert!(p.envelope.truncated);
            // What the JSON pattern writes is still JSON.
            serde_json::from_str::<serde_json::Value>(&p.envelope.content)
                .map(|_| ())
                .or_else(|e| {
                    if e.to_string().starts_with("recursion limit") {
                        Ok(())
                    } else {
                        Err(e)
                    }
                })
                .unwrap();
        }
    }
    // Within the limit it is a value as before.
    assert!(matches!(
        json_body("{\"a\":[1]}".into()).unwrap(),
        Body::Json(_)
    ));
    assert_eq!(
        json_body("{\"a\":".into()).unwrap_err().code(),
        "invalid_json"
    );
}

#[test]
fn a_binary_stream_stays_within_a_small_budget() {
    use toolslice::pack::StreamPacker;
    // Found by the pack fuzz target: the size line did not fit a 32-byte budget.
    for (limit, exit) in [(2usize, None), (32, None), (24, None), (60, Some(1))] {
        let o = opts(limit);
        let mut s = StreamPacker::new("fuzz", "c", None, &o, &Registry::new(), None).unwrap();
        s.push(b"\0 x");
        match s.finish(exit, false) {
            Ok(p) => assert!(
                p.envelope.content.len() <= limit,
                "{limit}: {:?}",
                p.envelope.content
            ),
            Err(e) => assert_eq!(e.code(), "budget_too_small"),
        }
    }
}
