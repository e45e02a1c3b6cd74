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
    let text = std::str::from_utf8(line).ok()?;
    let mut s = Scanner {
        b: text.as_bytes(),
        text,
        i: 0,
    };
    let mut view = SpanView::default();
    // Bit i set = field i seen (a duplicate is the strict reader's error to report).
    let mut seen: u16 = 0;
    s.ws();
    s.eat(b'{')?;
    s.ws();
    if !s.eat_if(b'}') {
        loop {
            s.eat(b'"')?;
            let key = s.key()?;
            s.ws();
            s.eat(b':')?;
            s.ws();
            match field_index(key) {
                None => s.skip_value(0)?,
                Some(index) => {
                    let bit = 1u16 << index;
                    if seen & bit != 0 {
                        return None;
                    }
                    seen |= bit;
                    s.field(index, &mut view)?;
                }
            }
            s.ws();
            match s.next()? {
                b',' => s.ws(),
                b'}' => break,
                _ => return None,
            }
        }
    }
    s.ws();
    (s.i == s.b.len()).then_some(view)
}

/// The known fields, in the order [`Scanner::field`] numbers them.
const FIELDS: [&str; 13] = [
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
];

/// The index of a known field in [`FIELDS`]: one comparison after a match on the length
/// and first byte, instead of a comparison with every name.
#[inline(always)]
fn field_index(key: &str) -> Option<usize> {
    let index = match (key.len(), key.as_bytes().first()?) {
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
            if key.as_bytes()[7] == b'o' {
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
    crate::intern::eq(FIELDS[index].as_bytes(), key.as_bytes()).then_some(index)
}

const LO: u64 = 0x0101_0101_0101_0101;
const HI: u64 = 0x8080_8080_8080_8080;

/// A lane of `word` is flagged when it is `"`, `\` or a control character: the only bytes
/// that end a run of plain string content. The lowest flagged lane is exact (borrows only
/// propagate upwards from a true match).
#[inline(always)]
fn special(word: u64) -> u64 {
    let quote = word ^ (LO * b'"' as u64);
    let slash = word ^ (LO * b'\\' as u64);
    let zero = |x: u64| x.wrapping_sub(LO) & !x;
    (zero(quote) | zero(slash) | (word.wrapping_sub(LO * 0x20) & !word)) & HI
}

struct Scanner<'a> {
    b: &'a [u8],
    text: &'a str,
    i: usize,
}

impl<'a> Scanner<'a> {
    #[inline(always)]
    fn ws(&mut self) {
        while let Some(&c) = self.b.get(self.i) {
            if !matches!(c, b' ' | b'\t' | b'\n' | b'\r') {
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

    /// The index of the next `"`, `\` or control byte at or after `self.i`.
    #[inline(always)]
    fn to_special(&self) -> Option<usize> {
        let b = self.b;
        let mut i = self.i;
        while i + 8 <= b.len() {
            let word = u64::from_le_bytes(b[i..i + 8].try_into().unwrap());
            let hit = special(word);
            if hit != 0 {
                return Some(i + (hit.trailing_zeros() / 8) as usize);
            }
            i += 8;
        }
        b[i..]
            .iter()
            .position(|&c| c == b'"' || c == b'\\' || c < 0x20)
            .map(|p| i + p)
    }

    /// A key after its opening quote: plain text only (an escaped key is rare enough to
    /// leave to the strict reader).
    #[inline(always)]
    fn key(&mut self) -> Option<&'a str> {
        let end = self.to_special()?;
        if self.b[end] != b'"' {
            return None;
        }
        let key = self.text.get(self.i..end)?;
        self.i = end + 1;
        Some(key)
    }

    /// A string after its opening quote: borrowed when it has no escapes, else decoded.
    fn string(&mut self) -> Option<Cow<'a, str>> {
        Some(match self.lazy()? {
            LazyText::Text(text) => text,
            LazyText::Escaped(raw) => Cow::Owned(unescape(raw)),
        })
    }

    /// A string after its opening quote, left escaped (checked, not decoded).
    fn lazy(&mut self) -> Option<LazyText<'a>> {
        let start = self.i;
        let end = self.to_special()?;
        match self.b[end] {
            b'"' => {
                self.i = end + 1;
                Some(LazyText::Text(Cow::Borrowed(self.text.get(start..end)?)))
            }
            b'\\' => {
                self.i = end;
                self.escaped_rest(None)?;
                Some(LazyText::Escaped(self.text.get(start..self.i - 1)?))
            }
            _ => None,
        }
    }

    /// The rest of a string from an escape (at `self.i`) to the closing quote, decoded into
    /// `out` when given (else only validated).
    fn escaped_rest(&mut self, mut out: Option<&mut String>) -> Option<()> {
        loop {
            let at = self.to_special()?;
            if let Some(out) = out.as_deref_mut() {
                out.push_str(self.text.get(self.i..at)?);
            }
            self.i = at + 1;
            match self.b[at] {
                b'"' => return Some(()),
                b'\\' => {
                    let c = match self.next()? {
                        b'"' => '"',
                        b'\\' => '\\',
                        b'/' => '/',
                        b'b' => '\u{8}',
                        b'f' => '\u{c}',
                        b'n' => '\n',
                        b'r' => '\r',
                        b't' => '\t',
                        b'u' => {
                            let unit = self.hex4()?;
                            // Surrogates (pairs or lone) are the strict reader's to judge.
                            char::from_u32(u32::from(unit))?
                        }
                        _ => return None,
                    };
                    if let Some(out) = out.as_deref_mut() {
                        out.push(c);
                    }
                }
                _ => return None,
            }
        }
    }

    fn hex4(&mut self) -> Option<u16> {
        let digits = self.b.get(self.i..self.i + 4)?;
        let mut unit = 0u16;
        for &d in digits {
            unit = unit << 4 | (d as char).to_digit(16)? as u16;
        }
        self.i += 4;
        Some(unit)
    }

    /// A non-negative integer as JSON writes it (no sign, no leading zero, no fraction or
    /// exponent) that fits a u64; anything else is the strict reader's to judge.
    fn unsigned(&mut self) -> Option<u64> {
        let start = self.i;
        let mut value: u64 = 0;
        while let Some(&c) = self.b.get(self.i) {
            if !c.is_ascii_digit() {
                break;
            }
            // Nineteen digits never overflow a u64 (and wasm32 has no cheap checked 64-bit
            // multiply); longer numbers go to the strict reader.
            value = value.wrapping_mul(10).wrapping_add(u64::from(c - b'0'));
            self.i += 1;
        }
        let digits = self.i - start;
        if digits == 0 || digits > 19 || (digits > 1 && self.b[start] == b'0') {
            return None;
        }
        if matches!(self.b.get(self.i), Some(b'.' | b'e' | b'E')) {
            return None;
        }
        Some(value)
    }

    fn literal(&mut self, word: &[u8]) -> Option<()> {
        let end = self.i + word.len();
        (self.b.get(self.i..end)? == word).then(|| self.i = end)
    }

    /// The value of known field `index` into `view`.
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
                let end = self.to_special()?;
                match self.b[end] {
                    b'"' => self.i = end + 1,
                    b'\\' => {
                        self.i = end;
                        self.escaped_rest(None)?;
                    }
                    _ => return None,
                }
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
                        self.eat(b'"')?;
                        self.key()?;
                        self.ws();
                        self.eat(b':')?;
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

/// Decodes the body of a JSON string whose escapes [`Scanner::escaped_rest`] has checked,
/// by running that same decoder over it (with its closing quote put back).
pub(super) fn unescape(raw: &str) -> String {
    let quoted = format!("{raw}\"");
    let mut s = Scanner {
        b: quoted.as_bytes(),
        text: &quoted,
        i: 0,
    };
    let mut out = String::with_capacity(raw.len());
    // Checked text always decodes; should it not, the raw text is better than nothing.
    match s.escaped_rest(Some(&mut out)) {
        Some(()) if s.i == quoted.len() => out,
        _ => raw.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::super::parse_view_strict;
    use super::*;

    /// The scanner either agrees with the strict reader or declines.
    fn agrees(line: &[u8]) {
        if let Some(fast) = scan(line) {
            match parse_view_strict(line) {
                Ok(strict) => assert_eq!(fast, strict, "{:?}", String::from_utf8_lossy(line)),
                Err(e) => panic!(
                    "scanner accepted what the strict reader rejects ({}): {:?}",
                    e.message,
                    String::from_utf8_lossy(line)
                ),
            }
        }
    }

    #[test]
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
    fn never_disagrees_on_mutated_lines() {
        // Every single-byte mutation (and truncation) of records exercising every field
        // kind: the scanner must agree with the strict reader or decline.
        let base: &[&[u8]] = &[
            br#"{"span_id":"t-1","parent_id":2,"name":"grep","status":"ok","observed_bytes":120,"injected_bytes":0,"injected_tokens":null,"clip_reason":"","injected_preview":"a\n\u0041\/","x":{"y":[true,false,null,-0.5E+2,"\""]}}"#,
            br#"{"model_context_limit_tokens":128000,"prompt_builder_version":"v","sha256_observed":"a","sha256_injected":"a","name":"n"}"#,
        ];
        let alphabet = b" \t\"\\{}[]:,-+.0123456789eEnulltrfasx\x00\x7f\xc3\xa9u";
        for line in base {
            agrees(line);
            for at in 0..line.len() {
                agrees(&line[..at]);
                for &c in alphabet {
                    let mut m = line.to_vec();
                    m[at] = c;
                    agrees(&m);
                    let mut ins = line.to_vec();
                    ins.insert(at, c);
                    agrees(&ins);
                }
            }
        }
    }
}
