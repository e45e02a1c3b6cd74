//! Byte work a word at a time, for the short texts the checker handles millions of times.
//!
//! On wasm32, slice `==` and `cmp` are compiler-builtins' byte-by-byte `memcmp`, and a
//! copy of unknown length is `memory.copy`, which V8 runs as a call into C's `memmove`:
//! for a ten-byte id the call is the whole cost. These read and write whole words instead,
//! the last one where the text ends (overlapping the one before), so there is no byte loop
//! and no call for the names, ids and keys of a span.

/// Byte equality a word at a time. The last word is read where the text ends, overlapping
/// the one before, and a text under eight bytes is read as two overlapping halves: no byte
/// loop for the short names and keys this compares millions of times.
#[inline(always)]
pub fn eq(a: &[u8], b: &[u8]) -> bool {
    let n = a.len();
    if n != b.len() {
        return false;
    }
    let word = |s: &[u8], at: usize| u64::from_le_bytes(s[at..at + 8].try_into().unwrap());
    let half = |s: &[u8], at: usize| u32::from_le_bytes(s[at..at + 4].try_into().unwrap());
    if n > 32 {
        let mut i = 0;
        while i + 8 < n {
            if word(a, i) != word(b, i) {
                return false;
            }
            i += 8;
        }
        word(a, n - 8) == word(b, n - 8)
    } else if n >= 8 {
        // Up to four words, unrolled: the span keys (10 to 29 bytes quoted) and names end
        // here without a loop (V8 checks the stack at every loop header).
        let same = |at: usize| word(a, at) == word(b, at);
        same(0) && same(n - 8) && (n <= 16 || (same(8) && (n <= 24 || same(16))))
    } else if n >= 4 {
        half(a, 0) == half(b, 0) && half(a, n - 4) == half(b, n - 4)
    } else {
        a.iter().zip(b).all(|(p, q)| p == q)
    }
}

/// Whether `text` starts with `prefix`, for long prefixes (a model input re-listing the one
/// before, [`crate::formats`]): 64 bytes a step with wasm SIMD, where slice comparison is
/// the compiler's byte-by-byte `memcmp` (a third of reading an Agents SDK run whose inputs
/// re-list it, 47 MB compared in 50 MB).
pub fn starts_with(text: &[u8], prefix: &[u8]) -> bool {
    if prefix.len() > text.len() {
        return false;
    }
    let text = &text[..prefix.len()];
    #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
    {
        use core::arch::wasm32::*;
        let mut a = text.chunks_exact(64);
        let mut b = prefix.chunks_exact(64);
        for (x, y) in (&mut a).zip(&mut b) {
            // SAFETY: `x` and `y` are 64 readable bytes each; v128_load has no alignment
            // requirement.
            let differ = unsafe {
                let at = |s: &[u8], k: usize| v128_load(s.as_ptr().add(16 * k) as *const v128);
                let d = |k: usize| v128_xor(at(x, k), at(y, k));
                v128_or(v128_or(d(0), d(1)), v128_or(d(2), d(3)))
            };
            if v128_any_true(differ) {
                return false;
            }
        }
        eq(a.remainder(), b.remainder())
    }
    #[cfg(not(all(target_arch = "wasm32", target_feature = "simd128")))]
    {
        text == prefix
    }
}

/// Byte order (as `[u8]::cmp`) a word at a time: on wasm32 slice comparison is the
/// compiler's byte-by-byte memcmp, and the rollup sorts thousands of parent ids by it.
pub fn cmp(a: &[u8], b: &[u8]) -> std::cmp::Ordering {
    let n = a.len().min(b.len());
    let word = |s: &[u8], at: usize| u64::from_be_bytes(s[at..at + 8].try_into().unwrap());
    let mut i = 0;
    while i + 8 <= n {
        let (x, y) = (word(a, i), word(b, i));
        if x != y {
            return x.cmp(&y);
        }
        i += 8;
    }
    for k in i..n {
        if a[k] != b[k] {
            return a[k].cmp(&b[k]);
        }
    }
    a.len().cmp(&b.len())
}

