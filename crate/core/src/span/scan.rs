//! The checker's fast reader of one span line.
//!
//! A run of a million tool spans is a million small JSON objects, and reading them through
//! serde's visitor machinery costs several times what the classification does. This scanner
//! reads the one shape a span line has (a flat object whose known fields hold strings,
//! integers or null) in a single pass over the bytes, borrowing every string that needs no
//! unescaping.
//!
//! It only ever *accepts*: when a line is anything other than a well-formed record that the
//! strict reader would also accept (a JSON error, a field of the wrong type, a duplicate
//! field, a negative id, a `\u` surrogate pair, nesting deeper than serde's limit ...), it
//! returns `None` and the caller reads the line with the strict reader, which produces the
//! exact error message. So the fast path changes speed, never results; a differential test
//! against the strict reader holds it to that.

use std::borrow::Cow;

use super::{LazyText, SpanView};

/// serde_json refuses nesting deeper than 128; stay well inside it and let the strict reader
/// decide anything deeper.
const MAX_DEPTH: u32 = 100;

/// Reads `line` (one line, without its newline) as a span record, or `None` when the strict
/// reader must decide.
pub(super) fn scan(line: &[u8]) -> Option<SpanView<'_>> {
    let mut s = Scanner { b: line, i: 0 };
    s.ws();
    let mut view = SpanView::default();
    s.object(&mut KeyOrder::default(), &mut view)?;
    s.ws();
    (s.i == line.len()).then_some(view)
}

/// Reads the span line at the start of `input`, which goes on past the line (the rest of a
/// chunk), into `view` (a default one): the index of the line's `\n`, or `None` when the
/// caller must find the line's end and read it the careful way. The view is filled in place
/// because it is some two hundred bytes: returning it copied it at every step.
///
/// This fuses three passes over each line into one: the newline search, UTF-8 validation
/// and the JSON scan. Outside strings the scanner matches only ASCII bytes, and inside them
/// it stops at `\n` (a control character) and at the first non-ASCII byte (validating such
/// strings on their own), so a line it accepts is valid UTF-8 and ends at the first `\n`.
/// Lines that start with anything but `{` (blank lines, a byte order mark) go the careful
/// way, as do lines cut by the end of `input`.
#[inline(always)]
pub(crate) fn scan_line<'a>(
    input: &'a [u8],
    order: &mut KeyOrder,
    view: &mut SpanView<'a>,
) -> Option<usize> {
    if input.first() != Some(&b'{') {
        return None;
    }
    let mut s = Scanner { b: input, i: 0 };
    s.object(order, view)?;
    s.ws();
    (s.b.get(s.i) == Some(&b'\n')).then_some(s.i)
}

/// `FIELDS`: the known fields, in the order [`Scanner::field`] numbers them; `QUOTED`: each
/// as it appears in a line, `"name":`.
macro_rules! fields {
    ($($f:literal),* $(,)?) => {
        const FIELDS: [&str; 13] = [$($f),*];
        const QUOTED: [&[u8]; 13] = [$(concat!("\"", $f, "\":").as_bytes()),*];
    };
}

fields!(
    "span_id",
    "parent_id",
    "name",
    "status",
    "observed_bytes",
    "injected_bytes",
    "injected_tokens",
    "clip_reason",
    "sha256_observed",
    "sha256_injected",
    "injected_preview",
    "prompt_builder_version",
    "model_context_limit_tokens",
);

/// Stand-ins in [`KeyOrder`] for the start of an object and for an unknown key.
const START: usize = FIELDS.len();
const UNKNOWN: usize = FIELDS.len() + 1;

/// Which key followed which in the last line read: an exporter writes every span with the
/// same keys in the same order, so the next key is usually the one that followed the
/// previous key last time, and checking that guess is one comparison of a few words. A
/// wrong guess only costs the general key match.
#[derive(Clone, Debug)]
pub(crate) struct KeyOrder {
    next: [u8; UNKNOWN + 1],
}

impl Default for KeyOrder {
    fn default() -> Self {
        // Before any line is read, guess the seed's own field order.
        let mut next = [UNKNOWN as u8; UNKNOWN + 1];
        for (i, slot) in next.iter_mut().enumerate().take(FIELDS.len() - 1) {
            *slot = (i + 1) as u8;
        }
        next[START] = 0;
        KeyOrder { next }
    }
}

