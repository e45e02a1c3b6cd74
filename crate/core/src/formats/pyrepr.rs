//! Python's `repr` of a dict or list, read as the JSON value it stands for.
//!
//! A Python tool that returns a dict has it serialised twice: the tracer records
//! `json.dumps(result)`, and the framework often sends the model `str(result)` (the Agents SDK,
//! hand-written loops). `{'ok': True, 'owner': None}` and `{"ok": true, "owner": null}` are the
//! same data in another serialisation, not a cut: reading the repr back into a value lets the
//! join say so ([`super::content::Content::value_sha256`]).
//!
//! Accepted: dicts (string or integer keys; an integer key becomes its decimal text, as
//! `json.dumps` writes it), lists and tuples, `str` literals in single or double quotes with
//! Python's escapes, integers, floats, `True`, `False`, `None`. Anything else (bytes, sets,
//! objects' reprs such as `datetime.date(2024, 1, 1)`, `nan`) is not data JSON could hold: the
//! text is then not a repr we read, and the strings are compared as they are.
//!
//! The value is a [`Tree`], not a `serde_json::Value`: a dict's keys are not hashed (see
//! [`crate::canonical::Tree`]; a tool's output is whatever the tool fetched), and a repeated
//! key keeps its last value when the value is written canonically, as a Python dict keeps it.

use serde_json::Number;

use crate::canonical::Tree;

/// Nesting deeper than this is refused: the reader recurses.
const MAX_DEPTH: usize = 128;

/// The value a Python repr of a dict or list stands for, or `None` when `text` is not one.
pub(crate) fn parse(text: &str) -> Option<Tree> {
    let mut p = Parser {
        s: text.as_bytes(),
        i: 0,
    };
    p.ws();
    if !matches!(p.peek(), Some(b'{' | b'[')) {
        return None;
    }
    let v = p.value(0)?;
    p.ws();
    (p.i == p.s.len()).then_some(v)
}

struct Parser<'a> {
    s: &'a [u8],
    i: usize,
}