/// `text` owned: a borrowed text copied as [`to_string`] copies it, an owned one kept.
#[inline(always)]
pub fn own(text: std::borrow::Cow<'_, str>) -> String {
    match text {
        std::borrow::Cow::Borrowed(text) => to_string(text),
        std::borrow::Cow::Owned(text) => text,
    }
}

/// `text` as an owned `String` (see [`push_str`]).
#[inline(always)]
pub fn to_string(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    push_str(&mut out, text);
    out
}

/// Appends `text` to `out`; up to 32 bytes are copied as at most four overlapping words,
/// longer texts by `String::push_str`.
#[inline(always)]
pub fn push_str(out: &mut String, text: &str) {
    let n = text.len();
    if n > 32 {
        return out.push_str(text);
    }
    out.reserve(n);
    // SAFETY: `reserve` made room for `n` more bytes after the `len` in use, and
    // `copy_short` writes exactly the bytes `len..len + n`, copied from a `str`, so the
    // string stays valid UTF-8.
    unsafe {
        let bytes = out.as_mut_vec();
        let len = bytes.len();
        copy_short(text.as_ptr(), bytes.as_mut_ptr().add(len), n);
        bytes.set_len(len + n);
    }
}

/// Copies `n <= 32` bytes from `src` to `dst` (which do not overlap): every byte is
/// covered by a load from the start and one from the end, all loads before any store.
///
/// SAFETY: `src` must be readable and `dst` writable for `n` bytes.
#[inline(always)]
unsafe fn copy_short(src: *const u8, dst: *mut u8, n: usize) {
    use std::ptr::{read_unaligned as load, write_unaligned as store};
    // SAFETY: the caller guarantees `src` readable and `dst` writable for `n` bytes; every
    // offset below is within `0..n` for the branch it is in (n >= 16, >= 8, >= 4, > 0).
    unsafe {
        if n >= 16 {
            let a = load(src as *const u64);
            let b = load(src.add(8) as *const u64);
            let c = load(src.add(n - 16) as *const u64);
            let d = load(src.add(n - 8) as *const u64);
            store(dst as *mut u64, a);
            store(dst.add(8) as *mut u64, b);
            store(dst.add(n - 16) as *mut u64, c);
            store(dst.add(n - 8) as *mut u64, d);
        } else if n >= 8 {
            let a = load(src as *const u64);
            let b = load(src.add(n - 8) as *const u64);
            store(dst as *mut u64, a);
            store(dst.add(n - 8) as *mut u64, b);
        } else if n >= 4 {
            let a = load(src as *const u32);
            let b = load(src.add(n - 4) as *const u32);
            store(dst as *mut u32, a);
            store(dst.add(n - 4) as *mut u32, b);
        } else if n > 0 {
            let (a, b, c) = (*src, *src.add(n / 2), *src.add(n - 1));
            *dst = a;
            *dst.add(n / 2) = b;
            *dst.add(n - 1) = c;
        }
    }
}

/// Decimal digits of `v` in a caller-provided buffer (no allocation).
pub fn itoa_u64(mut v: u64, buf: &mut [u8; 20]) -> &str {
    let mut i = buf.len();
    loop {
        i -= 1;
        buf[i] = b'0' + (v % 10) as u8;
        v /= 10;
        if v == 0 {
            break;
        }
    }
    // SAFETY: buf[i..] holds only the ASCII digits written above. Checked as UTF-8 (std's
    // `from_utf8`), the digits cost more than writing them: 73 instructions a number, a
    // twelfth of writing a row of the table (callgrind, native), which writes four.
    unsafe { std::str::from_utf8_unchecked(&buf[i..]) }
}