/// The index of a known field in [`FIELDS`]: one comparison after a match on the length
/// and first byte, instead of a comparison with every name.
#[inline(always)]
fn field_index(key: &[u8]) -> Option<usize> {
    let index = match (key.len(), key.first()?) {
        (7, b's') => 0,
        (9, b'p') => 1,
        (4, b'n') => 2,
        (6, b's') => 3,
        (14, b'o') => 4,
        (14, b'i') => 5,
        (15, b'i') => 6,
        (11, b'c') => 7,
        (15, b's') => {
            // sha256_observed / sha256_injected differ from their eighth byte.
            if key[7] == b'o' {
                8
            } else {
                9
            }
        }
        (16, b'i') => 10,
        (22, b'p') => 11,
        (26, b'm') => 12,
        _ => return None,
    };
    crate::bytes::eq(FIELDS[index].as_bytes(), key).then_some(index)
}

const LO: u64 = 0x0101_0101_0101_0101;
const HI: u64 = 0x8080_8080_8080_8080;

/// A lane of `word` is flagged when it is `"`, `\`, a control character or (with `ASCII`)
/// a byte of a non-ASCII character: the bytes that end a run of plain string content. The
/// lowest flagged lane is exact (borrows only propagate upwards from a true match).
#[inline(always)]
fn special<const ASCII: bool>(word: u64) -> u64 {
    let quote = word ^ (LO * b'"' as u64);
    let slash = word ^ (LO * b'\\' as u64);
    let zero = |x: u64| x.wrapping_sub(LO) & !x;
    let high = if ASCII { word } else { 0 };
    (zero(quote) | zero(slash) | (word.wrapping_sub(LO * 0x20) & !word) | high) & HI
}

/// Whether byte `c` ends a run of plain string content (see [`special`]).
#[inline(always)]
fn is_special<const ASCII: bool>(c: u8) -> bool {
    c == b'"' || c == b'\\' || c < 0x20 || (ASCII && c >= 0x80)
}

/// The escape at the start of `rest` (after its backslash): the character and the bytes it
/// took, or `None` for an escape the strict reader must judge. The one escape table of the
/// scanner: checking a string and decoding it both go through here.
#[inline(always)]
pub(crate) fn escape(rest: &[u8]) -> Option<(char, usize)> {
    Some(match *rest.first()? {
        b'"' => ('"', 1),
        b'\\' => ('\\', 1),
        b'/' => ('/', 1),
        b'b' => ('\u{8}', 1),
        b'f' => ('\u{c}', 1),
        b'n' => ('\n', 1),
        b'r' => ('\r', 1),
        b't' => ('\t', 1),
        b'u' => {
            let mut unit = 0u32;
            for &d in rest.get(1..5)? {
                unit = unit << 4 | (d as char).to_digit(16)?;
            }
            // Surrogates (pairs or lone) are the strict reader's to judge.
            (char::from_u32(unit)?, 5)
        }
        _ => return None,
    })
}

/// The index of the next byte of `b` at or after `i` that ends a run of plain string
/// content (see [`special`]): 16 bytes a step with wasm SIMD, 8 without. Shared with the
/// trace formats' line deserializer (`formats::line_de`).
#[inline(always)]
pub(crate) fn next_special<const ASCII: bool>(b: &[u8], from: usize) -> Option<usize> {
    let mut i = from;
    #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
    {
        use core::arch::wasm32::*;
        while let Some(chunk) = b.get(i..i + 16) {
            // SAFETY: `chunk` is 16 readable bytes; v128_load has no alignment
            // requirement.
            let v = unsafe { v128_load(chunk.as_ptr() as *const v128) };
            // Control bytes and (for ASCII) bytes >= 0x80 are those outside
            // 0x20..=0x7f: read as signed, those below 0x20. Signed compares only: x64
            // has no unsigned byte compare, and V8 emulates one in three instructions.
            let outside = if ASCII {
                i8x16_lt(v, i8x16_splat(0x20))
            } else {
                // Below 0x20 unsigned: below 0x20 - 0x80 once the sign bit is flipped.
                i8x16_lt(v128_xor(v, u8x16_splat(0x80)), i8x16_splat(i8::MIN + 0x20))
            };
            let hit = v128_or(
                v128_or(
                    u8x16_eq(v, u8x16_splat(b'"')),
                    u8x16_eq(v, u8x16_splat(b'\\')),
                ),
                outside,
            );
            let mask = u8x16_bitmask(hit);
            if mask != 0 {
                return Some(i + mask.trailing_zeros() as usize);
            }
            i += 16;
        }
    }
    while i + 8 <= b.len() {
        let word = u64::from_le_bytes(b[i..i + 8].try_into().unwrap());
        let hit = special::<ASCII>(word);
        if hit != 0 {
            return Some(i + (hit.trailing_zeros() / 8) as usize);
        }
        i += 8;
    }
    b[i..]
        .iter()
        .position(|&c| is_special::<ASCII>(c))
        .map(|p| i + p)
}

