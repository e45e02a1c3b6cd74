//! Where the scan stops: the positions whose byte starts a verifier ([`verifier_of`]) and
//! whose neighbours pass that verifier's gate ([`gate_of`]; [`passes`] is the definition).
//!
//! Most anchor bytes are common letters and digits: in a build log a third of all bytes is
//! `s`, `e`, `r`, `-` or a digit, and stopping at each cost more than the rest of the scan.
//! The pairs and word starts the verifiers need (`sk`, `gh`, `ey` at a word start, a digit
//! that starts a number ...) are rare, so the scan asks this module for the next position
//! that passes and calls no verifier in between.
//!
//! Two searches give the same positions (the tests check both against [`passes`]):
//!
//! - Natively, and in wasm for the last bytes: three byte tables, of the verifiers a byte
//!   starts, those it may follow and those it may precede, and one AND per position.
//! - In wasm with SIMD, sixteen positions at a time: the byte, the one before it and the
//!   one after it are classified by nibble lookups (`swizzle`), the usual way to test
//!   membership in small byte sets with vectors. A lookup gives each of eight groups of
//!   verifiers whether the byte is in the group's smallest nibble rectangle (the low
//!   nibbles of its bytes times their high nibbles), so the vector search may stop at a
//!   few positions the tables would not (`c` before `h`, for `s` and `w`); it never
//!   misses one, and the verifier rejects the extra ones. The bytes that always pass (`:`,
//!   `=`, `@`) are compared directly.
//!
//! Every table is computed at compile time from [`verifier_of`] and [`gate_of`], so a rule
//! added there is searched for here without another edit.

#[cfg(test)]
use super::scan::passes;
use super::scan::{gate_of, verifier_of, Before, Verifier};

/// The first position in `from..until` that passes its gate, else `until`.
#[cfg(test)]
pub(super) fn next(s: &[u8], from: usize, until: usize) -> usize {
    Search::new().next(s, from, until)
}

/// The search, set up once per scan: in wasm with SIMD, its vector constants (see
/// `simd::Consts`); natively, nothing.
pub(super) struct Search {
    #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
    consts: simd::Consts,
}

impl Search {
    #[inline(always)]
    pub(super) fn new() -> Search {
        Search {
            #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
            consts: simd::Consts::get(),
        }
    }

    /// The first position in `from..until` that passes its gate, else `until`.
    #[inline(always)]
    pub(super) fn next(&self, s: &[u8], from: usize, until: usize) -> usize {
        #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
        let from = {
            // The vector search reads the byte before each position: position 0 is looked
            // at here.
            if from == 0 && until > 0 && scalar(s, 0, 1) == 0 {
                return 0;
            }
            match simd::next(s, from.max(1), until, &self.consts) {
                Ok(at) => return at,
                Err(resume) => resume,
            }
        };
        scalar(s, from, until)
    }
}

/// Bit `v` of a table entry: verifier `v` (its discriminant).
const fn bit(v: Verifier) -> u32 {
    1 << (v as u32)
}

/// The verifiers anchor bytes start, by discriminant (`None`: no byte starts it).
const VERIFIERS: [Option<Verifier>; 32] = {
    let mut t = [None; 32];
    let mut b = 0;
    while b < 256 {
        let v = verifier_of(b as u8);
        if !matches!(v, Verifier::Skip) {
            t[v as usize] = Some(v);
        }
        b += 1;
    }
    t
};

/// `START[b]`: the verifier `b` starts (none for a byte that starts none).
static START: [u32; 256] = {
    let mut t = [0u32; 256];
    let mut b = 0;
    while b < 256 {
        let v = verifier_of(b as u8);
        if !matches!(v, Verifier::Skip) {
            t[b] = bit(v);
        }
        b += 1;
    }
    t
};

/// Whether `n` may follow an anchor of verifier `v`.
const fn next_allows(v: Verifier, n: u8) -> bool {
    let next = gate_of(v).next;
    if next.is_empty() {
        return true;
    }
    let mut k = 0;
    while k < next.len() {
        if next[k] == n {
            return true;
        }
        k += 1;
    }
    false
}

/// `AFTER[p]`: the verifiers an anchor may start right after byte `p`; `BEFORE[n]`: those
/// whose anchor may stand right before byte `n`.
static AFTER: [u32; 256] = side_table(false);
static BEFORE: [u32; 256] = side_table(true);

