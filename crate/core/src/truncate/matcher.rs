//! The two line classifiers the semantic cutters rely on: "is this an error line?" for
//! terminal output and "is this a definition?" for source files.
//!
//! No regex engine: the error matcher is one pass over the line that stops only at word
//! starts (and at a capital `E` inside a word, for `TypeError`-style names), dispatches on
//! the first letter and compares a handful of keywords case-insensitively. It matches
//! everything the seed's `ERROR_PATTERNS` match on ASCII text (a differential test checks
//! this against the reference script), plus the markers of real toolchains the seed misses:
//! `panicked at`, `npm ERR!`, `AssertionError`, `Segmentation fault`, `exit status 1`,
//! `core dumped`, `Uncaught`, `cannot`, `could not`, `unable to`, `undefined reference` ...
//!
//! Word boundaries follow the seed's `\b` with one deliberate difference: only ASCII letters,
//! digits and `_` are word characters, so a keyword next to a non-ASCII character still
//! matches (the matcher errs towards keeping a line).

use super::lines::Line;

/// A keyword checked at a word start.
struct Keyword {
    text: &'static [u8],
    /// Require a word boundary after the keyword (`\bdenied\b`); otherwise it is a prefix
    /// (`\bfail` matches `failed`, `failure`).
    bounded: bool,
}

const fn kw(text: &'static str, bounded: bool) -> Keyword {
    Keyword {
        text: text.as_bytes(),
        bounded,
    }
}

/// Keywords by their first (lower-case) letter.
const fn keywords(first: u8) -> &'static [Keyword] {
    const A: &[Keyword] = &[kw("abort", false), kw("assertion", false)];
    const C: &[Keyword] = &[
        kw("cannot", true),
        kw("could not", true),
        kw("couldn't", true),
        kw("core dumped", true),
        kw("critical", true),
    ];
    const D: &[Keyword] = &[kw("denied", true)];
    const E: &[Keyword] = &[
        kw("error", true),
        kw("errors", true),
        kw("err", true),
        kw("errno", true),
        kw("exception", false),
        kw("exit code", true),
        kw("exit status", true),
        kw("exited with", true),
    ];
    const F: &[Keyword] = &[kw("fail", false), kw("fatal", false)];
    const K: &[Keyword] = &[kw("killed", true)];
    const N: &[Keyword] = &[
        kw("not found", true),
        kw("no such file", true),
        kw("non-zero", true),
        kw("nonzero", true),
    ];
    const O: &[Keyword] = &[kw("out of memory", true)];
    const P: &[Keyword] = &[
        kw("permission", false),
        kw("panic", true),
        kw("panicked", false),
    ];
    const R: &[Keyword] = &[kw("refused", true)];
    const S: &[Keyword] = &[kw("segfault", false), kw("segmentation fault", false)];
    const T: &[Keyword] = &[kw("traceback", false), kw("timed out", true)];
    const U: &[Keyword] = &[
        kw("unable to", true),
        kw("undefined reference", true),
        kw("unresolved", false),
        kw("uncaught", false),
        kw("unhandled", false),
    ];
    match first {
        b'a' => A,
        b'c' => C,
        b'd' => D,
        b'e' => E,
        b'f' => F,
        b'k' => K,
        b'n' => N,
        b'o' => O,
        b'p' => P,
        b'r' => R,
        b's' => S,
        b't' => T,
        b'u' => U,
        _ => &[],
    }
}

/// ASCII letters, digits and `_`.
pub(crate) static WORD: [bool; 256] = {
    let mut t = [false; 256];
    let mut i = 0;
    while i < 256 {
        let b = i as u8;
        t[i] = b.is_ascii_alphanumeric() || b == b'_';
        i += 1;
    }
    t
};

#[inline]
fn is_word(b: u8) -> bool {
    WORD[b as usize]
}

#[inline]
fn starts_ci(hay: &[u8], at: usize, needle: &[u8]) -> bool {
    hay.len() - at >= needle.len()
        && hay[at..at + needle.len()]
            .iter()
            .zip(needle)
            .all(|(a, b)| a.to_ascii_lowercase() == *b)
}

#[inline]
fn bounded_at(hay: &[u8], end: usize) -> bool {
    end == hay.len() || !is_word(hay[end])
}

