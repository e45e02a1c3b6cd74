//! A generator of JSON documents that exercise canonicalisation: keys that sort differently
//! by code point and by UTF-16, every escape, raw and escaped spellings of the same string,
//! numbers in many spellings (big integers, `-0`, exponents, overflow), random whitespace,
//! and, when asked, duplicate keys and Python's `NaN`/`Infinity`.
#![allow(dead_code)]

use crate::common::{Draw, Rng};

#[derive(Clone, Copy)]
pub struct Options {
    /// Allow duplicate keys (Python keeps the last; JCS rejects).
    pub duplicates: bool,
    /// Allow `NaN`, `Infinity`, `-Infinity` and numbers that overflow a double.
    pub non_finite: bool,
    /// Allow integers beyond ±(2^53−1).
    pub big_ints: bool,
}

const KEYS: &[&str] = &[
    "",
    "a",
    "b",
    "A",
    "aa",
    "ab",
    "a b",
    "1",
    "10",
    "é",
    "e\u{301}",
    "\u{fb33}",
    "😀",
    "\u{10000}",
    "\u{ffff}",
    "\u{e000}",
    "\u{7f}",
    "\u{80}",
    "\n",
    "\"",
    "\\",
    "/",
    "\u{2028}",
    "key",
    "Key",
    "name",
    "status",
];

const CHARS: &[char] = &[
    'a',
    'z',
    'A',
    ' ',
    '0',
    '"',
    '\\',
    '/',
    '\n',
    '\r',
    '\t',
    '\u{8}',
    '\u{c}',
    '\u{0}',
    '\u{1f}',
    '\u{7f}',
    '\u{80}',
    'é',
    '€',
    '\u{2028}',
    '\u{fb33}',
    '\u{ffff}',
    '😀',
    '\u{10ffff}',
    '\u{e000}',
    'ß',
    '中',
];

/// Draws from the xorshift `Rng` (differential tests) or from proptest's `Choices`
/// (properties).
pub struct Gen<'a, D: Draw = Rng> {
    pub rng: &'a mut D,
    pub opts: Options,
    out: String,
}

impl<'a, D: Draw> Gen<'a, D> {
    pub fn new(rng: &'a mut D, opts: Options) -> Self {
        Gen {
            rng,
            opts,
            out: String::new(),
        }
    }

    /// One document.
    pub fn document(&mut self) -> String {
        self.out.clear();
        self.ws();
        self.value(0);
        self.ws();
        std::mem::take(&mut self.out)
    }

    fn ws(&mut self) {
        if self.rng.chance(1, 3) {
            for _ in 0..self.rng.below(3) {
                let c = *self.rng.pick(&[' ', '\n', '\t', '\r']);
                self.out.push(c);
            }
        }
    }

    fn value(&mut self, depth: usize) {
        let container = depth < 5 && self.rng.chance(2, 5);
        if container {
            if self.rng.chance(1, 2) {
                self.array(depth)
            } else {
                self.object(depth)
            }
        } else {
            match self.rng.below(8) {
                0 => self.out.push_str("null"),
                1 => self.out.push_str("true"),
                2 => self.out.push_str("false"),
                3 | 4 => self.number(),
                _ => {
                    let s = self.text();
                    self.string(&s)
                }
            }
        }
    }

    fn array(&mut self, depth: usize) {
        self.out.push('[');
        self.ws();
        let n = self.rng.below(5);
        for i in 0..n {
            if i > 0 {
                self.out.push(',');
                self.ws();
            }
            self.value(depth + 1);
            self.ws();
        }
        self.out.push(']');
    }

    fn object(&mut self, depth: usize) {
        self.out.push('{');
        self.ws();
        let n = self.rng.below(6);
        let mut used: Vec<String> = Vec::new();
        for _ in 0..n {
            let key = if self.rng.chance(3, 4) {
                self.rng.pick(KEYS).to_string()
            } else {
                self.text()
            };
            if !self.opts.duplicates && used.contains(&key) {
                continue;
            }
            used.push(key.clone());
            if used.len() > 1 {
                self.out.push(',');
            }
            self.ws();
            self.string(&key);
            self.ws();
            self.out.push(':');
            self.ws();
            self.value(depth + 1);
            self.ws();
        }
        self.out.push('}');
    }