const fn side_table(next_side: bool) -> [u32; 256] {
    let mut t = [0u32; 256];
    let mut b = 0;
    while b < 256 {
        let mut k = 0;
        while k < VERIFIERS.len() {
            if let Some(v) = VERIFIERS[k] {
                let ok = if next_side {
                    next_allows(v, b as u8)
                } else {
                    gate_of(v).before.allows(b as u8)
                };
                if ok {
                    t[b] |= bit(v);
                }
            }
            k += 1;
        }
        b += 1;
    }
    t
}

/// The table search: the first position in `from..until` that passes, else `until`. The
/// start of the text is preceded by a space and the end followed by a 0 byte, which pass
/// and fail the gates as the verifiers' own bounds checks do. Never inlined: inside the
/// scan's loop, among the verifiers' state, its counters lived on the stack.
#[inline(never)]
fn scalar(s: &[u8], from: usize, until: usize) -> usize {
    let end = until.min(s.len());
    if from >= end {
        return until;
    }
    let mut prev = if from == 0 { b' ' } else { s[from - 1] };
    // All positions but the last have their next byte in `s`.
    for (i, w) in s[from..end.min(s.len() - 1) + 1].windows(2).enumerate() {
        let (cur, next) = (w[0], w[1]);
        if START[cur as usize] & AFTER[prev as usize] & BEFORE[next as usize] != 0 {
            return from + i;
        }
        prev = cur;
    }
    let last = end - 1;
    if last + 1 == s.len() && last >= from {
        let prev = if last == 0 { b' ' } else { s[last - 1] };
        if START[s[last] as usize] & AFTER[prev as usize] & BEFORE[0] != 0 {
            return last;
        }
    }
    until
}

/// The eight groups of verifiers the vector search tells apart (bit `k` of its lookups),
/// or none for the verifiers whose gate is always open (their bytes are compared
/// directly). Verifiers share a group when their bytes and neighbours fit one nibble
/// rectangle without letting many common pairs through.
#[cfg_attr(
    not(all(target_arch = "wasm32", target_feature = "simd128")),
    allow(dead_code)
)]
const fn group_of(v: Verifier) -> u8 {
    match v {
        Verifier::Skip | Verifier::Colon | Verifier::KeyValue | Verifier::Email => 0,
        Verifier::AtS | Verifier::StripeRestricted | Verifier::StripeWebhook => 1 << 0,
        Verifier::Github | Verifier::Jwt => 1 << 1,
        Verifier::AtUpperA => 1 << 2,
        Verifier::Slack => 1 << 3,
        Verifier::AuthScheme | Verifier::DataUri => 1 << 4,
        Verifier::Dash => 1 << 5,
        Verifier::OpenaiInfix | Verifier::SlackWebhook => 1 << 6,
        Verifier::Digits => 1 << 7,
    }
}

/// The nibble tables and masks of the vector search, built from the gates.
#[cfg_attr(
    not(all(target_arch = "wasm32", target_feature = "simd128")),
    allow(dead_code)
)]
mod tables {
    use super::{gate_of, group_of, verifier_of, Before, Verifier, VERIFIERS};

    /// `[low nibble table, high nibble table]`: bit `k` of `t[0][b & 15] & t[1][b >> 4]` is
    /// set when `b` is in the smallest rectangle holding group `k`'s bytes of `side`.
    pub(crate) type Nibbles = [[u8; 16]; 2];

    /// The bytes that start a verifier of group `g` (`Start`), or that may follow one
    /// (`Next`).
    #[derive(Clone, Copy)]
    enum Side {
        Start,
        Next,
    }

    const fn in_side(side: Side, g: u8, b: u8) -> bool {
        match side {
            Side::Start => group_of(verifier_of(b)) == g,
            // Some verifier of the group starts at some byte and may be followed by `b`.
            Side::Next => {
                let mut k = 0;
                while k < VERIFIERS.len() {
                    if let Some(v) = VERIFIERS[k] {
                        if group_of(v) == g && super::next_allows(v, b) {
                            return true;
                        }
                    }
                    k += 1;
                }
                false
            }
        }
    }