fn matches_at_word_start(line: &[u8], i: usize) -> bool {
    let first = line[i].to_ascii_lowercase();
    for k in keywords(first) {
        if starts_ci(line, i, k.text) && (!k.bounded || bounded_at(line, i + k.text.len())) {
            return true;
        }
    }
    // `\breturned \d+`
    first == b'r'
        && starts_ci(line, i, b"returned ")
        && line.get(i + 9).is_some_and(|b| b.is_ascii_digit())
}

/// `TypeError`, `AssertionError`, `NullPointerException`: a capital `E` inside a word, after
/// a lower-case letter or digit.
fn matches_camel(line: &[u8], j: usize) -> bool {
    let Some(&prev) = j.checked_sub(1).and_then(|p| line.get(p)) else {
        return false;
    };
    if !(prev.is_ascii_lowercase() || prev.is_ascii_digit()) {
        return false;
    }
    (line[j..].starts_with(b"Error") && bounded_at(line, j + 5))
        || line[j..].starts_with(b"Exception")
}

/// Whether a line (without its terminator) reports an error or failure.
pub(crate) fn is_error_line(line: &[u8]) -> bool {
    next_match(line, 0).is_some()
}

/// Which of `lines` report an error, by one scan of the whole text rather than one call per
/// line. The answers equal `is_error_line` on each line's content: a match cannot straddle a
/// line end, because no keyword contains `\r` or `\n` and both are non-word characters, so
/// the bytes around a line's content (the terminator, the previous line's `\n`) decide
/// word boundaries exactly as the content's own ends do. After a match the scan resumes at
/// the next line.
pub(crate) fn error_flags(src: &[u8], lines: &[Line]) -> Vec<bool> {
    let mut hits = Vec::new();
    error_hits(src, 0, src.len(), &mut hits);
    flags_of(&hits, lines)
}

/// The scan of [`error_flags`] over the lines from `from` (a line start) up to `until` (a
/// line start, or the end of `src`): appends the position of each line's first match, and
/// returns where the next call goes on from. Split at line starts, the calls find what one
/// call over the whole text finds, since no match straddles a line end (see above); so a
/// text can be scanned piece by piece while the splitter's pieces are in the cache.
pub(crate) fn error_hits(src: &[u8], from: usize, until: usize, hits: &mut Vec<usize>) -> usize {
    let hay = &src[..until];
    let mut at = from;
    while at < until {
        let Some(p) = next_match(hay, at) else {
            return until;
        };
        hits.push(p);
        // On at the next line (every line but the last ends with `\n`).
        at = memchr::memchr(b'\n', &src[p..]).map_or(src.len(), |k| p + k + 1);
    }
    at
}

/// Per line, whether it holds one of `hits` (ascending positions in the lines' text).
pub(crate) fn flags_of(hits: &[usize], lines: &[Line]) -> Vec<bool> {
    let mut flags = vec![false; lines.len()];
    let mut k = 0;
    for &p in hits {
        while lines[k].end <= p {
            k += 1;
        }
        flags[k] = true;
    }
    flags
}

const LO: u64 = 0x0101_0101_0101_0101;
const HI: u64 = 0x8080_8080_8080_8080;

/// High bit set in each byte of `v` (whose bytes are all below 0x80) within `lo..=hi`.
#[inline(always)]
fn between(v: u64, lo: u8, hi: u8) -> u64 {
    let ge_lo = v + LO * (0x80 - lo as u64);
    let gt_hi = v + LO * (0x7F - hi as u64);
    ge_lo & !gt_hi & HI
}

/// High bit set in each byte of `w` that is a word character (see [`WORD`]), and in each
/// that is an ASCII letter.
#[inline(always)]
fn word_bytes(w: u64) -> (u64, u64) {
    let a = w & !HI;
    let letter = between(a | (LO * 0x20), b'a', b'z') & !w;
    let digit = between(a, b'0', b'9');
    let under = between(a, b'_', b'_');
    ((letter | digit | under) & !w, letter)
}