struct Scanner<'a> {
    b: &'a [u8],
    i: usize,
}

impl<'a> Scanner<'a> {
    /// JSON whitespace, except `\n`: in a span line a newline ends the line.
    #[inline(always)]
    fn ws(&mut self) {
        while let Some(&c) = self.b.get(self.i) {
            if !matches!(c, b' ' | b'\t' | b'\r') {
                break;
            }
            self.i += 1;
        }
    }

    #[inline(always)]
    fn next(&mut self) -> Option<u8> {
        let c = *self.b.get(self.i)?;
        self.i += 1;
        Some(c)
    }

    #[inline(always)]
    fn eat(&mut self, want: u8) -> Option<()> {
        (self.next()? == want).then_some(())
    }

    #[inline(always)]
    fn eat_if(&mut self, want: u8) -> bool {
        let hit = self.b.get(self.i) == Some(&want);
        self.i += usize::from(hit);
        hit
    }

    /// The object at `self.i` as a span record, into `view`.
    #[inline(always)]
    fn object(&mut self, order: &mut KeyOrder, view: &mut SpanView<'a>) -> Option<()> {
        // Bit i set = field i seen (a duplicate is the strict reader's error to report).
        let mut seen: u16 = 0;
        self.eat(b'{')?;
        self.ws();
        if self.eat_if(b'}') {
            return Some(());
        }
        let mut prev = START;
        loop {
            let guess = usize::from(order.next[prev]);
            let index = match QUOTED.get(guess) {
                Some(quoted) if self.starts_with(quoted) => {
                    self.i += quoted.len();
                    guess
                }
                _ => {
                    let index = self.key()?;
                    order.next[prev] = index as u8;
                    index
                }
            };
            self.ws();
            if index == UNKNOWN {
                self.skip_value(0)?;
            } else {
                let bit = 1u16 << index;
                if seen & bit != 0 {
                    return None;
                }
                seen |= bit;
                self.field(index, view)?;
            }
            prev = index;
            self.ws();
            match self.next()? {
                b',' => self.ws(),
                b'}' => return Some(()),
                _ => return None,
            }
        }
    }

    #[inline(always)]
    fn starts_with(&self, want: &[u8]) -> bool {
        self.b
            .get(self.i..self.i + want.len())
            .is_some_and(|have| crate::bytes::eq(have, want))
    }

    /// A key with its quotes and colon: the index of the known field, or [`UNKNOWN`].
    fn key(&mut self) -> Option<usize> {
        self.eat(b'"')?;
        let key = self.plain_key()?;
        self.ws();
        self.eat(b':')?;
        Some(field_index(key).unwrap_or(UNKNOWN))
    }

    /// The index of the next special byte (see [`special`]) at or after `self.i`.
    #[inline(always)]
    fn to_special<const ASCII: bool>(&self) -> Option<usize> {
        next_special::<ASCII>(self.b, self.i)
    }

