//! Budgets: how much the model may see, in bytes, chars, UTF-16 units or tokens.
//!
//! Bytes, chars and UTF-16 units are *additive*: the size of a concatenation is the sum of
//! the sizes of its parts. The cutters plan with an additive [`Measure`] and reserve room for
//! every marker up front, so one pass lands under the budget. Tokens are not additive (a
//! tokenizer merges across the seams of the pieces), so a token budget is met by planning in
//! bytes and searching for the largest byte plan whose rendered output the caller's counter
//! accepts (see `fit` in the parent module). Either way, every output is measured with the
//! budget's own unit before it is returned: the budget is a hard limit, not a target.

use serde::{Deserialize, Serialize};

/// The unit a budget is expressed in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Unit {
    /// UTF-8 bytes.
    Bytes,
    /// Unicode scalar values (what Python's `len(str)` and Rust's `chars().count()` count).
    Chars,
    /// UTF-16 code units (what JavaScript's `String.prototype.length` counts).
    Utf16,
    /// Tokens, from the caller's counter or the built-in [`estimate_tokens`].
    Tokens,
}

impl Unit {
    pub fn name(self) -> &'static str {
        match self {
            Unit::Bytes => "bytes",
            Unit::Chars => "chars",
            Unit::Utf16 => "utf16",
            Unit::Tokens => "tokens",
        }
    }
}

/// How much the model may see. Serialized as `{"bytes": 8192}`, `{"tokens": 500}` ...
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Budget {
    Bytes(usize),
    Chars(usize),
    Utf16(usize),
    Tokens(usize),
}

impl Default for Budget {
    /// 8 KiB, the cap seed 004 gives as its example.
    fn default() -> Self {
        Budget::Bytes(8192)
    }
}

impl Budget {
    pub fn unit(self) -> Unit {
        match self {
            Budget::Bytes(_) => Unit::Bytes,
            Budget::Chars(_) => Unit::Chars,
            Budget::Utf16(_) => Unit::Utf16,
            Budget::Tokens(_) => Unit::Tokens,
        }
    }

    pub fn limit(self) -> usize {
        match self {
            Budget::Bytes(n) | Budget::Chars(n) | Budget::Utf16(n) | Budget::Tokens(n) => n,
        }
    }

    pub fn new(unit: Unit, limit: usize) -> Budget {
        match unit {
            Unit::Bytes => Budget::Bytes(limit),
            Unit::Chars => Budget::Chars(limit),
            Unit::Utf16 => Budget::Utf16(limit),
            Unit::Tokens => Budget::Tokens(limit),
        }
    }
}

/// An additive size: the planning unit of every cutter.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Measure {
    Bytes,
    Chars,
    Utf16,
}

impl Measure {
    /// The additive measure for a unit; tokens are planned in bytes.
    pub(crate) fn for_unit(unit: Unit) -> Measure {
        match unit {
            Unit::Bytes | Unit::Tokens => Measure::Bytes,
            Unit::Chars => Measure::Chars,
            Unit::Utf16 => Measure::Utf16,
        }
    }

    #[inline]
    pub(crate) fn of(self, s: &str) -> usize {
        match self {
            Measure::Bytes => s.len(),
            Measure::Chars => count_chars(s.as_bytes()),
            Measure::Utf16 => utf16_len(s),
        }
    }

    #[inline]
    pub(crate) fn of_char(self, c: char) -> usize {
        match self {
            Measure::Bytes => c.len_utf8(),
            Measure::Chars => 1,
            Measure::Utf16 => c.len_utf16(),
        }
    }
}

const HI: u64 = 0x8080_8080_8080_8080;

/// Chars in valid UTF-8: every byte that is not a continuation byte (`10xxxxxx`) starts one.
#[inline]
fn count_chars(b: &[u8]) -> usize {
    b.len() - count_marked(b, |w| w & !(w << 1))
}

/// UTF-16 code units of a string: one per char, plus one more per 4-byte sequence (a
/// leading byte `11110xxx`), which becomes a surrogate pair.
#[inline]
fn utf16_len(s: &str) -> usize {
    utf16_units(s.as_bytes())
}

/// UTF-16 code units of UTF-8 bytes, counted as in [`utf16_len`] (a slice that ends inside
/// a character counts that character whole).
pub(crate) fn utf16_units(b: &[u8]) -> usize {
    count_chars(b) + count_marked(b, |w| w & (w << 1) & (w << 2) & (w << 3))
}

/// How many bytes of `b` have the high bit set in `mark(word)`, eight bytes at a time.
///
/// Tool output is mostly ASCII, and this runs over whole multi-megabyte texts (the full size,
/// every line's cost, the UTF-16 offsets of a cut), so it works a word at a time rather than
/// a char at a time: an ASCII word costs one test, and other words add their marks into
/// eight byte counters that are summed every 255 words, before one could overflow. `mark`
/// must only mark bytes at or above 0x80 (so that skipping ASCII words is exact).
#[inline(always)]
fn count_marked(b: &[u8], mark: impl Fn(u64) -> u64) -> usize {
    let count_words = |words: &mut std::slice::ChunksExact<u8>| {
        let mut acc = 0u64;
        for w in words {
            let w = u64::from_le_bytes(w.try_into().unwrap());
            if w & HI != 0 {
                acc += (mark(w) & HI) >> 7;
            }
        }
        sum_bytes(acc)
    };
    let mut n = 0;
    let mut blocks = b.chunks_exact(8 * 255);
    for block in blocks.by_ref() {
        n += count_words(&mut block.chunks_exact(8));
    }
    let mut words = blocks.remainder().chunks_exact(8);
    n += count_words(&mut words);
    let mut tail = [0u8; 8];
    tail[..words.remainder().len()].copy_from_slice(words.remainder());
    n + sum_bytes((mark(u64::from_le_bytes(tail)) & HI) >> 7)
}