/// The first position at or after `from` where `hay` matches: a word start (`from` is one
/// when `hay[from - 1]` is not a word character) with a keyword, or a camel-case `Error` /
/// `Exception`.
///
/// Log lines are mostly words that match nothing, so this does not walk them byte by byte:
/// it finds the word starts and capital `E`s of eight bytes at once (bit tricks on a `u64`,
/// which compile to plain integer code natively and in wasm), and runs the keyword checks
/// only there, after a table lookup on the first two letters rejects the common words.
fn next_match(hay: &[u8], from: usize) -> Option<usize> {
    let after_word = from > 0 && is_word(hay[from - 1]);
    // In wasm with SIMD, sixteen bytes at a time up to the last sixteen.
    #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
    let (from, after_word) = match simd::scan(hay, from, after_word) {
        Ok(at) => return Some(at),
        Err(resume) => resume,
    };
    let n = hay.len();
    let mut base = from;
    // The word flag of the byte before `base`, where the next word's shifted flags put it.
    let mut carry = if after_word { 0x80 } else { 0 };
    while base < n {
        let w = match hay.get(base..base + 8) {
            Some(b) => u64::from_le_bytes(b.try_into().unwrap()),
            None => {
                // Zero padding: non-word, not `E`.
                let mut b = [0u8; 8];
                b[..n - base].copy_from_slice(&hay[base..]);
                u64::from_le_bytes(b)
            }
        };
        let (word, letter) = word_bytes(w);
        let after_word = (word << 8) | carry;
        carry = word >> 56;
        // Keywords start with a letter; a camel-case `E` follows a word character.
        let starts = letter & !after_word;
        let caps = between(w & !HI, b'E', b'E') & !w & after_word;
        let mut cand = starts | caps;
        while cand != 0 {
            let bit = cand & cand.wrapping_neg();
            let i = base + (bit.trailing_zeros() / 8) as usize;
            if matches_candidate(hay, i, starts & bit != 0) {
                return Some(i);
            }
            cand ^= bit;
        }
        base += 8;
    }
    None
}

/// The checks at a candidate: a keyword at a word start, else a camel-case `E`.
#[inline(always)]
fn matches_candidate(hay: &[u8], i: usize, start: bool) -> bool {
    if start {
        may_start_keyword(hay, i) && matches_at_word_start(hay, i)
    } else {
        matches_camel(hay, i)
    }
}

/// The same scan with wasm SIMD: byte classes of sixteen bytes by vector compares, one
/// `bitmask` each, then the same candidates and checks as the word-at-a-time scan (which
/// finishes the last seventeen bytes). In wasm the `u64` bit tricks are the largest part of
/// truncating a long log; the vector form does the same in a quarter of the instructions.
#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
mod simd {
    use core::arch::wasm32::*;

    /// The keywords' first letters in eight buckets, one bit each: a position passes when
    /// its first three bytes all allow one bucket. Letters with many prefixes get a bucket
    /// of their own (`c`, `e`, `u`), the others share by twos.
    const BUCKETS: [&[u8]; 8] = [b"c", b"e", b"u", b"ad", b"fk", b"no", b"pr", b"st"];

    /// `TABLES[k]`, for byte `k` of a position (0, 1, 2): for each low-five-bit value, the
    /// buckets some keyword prefix (`PREFIXES`, which holds `returned`) allows there. The low
    /// five bits are those of the lower case letter too, so the test is case-insensitive; a
    /// digit or punctuation byte shares its bits with a letter and passes where that letter
    /// does, a superset the exact check narrows.
    const TABLES: [[v128; 2]; 3] = {
        let mut t = [[[0u8; 16]; 2]; 3];
        let mut b = 0;
        while b < BUCKETS.len() {
            let mut l = 0;
            while l < BUCKETS[b].len() {
                let row = &super::PREFIXES[(BUCKETS[b][l] & 31) as usize];
                let mut slot = 0;
                while slot < row.len() {
                    let (value, mask) = row[slot];
                    if mask != 0 {
                        let mut k = 0;
                        while k < 3 {
                            let i = ((value >> (8 * k)) & 31) as usize;
                            t[k][i / 16][i % 16] |= 1 << b;
                            k += 1;
                        }
                    }
                    slot += 1;
                }
                l += 1;
            }
            b += 1;
        }
        let zero = vector([0; 16]);
        let mut out = [[zero; 2]; 3];
        let mut k = 0;
        while k < 3 {
            out[k] = [vector(t[k][0]), vector(t[k][1])];
            k += 1;
        }
        out
    };

    /// The buckets `TABLES[k]` allows for each byte of `v`.
    #[inline(always)]
    fn buckets(table: &[v128; 2], v: v128) -> v128 {
        // A swizzle index of 16 or more reads 0: the two halves, each read by its own range.
        let idx = v128_and(v, u8x16_splat(0x1f));
        v128_or(
            i8x16_swizzle(table[0], idx),
            i8x16_swizzle(table[1], u8x16_sub(idx, u8x16_splat(16))),
        )
    }