    /// A key after its opening quote, up to its closing quote: plain ASCII only (an escaped
    /// or non-ASCII key is rare enough to leave to the strict reader).
    #[inline(always)]
    fn plain_key(&mut self) -> Option<&'a [u8]> {
        let end = self.to_special::<true>()?;
        if self.b[end] != b'"' {
            return None;
        }
        let key = &self.b[self.i..end];
        self.i = end + 1;
        Some(key)
    }

    /// A string after its opening quote: borrowed when it has no escapes, else decoded.
    #[cfg_attr(feature = "speed", inline(always))]
    fn string(&mut self) -> Option<Cow<'a, str>> {
        Some(match self.lazy()? {
            LazyText::Text(text) => text,
            LazyText::Escaped(raw) => Cow::Owned(unescape(raw)),
        })
    }

    /// A string after its opening quote, up to and past its closing quote: its escapes
    /// checked and its bytes validated as UTF-8, but not decoded.
    #[inline(always)]
    fn lazy(&mut self) -> Option<LazyText<'a>> {
        let start = self.i;
        let mut escaped = false;
        let mut ascii = true;
        loop {
            let at = if ascii {
                self.to_special::<true>()?
            } else {
                self.to_special::<false>()?
            };
            match self.b[at] {
                b'"' => {
                    self.i = at + 1;
                    let bytes = &self.b[start..at];
                    let text = if ascii {
                        // SAFETY: every byte of `bytes` was passed over by `to_special::<true>`,
                        // which stops at any byte >= 0x80, so they are all ASCII.
                        unsafe { std::str::from_utf8_unchecked(bytes) }
                    } else {
                        std::str::from_utf8(bytes).ok()?
                    };
                    return Some(if escaped {
                        LazyText::Escaped(text)
                    } else {
                        LazyText::Text(Cow::Borrowed(text))
                    });
                }
                b'\\' => {
                    let (_, used) = escape(&self.b[at + 1..])?;
                    self.i = at + 1 + used;
                    escaped = true;
                }
                c if c >= 0x80 => {
                    // Validated with the whole string once its end is found.
                    ascii = false;
                    self.i = at;
                }
                _ => return None,
            }
        }
    }

    /// A non-negative integer as JSON writes it (no sign, no leading zero, no fraction or
    /// exponent) that fits a u64; anything else is the strict reader's to judge.
    fn unsigned(&mut self) -> Option<u64> {
        let start = self.i;
        let value = match self.eight_digits() {
            Some(value) => value,
            None => {
                let mut value: u64 = 0;
                while let Some(&c) = self.b.get(self.i) {
                    if !c.is_ascii_digit() {
                        break;
                    }
                    // Nineteen digits never overflow a u64 (and wasm32 has no cheap checked
                    // 64-bit multiply); longer numbers go to the strict reader.
                    value = value.wrapping_mul(10).wrapping_add(u64::from(c - b'0'));
                    self.i += 1;
                }
                value
            }
        };
        let digits = self.i - start;
        if digits == 0 || digits > 19 || (digits > 1 && self.b[start] == b'0') {
            return None;
        }
        if matches!(self.b.get(self.i), Some(b'.' | b'e' | b'E')) {
            return None;
        }
        Some(value)
    }

    /// A number of one to seven digits followed by a non-digit, read from one eight-byte
    /// word (the lengths of a span are such numbers); `None`, consuming nothing, otherwise.
    #[inline(always)]
    fn eight_digits(&mut self) -> Option<u64> {
        let word = u64::from_le_bytes(self.b.get(self.i..self.i + 8)?.try_into().unwrap());
        let values = word.wrapping_sub(LO * u64::from(b'0'));
        // A lane is flagged when its byte is not 0-9. Lanes below the first flagged one are
        // digits, whose subtraction borrows nothing, so the lowest flag is exact.
        let flagged = (values | values.wrapping_add(LO * 0x76)) & HI;
        let n = (flagged.trailing_zeros() / 8) as usize;
        if n == 0 || n == 8 {
            return None;
        }
        // The n digits to the top of the word (zeros before them are leading zeros), then
        // pairs, fours and eights combined by multiplies (as fast_float does).
        let digits = (values << (8 * (8 - n))) & (LO * 0x0f);
        let pairs = (digits.wrapping_mul(10 << 8 | 1) >> 8) & 0x00ff_00ff_00ff_00ff;
        let fours = (pairs.wrapping_mul(100 << 16 | 1) >> 16) & 0x0000_ffff_0000_ffff;
        let value = fours.wrapping_mul(10000 << 32 | 1) >> 32;
        self.i += n;
        Some(value)
    }

    fn literal(&mut self, word: &[u8]) -> Option<()> {
        let end = self.i + word.len();
        (self.b.get(self.i..end)? == word).then(|| self.i = end)
    }

    /// The value of known field `index` into `view`. Inlined into the object loop (2 KB
    /// gzipped, as the loop has two instances; the check-only module, built for size, lets
    /// the compiler choose).
    #[cfg_attr(feature = "speed", inline(always))]
    fn field(&mut self, index: usize, view: &mut SpanView<'a>) -> Option<()> {
        let c = *self.b.get(self.i)?;
        if c == b'n' {
            // null: the same as absent, as in the seed.
            return self.literal(b"null");
        }
        match index {
            // Lengths: a non-negative integer.
            4 | 5 | 6 | 12 => {
                let n = Some(self.unsigned()?);
                match index {
                    4 => view.observed_bytes = n,
                    5 => view.injected_bytes = n,
                    6 => view.injected_tokens = n,
                    _ => view.model_context_limit_tokens = n,
                }
            }
            // Ids: a string, or an integer some exporters write.
            0 | 1 if c != b'"' => {
                let n = self.unsigned()?;
                let id = Some(Cow::Owned(n.to_string()));
                if index == 0 {
                    view.span_id = id;
                } else {
                    view.parent_id = id;
                }
            }
            _ => {
                if c != b'"' {
                    return None;
                }
                self.i += 1;
                if index == 10 {
                    view.injected_preview = Some(self.lazy()?);
                    return Some(());
                }
                let s = Some(self.string()?);
                match index {
                    0 => view.span_id = s,
                    1 => view.parent_id = s,
                    2 => view.name = s,
                    3 => view.status = s,
                    7 => view.clip_reason = s,
                    8 => view.sha256_observed = s,
                    9 => view.sha256_injected = s,
                    _ => view.prompt_builder_version = s,
                }
            }
        }
        Some(())
    }

    /// Skips any JSON value, checking it as strictly as serde_json does.
    fn skip_value(&mut self, depth: u32) -> Option<()> {
        match *self.b.get(self.i)? {
            b'"' => {
                self.i += 1;
                self.lazy()?;
            }
            b'n' => self.literal(b"null")?,
            b't' => self.literal(b"true")?,
            b'f' => self.literal(b"false")?,
            b'-' | b'0'..=b'9' => self.number()?,
            open @ (b'[' | b'{') => {
                if depth >= MAX_DEPTH {
                    return None;
                }
                let close = if open == b'[' { b']' } else { b'}' };
                self.i += 1;
                self.ws();
                if self.eat_if(close) {
                    return Some(());
                }
                loop {
                    if open == b'{' {
                        self.key()?;
                        self.ws();
                    }
                    self.skip_value(depth + 1)?;
                    self.ws();
                    match self.next()? {
                        b',' => self.ws(),
                        c if c == close => break,
                        _ => return None,
                    }
                }
            }
            _ => return None,
        }
        Some(())
    }

    /// Any JSON number: `-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?`.
    fn number(&mut self) -> Option<()> {
        self.eat_if(b'-');
        let digits = |s: &mut Self| {
            let start = s.i;
            while s.b.get(s.i).is_some_and(u8::is_ascii_digit) {
                s.i += 1;
            }
            s.i - start
        };
        let first = *self.b.get(self.i)?;
        let n = digits(self);
        if n == 0 || (first == b'0' && n > 1) {
            return None;
        }
        if self.eat_if(b'.') && digits(self) == 0 {
            return None;
        }
        if self.eat_if(b'e') || self.eat_if(b'E') {
            if !self.eat_if(b'+') {
                self.eat_if(b'-');
            }
            if digits(self) == 0 {
                return None;
            }
        }
        Some(())
    }
}