/// `bytes` as text when they are UTF-8, as `std::str::from_utf8` says. The ASCII prefix,
/// most of a trace line, is passed over 16 bytes a step with wasm SIMD (std's check goes a
/// word, four bytes in wasm32, at a time), an ASCII rest shorter than a step is told by
/// [`ascii_rest`], and std checks anything else from the first step with a non-ASCII byte
/// (an ASCII prefix ends on a character boundary).
#[inline]
pub fn utf8(bytes: &[u8]) -> Option<&str> {
    let i = ascii_prefix(bytes);
    if !ascii_rest(bytes, i) {
        std::str::from_utf8(&bytes[i..]).ok()?;
    }
    // SAFETY: bytes[..i] are ASCII (see `ascii_prefix`) and bytes[i..] were just found
    // ASCII or checked; i is a character boundary, so the whole is UTF-8.
    Some(unsafe { std::str::from_utf8_unchecked(bytes) })
}

/// The characters (Unicode scalar values) of `text`, as `text.chars().count()`: the ASCII
/// prefix, most of a tool result, counted 16 bytes a step with wasm SIMD.
#[inline]
pub fn char_count(text: &str) -> usize {
    let i = ascii_prefix(text.as_bytes());
    // i is a character boundary (see `utf8`).
    i + text[i..].chars().count()
}

/// Whether every byte is printable ASCII (0x20 to 0x7e), as
/// `bytes.iter().all(|b| (0x20..0x7f).contains(b))`: the test that lets the table borrow a
/// span id, name or note unescaped ([`crate::check::render`]), 16 bytes a step with wasm
/// SIMD, where the byte loop ran once per byte of every row's texts and of every note.
#[inline]
pub fn printable_ascii(bytes: &[u8]) -> bool {
    let printable = |b: &u8| (0x20..0x7f).contains(b);
    #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
    {
        use core::arch::wasm32::*;
        let mut chunks = bytes.chunks_exact(16);
        for chunk in &mut chunks {
            // SAFETY: `chunk` is 16 readable bytes; v128_load has no alignment requirement.
            let v = unsafe { v128_load(chunk.as_ptr() as *const v128) };
            let outside = v128_or(
                u8x16_lt(v, u8x16_splat(0x20)),
                u8x16_ge(v, u8x16_splat(0x7f)),
            );
            if v128_any_true(outside) {
                return false;
            }
        }
        chunks.remainder().iter().all(printable)
    }
    #[cfg(not(all(target_arch = "wasm32", target_feature = "simd128")))]
    {
        bytes.iter().all(printable)
    }
}

/// A length of ASCII bytes at the start of `bytes`, in 16-byte steps (0 without wasm SIMD,
/// where std's own check is the fast one). Blocks of 64 bytes first, their four loads
/// or-ed and tested once: V8 checks for interrupts once per loop iteration, and one step of
/// 16 bytes per iteration (two, as LLVM unrolled it) spent about as much on the loop as on
/// the bytes (a quarter of the reading's own time per line of a Langfuse export).
#[inline(always)]
fn ascii_prefix(bytes: &[u8]) -> usize {
    #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
    {
        use core::arch::wasm32::*;
        let mut i = 0;
        while let Some(block) = bytes.get(i..i + 64) {
            let at = block.as_ptr() as *const v128;
            // SAFETY: `block` is 64 readable bytes, four v128s; v128_load has no alignment
            // requirement.
            let v = unsafe {
                v128_or(
                    v128_or(v128_load(at), v128_load(at.add(1))),
                    v128_or(v128_load(at.add(2)), v128_load(at.add(3))),
                )
            };
            if u8x16_bitmask(v) != 0 {
                break;
            }
            i += 64;
        }
        while let Some(chunk) = bytes.get(i..i + 16) {
            // SAFETY: `chunk` is 16 readable bytes; v128_load has no alignment requirement.
            let v = unsafe { v128_load(chunk.as_ptr() as *const v128) };
            if u8x16_bitmask(v) != 0 {
                break;
            }
            i += 16;
        }
        i
    }
    #[cfg(not(all(target_arch = "wasm32", target_feature = "simd128")))]
    {
        let _ = bytes;
        0
    }
}