    const fn nibbles(side: Side) -> Nibbles {
        let mut t = [[0u8; 16]; 2];
        let mut k = 0;
        while k < 8 {
            let g = 1u8 << k;
            let mut b = 0;
            while b < 256 {
                if in_side(side, g, b as u8) {
                    t[0][b & 15] |= g;
                    t[1][b >> 4] |= g;
                }
                b += 1;
            }
            k += 1;
        }
        t
    }

    pub(crate) const START: Nibbles = nibbles(Side::Start);
    pub(crate) const NEXT: Nibbles = nibbles(Side::Next);

    /// The byte before a position, classified into exact nibble rectangles (a class must
    /// not be widened: a byte wrongly taken for a token character would close a gate):
    /// digits, `A-O a-o`, `P-Z p-z`, `_`, `-`, `.` and `/`, `+`.
    pub(crate) const PREV: Nibbles = {
        // (low nibbles, high nibbles) of each class, bit by bit.
        const RECTS: [(u16, u16); 7] = [
            (0x03ff, 1 << 3),
            (0xfffe, (1 << 4) | (1 << 6)),
            (0x07ff, (1 << 5) | (1 << 7)),
            (1 << 15, 1 << 5),
            (1 << 13, 1 << 2),
            ((1 << 14) | (1 << 15), 1 << 2),
            (1 << 11, 1 << 2),
        ];
        let mut t = [[0u8; 16]; 2];
        let mut k = 0;
        while k < RECTS.len() {
            let mut n = 0;
            while n < 16 {
                if RECTS[k].0 & (1 << n) != 0 {
                    t[0][n] |= 1 << k;
                }
                if RECTS[k].1 & (1 << n) != 0 {
                    t[1][n] |= 1 << k;
                }
                n += 1;
            }
            k += 1;
        }
        t
    };
    /// The [`PREV`] classes a byte must be in none of to precede a verifier that wants a
    /// word start, a token start, a number start.
    pub(crate) const ALNUM: u8 = 0b000_0111;
    pub(crate) const TOKEN: u8 = 0b001_1111;
    pub(crate) const NUMBER_PART: u8 = 0b111_1111;

    /// The groups whose loosest `before` is `class`: a group lets through what any of its
    /// verifiers would.
    const fn groups_before(class: Before) -> u8 {
        let mut loosest = [None::<Before>; 8];
        let mut b = 0;
        while b < 256 {
            let v = verifier_of(b as u8);
            let g = group_of(v);
            if g != 0 {
                let k = g.trailing_zeros() as usize;
                let before = gate_of(v).before;
                loosest[k] = match loosest[k] {
                    Some(l) if (l as u8) <= (before as u8) => Some(l),
                    _ => Some(before),
                };
            }
            b += 1;
        }
        let mut mask = 0;
        let mut k = 0;
        while k < 8 {
            if let Some(l) = loosest[k] {
                if l as u8 == class as u8 {
                    mask |= 1 << k;
                }
            }
            k += 1;
        }
        mask
    }
    pub(crate) const ANY_BEFORE: u8 = groups_before(Before::Any);
    pub(crate) const NOT_ALNUM: u8 = groups_before(Before::NotAlnum);
    pub(crate) const NOT_TOKEN: u8 = groups_before(Before::NotToken);
    pub(crate) const NOT_NUMBER_PART: u8 = groups_before(Before::NotNumberPart);

    /// The bytes that start a verifier of no group: compared one by one. Three, or the
    /// build fails (the vector search has three compares).
    pub(crate) const ALWAYS: [u8; 3] = {
        let mut out = [0u8; 3];
        let mut n = 0;
        let mut b = 0;
        while b < 256 {
            let v = verifier_of(b as u8);
            if !matches!(v, Verifier::Skip) && group_of(v) == 0 {
                assert!(n < 3, "more than three bytes outside the vector groups");
                out[n] = b as u8;
                n += 1;
            }
            b += 1;
        }
        assert!(n == 3, "the vector search compares exactly three bytes");
        out
    };
}

/// The vector search (wasm with SIMD).
#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
mod simd {
    use super::tables;
    use core::arch::wasm32::*;

    const fn vector(t: [u8; 16]) -> v128 {
        u8x16(
            t[0], t[1], t[2], t[3], t[4], t[5], t[6], t[7], t[8], t[9], t[10], t[11], t[12], t[13],
            t[14], t[15],
        )
    }

