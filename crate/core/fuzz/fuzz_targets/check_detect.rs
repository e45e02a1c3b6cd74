//! Detection agrees with `--format otlp` on valid OTLP (issue 13): an export request per
//! line whose first lines hold hostile text (a lone surrogate escape, nesting past serde's
//! 128 levels, control characters, arbitrary strings from the fuzzer) is read as OTLP, and the
//! auto-detected report equals the forced one.
#![no_main]

use libfuzzer_sys::fuzz_target;
use toolslice::check::{check_bytes, CheckOptions};
use toolslice::formats::FormatOption;

fn json_string(bytes: &[u8]) -> String {
    serde_json::to_string(&String::from_utf8_lossy(bytes)).unwrap()
}

fuzz_target!(|data: &[u8]| {
    let Some((&knob, rest)) = data.split_first() else {
        return;
    };
    let parts: Vec<&[u8]> = rest.splitn(4, |&b| b == 0xff).collect();
    let part = |i: usize| parts.get(i).copied().unwrap_or(b"");
    let hostile = match knob % 4 {
        0 => r#""\ud83d""#.to_string(),
        1 => format!(
            "{}1{}",
            "[".repeat(130 + knob as usize),
            "]".repeat(130 + knob as usize)
        ),
        2 => json_string(part(3)),
        _ => r#""\u001b[2J\r""#.to_string(),
    };
    // A tool span needs a name to be a row: the fuzzer's text follows a fixed prefix.
    let tool_name = json_string(&[b"tool ", part(0)].concat());
    let result = json_string(part(1));
    let received = json_string(part(2));
    let messages = serde_json::to_string(&format!(
        r#"[{{"role":"tool","parts":[{{"type":"tool_call_response","id":"call_1","response":{received}}}]}}]"#
    ))
    .unwrap();
    let request = |extra: &str| {
        format!(
            r#"{{"resourceSpans":[{{"resource":{{"attributes":[{{"key":"x","value":{{"stringValue":"y"}}{extra}}}]}},"scopeSpans":[{{"spans":[{{"traceId":"t","spanId":"a","name":{tool_name},"startTimeUnixNano":"1","endTimeUnixNano":"2","attributes":[{{"key":"gen_ai.operation.name","value":{{"stringValue":"execute_tool"}}}},{{"key":"gen_ai.tool.call.id","value":{{"stringValue":"call_1"}}}},{{"key":"gen_ai.tool.call.result","value":{{"stringValue":{result}}}}}]}},{{"traceId":"t","spanId":"b","name":"chat","startTimeUnixNano":"3","endTimeUnixNano":"4","attributes":[{{"key":"gen_ai.operation.name","value":{{"stringValue":"chat"}}}},{{"key":"gen_ai.input.messages","value":{{"stringValue":{messages}}}}}]}}]}}]}}]}}"#
        )
    };
    let lines = 1 + usize::from(knob / 4 % 3);
    let mut input = String::new();
    input.push_str(&request(&format!(r#","junk":{hostile}"#)));
    for _ in 0..lines {
        input.push('\n');
        input.push_str(&request(""));
    }
    input.push('\n');
    let auto = check_bytes(input.as_bytes(), CheckOptions::default());
    let forced = check_bytes(
        input.as_bytes(),
        CheckOptions {
            format: FormatOption::Otlp,
            ..CheckOptions::default()
        },
    );
    assert_eq!(auto.format, "otlp", "{input}");
    assert_eq!(auto, forced);
    assert!(auto.counts.total >= lines as u64);
});