    const fn vector(t: [u8; 16]) -> v128 {
        u8x16(
            t[0], t[1], t[2], t[3], t[4], t[5], t[6], t[7], t[8], t[9], t[10], t[11], t[12], t[13],
            t[14], t[15],
        )
    }

    /// `Ok(position)` of the first match, or `Err((resume, after_word))` where the
    /// word-at-a-time scan must continue: the first unscanned byte, and whether the byte
    /// before it is a word character.
    pub(super) fn scan(
        hay: &[u8],
        from: usize,
        mut after_word: bool,
    ) -> Result<usize, (usize, bool)> {
        let mut base = from;
        // Eighteen bytes: each position's first three are read.
        while let Some(chunk) = hay.get(base..base + 18) {
            // SAFETY: `chunk` is 18 readable bytes: the loads read bytes 0-15, 1-16 and 2-17;
            // v128_load has no alignment requirement.
            let (v, v1, v2) = unsafe {
                let p = chunk.as_ptr();
                (
                    v128_load(p as *const v128),
                    v128_load(p.add(1) as *const v128),
                    v128_load(p.add(2) as *const v128),
                )
            };
            // Bytes at or above 0x80 fall outside every range below once shifted.
            let lower = v128_or(v, u8x16_splat(0x20));
            // `x - lo < n` unsigned, as `x - lo + 0x80 < n - 0x80` signed: x64 has no
            // unsigned byte compare, and V8 emulates one in three instructions.
            let letter = i8x16_lt(
                u8x16_add(lower, u8x16_splat(0x80 - b'a')),
                i8x16_splat(i8::MIN + 26),
            );
            let digit = i8x16_lt(
                u8x16_add(v, u8x16_splat(0x80 - b'0')),
                i8x16_splat(i8::MIN + 10),
            );
            let under = u8x16_eq(v, u8x16_splat(b'_'));
            let word = u32::from(u8x16_bitmask(v128_or(letter, v128_or(digit, under))));
            let letter = u32::from(u8x16_bitmask(letter));
            let caps = u32::from(u8x16_bitmask(u8x16_eq(v, u8x16_splat(b'E'))));
            // Only a position whose first three bytes may begin some keyword can start a
            // match: the other word starts (`Compiling`, `crate`, `with`, `v1.2` ...) are no
            // candidates. Checked one by one, they were most of this scan on a build log.
            let shared = v128_and(
                buckets(&TABLES[0], v),
                v128_and(buckets(&TABLES[1], v1), buckets(&TABLES[2], v2)),
            );
            let first = !u32::from(u8x16_bitmask(u8x16_eq(shared, u8x16_splat(0)))) & 0xFFFF;
            let before = (word << 1) | u32::from(after_word);
            after_word = word & 0x8000 != 0;
            let starts = letter & !before & first;
            let mut cand = starts | (caps & before);
            while cand != 0 {
                let k = cand.trailing_zeros();
                let i = base + k as usize;
                if super::matches_candidate(hay, i, starts & (1 << k) != 0) {
                    return Ok(i);
                }
                cand &= cand - 1;
            }
            base += 16;
        }
        Err((base, after_word))
    }
}

/// The first four bytes of a keyword as a little-endian `u32` and the mask of those that
/// exist (`err` has three).
const fn prefix4(text: &[u8]) -> (u32, u32) {
    let mut value = 0u32;
    let mut mask = 0u32;
    let mut k = 0;
    while k < 4 && k < text.len() {
        value |= (text[k] as u32) << (8 * k);
        mask |= 0xFF << (8 * k);
        k += 1;
    }
    (value, mask)
}

/// At most this many distinct keyword prefixes share a first letter (`e` and `u`).
const PREFIXES_PER_LETTER: usize = 5;

/// `PREFIXES[letter & 31]`: the distinct `prefix4`s of the keywords (and `returned`) that start
/// with that letter; unused slots never match (mask 0, value not 0).
const PREFIXES: [[(u32, u32); PREFIXES_PER_LETTER]; 32] = {
    let mut t = [[(1u32, 0u32); PREFIXES_PER_LETTER]; 32];
    let firsts = b"acdefknoprstu";
    let mut f = 0;
    while f < firsts.len() {
        let row = &mut t[(firsts[f] & 31) as usize];
        let list = keywords(firsts[f]);
        let mut k = 0;
        while k <= list.len() {
            let p = if k < list.len() {
                prefix4(list[k].text)
            } else if firsts[f] == b'r' {
                prefix4(b"returned ")
            } else {
                break;
            };
            let mut slot = 0;
            while slot < PREFIXES_PER_LETTER && row[slot].1 != 0 && row[slot].0 != p.0 {
                slot += 1;
            }
            assert!(slot < PREFIXES_PER_LETTER, "raise PREFIXES_PER_LETTER");
            row[slot] = p;
            k += 1;
        }
        f += 1;
    }
    t
};