    /// The vectors the search compares with, built once per scan (see [`Consts::get`]).
    #[derive(Clone, Copy)]
    pub(super) struct Consts {
        prev: [v128; 2],
        start: [v128; 2],
        next: [v128; 2],
        low: v128,
        zero: v128,
        /// `(class, groups)` of the three `before` kinds, as in [`block`].
        open: [(v128, v128); 3],
        any_before: v128,
        always: [v128; 3],
    }

    impl Consts {
        /// The constants, made opaque to the compiler. Left as constants, each use in the
        /// loop is a `v128.const` that V8 materialises anew on every iteration (two or
        /// three instructions each, for seventeen of them); values it cannot see into are
        /// kept in registers (or one load from the stack) for the whole search.
        #[inline(always)]
        pub(super) fn get() -> Consts {
            let [a, b, c] = tables::ALWAYS;
            core::hint::black_box(Consts {
                prev: [vector(tables::PREV[0]), vector(tables::PREV[1])],
                start: [vector(tables::START[0]), vector(tables::START[1])],
                next: [vector(tables::NEXT[0]), vector(tables::NEXT[1])],
                low: u8x16_splat(0x0f),
                zero: u8x16_splat(0),
                open: [
                    (u8x16_splat(tables::TOKEN), u8x16_splat(tables::NOT_TOKEN)),
                    (u8x16_splat(tables::ALNUM), u8x16_splat(tables::NOT_ALNUM)),
                    (
                        u8x16_splat(tables::NUMBER_PART),
                        u8x16_splat(tables::NOT_NUMBER_PART),
                    ),
                ],
                any_before: u8x16_splat(tables::ANY_BEFORE),
                always: [u8x16_splat(a), u8x16_splat(b), u8x16_splat(c)],
            })
        }
    }

    /// The group bits of the sixteen bytes of `v` in the rectangles of `t`.
    #[inline(always)]
    fn classify(v: v128, t: &[v128; 2], low: v128) -> v128 {
        let lo = v128_and(v, low);
        // The high nibbles by a 16-bit shift and the mask: V8 has no byte shift on x64 and
        // emulates `u8x16_shr` with a shift and a mask it rebuilds on every call (three more
        // instructions, three times a block), where `low` stays in a register.
        let hi = v128_and(u16x8_shr(v, 4), low);
        v128_and(i8x16_swizzle(t[0], lo), i8x16_swizzle(t[1], hi))
    }

    /// Which of the sixteen positions at `w[1..17]` may pass (bit `k`: position `k`), `w`
    /// holding the byte before them and the one after.
    #[inline(always)]
    fn block(w: &[u8; 18], c: &Consts) -> u32 {
        // SAFETY: each load reads 16 of `w`'s 18 bytes (offsets 0, 1, 2); v128_load has no
        // alignment requirement.
        let (prev, cur, next) = unsafe {
            let p = w.as_ptr();
            (
                v128_load(p as *const v128),
                v128_load(p.add(1) as *const v128),
                v128_load(p.add(2) as *const v128),
            )
        };
        let before = classify(prev, &c.prev, c.low);
        let open = |(class, groups): (v128, v128)| {
            v128_and(u8x16_eq(v128_and(before, class), c.zero), groups)
        };
        let allowed = v128_or(
            v128_or(open(c.open[0]), open(c.open[1])),
            v128_or(open(c.open[2]), c.any_before),
        );
        let hit = v128_and(
            v128_and(
                classify(cur, &c.start, c.low),
                classify(next, &c.next, c.low),
            ),
            allowed,
        );
        let always = v128_or(
            u8x16_eq(cur, c.always[0]),
            v128_or(u8x16_eq(cur, c.always[1]), u8x16_eq(cur, c.always[2])),
        );
        u32::from(u8x16_bitmask(v128_or(u8x16_ne(hit, c.zero), always)))
    }