/// Decodes the body of a JSON string whose escapes [`Scanner::lazy`] has checked, with the
/// same escape table, finding the escapes with the same vector scan.
pub(super) fn unescape(raw: &str) -> String {
    let b = raw.as_bytes();
    let mut out = String::with_capacity(raw.len());
    let mut s = Scanner { b, i: 0 };
    loop {
        let start = s.i;
        let Some(at) = s.to_special::<false>() else {
            crate::bytes::push_str(&mut out, &raw[start..]);
            return out;
        };
        crate::bytes::push_str(&mut out, &raw[start..at]);
        // Checked text has no bare quote or control byte, and its escapes decode; should it
        // not, the raw text is better than nothing.
        let escaped = if b[at] == b'\\' {
            escape(&b[at + 1..])
        } else {
            None
        };
        let Some((c, used)) = escaped else {
            return raw.to_string();
        };
        out.push(c);
        s.i = at + 1 + used;
    }
}

#[cfg(test)]
mod tests {
    use super::super::parse_view_strict;
    use super::*;

    /// What `who` accepted from `line` is what the strict reader reads from it.
    fn same_as_strict(who: &str, fast: &SpanView<'_>, line: &[u8]) {
        match parse_view_strict(line) {
            Ok(strict) => assert_eq!(*fast, strict, "{:?}", String::from_utf8_lossy(line)),
            Err(e) => panic!(
                "{who} accepted what the strict reader rejects ({}): {:?}",
                e.message,
                String::from_utf8_lossy(line)
            ),
        }
    }

