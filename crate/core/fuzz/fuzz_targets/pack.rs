//! The packer on arbitrary input: it never panics, never exceeds its budget, never emits a
//! planted secret in any output (content, preview, hint, span, receipts, stored text), even
//! when the secret is in the command, the tool's name or the call id, and every span record
//! it writes passes the checker. The streaming packer, with the input split where the fuzzer
//! says, holds to the same.
#![no_main]

use libfuzzer_sys::fuzz_target;
use toolslice::check::{classify, Status};
use toolslice::pack::{pack, Kind, PackOptions, Packed, Registry, StreamPacker, ToolResult};

const SECRET: &str = "ghp_Zq8Xw7Vu6Ts5Rq4Po3Nm2Lk1Jh0Gf9Ed8Cb7A";

/// `input`: the fuzzer's own bytes. A fragment it wrote there itself (`ghp_Zq8Xw7Vuu` is no
/// token) is its text, not a leak of the planted secret, so only the others are checked.
fn assert_clean(p: &Packed, limit: usize, input: &str) {
    assert!(p.envelope.content.len() <= limit, "{limit}: {:?} {}", p.envelope.content, p.pattern);
    let all = serde_json::to_string(p).unwrap();
    for fragment in [&SECRET[4..12], &SECRET[12..20], &SECRET[20..28], &SECRET[30..38]] {
        if input.contains(fragment) {
            continue;
        }
        assert!(!all.contains(fragment), "{fragment} in {all}");
    }
    let v = classify(&p.span.view());
    assert!(matches!(v.status, Status::Ok | Status::Clipped), "{v:?}");
}

fuzz_target!(|data: &[u8]| {
    if data.len() < 4 {
        return;
    }
    let limit = 1 + (usize::from(data[0]) << 4 | usize::from(data[1]));
    let kind = [None, Some(Kind::Terminal), Some(Kind::Search), Some(Kind::File), Some(Kind::Json), Some(Kind::Text)]
        [usize::from(data[2]) % 6];
    let body = String::from_utf8_lossy(&data[4..]);
    // Plant the secret in the middle of the input.
    let mid = body.char_indices().nth(body.chars().count() / 2).map_or(0, |(i, _)| i);
    let text = format!("{} {SECRET} {}", &body[..mid], &body[mid..]);
    // And in the fields around it, by the fourth byte's bits.
    let f = data[3];
    let tool = if f & 1 != 0 { format!("run token={SECRET}") } else { "fuzz".to_string() };
    let call = if f & 2 != 0 { format!("call {SECRET}") } else { "c".to_string() };
    let command = (f & 4 != 0).then(|| format!("curl -H 'Authorization: Bearer {SECRET}' https://u:{SECRET}@h/x"));
    let mut result = ToolResult::text(&tool, &call, text.clone());
    result.command = command.clone();
    if data[2] & 0x80 != 0 {
        result.exit_code = Some(i64::from(data[1]));
    }
    let opts = PackOptions { limit: Some(limit), kind, ..PackOptions::default() };
    if let Ok(p) = pack(&result, &opts, &Registry::new(), None, None) {
        assert_clean(&p, limit, &body);
    }
    // The stream, split at a point the input chooses; the short error aside, the same rules.
    if kind.is_none() {
        let at = usize::from(data[1]) * text.len() / 256;
        let Ok(mut s) = StreamPacker::new(&tool, &call, command, &opts, &Registry::new(), None) else {
            return;
        };
        s.push(&text.as_bytes()[..at]);
        s.push(&text.as_bytes()[at..]);
        if let Ok(p) = s.finish(result.exit_code, false) {
            assert_clean(&p, limit, &body);
        }
    }
});