/// The sum of the eight bytes of `x`.
#[inline(always)]
fn sum_bytes(x: u64) -> usize {
    const PAIRS: u64 = 0x00FF_00FF_00FF_00FF;
    let lanes = (x & PAIRS) + ((x >> 8) & PAIRS); // four 16-bit sums, each at most 510
    (lanes.wrapping_mul(0x0001_0001_0001_0001) >> 48) as usize
}

/// Counts tokens for a token budget.
///
/// Tokenizers are not additive, so the truncator never sums counts of pieces: it counts each
/// complete candidate output and keeps only one that fits. A counter may fail (a JS callback
/// that throws); the error text is reported as `token_counter_failed`.
pub trait TokenCounter {
    fn count(&self, text: &str) -> Result<usize, String>;
}

/// Any `Fn(&str) -> usize` is a counter (a real tokenizer wrapped in a closure).
impl<F: Fn(&str) -> usize> TokenCounter for F {
    fn count(&self, text: &str) -> Result<usize, String> {
        Ok(self(text))
    }
}

/// The built-in token estimate, used when a token budget comes without a counter.
#[derive(Clone, Copy, Debug, Default)]
pub struct EstimateTokens;

impl TokenCounter for EstimateTokens {
    fn count(&self, text: &str) -> Result<usize, String> {
        Ok(estimate_tokens(text))
    }
}

/// An **estimate** of the tokens in `text`, not a tokenizer: one token per 3 ASCII bytes
/// (rounded up) plus one per non-ASCII character.
///
/// BPE tokenizers of current models average about 4 bytes per token on English prose and 3
/// to 3.5 on code and logs, and one token or more per CJK character, so the estimate errs
/// high on typical tool output: a budget met under the estimate is usually met under the
/// real tokenizer too, but not always (emoji and rare scripts can cost several tokens per
/// character). When the exact count matters, pass the model's tokenizer as the counter.
pub fn estimate_tokens(text: &str) -> usize {
    let mut ascii = 0usize;
    let mut other = 0usize;
    for &b in text.as_bytes() {
        if b < 0x80 {
            ascii += 1;
        } else if b >= 0xC0 {
            other += 1;
        }
    }
    ascii.div_ceil(3) + other
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn measures_count_their_units() {
        let s = "aé€😀\n";
        assert_eq!(Measure::Bytes.of(s), 1 + 2 + 3 + 4 + 1);
        assert_eq!(Measure::Chars.of(s), 5);
        assert_eq!(Measure::Utf16.of(s), 6);
        for c in s.chars() {
            let mut buf = [0u8; 4];
            let one = c.encode_utf8(&mut buf);
            for m in [Measure::Bytes, Measure::Chars, Measure::Utf16] {
                assert_eq!(m.of(one), m.of_char(c));
            }
        }
    }

    #[test]
    fn word_at_a_time_counts_match_per_char_counts() {
        let pieces = ["a", "é", "€", "😀", "\n", "abcdefgh", "e\u{301}"];
        let mut s = String::new();
        // Lengths across the 8-byte words and the 255-word blocks, ASCII and not.
        for i in 0..5000 {
            s.push_str(pieces[(i * 7 + i / 13) % pieces.len()]);
            if i % 97 == 0 || i > 4990 {
                for start in [0, 1, s.len() / 2] {
                    let t = &s[s.floor_char_boundary_compat(start)..];
                    assert_eq!(Measure::Chars.of(t), t.chars().count());
                    assert_eq!(Measure::Utf16.of(t), t.encode_utf16().count());
                }
            }
        }
        let ascii = "x".repeat(8 * 255 * 3 + 5);
        assert_eq!(Measure::Chars.of(&ascii), ascii.len());
        let wide = "😀".repeat(3000);
        assert_eq!(Measure::Chars.of(&wide), 3000);
        assert_eq!(Measure::Utf16.of(&wide), 6000);
    }

    trait Floor {
        fn floor_char_boundary_compat(&self, i: usize) -> usize;
    }
    impl Floor for String {
        fn floor_char_boundary_compat(&self, mut i: usize) -> usize {
            while !self.is_char_boundary(i) {
                i -= 1;
            }
            i
        }
    }

    #[test]
    fn estimate_is_documented_formula() {
        assert_eq!(estimate_tokens(""), 0);
        assert_eq!(estimate_tokens("abc"), 1);
        assert_eq!(estimate_tokens("abcd"), 2);
        assert_eq!(estimate_tokens("日本"), 2);
        assert_eq!(estimate_tokens("a日"), 2);
    }

    #[test]
    fn budget_serializes_as_unit_keyed_object() {
        let b: Budget = serde_json::from_str(r#"{"tokens": 500}"#).unwrap();
        assert_eq!(b, Budget::Tokens(500));
        assert_eq!(
            serde_json::to_string(&Budget::Utf16(3)).unwrap(),
            r#"{"utf16":3}"#
        );
    }
}