    fn text(&mut self) -> String {
        let n = self.rng.below(8);
        (0..n).map(|_| *self.rng.pick(CHARS)).collect()
    }

    /// Writes `s` as a JSON string, spelling each character raw or escaped at random.
    pub fn string(&mut self, s: &str) {
        self.out.push('"');
        for c in s.chars() {
            let escape = self.rng.chance(1, 4);
            match c {
                '"' => self.out.push_str(if escape { "\\u0022" } else { "\\\"" }),
                '\\' => self.out.push_str(if escape { "\\u005C" } else { "\\\\" }),
                '\n' if !escape => self.out.push_str("\\n"),
                '\r' if !escape => self.out.push_str("\\r"),
                '\t' if !escape => self.out.push_str("\\t"),
                '\u{8}' if !escape => self.out.push_str("\\b"),
                '\u{c}' if !escape => self.out.push_str("\\f"),
                '/' if escape => self.out.push_str("\\/"),
                c if (c as u32) < 0x20 || escape => {
                    let mut units = [0u16; 2];
                    for u in c.encode_utf16(&mut units) {
                        let hex = if self.rng.chance(1, 2) {
                            format!("\\u{u:04x}")
                        } else {
                            format!("\\u{u:04X}")
                        };
                        self.out.push_str(&hex);
                    }
                }
                c => self.out.push(c),
            }
        }
        self.out.push('"');
    }

    fn number(&mut self) {
        let neg = if self.rng.chance(1, 3) { "-" } else { "" };
        let s = match self.rng.below(12) {
            0 => format!("{neg}0"),
            1 => format!("{neg}{}", self.rng.below(1000)),
            2 => {
                let v = self.rng.next_u64() >> self.rng.below(64);
                let v = if self.opts.big_ints {
                    v
                } else {
                    v & ((1 << 53) - 1)
                };
                format!("{neg}{v}")
            }
            3 if self.opts.big_ints => {
                let n = 1 + self.rng.below(40) as usize;
                let mut d = String::from(*self.rng.pick(&["1", "2", "5", "9"]));
                for _ in 1..n {
                    d.push(char::from(b'0' + self.rng.below(10) as u8));
                }
                format!("{neg}{d}")
            }
            4 => format!("{neg}{}", (1u64 << 53) - 2 + self.rng.below(2)),
            5 => format!(
                "{neg}{}.{}",
                self.rng.below(100_000),
                self.rng.below(1_000_000)
            ),
            6 => {
                let e = self.rng.below(60) as i64 - 30;
                let mark = *self.rng.pick(&["e", "E", "e+", "E-", "e-"]);
                let e = if mark.len() > 1 { e.abs() } else { e };
                format!("{neg}{}{mark}{e}", self.rng.below(10_000))
            }
            7 => format!("{neg}{}.0", self.rng.below(10)),
            8 => {
                // Long mantissas: more digits than a double holds.
                let n = 15 + self.rng.below(10) as usize;
                let d: String = (0..n)
                    .map(|_| char::from(b'0' + self.rng.below(10) as u8))
                    .collect();
                format!("{neg}0.{d}e{}", self.rng.below(40) as i64 - 20)
            }
            9 => format!(
                "{neg}{:e}",
                f64::from_bits(self.rng.next_u64() & 0x7fef_ffff_ffff_ffff)
            ),
            10 if self.opts.non_finite => (*self.rng.pick(&[
                "NaN",
                "Infinity",
                "-Infinity",
                "1e400",
                "-2.5E999",
                "1e-400",
            ]))
            .to_string(),
            _ => format!("{neg}{}e{}", self.rng.below(10), self.rng.below(300)),
        };
        self.out.push_str(&s);
    }
}
