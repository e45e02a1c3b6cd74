//! What every trace-format reader produces: tool calls with their measured results, model
//! calls with the tool messages their input carried, and everything else as context spans.
//! The join ([`super::join`]) works on these alone, so it is written once for all formats.

use serde::{Deserialize, Serialize};

use super::content::Content;

/// A captured string, or why it was not captured.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) enum Captured {
    Text(Content),
    /// The reason, naming the attribute or field that was absent or hidden.
    Missing(String),
}

/// When a span ran, in nanoseconds since the Unix epoch (when the format says).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Times {
    pub start: Option<i128>,
    pub end: Option<i128>,
}

/// Identity of a span within its input.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct SpanRef {
    /// The row's `line`: the line number (line layouts) or entry number (documents).
    pub entry: u64,
    /// Read order, for ties and for formats without times.
    pub seq: u64,
    pub trace_id: Option<String>,
    pub span_id: Option<String>,
    pub parent_id: Option<String>,
    pub times: Times,
}

/// One tool execution.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct ToolCall {
    pub at: SpanRef,
    pub name: Option<String>,
    /// The id the model gave the call (`call_...`), trimmed; `None` when the format has none.
    pub call_id: Option<String>,
    /// `ok`, `error`, `unfinished` (exported before it ended), or `None` when unset.
    pub status: Option<String>,
    pub result: Captured,
    /// The convention the span was read with (`gen_ai`, `openinference` ...), for notes.
    /// (Not kept in the OTLP pipeline's stored state.)
    #[serde(skip)]
    pub source: &'static str,
}

/// One tool result as a model call's input carried it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct ToolMessage {
    pub call_id: Option<String>,
    /// The tool's name, when the message or the assistant call before it says.
    pub name: Option<String>,
    pub content: Captured,
    /// After the input's last assistant message: the results of the calls that message made,
    /// which is what the order join pairs with the tool calls just before this model call.
    pub trailing: bool,
}

/// One model call (inference), with what its input carried.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct ModelCall {
    pub at: SpanRef,
    /// The tool messages of the input, in input order; `Err` names why the input was not
    /// captured.
    pub input: Result<Vec<ToolMessage>, String>,
}

/// Trims an id as the join compares it; an empty id is no id.
pub(crate) fn clean_id(id: &str) -> Option<String> {
    let id = trimmed(id);
    (!id.is_empty()).then(|| id.to_string())
}

/// Parses an RFC 3339 / ISO 8601 timestamp (`2025-03-13T12:00:00.123456Z`,
/// `2025-03-13 12:00:00+00:00`) into nanoseconds since the epoch. Returns `None` for anything
/// else: times only order spans, and a span without one is ordered by read order.
///
/// Two of these per span of an Agents SDK or Langfuse export: each field is read as pairs of
/// digits at its fixed place, the text is trimmed only when an end byte may be whitespace,
/// and the nanoseconds are an `i64` product up to year 2255 (an `i128` multiplication is a
/// call in wasm32). 643 instructions a call before, 431 now, natively (callgrind); the tests
/// hold it to the straightforward reading it replaced, on every field and offset spelling.
pub(crate) fn parse_iso8601(text: &str) -> Option<i128> {
    let b = trimmed(text).as_bytes();
    if b.len() < 19 || b[4] != b'-' || b[7] != b'-' || !matches!(b[10], b'T' | b't' | b' ') {
        return None;
    }
    if b[13] != b':' || b[16] != b':' {
        return None;
    }
    let year = two_digits(b, 0)? * 100 + two_digits(b, 2)?;
    let (month, day) = (two_digits(b, 5)?, two_digits(b, 8)?);
    let (hour, minute, second) = (two_digits(b, 11)?, two_digits(b, 14)?, two_digits(b, 17)?);
    if !(1..=12).contains(&month) || !(1..=31).contains(&day) || hour > 23 || minute > 59 {
        return None;
    }
    let mut i = 19;
    // At most nine digits count; the rest are dropped.
    let mut nanos: i64 = 0;
    if b.get(i) == Some(&b'.') {
        i += 1;
        let from = i;
        while let Some(&c) = b.get(i) {
            if !c.is_ascii_digit() {
                break;
            }
            if i - from < 9 {
                nanos = nanos * 10 + i64::from(c - b'0');
            }
            i += 1;
        }
        let digits = i - from;
        if digits == 0 {
            return None;
        }
        for _ in digits..9 {
            nanos *= 10;
        }
    }
    let offset_secs: i64 = match b.get(i) {
        None => 0,
        Some(b'Z' | b'z') if i + 1 == b.len() => 0,
        Some(&sign @ (b'+' | b'-')) => {
            let rest = &b[i + 1..];
            let (h, m) = match rest.len() {
                5 if rest[2] == b':' => (two_digits(rest, 0)?, two_digits(rest, 3)?),
                4 => (two_digits(rest, 0)?, two_digits(rest, 2)?),
                2 => (two_digits(rest, 0)?, 0),
                _ => return None,
            };
            let secs = h * 3600 + m * 60;
            if sign == b'+' {
                secs
            } else {
                -secs
            }
        }
        _ => return None,
    };
    let days = days_from_civil(year, month, day);
    let secs = days * 86_400 + hour * 3600 + minute * 60 + second - offset_secs;
    // Within this range the product and the sum fit an i64 (|secs| * 1e9 + 1e9 < 2^63).
    if (-9_000_000_000..=9_000_000_000).contains(&secs) {
        Some(i128::from(secs * 1_000_000_000 + nanos))
    } else {
        Some(i128::from(secs) * 1_000_000_000 + i128::from(nanos))
    }
}

