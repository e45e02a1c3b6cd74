//! The truncators on arbitrary input and options: never a panic, never over budget, the
//! text back unchanged when it fits, kept segments copied verbatim, counts that add up.
//! The first bytes choose the options; the rest (decoded lossily) is the tool output.
#![no_main]

use libfuzzer_sys::fuzz_target;
use toolslice::error::Coded;
use toolslice::truncate::{estimate_tokens, truncate, Budget, Fetch, Options, Pattern, TruncateError, Unit};

const PATTERNS: [Pattern; 8] = [
    Pattern::Auto,
    Pattern::Head,
    Pattern::Tail,
    Pattern::HeadTail,
    Pattern::Terminal,
    Pattern::Search,
    Pattern::File,
    Pattern::Json,
];
const UNITS: [Unit; 4] = [Unit::Bytes, Unit::Chars, Unit::Utf16, Unit::Tokens];

fn measure(unit: Unit, s: &str) -> usize {
    match unit {
        Unit::Bytes => s.len(),
        Unit::Chars => s.chars().count(),
        Unit::Utf16 => s.encode_utf16().count(),
        Unit::Tokens => estimate_tokens(s),
    }
}

fuzz_target!(|data: &[u8]| {
    if data.len() < 5 {
        return;
    }
    let (head, rest) = data.split_at(5);
    let text = String::from_utf8_lossy(rest);
    let unit = UNITS[(head[0] >> 4) as usize % 4];
    let mut o = Options::new(PATTERNS[head[0] as usize % 8], Budget::new(unit, u16::from_le_bytes([head[1], head[2]]) as usize));
    let flags = head[3];
    if flags & 1 != 0 {
        o.exit_code = Some(i64::from(head[4]) - 128);
    }
    o.header = flags & 2 != 0;
    o.timed_out = flags & 4 != 0;
    if flags & 8 != 0 {
        o.command = Some("make test".into());
    }
    if flags & 16 != 0 {
        o.fetch = Some(Fetch { id: "c".into(), offset: u64::from(head[4]), ..Fetch::default() });
    }
    if flags & 32 != 0 {
        o.file.range = Some([1 + (head[4] as usize % 20), 1 + (head[4] as usize % 20) + (head[4] as usize / 20)]);
    }
    o.terminal.collapse = flags & 64 == 0;
    o.terminal.context_after = usize::from(flags & 128 != 0);
    o.head_share = f64::from(head[4] % 11) / 10.0;

    match truncate(&text, &o) {
        Ok(t) => {
            let limit = o.budget.limit();
            assert!(measure(unit, &t.text) <= limit, "over budget");
            assert_eq!(t.size, measure(unit, &t.text));
            let kept: usize = t.kept.iter().map(|r| r[1] - r[0]).sum();
            assert_eq!(t.omitted_bytes, text.len() - kept);
            let mut at = 0;
            for s in &t.segments {
                assert_eq!(s.output[0], at);
                at = s.output[1];
                if let Some([a, b]) = s.source {
                    assert_eq!(&t.text[s.output[0]..s.output[1]], &text[a..b]);
                }
            }
            assert_eq!(at, t.text.len());
            if !t.truncated {
                assert!(t.text.ends_with(&*text));
            }
            assert_eq!(t.exit_code, o.exit_code);
        }
        Err(TruncateError::BudgetTooSmall { needed, limit, .. }) => assert!(needed > limit),
        Err(e @ TruncateError::InvalidJson(_)) => {
            assert_eq!(o.pattern, Pattern::Json);
            assert_eq!(e.code(), "invalid_json");
        }
        Err(e) => panic!("unexpected error: {e}"),
    }
});
