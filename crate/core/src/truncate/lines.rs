//! The line index every cutter works on.
//!
//! A line is a byte range of the original text *including* its terminator (`\n`, or `\r\n`
//! whose `\r` is part of the terminator), so that the lines tile the text exactly: every
//! byte belongs to exactly one line, and "bytes omitted" and "lines omitted" are both sums
//! over the same partition. An empty text has no lines; a text ending without a newline
//! has a last line without terminator.

/// One line: `start..end` is the whole line, `start..content_end` the line without its
/// terminator.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Line {
    pub start: usize,
    pub content_end: usize,
    pub end: usize,
}

impl Line {
    pub fn len(&self) -> usize {
        self.end - self.start
    }

    pub fn has_terminator(&self) -> bool {
        self.end > self.content_end
    }

    pub fn text<'a>(&self, src: &'a str) -> &'a str {
        &src[self.start..self.end]
    }

    pub fn content<'a>(&self, src: &'a str) -> &'a str {
        &src[self.start..self.content_end]
    }
}

/// Splits `text` into lines (see the module docs for what a line is).
#[cfg(test)]
pub(crate) fn split_lines(text: &str) -> Vec<Line> {
    split(text).lines
}

/// The lines of a text, and what the same pass learned on the way.
pub(crate) struct Split {
    pub lines: Vec<Line>,
    /// The text is all ASCII: every measure of a stretch of it is its byte length.
    pub ascii: bool,
    /// Indices of the lines whose content holds a `\r` (progress redraws), ascending.
    pub cr_lines: Vec<usize>,
}

/// Splits `text` into lines in one pass, eight bytes at a time: each word yields the exact
/// sets of its `\n` and `\r` bytes, and lines are cut at the former. (Searching for the
/// next newline from each line start instead costs a call and a partial word per line,
/// which dominates on the short lines of build logs; so would measuring each line and
/// searching it for `\r` afterwards, which this pass makes unnecessary.)
pub(crate) fn split(text: &str) -> Split {
    split_with(text, usize::MAX, |_| {})
}