/// `text` trimmed of whitespace as `str::trim` trims it, without its scan of both ends
/// when neither end byte can start or end a whitespace character (an ASCII letter or digit
/// is neither, and a timestamp, an id and an OTLP time begin and end with one).
#[inline(always)]
pub(crate) fn trimmed(text: &str) -> &str {
    match text.as_bytes() {
        [first, .., last] if first.is_ascii_alphanumeric() && last.is_ascii_alphanumeric() => text,
        _ => text.trim(),
    }
}

/// The number of the two ASCII digits at `b[at..at + 2]` (which exist), or `None`.
#[inline(always)]
fn two_digits(b: &[u8], at: usize) -> Option<i64> {
    let (tens, ones) = (b[at].wrapping_sub(b'0'), b[at + 1].wrapping_sub(b'0'));
    (tens < 10 && ones < 10).then(|| i64::from(tens * 10 + ones))
}

/// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm), for a
/// year of four digits (0 to 9999), a month 1 to 12 and a day 1 to 31, as the parser gives.
///
/// In `u32`, the year moved on by one era (400 years, 146,097 days) so that it is never
/// negative: wasm has no 64-bit multiply-high, so LLVM leaves a 64-bit division by a constant
/// a division (`i64.div_s`, three of them and a remainder per timestamp, two timestamps a
/// span), where a 32-bit one becomes a multiplication and a shift.
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    debug_assert!((0..=9999).contains(&y) && (1..=12).contains(&m) && (1..=31).contains(&d));
    let (m, d) = (m as u32, d as u32);
    // Years from March: January and February count with the year before (-1 to 9998).
    let y = (y + 400) as u32 - u32::from(m <= 2);
    let era = y / 400;
    let yoe = y - era * 400;
    let mp = if m > 2 { m - 3 } else { m + 9 };
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    i64::from(era * 146_097 + doe) - 719_468 - 146_097
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Hinnant's algorithm as written, in `i64`: the oracle of the `u32` one.
    fn days_from_civil_i64(y: i64, m: i64, d: i64) -> i64 {
        let y = if m <= 2 { y - 1 } else { y };
        let era = if y >= 0 { y } else { y - 399 } / 400;
        let yoe = y - era * 400;
        let mp = (m + 9) % 12;
        let doy = (153 * mp + 2) / 5 + d - 1;
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
        era * 146_097 + doe - 719_468
    }

    /// Every date the parser can give (years 0 to 9999, days 1 to 31 of every month).
    #[test]
    fn days_from_civil_is_hinnants() {
        for y in 0..=9999 {
            for m in 1..=12 {
                for d in 1..=31 {
                    assert_eq!(
                        days_from_civil(y, m, d),
                        days_from_civil_i64(y, m, d),
                        "{y}-{m}-{d}"
                    );
                }
            }
        }
        assert_eq!(days_from_civil(1970, 1, 1), 0);
        assert_eq!(days_from_civil(2000, 3, 1), 11_017);
    }

    #[test]
    fn iso8601() {
        assert_eq!(parse_iso8601("1970-01-01T00:00:00Z"), Some(0));
        assert_eq!(
            parse_iso8601("2024-01-15T12:00:01.5Z"),
            Some(1_705_320_001_500_000_000)
        );
        assert_eq!(
            parse_iso8601("2024-01-15T13:00:01.500000+01:00"),
            parse_iso8601("2024-01-15T12:00:01.5Z")
        );
        assert_eq!(
            parse_iso8601("2024-01-15 12:00:01"),
            Some(1_705_320_001_000_000_000)
        );
        // Digits past the ninth are dropped; offsets in both spellings.
        assert_eq!(
            parse_iso8601("2024-01-15T12:00:01.123456789999Z"),
            Some(1_705_320_001_123_456_789)
        );
        assert_eq!(
            parse_iso8601("2024-01-15T17:30:01.000000001+0530"),
            Some(1_705_320_001_000_000_001)
        );
        assert_eq!(
            parse_iso8601("9999-12-31T23:59:59.999999999Z"),
            Some(253_402_300_799_999_999_999)
        );
        for bad in [
            "",
            "2024-01-15",
            "2024-13-01T00:00:00Z",
            "2024-01-15T12:00:01.Z",
            "x",
        ] {
            assert_eq!(parse_iso8601(bad), None, "{bad}");
        }
    }

    /// The reading `parse_iso8601` replaced (one field range at a time), the oracle of its
    /// tests. Parses an RFC 3339 / ISO 8601 timestamp (`2025-03-13T12:00:00.123456Z`,
    /// `2025-03-13 12:00:00+00:00`) into nanoseconds since the epoch. Returns `None` for anything
    /// else: times only order spans, and a span without one is ordered by read order.
    fn reference_iso8601(text: &str) -> Option<i128> {
        let b = text.trim().as_bytes();
        // Every field is at most four digits, so no overflow checks: a checked 64-bit
        // multiplication per digit, as `str::parse` does, is a 128-bit multiplication call in
        // wasm32 (with the parse, 3% of reading a Langfuse export).
        let num = |r: std::ops::Range<usize>| -> Option<i64> {
            let s = b.get(r)?;
            if s.is_empty() || s.len() > 4 || !s.iter().all(u8::is_ascii_digit) {
                return None;
            }
            Some(s.iter().fold(0, |n, &d| n * 10 + i64::from(d - b'0')))
        };
        if b.len() < 19 || b[4] != b'-' || b[7] != b'-' || !matches!(b[10], b'T' | b't' | b' ') {
            return None;
        }
        if b[13] != b':' || b[16] != b':' {
            return None;
        }
        let (year, month, day) = (num(0..4)?, num(5..7)?, num(8..10)?);
        let (hour, minute, second) = (num(11..13)?, num(14..16)?, num(17..19)?);
        if !(1..=12).contains(&month) || !(1..=31).contains(&day) || hour > 23 || minute > 59 {
            return None;
        }
        let mut i = 19;
        // At most nine digits count: an `i64` (an `i128` multiplication is a call in wasm32).
        let mut nanos: i64 = 0;
        if b.get(i) == Some(&b'.') {
            i += 1;
            let digits = b[i..].iter().take_while(|c| c.is_ascii_digit()).count();
            if digits == 0 {
                return None;
            }
            for (k, &c) in b[i..i + digits].iter().enumerate() {
                if k < 9 {
                    nanos = nanos * 10 + i64::from(c - b'0');
                }
            }
            for _ in digits..9 {
                nanos *= 10;
            }
            i += digits;
        }
        let offset_secs: i64 = match b.get(i) {
            None => 0,
            Some(b'Z' | b'z') if i + 1 == b.len() => 0,
            Some(&sign @ (b'+' | b'-')) => {
                let rest = &b[i + 1..];
                let (h, m) = match rest.len() {
                    5 if rest[2] == b':' => (num(i + 1..i + 3)?, num(i + 4..i + 6)?),
                    4 => (num(i + 1..i + 3)?, num(i + 3..i + 5)?),
                    2 => (num(i + 1..i + 3)?, 0),
                    _ => return None,
                };
                let secs = h * 3600 + m * 60;
                if sign == b'+' {
                    secs
                } else {
                    -secs
                }
            }
            _ => return None,
        };
        let days = days_from_civil_i64(year, month, day);
        let secs = days * 86_400 + hour * 3600 + minute * 60 + second - offset_secs;
        Some(i128::from(secs) * 1_000_000_000 + i128::from(nanos))
    }

    /// The fast reading gives what the straightforward one gives, on timestamps with every
    /// byte replaced by a digit, a separator, a letter, whitespace (ASCII and not) or cut off,
    /// with each offset spelling, fraction length and padding, and at the year's ends.
    #[test]
    fn iso8601_is_the_reference_reading() {
        let bases = [
            "2025-06-15T10:00:00.100000+00:00",
            "2024-01-15T12:00:01.5Z",
            "2024-01-15 12:00:01",
            "2024-01-15t17:30:01.000000001+0530",
            "2024-02-29T23:59:60.123456789999-11",
            "0000-01-01T00:00:00z",
            "9999-12-31T23:59:59.999999999Z",
            "2262-04-11T23:47:16.854775807Z",
            "1677-09-21T00:12:43.145224192-00:00",
            "2024-01-15T12:00:01.Z",
        ];
        let swaps: &[&str] = &[
            "0", "9", "-", ":", ".", "T", "Z", "+", " ", "\t", "\n", "x", "\u{a0}", "\u{2003}",
            "é", "/", ";", "\u{7f}", "",
        ];
        let mut cases: Vec<String> = Vec::new();
        for base in bases {
            cases.push(base.to_string());
            for pad in [" ", "\n\t", "\u{a0}", "\u{3000}"] {
                cases.push(format!("{pad}{base}"));
                cases.push(format!("{base}{pad}"));
                cases.push(format!("{pad}{base}{pad}"));
            }
            let chars: Vec<(usize, char)> = base.char_indices().collect();
            for &(at, c) in &chars {
                for swap in swaps {
                    let mut s = base.to_string();
                    s.replace_range(at..at + c.len_utf8(), swap);
                    cases.push(s);
                }
                cases.push(base[..at].to_string());
            }
        }
        for frac in 0..=12 {
            let digits = "123456789012".get(..frac).unwrap_or("");
            for tail in ["", "Z", "+01:30", "-0130", "+01", "+1", "+01:3", "Zx"] {
                cases.push(format!("2024-01-15T12:00:01.{digits}{tail}"));
            }
        }
        for year in [
            "0000", "0001", "1969", "1970", "2255", "2256", "2262", "2263", "9999",
        ] {
            for md in ["01-01", "02-28", "03-01", "12-31"] {
                for t in ["00:00:00", "23:59:59"] {
                    cases.push(format!("{year}-{md}T{t}.999999999Z"));
                    cases.push(format!("{year}-{md}T{t}-23:59"));
                }
            }
        }
        assert!(cases.len() > 2000);
        for case in &cases {
            assert_eq!(parse_iso8601(case), reference_iso8601(case), "{case:?}");
        }
        // The cases reach both answers.
        assert!(cases.iter().filter(|c| parse_iso8601(c).is_some()).count() > 300);
        assert!(cases.iter().filter(|c| parse_iso8601(c).is_none()).count() > 300);
    }

    #[test]
    fn ids_are_trimmed() {
        assert_eq!(clean_id("  call_1 \n").as_deref(), Some("call_1"));
        assert_eq!(clean_id("   "), None);
    }
}