    /// The scanner either agrees with the strict reader or declines.
    fn agrees(line: &[u8]) {
        if let Some(fast) = scan(line) {
            same_as_strict("scanner", &fast, line);
        }
    }

    /// [`scan_line`] on `line` followed by more lines, as it meets a line inside a chunk:
    /// it agrees with the strict reader on the line up to the first newline, or declines.
    fn agrees_in_chunk(line: &[u8], order: &mut KeyOrder) {
        let mut input = line.to_vec();
        input.extend_from_slice(b"\n{\"name\":\"next\"}\n");
        let nl = input.iter().position(|&c| c == b'\n').unwrap();
        let mut fast = SpanView::default();
        if let Some(end) = scan_line(&input, order, &mut fast) {
            assert_eq!(end, nl, "{:?}", String::from_utf8_lossy(line));
            same_as_strict("scan_line", &fast, crate::lines::strip_cr(&input[..nl]));
        }
    }

    #[test]
    #[cfg_attr(target_arch = "wasm32", wasm_bindgen_test::wasm_bindgen_test)]
    fn reads_plain_records_itself() {
        let line = br#"{"span_id":"tool-1","parent_id":"turn-0","name":"grep","status":"ok","observed_bytes":120,"injected_bytes":100,"injected_tokens":25,"clip_reason":"none","sha256_observed":"ab","sha256_injected":"cd","injected_preview":"a\nb \"q\" \u00e9","prompt_builder_version":"cap-v1","extra":[1,{"x":null}],"n":-1.5e3}"#;
        let view = scan(line).expect("a plain record is read by the scanner");
        let preview = view
            .injected_preview
            .as_ref()
            .map(|p| p.decode().into_owned());
        assert_eq!(preview.as_deref(), Some("a\nb \"q\" é"));
        assert_eq!(view.observed_bytes, Some(120));
        agrees(line);
        let numeric = br#" { "span_id" : 7 , "parent_id" : null , "name" : "x" } "#;
        let view = scan(numeric).unwrap();
        assert_eq!(view.span_id.as_deref(), Some("7"));
        agrees(numeric);
    }

    #[test]
    #[cfg_attr(target_arch = "wasm32", wasm_bindgen_test::wasm_bindgen_test)]
    fn reads_numbers_of_every_length() {
        for len in 1..=21 {
            for first in [b'0', b'1', b'9'] {
                let digits: String = std::iter::once(first as char)
                    .chain((1..len).map(|i| char::from(b'0' + (i * 7 % 10) as u8)))
                    .collect();
                for after in [",\"name\":\"n\"}", "}", " }", ".5}", "e3}"] {
                    let line = format!("{{\"observed_bytes\":{digits}{after}");
                    agrees(line.as_bytes());
                    let padded = format!("{line}\n{}\n", " ".repeat(20));
                    agrees_in_chunk(padded.as_bytes(), &mut KeyOrder::default());
                    if len <= 19 && (first != b'0' || len == 1) && !after.starts_with(['.', 'e']) {
                        let view = scan(line.as_bytes()).expect(&line);
                        assert_eq!(view.observed_bytes, Some(digits.parse().unwrap()), "{line}");
                    }
                }
            }
        }
    }