/// The four-byte prefixes of `PREFIXES` (all but `err`, which has three) as a 1024-bit set,
/// by a multiplicative hash: one lookup instead of a compare per prefix. About 3% of other
/// words share a bit with a keyword and go on to the exact check.
static PREFIX_BITS: [u64; 16] = {
    let mut bits = [0u64; 16];
    let mut r = 0;
    while r < 32 {
        let mut k = 0;
        while k < PREFIXES_PER_LETTER {
            let (value, mask) = PREFIXES[r][k];
            if mask == u32::MAX {
                let h = prefix_hash(value);
                bits[h / 64] |= 1 << (h % 64);
            }
            k += 1;
        }
        r += 1;
    }
    bits
};

/// `err`, the only keyword shorter than four bytes.
const ERR3: u32 = prefix4(b"err").0;

#[inline(always)]
const fn prefix_hash(p: u32) -> usize {
    (p.wrapping_mul(0x9E37_79B1) >> 22) as usize
}

/// A cheap necessary condition for `matches_at_word_start` at the letter `hay[i]`: its first
/// four bytes, lower-cased, begin one of the keywords. OR-ing 0x20 lower-cases letters and
/// leaves every other keyword byte (space, `-`, `'`) unchanged, so a case-insensitive match
/// always passes; what else passes is rejected by the exact check. One load, a multiply and
/// a bit test, where comparing keyword by keyword costs a loop per keyword.
#[inline(always)]
fn may_start_keyword(hay: &[u8], i: usize) -> bool {
    let Some(b) = hay.get(i..i + 4) else {
        return true; // near the end: let the exact check decide
    };
    let p = u32::from_le_bytes(b.try_into().unwrap()) | 0x2020_2020;
    let h = prefix_hash(p);
    (p & 0x00FF_FFFF) == ERR3 || PREFIX_BITS[h / 64] & (1 << (h % 64)) != 0
}

/// Whether a line (without its terminator) starts a definition: a function, method, class,
/// struct, enum, trait, impl, module, interface, type or exported binding, in Rust, Python,
/// JavaScript/TypeScript, Go, Java/C#/Kotlin, Ruby, and C-style `type name(args) {` lines.
pub(crate) fn is_definition_line(line: &str) -> bool {
    let indent = line.len() - line.trim_start_matches([' ', '\t']).len();
    let mut rest = &line[indent..];
    let mut modifiers = false;
    let mut exported = false;
    loop {
        let before = rest.len();
        for m in MODIFIERS {
            if let Some(r) = rest.strip_prefix(m) {
                if *m == "export " {
                    exported = true;
                }
                if matches!(*m, "public " | "private " | "protected " | "internal ") {
                    modifiers = true;
                }
                rest = r.trim_start_matches(' ');
                break;
            }
        }
        if rest.len() == before {
            break;
        }
    }
    if exported || modifiers {
        return !rest.is_empty();
    }
    for k in KEYWORDS {
        if let Some(r) = rest.strip_prefix(k) {
            if r.starts_with([' ', '<', '(', '!', '*', '\t']) || r.is_empty() && *k == "impl" {
                return true;
            }
        }
    }
    // C-style `int main(int argc, char **argv) {` at the left margin.
    indent == 0
        && rest.ends_with('{')
        && rest.contains('(')
        && rest
            .as_bytes()
            .first()
            .is_some_and(|b| b.is_ascii_alphabetic() || *b == b'_')
        && !CONTROL.iter().any(|c| {
            rest.strip_prefix(c)
                .is_some_and(|r| r.starts_with([' ', '(', '{']))
        })
        && !rest.contains(" = ")
}