/// [`split`], pausing after about every `block` bytes to call `done(end)`, where `end` is
/// the end of the last whole line so far (the text before it is whole lines, the last
/// ending with `\n`): another pass over the text can then read those bytes while they are
/// still in the core's cache, where after the whole split it would read a text larger
/// than the cache from farther away. The text after the last `end` is the caller's to
/// finish once this returns.
pub(crate) fn split_with(text: &str, block: usize, mut done: impl FnMut(usize)) -> Split {
    const LO: u64 = 0x0101_0101_0101_0101;
    const HI: u64 = 0x8080_8080_8080_8080;
    /// High bit set exactly in the bytes of `w` equal to `b` (no borrow between bytes).
    #[inline(always)]
    fn bytes_equal(w: u64, b: u8) -> u64 {
        let x = w ^ (LO * b as u64);
        !(((x & !HI) + !HI) | x) & HI
    }
    let bytes = text.as_bytes();
    let mut lines = Vec::with_capacity(bytes.len() / 64 + 1);
    let mut cr_lines = Vec::new();
    let mut start = 0;
    // The first `\r` of the current line, if any (a stale one is before `start`).
    let mut first_cr: Option<usize> = None;
    // Called for each `\n` and `\r`, in order. The state is passed in, not captured, so
    // the vector loop's fast path can read and move `start` between calls.
    let at = |pos: usize,
              start: &mut usize,
              first_cr: &mut Option<usize>,
              lines: &mut Vec<Line>,
              cr_lines: &mut Vec<usize>| {
        if bytes[pos] == b'\r' {
            if first_cr.is_none_or(|c| c < *start) {
                *first_cr = Some(pos);
            }
            return;
        }
        let content_end = if pos > *start && bytes[pos - 1] == b'\r' {
            pos - 1
        } else {
            pos
        };
        if first_cr.is_some_and(|c| c >= *start && c < content_end) {
            cr_lines.push(lines.len());
        }
        lines.push(Line {
            start: *start,
            content_end,
            end: pos + 1,
        });
        *start = pos + 1;
    };
    let mut base = 0;
    // In wasm with SIMD, sixteen bytes a step up to the last sixteen: two compares and one
    // `bitmask` find the `\n` and `\r` bytes, where the word-at-a-time loop below takes
    // about twice the instructions for half the bytes (it was a quarter of truncating a
    // 4 MiB build log).
    #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
    let mut any = {
        use core::arch::wasm32::*;
        let mut high = u8x16_splat(0);
        let mut pause = block;
        loop {
            if base >= pause {
                done(start);
                pause = base.saturating_add(block);
            }
            // The stretch without `\r` in a function of its own: inlined here it shared
            // V8's registers with every other value of the cutter, and spilled and reloaded
            // its own (the ASCII accumulator went through the stack each step).
            if first_cr.is_none_or(|c| c < start) {
                (base, start, high) =
                    simd::split_plain(bytes, base, pause, start, high, &mut lines);
                if base >= pause {
                    continue;
                }
            }
            let Some(chunk) = bytes.get(base..base + 16) else {
                break;
            };
            // SAFETY: `chunk` is 16 readable bytes; v128_load has no alignment requirement.
            let v = unsafe { v128_load(chunk.as_ptr() as *const v128) };
            high = v128_or(high, v);
            let nl = u32::from(u8x16_bitmask(u8x16_eq(v, u8x16_splat(b'\n'))));
            let cr = u32::from(u8x16_bitmask(u8x16_eq(v, u8x16_splat(b'\r'))));
            let mut marks = nl | cr;
            while marks != 0 {
                at(
                    base + marks.trailing_zeros() as usize,
                    &mut start,
                    &mut first_cr,
                    &mut lines,
                    &mut cr_lines,
                );
                marks &= marks - 1;
            }
            base += 16;
        }
        // A byte at or above 0x80 anywhere leaves a high bit in `any`.
        u64::from(u8x16_bitmask(high) != 0) << 7
    };
    #[cfg(not(all(target_arch = "wasm32", target_feature = "simd128")))]
    let mut any = 0u64;
    #[cfg(not(all(target_arch = "wasm32", target_feature = "simd128")))]
    let mut pause = block;
    let mut words = bytes[base..].chunks_exact(8);
    for w in words.by_ref() {
        #[cfg(not(all(target_arch = "wasm32", target_feature = "simd128")))]
        if base >= pause {
            done(start);
            pause = base.saturating_add(block);
        }
        let w = u64::from_le_bytes(w.try_into().unwrap());
        any |= w;
        let mut marks = bytes_equal(w, b'\n') | bytes_equal(w, b'\r');
        while marks != 0 {
            at(
                base + (marks.trailing_zeros() / 8) as usize,
                &mut start,
                &mut first_cr,
                &mut lines,
                &mut cr_lines,
            );
            marks &= marks - 1;
        }
        base += 8;
    }
    for (i, &b) in words.remainder().iter().enumerate() {
        any |= u64::from(b);
        if b == b'\n' || b == b'\r' {
            at(
                base + i,
                &mut start,
                &mut first_cr,
                &mut lines,
                &mut cr_lines,
            );
        }
    }
    if start < bytes.len() {
        if first_cr.is_some_and(|c| c >= start) {
            cr_lines.push(lines.len());
        }
        lines.push(Line {
            start,
            content_end: bytes.len(),
            end: bytes.len(),
        });
    }
    Split {
        lines,
        ascii: any & HI == 0,
        cr_lines,
    }
}

/// The vector loop of [`split`] over lines without `\r`.
#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
mod simd {
    use super::Line;
    use core::arch::wasm32::*;

    /// From `base` (a multiple of 16 bytes in) to `until` while no `\r` is pending, sixteen
    /// bytes a step: each `\n` ends a line right there, written here rather than by a call
    /// per line (a 4 MiB build log has 80,000). Stops at `until`, before the first sixteen
    /// bytes that hold a `\r`, or before the last sixteen; returns the new `base`, `start`
    /// and ASCII accumulator.
    #[inline(never)]
    pub(super) fn split_plain(
        bytes: &[u8],
        mut base: usize,
        until: usize,
        mut start: usize,
        mut high: v128,
        lines: &mut Vec<Line>,
    ) -> (usize, usize, v128) {
        while base < until {
            let Some(chunk) = bytes.get(base..base + 16) else {
                break;
            };
            // SAFETY: `chunk` is 16 readable bytes; v128_load has no alignment requirement.
            let v = unsafe { v128_load(chunk.as_ptr() as *const v128) };
            let mut nl = u32::from(u8x16_bitmask(u8x16_eq(v, u8x16_splat(b'\n'))));
            if u8x16_bitmask(u8x16_eq(v, u8x16_splat(b'\r'))) != 0 {
                break;
            }
            high = v128_or(high, v);
            while nl != 0 {
                let pos = base + nl.trailing_zeros() as usize;
                lines.push(Line {
                    start,
                    content_end: pos,
                    end: pos + 1,
                });
                start = pos + 1;
                nl &= nl - 1;
            }
            base += 16;
        }
        (base, start, high)
    }
}