/// Whether `bytes[i..]`, shorter than one of [`ascii_prefix`]'s steps, is ASCII (false
/// without wasm SIMD, and when not sure): the end of a text that is not a whole number of
/// steps, or all of a short one (an id, a name, a reason of a part), told by one or two
/// loads that overlap instead of a call into std's check.
#[inline(always)]
fn ascii_rest(bytes: &[u8], i: usize) -> bool {
    #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
    {
        use core::arch::wasm32::*;
        let n = bytes.len();
        if n - i >= 16 {
            // The prefix stopped at a step with a byte above 0x7f.
            return false;
        }
        let word = |at: usize| u64::from_le_bytes(bytes[at..at + 8].try_into().unwrap());
        let half = |at: usize| u32::from_le_bytes(bytes[at..at + 4].try_into().unwrap());
        if n >= 16 {
            // The last 16 bytes cover bytes[i..], since i > n - 16.
            let last = &bytes[n - 16..];
            // SAFETY: `last` is 16 readable bytes; v128_load has no alignment requirement.
            let v = unsafe { v128_load(last.as_ptr() as *const v128) };
            u8x16_bitmask(v) == 0
        } else if n >= 8 {
            (word(0) | word(n - 8)) & 0x8080_8080_8080_8080 == 0
        } else if n >= 4 {
            (half(0) | half(n - 4)) & 0x8080_8080 == 0
        } else {
            bytes.is_ascii()
        }
    }
    #[cfg(not(all(target_arch = "wasm32", target_feature = "simd128")))]
    {
        let _ = (bytes, i);
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every byte value at every place of texts around the 16-byte steps answers as the
    /// byte loop does.
    #[cfg_attr(target_arch = "wasm32", wasm_bindgen_test::wasm_bindgen_test)]
    #[test]
    fn printable_ascii_is_the_byte_test() {
        let naive = |t: &[u8]| t.iter().all(|b| (0x20..0x7f).contains(b));
        for n in [0, 1, 15, 16, 17, 31, 32, 33, 64] {
            let text = vec![b'a'; n];
            assert!(printable_ascii(&text), "{n}");
            for at in 0..n {
                for b in [0u8, 0x09, 0x1f, 0x20, 0x41, 0x7e, 0x7f, 0x80, 0xe2, 0xff] {
                    let mut t = text.clone();
                    t[at] = b;
                    assert_eq!(printable_ascii(&t), naive(&t), "{n} {at} {b:#x}");
                }
            }
        }
    }

    #[cfg_attr(target_arch = "wasm32", wasm_bindgen_test::wasm_bindgen_test)]
    #[test]
    fn starts_with_is_slice_starts_with() {
        let text: Vec<u8> = (0..300u32).map(|i| (i * 7 % 251) as u8).collect();
        for n in [0, 1, 7, 8, 15, 16, 63, 64, 65, 127, 128, 130, 200, 300] {
            let prefix = &text[..n];
            assert!(starts_with(&text, prefix), "{n}");
            assert!(!starts_with(prefix, &text) || n == text.len(), "{n}");
            // A byte changed anywhere in the prefix, in each 64-byte block and the tail.
            for at in (0..n).step_by(5).chain(n.checked_sub(1)) {
                let mut other = prefix.to_vec();
                other[at] ^= 0x20;
                assert!(!starts_with(&text, &other), "{n} at {at}");
            }
        }
    }

    #[cfg_attr(target_arch = "wasm32", wasm_bindgen_test::wasm_bindgen_test)]
    #[test]
    fn char_count_is_chars_count() {
        for n in (0..=40).chain([63, 64, 65, 79, 80, 81, 127, 128, 129, 143, 144, 145]) {
            let ascii: String = (0..n).map(|i| char::from(b'a' + (i % 26) as u8)).collect();
            assert_eq!(char_count(&ascii), n);
            for at in 0..=n {
                for c in ["\u{e9}", "\u{2615}", "\u{1f642}", "\u{7f}"] {
                    let text = format!("{}{c}{}", &ascii[..at], &ascii[at..]);
                    assert_eq!(char_count(&text), text.chars().count(), "{text:?}");
                }
            }
        }
        for text in crate::real_texts::all() {
            assert_eq!(char_count(&text), text.chars().count());
        }
    }

    #[test]
    fn itoa_is_to_string() {
        let mut numbers = vec![0, u64::MAX, u64::MAX - 1];
        let mut p = 1u64;
        while let Some(next) = p.checked_mul(10) {
            numbers.extend([p - 1, p, p + 1, next - 1]);
            p = next;
        }
        numbers.extend([p - 1, p, p + 1]);
        for n in numbers {
            assert_eq!(itoa_u64(n, &mut [0; 20]), n.to_string());
        }
    }

    #[cfg_attr(target_arch = "wasm32", wasm_bindgen_test::wasm_bindgen_test)]
    #[test]
    fn utf8_is_std_from_utf8() {
        // A non-ASCII byte, valid or not, at every position of texts around the 16-byte
        // step and the 64-byte block, and the real exports as they are and cut at every
        // byte near their ends.
        let bad: [&[u8]; 6] = [
            b"\xc3\xa9",
            b"\xf0\x9f\x99\x82",
            b"\x80",
            b"\xc3",
            b"\xed\xa0\x80",
            b"\xff",
        ];
        for n in (0..=40).chain([63, 64, 65, 79, 80, 81, 127, 128, 129, 143, 144, 145]) {
            let ascii: Vec<u8> = (0..n).map(|i| b'a' + (i % 26) as u8).collect();
            assert_eq!(utf8(&ascii), std::str::from_utf8(&ascii).ok());
            for at in 0..=n {
                for b in bad {
                    let text = [&ascii[..at], b, &ascii[at..]].concat();
                    assert_eq!(utf8(&text), std::str::from_utf8(&text).ok(), "{text:?}");
                }
            }
        }
        for text in crate::real_texts::all() {
            let b = text.as_bytes();
            for end in (b.len().saturating_sub(64)..=b.len()).chain([b.len() / 2, 17, 33]) {
                let cut = &b[..end.min(b.len())];
                assert_eq!(utf8(cut), std::str::from_utf8(cut).ok());
            }
        }
    }

    #[test]
    fn eq_is_slice_equality() {
        // Every length to 40 (past the unrolled 32), differing at every position (and equal).
        for n in 0..=40 {
            let a: Vec<u8> = (0..n as u8).map(|i| b'a' + i).collect();
            assert!(eq(&a, &a.clone()));
            for at in 0..n {
                let mut b = a.clone();
                b[at] ^= 0x20;
                assert!(!eq(&a, &b), "len {n}, byte {at}");
            }
            assert!(!eq(&a, &[a.as_slice(), b"x"].concat()));
        }
    }

    #[test]
    fn cmp_is_slice_order() {
        // Every pair of lengths to 20, differing (up or down) at every position, and prefixes.
        for n in 0..=20usize {
            let a: Vec<u8> = (0..n as u8).map(|i| b'a' + i).collect();
            for m in 0..=20usize {
                let b: Vec<u8> = (0..m as u8).map(|i| b'a' + i).collect();
                assert_eq!(cmp(&a, &b), a.cmp(&b), "{n} {m}");
            }
            for at in 0..n {
                for delta in [1u8, 0x80] {
                    let mut b = a.clone();
                    b[at] = b[at].wrapping_add(delta);
                    assert_eq!(cmp(&a, &b), a.cmp(&b), "len {n}, byte {at}");
                    assert_eq!(cmp(&b, &a), b.cmp(&a), "len {n}, byte {at}");
                }
            }
        }
    }

    #[test]
    fn push_str_appends_every_length() {
        let source: String = (0..40u8).map(|i| char::from(b'A' + i % 26)).collect();
        for start in 0..3 {
            for n in 0..=(source.len() - start) {
                let text = &source[start..start + n];
                for prefix in ["", "x", "twelve bytes"] {
                    let mut out = prefix.to_string();
                    push_str(&mut out, text);
                    assert_eq!(out, format!("{prefix}{text}"));
                }
                assert_eq!(to_string(text), text);
            }
        }
        // Multi-byte characters are copied whole.
        assert_eq!(to_string("héllo wörld ✓"), "héllo wörld ✓");
    }
}