const MODIFIERS: &[&str] = &[
    "pub(crate) ",
    "pub(super) ",
    "pub ",
    "export ",
    "default ",
    "async ",
    "static ",
    "public ",
    "private ",
    "protected ",
    "internal ",
    "abstract ",
    "final ",
    "unsafe ",
    "extern \"C\" ",
    "override ",
    "sealed ",
    "open ",
    "data ",
    "inline ",
    "virtual ",
];

const KEYWORDS: &[&str] = &[
    "fn",
    "struct",
    "enum",
    "trait",
    "impl",
    "mod",
    "macro_rules",
    "union",
    "type",
    "const fn",
    "class",
    "def",
    "func",
    "function",
    "interface",
    "module",
    "namespace",
    "object",
    "record",
];

const CONTROL: &[&str] = &[
    "if", "for", "while", "switch", "return", "else", "do", "match", "catch", "try",
];

#[cfg(test)]
mod tests {
    use super::*;

    fn err(s: &str) -> bool {
        let fast = is_error_line(s.as_bytes());
        assert_eq!(fast, per_byte(s.as_bytes()), "{s:?}");
        fast
    }

    /// The matcher's definition, one byte at a time (the word-at-a-time scan must agree).
    fn per_byte(line: &[u8]) -> bool {
        let n = line.len();
        let mut i = 0;
        while i < n {
            if !is_word(line[i]) {
                i += 1;
                continue;
            }
            if matches_at_word_start(line, i) {
                return true;
            }
            let mut j = i + 1;
            while j < n && is_word(line[j]) {
                if line[j] == b'E' && matches_camel(line, j) {
                    return true;
                }
                j += 1;
            }
            i = j;
        }
        false
    }

    #[test]
    fn word_bytes_agrees_with_the_table() {
        for b in 0..=255u8 {
            for lane in 0..8 {
                let w = (b as u64) << (8 * lane) | 0x2020_2020_2020_2020 & !(0xFF << (8 * lane));
                let want = if is_word(b) { 0x80 << (8 * lane) } else { 0 };
                assert_eq!(word_bytes(w).0 & (0xFF << (8 * lane)), want, "byte {b:#x}");
                let letter = if b.is_ascii_alphabetic() {
                    0x80 << (8 * lane)
                } else {
                    0
                };
                assert_eq!(
                    word_bytes(w).1 & (0xFF << (8 * lane)),
                    letter,
                    "byte {b:#x}"
                );
            }
        }
    }