    #[test]
    #[cfg_attr(target_arch = "wasm32", wasm_bindgen_test::wasm_bindgen_test)]
    fn unescapes_what_it_checked() {
        let raw = r#"a\nb \"q\" \u00e9\/\\ and a longer run of plain text \t\r\b\f end"#;
        let line = format!(r#"{{"name":"{raw}"}}"#);
        let strict = parse_view_strict(line.as_bytes()).unwrap();
        assert_eq!(unescape(raw), strict.name.unwrap());
        assert_eq!(unescape("plain"), "plain");
        assert_eq!(unescape(""), "");
    }

    #[test]
    #[cfg_attr(target_arch = "wasm32", wasm_bindgen_test::wasm_bindgen_test)]
    fn declines_what_the_strict_reader_must_judge() {
        for line in [
            &br#"{"name":"x","observed_bytes":-3}"#[..],
            br#"{"name":"x","observed_bytes":1.0}"#,
            br#"{"name":"x","observed_bytes":01}"#,
            br#"{"name":"x","observed_bytes":99999999999999999999}"#,
            br#"{"name":"x","name":"y"}"#,
            br#"{"name":5}"#,
            br#"{"name":"x",}"#,
            br#"{"name":"x"} x"#,
            br#"{"name":"x\ud83d\ude00"}"#,
            br#"{"name":"x\q"}"#,
            b"{\"name\":\"x\x01\"}",
            br#"{"n\u0061me":"x"}"#,
            br#"{"name":"x","e":[1,]}"#,
            br#"{"name":"x","e":01}"#,
            br#"{"name":"x","e":1.}"#,
            br#"{"name":"x","e":tru}"#,
            br#"[1]"#,
            b"{\"name\":\"\xff\"}",
        ] {
            assert!(scan(line).is_none(), "{:?}", String::from_utf8_lossy(line));
        }
    }

    #[test]
    #[cfg_attr(target_arch = "wasm32", wasm_bindgen_test::wasm_bindgen_test)]
    fn never_disagrees_on_mutated_lines() {
        // Every single-byte mutation (and truncation) of records exercising every field
        // kind: the scanner must agree with the strict reader or decline.
        let base: &[&[u8]] = &[
            br#"{"span_id":"t-1","parent_id":2,"name":"grep","status":"ok","observed_bytes":120,"injected_bytes":0,"injected_tokens":null,"clip_reason":"","injected_preview":"a\n\u0041\/","x":{"y":[true,false,null,-0.5E+2,"\""]}}"#,
            br#"{"model_context_limit_tokens":128000,"prompt_builder_version":"v","sha256_observed":"a","sha256_injected":"a","name":"n"}"#,
            // Non-ASCII text, and strings long enough for the sixteen-byte vector scan.
            r#"{"name":"héllo wörld, 日本語 and more than sixteen bytes","injected_preview":"x\"y é \u00e9 0123456789abcdef","span_id":"abcdefghijklmnopqrstuvwxyz"}"#.as_bytes(),
        ];
        let alphabet = b" \t\r\n\"\\{}[]:,-+.0123456789eEnulltrfasx\x00\x7f\xc3\xa9u";
        // The key-order guesses of a fresh reader, and of one that learned another order.
        let mut learned = KeyOrder::default();
        scan_line(
            b"{\"name\":\"a\",\"x\":1,\"status\":\"ok\",\"span_id\":\"s\"}\n",
            &mut learned,
            &mut SpanView::default(),
        )
        .unwrap();
        let check = |m: &[u8]| {
            agrees(m);
            agrees_in_chunk(m, &mut KeyOrder::default());
            agrees_in_chunk(m, &mut learned.clone());
        };
        for line in base {
            check(line);
            for at in 0..line.len() {
                check(&line[..at]);
                for &c in alphabet {
                    let mut m = line.to_vec();
                    m[at] = c;
                    check(&m);
                    let mut ins = line.to_vec();
                    ins.insert(at, c);
                    check(&ins);
                }
            }
        }
    }
}