impl Parser<'_> {
    fn peek(&self) -> Option<u8> {
        self.s.get(self.i).copied()
    }

    fn ws(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.i += 1;
        }
    }

    fn eat(&mut self, c: u8) -> bool {
        self.ws();
        if self.peek() == Some(c) {
            self.i += 1;
            true
        } else {
            false
        }
    }

    fn value(&mut self, depth: usize) -> Option<Tree> {
        if depth > MAX_DEPTH {
            return None;
        }
        self.ws();
        match self.peek()? {
            b'{' => {
                self.i += 1;
                let mut map = Vec::new();
                if self.eat(b'}') {
                    return Some(Tree::Object(map));
                }
                loop {
                    let key = match self.value(depth + 1)? {
                        Tree::String(s) => s,
                        Tree::Number(n) if n.is_i64() || n.is_u64() => n.to_string(),
                        _ => return None,
                    };
                    if !self.eat(b':') {
                        return None;
                    }
                    let v = self.value(depth + 1)?;
                    map.push((key, v));
                    if self.eat(b'}') {
                        return Some(Tree::Object(map));
                    }
                    if !self.eat(b',') {
                        return None;
                    }
                    if self.eat(b'}') {
                        return Some(Tree::Object(map));
                    }
                }
            }
            open @ (b'[' | b'(') => {
                let close = if open == b'[' { b']' } else { b')' };
                self.i += 1;
                let mut list = Vec::new();
                if self.eat(close) {
                    return Some(Tree::Array(list));
                }
                loop {
                    list.push(self.value(depth + 1)?);
                    if self.eat(close) {
                        return Some(Tree::Array(list));
                    }
                    if !self.eat(b',') {
                        return None;
                    }
                    if self.eat(close) {
                        return Some(Tree::Array(list));
                    }
                }
            }
            b'\'' | b'"' => self.string().map(Tree::String),
            b'-' | b'+' | b'0'..=b'9' | b'.' => self.number(),
            _ => {
                for (word, v) in [
                    ("True", Tree::Bool(true)),
                    ("False", Tree::Bool(false)),
                    ("None", Tree::Null),
                ] {
                    if self.s[self.i..].starts_with(word.as_bytes()) {
                        self.i += word.len();
                        return Some(v);
                    }
                }
                None
            }
        }
    }

    fn string(&mut self) -> Option<String> {
        let quote = self.peek()?;
        self.i += 1;
        let mut out = String::new();
        loop {
            let rest = &self.s[self.i..];
            let stop = rest.iter().position(|&b| b == quote || b == b'\\')?;
            out.push_str(std::str::from_utf8(&rest[..stop]).ok()?);
            self.i += stop;
            if self.s[self.i] == quote {
                self.i += 1;
                return Some(out);
            }
            self.i += 1; // the backslash
            let esc = self.peek()?;
            self.i += 1;
            match esc {
                b'\\' => out.push('\\'),
                b'\'' => out.push('\''),
                b'"' => out.push('"'),
                b'n' => out.push('\n'),
                b't' => out.push('\t'),
                b'r' => out.push('\r'),
                b'0' => out.push('\0'),
                b'a' => out.push('\u{7}'),
                b'b' => out.push('\u{8}'),
                b'f' => out.push('\u{c}'),
                b'v' => out.push('\u{b}'),
                b'x' => out.push(self.hex(2)?),
                b'u' => out.push(self.hex(4)?),
                b'U' => out.push(self.hex(8)?),
                _ => return None,
            }
        }
    }

    fn hex(&mut self, n: usize) -> Option<char> {
        let digits = std::str::from_utf8(self.s.get(self.i..self.i + n)?).ok()?;
        self.i += n;
        char::from_u32(u32::from_str_radix(digits, 16).ok()?)
    }

    fn number(&mut self) -> Option<Tree> {
        let start = self.i;
        while matches!(
            self.peek(),
            Some(b'0'..=b'9' | b'-' | b'+' | b'.' | b'e' | b'E' | b'_')
        ) {
            self.i += 1;
        }
        let text: String = std::str::from_utf8(&self.s[start..self.i])
            .ok()?
            .chars()
            .filter(|&c| c != '_')
            .collect();
        if let Ok(n) = text.parse::<i64>() {
            return Some(Tree::Number(n.into()));
        }
        if let Ok(n) = text.parse::<u64>() {
            return Some(Tree::Number(n.into()));
        }
        let f: f64 = text.parse().ok()?;
        Number::from_f64(f).map(Tree::Number)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// The tree of a JSON value, to compare a parse with.
    fn tree(value: serde_json::Value) -> Option<Tree> {
        Some(serde_json::from_value(value).unwrap())
    }

    #[test]
    fn reads_dict_reprs() {
        assert_eq!(
            parse("{'job_id': 'j-7731', 'exit_code': 2, 'retried': False, 'owner': None, 'steps': ['a', \"b'c\"], 'r': 0.5}"),
            tree(json!({"job_id": "j-7731", "exit_code": 2, "retried": false, "owner": null, "steps": ["a", "b'c"], "r": 0.5}))
        );
        assert_eq!(parse("[(1, 2), {}]"), tree(json!([[1, 2], {}])));
        assert_eq!(parse("{1: 'x'}"), tree(json!({"1": "x"})));
        assert_eq!(parse("{'a': 'caf\\xe9\\n'}"), tree(json!({"a": "café\n"})));
        // A repeated key: its last value counts, as in a Python dict.
        let dict = parse("{'a': 1, 'b': 2, 'a': 3}").unwrap();
        assert_eq!(
            dict.canonical(crate::canonical::Form::Python).unwrap(),
            r#"{"a":3,"b":2}"#
        );
    }

    #[test]
    fn refuses_what_json_cannot_hold() {
        for text in [
            "plain",
            "'just a string'",
            "{'d': datetime.date(2024, 1, 1)}",
            "{'a': 1",
            "{'a': 1} trailing",
            "{(1, 2): 3}",
            "{'a': nan}",
            "[b'bytes']",
        ] {
            assert_eq!(parse(text), None, "{text}");
        }
        let deep = "[".repeat(1000) + &"]".repeat(1000);
        assert_eq!(parse(&deep), None);
    }
}