/// `a == b`, eight bytes at a time. Adjacent log lines are compared to find repeats; most
/// differ after a common prefix, and in wasm the built-in `memcmp` compares byte by byte.
/// The last eight bytes are compared first: lines of one length that differ mostly differ
/// at their end too (a counter, a file name, a crate), so one compare settles them.
#[inline]
pub(crate) fn same_bytes(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    if let (Some(p), Some(q)) = (a.last_chunk::<8>(), b.last_chunk::<8>()) {
        if p != q {
            return false;
        }
    }
    let mut x = a.chunks_exact(8);
    let mut y = b.chunks_exact(8);
    for (p, q) in x.by_ref().zip(y.by_ref()) {
        if u64::from_le_bytes(p.try_into().unwrap()) != u64::from_le_bytes(q.try_into().unwrap()) {
            return false;
        }
    }
    x.remainder() == y.remainder()
}

/// The indices of the lines that meet `a..b`: those ending after `a` and starting before
/// `b` (for an empty range, the line with `a` strictly inside). Two binary searches, since
/// the lines tile the text in order.
pub(crate) fn lines_meeting(lines: &[Line], a: usize, b: usize) -> std::ops::Range<usize> {
    let first = lines.partition_point(|l| l.end <= a);
    let last = first + lines[first..].partition_point(|l| l.start < b);
    first..last
}

/// `(omitted_lines, partial_lines)`: lines none of whose bytes are kept, and lines of which
/// some but not all bytes are kept. `kept` must be sorted and disjoint. Only the lines the
/// kept ranges meet are visited (found by binary search): a cut of a long log keeps a few
/// hundred of its lines, and a walk over all of them was most of finishing a cut.
pub(crate) fn line_accounting(lines: &[Line], kept: &[[usize; 2]]) -> (usize, usize) {
    let mut touched = 0;
    let mut partial = 0;
    // The line whose coverage is being summed (ranges meet it in order), and its sum.
    let mut current: Option<(usize, usize)> = None;
    let mut close = |line: usize, covered: usize| {
        touched += 1;
        if covered < lines[line].len() {
            partial += 1;
        }
    };
    for r in kept.iter().filter(|r| r[0] < r[1]) {
        for i in lines_meeting(lines, r[0], r[1]) {
            let l = &lines[i];
            let covered = r[1].min(l.end) - r[0].max(l.start);
            current = match current {
                Some((j, sum)) if j == i => Some((i, sum + covered)),
                Some((j, sum)) => {
                    close(j, sum);
                    Some((i, covered))
                }
                None => Some((i, covered)),
            };
        }
    }
    if let Some((j, sum)) = current {
        close(j, sum);
    }
    (lines.len() - touched, partial)
}

