//! The JSON pattern on arbitrary input: whatever serde_json accepts, the cut output is JSON
//! again and fits its budget; whatever it rejects is refused as `invalid_json` or fits
//! unchanged. The first two bytes are the byte budget.
#![no_main]

use libfuzzer_sys::fuzz_target;
use toolslice::truncate::{truncate, Budget, Options, Pattern, TruncateError};

fuzz_target!(|data: &[u8]| {
    if data.len() < 2 {
        return;
    }
    let limit = u16::from_le_bytes([data[0], data[1]]) as usize;
    let Ok(text) = std::str::from_utf8(&data[2..]) else {
        return;
    };
    let valid = serde_json::from_str::<serde_json::Value>(text).is_ok();
    match truncate(text, &Options::new(Pattern::Json, Budget::Bytes(limit))) {
        Ok(t) => {
            assert!(t.text.len() <= limit);
            if t.truncated && valid {
                serde_json::from_str::<serde_json::Value>(&t.text).expect("cut JSON is JSON");
            }
        }
        Err(TruncateError::BudgetTooSmall { needed, .. }) => assert!(needed > limit),
        // Our parser also refuses nesting deeper than 512 levels, which serde_json (128)
        // refuses too; anything else it refuses must be invalid for serde_json as well.
        Err(TruncateError::InvalidJson(_)) => assert!(!valid),
        Err(e) => panic!("unexpected error: {e}"),
    }
});