    /// `Ok` of the first position in `from..until` (`from >= 1`) that may pass, or `Err` of
    /// where the table search must go on (fewer than seventeen bytes left).
    #[inline(always)]
    pub(super) fn next(s: &[u8], from: usize, until: usize, c: &Consts) -> Result<usize, usize> {
        let mut i = from;
        while i < until {
            let Some(w) = s.get(i - 1..i + 17) else {
                return Err(i);
            };
            let mut mask = block(w.try_into().expect("18 bytes"), c);
            if until - i < 16 {
                mask &= (1 << (until - i)) - 1;
            }
            if mask != 0 {
                return Ok(i + mask.trailing_zeros() as usize);
            }
            i += 16;
        }
        Ok(until)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every position of `s` the search stops at, from the start.
    fn stops(s: &[u8]) -> Vec<usize> {
        let mut out = Vec::new();
        let mut i = 0;
        while i < s.len() {
            i = next(s, i, s.len());
            if i < s.len() {
                out.push(i);
                i += 1;
            }
        }
        out
    }

    /// The positions of `s` that pass, by the definition.
    fn passing(s: &[u8]) -> Vec<usize> {
        (0..s.len())
            .filter(|&i| {
                let prev = if i == 0 { b' ' } else { s[i - 1] };
                passes(prev, s[i], s.get(i + 1).copied().unwrap_or(0))
            })
            .collect()
    }

    /// On real producers' exports (see `real_texts`), the search stops at every position
    /// that passes: exactly those natively, those and a few more in wasm with SIMD.
    #[test]
    #[cfg_attr(target_arch = "wasm32", wasm_bindgen_test::wasm_bindgen_test)]
    fn stops_at_every_passing_position_of_real_texts() {
        let vector = cfg!(all(target_arch = "wasm32", target_feature = "simd128"));
        for text in crate::real_texts::all() {
            let s = text.as_bytes();
            let found = stops(s);
            let want = passing(s);
            if vector {
                let mut f = found.iter().peekable();
                for w in &want {
                    while f.next_if(|&&x| x < *w).is_some() {}
                    assert_eq!(f.peek(), Some(&w), "missed {w}");
                }
            } else {
                assert_eq!(found, want);
            }
        }
    }

    /// The search stops at every position that passes (in wasm with SIMD it may stop at a
    /// few more), for every anchor byte between every pair of neighbours.
    #[test]
    #[cfg_attr(target_arch = "wasm32", wasm_bindgen_test::wasm_bindgen_test)]
    fn stops_at_every_position_that_passes() {
        let vector = cfg!(all(target_arch = "wasm32", target_feature = "simd128"));
        for cur in (0..=255u8).filter(|&b| verifier_of(b) != Verifier::Skip) {
            for prev in 0..=255u8 {
                // Every `next`, after this anchor, in one text (offsets vary by position in
                // the vector blocks).
                let mut s = Vec::with_capacity(3 * 256 + 1);
                for next in 0..=255u8 {
                    s.extend_from_slice(&[prev, cur, next]);
                }
                s.push(prev);
                let found = stops(&s);
                let want = passing(&s);
                if vector {
                    let missed: Vec<_> = want.iter().filter(|i| !found.contains(i)).collect();
                    assert!(missed.is_empty(), "{cur:?} after {prev}: missed {missed:?}");
                } else {
                    assert_eq!(found, want, "{cur:?} after {prev}");
                }
            }
        }
    }

    /// The vector classes of the byte before a position are exactly the gates' classes.
    #[test]
    fn previous_byte_classes_are_exact() {
        let class =
            |b: u8| tables::PREV[0][usize::from(b & 15)] & tables::PREV[1][usize::from(b >> 4)];
        for b in 0..=255u8 {
            let c = class(b);
            assert_eq!(c & tables::ALNUM == 0, Before::NotAlnum.allows(b), "{b}");
            assert_eq!(c & tables::TOKEN == 0, Before::NotToken.allows(b), "{b}");
            assert_eq!(
                c & tables::NUMBER_PART == 0,
                Before::NotNumberPart.allows(b),
                "{b}"
            );
        }
    }

    /// The scan's bounds: a range that ends before the text does, and the last bytes.
    #[test]
    #[cfg_attr(target_arch = "wasm32", wasm_bindgen_test::wasm_bindgen_test)]
    fn respects_the_range() {
        let s = b"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx a=b xxxxxxxxxxxxxxxxxxxxxxxxxx:";
        let eq = s.iter().position(|&b| b == b'=').unwrap();
        assert_eq!(next(s, 0, eq), eq);
        assert_eq!(next(s, 0, s.len()), eq);
        assert_eq!(next(s, eq + 1, s.len()), s.len() - 1);
        assert_eq!(next(s, s.len(), s.len()), s.len());
        assert_eq!(next(b"1", 0, 1), 0);
        assert_eq!(next(b"a1", 0, 2), 2);
        assert_eq!(VERIFIERS.iter().flatten().count(), 16);
    }
}