    // Also run in wasm (`cargo test --target wasm32-unknown-unknown --lib matcher`), where
    // the scan takes its SIMD path.
    #[cfg_attr(not(target_arch = "wasm32"), test)]
    #[cfg_attr(target_arch = "wasm32", wasm_bindgen_test::wasm_bindgen_test)]
    fn scan_agrees_with_per_byte_matcher() {
        let pieces: &[&[u8]] = &[
            b"error",
            b"Err",
            b"ERRNO",
            b"s",
            b"failed",
            b"x",
            b"_",
            b"9",
            b" ",
            b"\t",
            b"-",
            b"TypeError",
            b"Exception",
            b"E",
            b"eE",
            b"aE",
            b"returned ",
            b"7",
            b"no such file",
            b"could not",
            b"couldn't",
            b"exit code",
            b"non-zero",
            b"panicked",
            b"\xc3\xa9",
            b"\xe2\x82\xac",
            b"\x80",
            b"\xff",
            b"tr",
            b"traceback",
            b"transforming",
            b"co",
            b"unable to",
            b"killed",
            b"KILLED",
            b"out of memory",
            b"abort",
            b"/",
            b"(",
            b"\r",
            b"with",
            b"Building",
            b"v1",
            b"Zero",
        ];
        let mut x = 0x9E37_79B9_7F4A_7C15u64;
        let mut next = |n: usize| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x % n as u64) as usize
        };
        for _ in 0..20000 {
            let mut line = Vec::new();
            for _ in 0..next(12) {
                line.extend_from_slice(pieces[next(pieces.len())]);
            }
            assert_eq!(
                is_error_line(&line),
                per_byte(&line),
                "{:?}",
                String::from_utf8_lossy(&line)
            );
            for from in 0..line.len() {
                // From the middle: as if the line started there after a non-word byte, or
                // inside a word when the byte before is a word byte.
                let got = next_match(&line, from);
                let want = (from..line.len()).find(|&p| {
                    let start = is_word(line[p]) && (p == 0 || !is_word(line[p - 1]));
                    (start && matches_at_word_start(&line, p))
                        || (!start && line[p] == b'E' && matches_camel(&line, p))
                });
                assert_eq!(
                    got,
                    want,
                    "{:?} from {from}",
                    String::from_utf8_lossy(&line)
                );
            }
        }
    }

    #[test]
    fn every_keyword_passes_the_prefix_filter() {
        for first in b"acdefknoprstu".iter().copied() {
            for k in keywords(first) {
                for upper in [false, true] {
                    let mut hay = k.text.to_vec();
                    if upper {
                        hay.make_ascii_uppercase();
                    }
                    hay.extend_from_slice(b"  ");
                    assert!(
                        may_start_keyword(&hay, 0),
                        "{:?}",
                        String::from_utf8_lossy(&hay)
                    );
                }
            }
        }
        assert!(may_start_keyword(b"RETURNED 1", 0));
        assert!(!may_start_keyword(b"transforming", 0));
        assert!(!may_start_keyword(b"components", 0));
    }

    // Also run in wasm (`cargo test --target wasm32-unknown-unknown --lib matcher`), where
    // the scan takes its SIMD path.
    #[cfg_attr(not(target_arch = "wasm32"), test)]
    #[cfg_attr(target_arch = "wasm32", wasm_bindgen_test::wasm_bindgen_test)]
    fn whole_text_flags_equal_line_by_line() {
        let text = "ok\nerror: x\r\nfine Error\r\nExit code 1\nTypeError\n\nx\nreturned 3\r\nreturned \n7\nabc";
        let lines = super::super::lines::split_lines(text);
        let flags = error_flags(text.as_bytes(), &lines);
        let want: Vec<bool> = lines
            .iter()
            .map(|l| per_byte(l.content(text).as_bytes()))
            .collect();
        assert_eq!(flags, want);
        assert_eq!(
            flags,
            [false, true, true, true, true, false, false, true, false, false, false]
        );
    }

    /// The error lines found a piece at a time during the split (as a text over the limit
    /// is read) equal one scan of the whole text, for pieces of every size from one byte:
    /// matches at the pieces' ends, `\r` lines, lines longer than a piece. The pieces end
    /// at line starts, in order.
    #[cfg_attr(not(target_arch = "wasm32"), test)]
    #[cfg_attr(target_arch = "wasm32", wasm_bindgen_test::wasm_bindgen_test)]
    fn error_lines_found_piecewise_equal_one_scan() {
        let pieces = [
            "ok\n",
            "error: x\n",
            "fine Error\r\n",
            "TypeError",
            " not found\n",
            "50%\r60%\r",
            "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
            "\n",
            "exit code 1",
            "é",
            "   Compiling crate-1 v0.1.1\n",
        ];
        let mut texts: Vec<String> = crate::real_texts::all().into_iter().collect();
        let mut x = 99u64;
        for len in [0, 1, 5, 40, 200] {
            for _ in 0..20 {
                texts.push(crate::real_texts::mixed(&pieces, len, &mut x));
            }
        }
        for text in &texts {
            let whole = super::super::lines::split(text);
            let want = error_flags(text.as_bytes(), &whole.lines);
            for block in [1, 7, 16, 17, 64, 1000, 64 << 10] {
                let (split, flags) = super::super::split_with_errors(text, block);
                assert_eq!(split.lines, whole.lines, "block {block}");
                assert_eq!(split.cr_lines, whole.cr_lines);
                assert_eq!(split.ascii, whole.ascii);
                assert_eq!(
                    flags,
                    want,
                    "block {block}: {:?}",
                    &text[..text.len().min(200)]
                );
                let mut ends = Vec::new();
                super::super::lines::split_with(text, block, |end| ends.push(end));
                assert!(ends.windows(2).all(|w| w[0] <= w[1]));
                assert!(ends
                    .iter()
                    .all(|&e| e == 0 || text.as_bytes()[e - 1] == b'\n'));
            }
        }
    }

    /// The whole-text scan (in wasm, its vector path) flags exactly the lines the per-byte
    /// definition flags, on real producers' exports (see `real_texts`).
    #[cfg_attr(not(target_arch = "wasm32"), test)]
    #[cfg_attr(target_arch = "wasm32", wasm_bindgen_test::wasm_bindgen_test)]
    fn whole_text_flags_equal_line_by_line_on_real_texts() {
        let mut flagged = 0;
        for text in crate::real_texts::all() {
            let lines = super::super::lines::split_lines(&text);
            let flags = error_flags(text.as_bytes(), &lines);
            for (l, &f) in lines.iter().zip(&flags) {
                let line = l.content(&text);
                assert_eq!(f, per_byte(line.as_bytes()), "{line:?}");
            }
            flagged += flags.iter().filter(|&&f| f).count();
        }
        // The traces hold tool errors and their words: the check saw both answers.
        assert!(flagged > 0);
    }

    // Also run in wasm (`cargo test --target wasm32-unknown-unknown --lib matcher`), where
    // the scan takes its SIMD path.
    #[cfg_attr(not(target_arch = "wasm32"), test)]
    #[cfg_attr(target_arch = "wasm32", wasm_bindgen_test::wasm_bindgen_test)]
    fn seed_patterns_match() {
        for line in [
            "error: something",
            "Error: x",
            "ERROR x",
            "x error",
            "build failed",
            "FAILED tests/a.py::t",
            "Failure",
            "java.lang.Exception: boom",
            "Traceback (most recent call last):",
            "aborting",
            "fatal: not a git repository",
            "Permission denied",
            "bash: foo: command not found",
            "ls: cannot access: No such file or directory",
            "Process finished with exit code 1",
            "process returned 3",
            "Segfault at 0x0",
        ] {
            assert!(err(line), "{line}");
        }
    }

    // Also run in wasm (`cargo test --target wasm32-unknown-unknown --lib matcher`), where
    // the scan takes its SIMD path.
    #[cfg_attr(not(target_arch = "wasm32"), test)]
    #[cfg_attr(target_arch = "wasm32", wasm_bindgen_test::wasm_bindgen_test)]
    fn toolchain_markers_match() {
        for line in [
            "thread 'main' panicked at src/main.rs:2:5:",
            "error[E0308]: mismatched types",
            "npm ERR! code ELIFECYCLE",
            "E       AssertionError: assert 1 == 2",
            "TypeError: undefined is not a function",
            "Exception in thread \"main\" java.lang.NullPointerException",
            "Segmentation fault (core dumped)",
            "exit status 2",
            "Uncaught ReferenceError: x is not defined",
            "/usr/bin/ld: undefined reference to `foo'",
            "error Command failed with exit code 1.",
            "Found 3 errors.",
            "curl: (7) Failed to connect: Connection refused",
            "make: *** [all] Killed",
        ] {
            assert!(err(line), "{line}");
        }
    }

    // Also run in wasm (`cargo test --target wasm32-unknown-unknown --lib matcher`), where
    // the scan takes its SIMD path.
    #[cfg_attr(not(target_arch = "wasm32"), test)]
    #[cfg_attr(target_arch = "wasm32", wasm_bindgen_test::wasm_bindgen_test)]
    fn ordinary_lines_do_not_match() {
        for line in [
            "Compiling serde v1.0.200",
            "   Compiling toolslice v0.1.0",
            "test result: ok. 12 passed; 0 ignored",
            "mirror terror errand",
            "error_code = 0",
            "profiles.release.panic_strategy",
            "",
            "    Finished dev [unoptimized] target(s) in 1.2s",
            "returned none",
            "Errors are values",
        ] {
            // "Errors are values" is an honest false positive of `\berrors\b`; keep the rest.
            if line == "Errors are values" {
                assert!(err(line));
                continue;
            }
            assert!(!err(line), "{line}");
        }
    }

    #[test]
    fn definitions() {
        for line in [
            "fn main() {",
            "pub(crate) fn split(x: u8) -> u8 {",
            "    pub async fn run(&self) {",
            "impl<T> Foo for Bar<T> {",
            "impl Foo {",
            "struct Point {",
            "pub enum Kind {",
            "macro_rules! m {",
            "class Foo(Base):",
            "    def method(self):",
            "async def main():",
            "func (s *Server) Serve() error {",
            "function foo(a, b) {",
            "export const handler = async () => {",
            "export default function App() {",
            "interface Props {",
            "public static void main(String[] args) {",
            "int main(int argc, char **argv) {",
            "module Foo",
            "type Alias = u32;",
        ] {
            assert!(is_definition_line(line), "{line}");
        }
        for line in [
            "    let x = 1;",
            "if (x) {",
            "    return foo(x);",
            "// fn commented() {}",
            "# def commented():",
            "}",
            "functional programming",
            "x = foo(1) {",
        ] {
            assert!(!is_definition_line(line), "{line}");
        }
    }
}