/// The definition [`line_accounting`] must agree with: every line, every range.
#[cfg(test)]
fn line_accounting_walk(lines: &[Line], kept: &[[usize; 2]]) -> (usize, usize) {
    let mut omitted = 0;
    let mut partial = 0;
    for line in lines {
        let covered: usize = (kept.iter())
            .map(|r| r[1].min(line.end).saturating_sub(r[0].max(line.start)))
            .sum();
        if covered == 0 {
            omitted += 1;
        } else if covered < line.len() {
            partial += 1;
        }
    }
    (omitted, partial)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(s: &str) -> Vec<&str> {
        split_lines(s).iter().map(|l| l.text(s)).collect()
    }

    #[test]
    fn lines_tile_the_text() {
        assert!(texts("").is_empty());
        assert_eq!(texts("a"), vec!["a"]);
        assert_eq!(texts("a\n"), vec!["a\n"]);
        assert_eq!(texts("a\r\nb"), vec!["a\r\n", "b"]);
        assert_eq!(texts("\n\n"), vec!["\n", "\n"]);
        let l = split_lines("x\r\n")[0];
        assert_eq!((l.start, l.content_end, l.end), (0, 1, 3));
        assert_eq!(split_lines("\r\n")[0].content_end, 0);
    }

    /// In wasm, the vector path for all but the last bytes (up to 300 bytes: many chunks,
    /// every tail length); natively, the word-at-a-time loop.
    #[test]
    #[cfg_attr(target_arch = "wasm32", wasm_bindgen_test::wasm_bindgen_test)]
    fn split_matches_a_byte_loop() {
        let alphabet = ["a", "\n", "\r", "\r\n", "\x0b", "é", "\u{10a}", "xxxxxxx"];
        let mut x = 12345u64;
        for len in 0..300 {
            let s = crate::real_texts::mixed(&alphabet, len, &mut x);
            split_matches_a_byte_loop_on(&s);
        }
    }

    /// [`split`] against a byte-by-byte loop: the lines, `ascii` and the `\r` lines.
    fn split_matches_a_byte_loop_on(s: &str) {
        let mut want = Vec::new();
        let mut start = 0;
        for (i, b) in s.bytes().enumerate() {
            if b == b'\n' {
                let ce = if i > start && s.as_bytes()[i - 1] == b'\r' {
                    i - 1
                } else {
                    i
                };
                want.push((start, ce, i + 1));
                start = i + 1;
            }
        }
        if start < s.len() {
            want.push((start, s.len(), s.len()));
        }
        let sp = split(s);
        let got: Vec<_> = sp
            .lines
            .iter()
            .map(|l| (l.start, l.content_end, l.end))
            .collect();
        assert_eq!(got, want, "{:?}", s.chars().take(80).collect::<String>());
        assert_eq!(sp.ascii, s.is_ascii());
        let cr: Vec<usize> = (0..sp.lines.len())
            .filter(|&i| sp.lines[i].content(s).contains('\r'))
            .collect();
        assert_eq!(
            sp.cr_lines,
            cr,
            "{:?}",
            s.chars().take(80).collect::<String>()
        );
    }

    /// The same on real producers' exports (see `real_texts`), as a packer meets them.
    #[test]
    #[cfg_attr(target_arch = "wasm32", wasm_bindgen_test::wasm_bindgen_test)]
    fn split_matches_a_byte_loop_on_real_texts() {
        for text in crate::real_texts::all() {
            split_matches_a_byte_loop_on(&text);
        }
    }

    #[test]
    fn same_bytes_is_equality() {
        let s = b"abcdefghijklmnopqrstuvwxyz";
        for i in 0..s.len() {
            for j in i..s.len() {
                let mut t = s[i..j].to_vec();
                assert!(same_bytes(&s[i..j], &t));
                if let Some(last) = t.last_mut() {
                    *last ^= 1;
                    assert!(!same_bytes(&s[i..j], &t));
                }
                assert_eq!(same_bytes(&s[i..j], &s[..j - i]), s[i..j] == s[..j - i]);
            }
        }
    }

    #[test]
    fn accounting_counts_untouched_and_partial_lines() {
        let s = "aa\nbb\ncc\n";
        let lines = split_lines(s);
        assert_eq!(line_accounting(&lines, &[]), (3, 0));
        assert_eq!(line_accounting(&lines, &[[0, 9]]), (0, 0));
        assert_eq!(line_accounting(&lines, &[[0, 3], [7, 9]]), (1, 1));
        assert_eq!(line_accounting(&lines, &[[1, 2], [4, 5]]), (1, 2));
    }

    /// Visiting only the lines the kept ranges meet counts what a walk over every line
    /// counts, for every set of up to two ranges over a text with empty, long and
    /// unterminated lines.
    #[test]
    fn accounting_by_search_matches_the_walk() {
        for text in ["a\n\nbcd\r\nef\n\n\nghij", "x", "\n\n\n", "ab\ncd\n"] {
            let lines = split_lines(text);
            let n = text.len();
            let mut ranges = vec![];
            for a in 0..=n {
                for b in a..=n {
                    ranges.push([a, b]);
                }
            }
            for r in &ranges {
                assert_eq!(
                    line_accounting(&lines, &[*r]),
                    line_accounting_walk(&lines, &[*r]),
                    "{text:?} {r:?}"
                );
                for q in ranges.iter().filter(|q| q[0] >= r[1]) {
                    let kept = [*r, *q];
                    assert_eq!(
                        line_accounting(&lines, &kept),
                        line_accounting_walk(&lines, &kept),
                        "{text:?} {kept:?}"
                    );
                }
            }
        }
    }
}
