//! The packer on arbitrary input: it never panics, never exceeds its budget, never emits a
//! planted secret, and every span record it writes passes the checker.
#![no_main]

use libfuzzer_sys::fuzz_target;
use toolslice::check::{classify, Status};
use toolslice::pack::{pack, Kind, PackOptions, Registry, ToolResult};

const SECRET: &str = "ghp_Zq8Xw7Vu6Ts5Rq4Po3Nm2Lk1Jh0Gf9Ed8Cb7A";

fuzz_target!(|data: &[u8]| {
    if data.len() < 3 {
        return;
    }
    let limit = 1 + (usize::from(data[0]) << 4 | usize::from(data[1]));
    let kind = [None, Some(Kind::Terminal), Some(Kind::Search), Some(Kind::File), Some(Kind::Json), Some(Kind::Text)]
        [usize::from(data[2]) % 6];
    let body = String::from_utf8_lossy(&data[3..]);
    // Plant the secret in the middle of the input.
    let mid = body.char_indices().nth(body.chars().count() / 2).map_or(0, |(i, _)| i);
    let text = format!("{} {SECRET} {}", &body[..mid], &body[mid..]);
    let mut result = ToolResult::text("fuzz", "c", text);
    if data[2] & 0x80 != 0 {
        result.exit_code = Some(i64::from(data[1]));
    }
    let opts = PackOptions { limit: Some(limit), kind, ..PackOptions::default() };
    if let Ok(p) = pack(&result, &opts, &Registry::new(), None, None) {
        assert!(p.envelope.content.len() <= limit);
        for out in [&p.envelope.content, p.span.injected_preview.as_ref().unwrap()] {
            assert!(!out.contains(&SECRET[4..12]) && !out.contains(&SECRET[20..28]));
        }
        if let Some(s) = &p.stored {
            assert!(!s.text.contains(&SECRET[4..12]));
        }
        let v = classify(&p.span.view());
        assert!(matches!(v.status, Status::Ok | Status::Clipped), "{v:?}");
    }
});
