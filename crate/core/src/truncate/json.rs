//! JSON: valid JSON in, valid JSON out.
//!
//! Cutting JSON by bytes leaves a prefix no parser accepts, and cutting it by keys can drop
//! the one field that carried the outcome (seed 004: "Never truncate receipts, error codes,
//! or ok: false"). This cutter parses the document, then re-emits it compactly under
//! shrinking limits until it fits:
//!
//! - arrays keep their first items and end with a record of the rest,
//!   `{"_omitted":"120 more items (8420 bytes)"}`; objects with too many keys likewise keep
//!   their first keys and say `"_omitted":"40 more keys (3100 bytes)"`;
//! - long strings keep their start and end around an in-string marker,
//!   `"Traceback ...[...51200 bytes cut...]... exit 1"`, cut at escape and grapheme boundaries;
//! - containers nested deeper than the current limit are summarised in place;
//! - outcome keys (`status`, `ok`, `error`, `code`, `exit_code`, `id`, `*_id` ...,
//!   configurable) are never dropped at any depth, and their scalar values are not cut
//!   (unless nothing else can meet the budget).
//!
//! The parser is a small one of our own rather than `serde_json::Value` so that every kept
//! token is copied byte-for-byte from the input: numbers keep their exact digits (no float
//! round trip of a 20-digit receipt id), strings keep their escapes, duplicate keys stay, and
//! each node knows its source span for the accounting and the kept/omitted map.

use std::fmt::Write;

use super::budget::Measure;
use super::grapheme::is_boundary_chars;
use super::marker::plural;
use super::matcher::is_error_line;
use super::output::{inline_marker, Out};
use super::{Built, Ctx, ErrorLines, JsonOptions};

/// Deeper documents are rejected (as not JSON we can cut) rather than risking the stack.
const MAX_DEPTH: usize = 512;

/// A parsed document over its source text.
pub(crate) struct Doc<'a> {
    src: &'a str,
    root: Node,
}

struct Node {
    span: [usize; 2],
    /// Error-matching leaves in this subtree (for the dropped-error accounting).
    err: usize,
    kind: Kind,
}

enum Kind {
    /// Number, `true`, `false`, `null`.
    Scalar,
    Str,
    Arr(Vec<Node>),
    Obj(Vec<Member>),
}

struct Member {
    /// The key's span, quotes included.
    key: [usize; 2],
    /// The decoded key when it has escapes (else it is the raw span without quotes).
    decoded: Option<Box<str>>,
    value: Node,
}

/// Most values a document may hold to be cut as JSON: each costs a tree node (about 32
/// bytes in wasm32, 48 natively), so 40 million `0,` would need more memory than a wasm
/// instance can address. Larger documents are cut as text.
pub(crate) const MAX_NODES: usize = 8 << 20;

/// An upper bound of the values in a JSON text, counted without parsing: every value but
/// the first follows a `,` `:` `[` or `{`.
pub(crate) fn node_bound(src: &[u8]) -> usize {
    1 + src
        .iter()
        .filter(|&&b| matches!(b, b',' | b':' | b'[' | b'{'))
        .count()
}

impl<'a> Doc<'a> {
    pub fn parse(src: &'a str) -> Result<Doc<'a>, String> {
        let nodes = node_bound(src.as_bytes());
        if nodes > MAX_NODES {
            return Err(format!(
                "too many values to cut as JSON (up to {nodes}, the most is {MAX_NODES})"
            ));
        }
        let mut p = Parser {
            b: src.as_bytes(),
            i: 0,
        };
        p.ws();
        let root = p.value(0)?;
        p.ws();
        if p.i != p.b.len() {
            return Err(p.error("unexpected characters after the JSON value"));
        }
        Ok(Doc { src, root })
    }
}

struct Parser<'b> {
    b: &'b [u8],
    i: usize,
}

impl Parser<'_> {
    fn error(&self, msg: &str) -> String {
        let before = &self.b[..self.i.min(self.b.len())];
        let line = before.iter().filter(|&&c| c == b'\n').count() + 1;
        let col = before.len()
            - before
                .iter()
                .rposition(|&c| c == b'\n')
                .map_or(0, |p| p + 1)
            + 1;
        format!("{msg} at line {line}, column {col}")
    }

    fn ws(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.b.get(self.i) {
            self.i += 1;
        }
    }

    fn leaf(&self, start: usize, kind: Kind) -> Node {
        Node {
            span: [start, self.i],
            err: usize::from(is_error_line(&self.b[start..self.i])),
            kind,
        }
    }

    fn value(&mut self, depth: usize) -> Result<Node, String> {
        if depth > MAX_DEPTH {
            return Err(self.error("nesting deeper than 512 levels"));
        }
        let start = self.i;
        match self.b.get(self.i) {
            None => Err(self.error("unexpected end of input")),
            Some(b'{') => self.object(depth),
            Some(b'[') => self.array(depth),
            Some(b'"') => {
                self.string()?;
                Ok(self.leaf(start, Kind::Str))
            }
            Some(b't') => self.literal(b"true"),
            Some(b'f') => self.literal(b"false"),
            Some(b'n') => self.literal(b"null"),
            Some(b'-' | b'0'..=b'9') => self.number(),
            Some(_) => Err(self.error("unexpected character")),
        }
    }

    fn literal(&mut self, word: &[u8]) -> Result<Node, String> {
        let start = self.i;
        if self.b[self.i..].starts_with(word) {
            self.i += word.len();
            Ok(self.leaf(start, Kind::Scalar))
        } else {
            Err(self.error("invalid literal"))
        }
    }

    fn digits(&mut self) -> usize {
        let n = self.b[self.i..]
            .iter()
            .take_while(|c| c.is_ascii_digit())
            .count();
        self.i += n;
        n
    }

    fn number(&mut self) -> Result<Node, String> {
        let start = self.i;
        if self.b[self.i] == b'-' {
            self.i += 1;
        }
        match self.b.get(self.i) {
            Some(b'0') => self.i += 1,
            Some(b'1'..=b'9') => {
                self.digits();
            }
            _ => return Err(self.error("invalid number")),
        }
        if self.b.get(self.i) == Some(&b'.') {
            self.i += 1;
            if self.digits() == 0 {
                return Err(self.error("invalid number"));
            }
        }
        if let Some(b'e' | b'E') = self.b.get(self.i) {
            self.i += 1;
            if let Some(b'+' | b'-') = self.b.get(self.i) {
                self.i += 1;
            }
            if self.digits() == 0 {
                return Err(self.error("invalid number"));
            }
        }
        Ok(self.leaf(start, Kind::Scalar))
    }

    /// Consumes a string (at its opening quote); true when it contains escapes.
    fn string(&mut self) -> Result<bool, String> {
        self.i += 1;
        let mut escaped = false;
        loop {
            let run = self.b[self.i..]
                .iter()
                .take_while(|&&c| c != b'"' && c != b'\\' && c >= 0x20)
                .count();
            self.i += run;
            match self.b.get(self.i) {
                None => return Err(self.error("unterminated string")),
                Some(b'"') => {
                    self.i += 1;
                    return Ok(escaped);
                }
                Some(b'\\') => {
                    escaped = true;
                    match self.b.get(self.i + 1) {
                        Some(b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't') => self.i += 2,
                        Some(b'u')
                            if self.b.len() >= self.i + 6
                                && self.b[self.i + 2..self.i + 6]
                                    .iter()
                                    .all(u8::is_ascii_hexdigit) =>
                        {
                            self.i += 6
                        }
                        _ => return Err(self.error("invalid escape in string")),
                    }
                }
                Some(_) => return Err(self.error("control character in string")),
            }
        }
    }

    fn array(&mut self, depth: usize) -> Result<Node, String> {
        let start = self.i;
        self.i += 1;
        self.ws();
        let mut items = Vec::new();
        if self.b.get(self.i) == Some(&b']') {
            self.i += 1;
        } else {
            loop {
                items.push(self.value(depth + 1)?);
                self.ws();
                match self.b.get(self.i) {
                    Some(b',') => {
                        self.i += 1;
                        self.ws();
                    }
                    Some(b']') => {
                        self.i += 1;
                        break;
                    }
                    _ => return Err(self.error("expected ',' or ']'")),
                }
            }
        }
        Ok(Node {
            span: [start, self.i],
            err: items.iter().map(|n| n.err).sum(),
            kind: Kind::Arr(items),
        })
    }

    fn object(&mut self, depth: usize) -> Result<Node, String> {
        let start = self.i;
        self.i += 1;
        self.ws();
        let mut members = Vec::new();
        if self.b.get(self.i) == Some(&b'}') {
            self.i += 1;
        } else {
            loop {
                if self.b.get(self.i) != Some(&b'"') {
                    return Err(self.error("expected a string key"));
                }
                let key_start = self.i;
                let escaped = self.string()?;
                let key = [key_start, self.i];
                self.ws();
                if self.b.get(self.i) != Some(&b':') {
                    return Err(self.error("expected ':'"));
                }
                self.i += 1;
                self.ws();
                let value = self.value(depth + 1)?;
                let decoded = escaped.then(|| {
                    // The key was validated above, so it is valid UTF-8 between its quotes.
                    let raw = std::str::from_utf8(&self.b[key[0] + 1..key[1] - 1]).unwrap_or("");
                    decode(raw)
                        .into_iter()
                        .map(|(_, c)| c)
                        .collect::<String>()
                        .into_boxed_str()
                });
                members.push(Member {
                    key,
                    decoded,
                    value,
                });
                self.ws();
                match self.b.get(self.i) {
                    Some(b',') => {
                        self.i += 1;
                        self.ws();
                    }
                    Some(b'}') => {
                        self.i += 1;
                        break;
                    }
                    _ => return Err(self.error("expected ',' or '}'")),
                }
            }
        }
        Ok(Node {
            span: [start, self.i],
            err: members.iter().map(|m| m.value.err).sum(),
            kind: Kind::Obj(members),
        })
    }
}

/// The characters of a string's raw content (between its quotes), each with its raw offset;
/// escapes decode (surrogate pairs to one character, a lone surrogate to U+FFFD).
fn decode(raw: &str) -> Vec<(usize, char)> {
    let b = raw.as_bytes();
    let hex = |at: usize| -> u32 {
        raw.get(at..at + 4)
            .and_then(|h| u32::from_str_radix(h, 16).ok())
            .unwrap_or(0xFFFD)
    };
    let mut out = Vec::with_capacity(raw.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] != b'\\' {
            let c = raw[i..].chars().next().unwrap_or('\u{FFFD}');
            out.push((i, c));
            i += c.len_utf8();
            continue;
        }
        let (c, len) = match b.get(i + 1) {
            Some(b'u') => {
                let u = hex(i + 2);
                if (0xD800..0xDC00).contains(&u) && raw[i + 6..].starts_with("\\u") {
                    let lo = hex(i + 8);
                    if (0xDC00..0xE000).contains(&lo) {
                        let c = char::from_u32(0x10000 + ((u - 0xD800) << 10) + (lo - 0xDC00));
                        (c.unwrap_or('\u{FFFD}'), 12)
                    } else {
                        ('\u{FFFD}', 6)
                    }
                } else {
                    (char::from_u32(u).unwrap_or('\u{FFFD}'), 6)
                }
            }
            Some(b'n') => ('\n', 2),
            Some(b'r') => ('\r', 2),
            Some(b't') => ('\t', 2),
            Some(b'b') => ('\u{8}', 2),
            Some(b'f') => ('\u{c}', 2),
            Some(&c) => (c as char, 2),
            None => ('\\', 1),
        };
        out.push((i, c));
        i += len;
    }
    out
}

/// How hard one emission squeezes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Limits {
    /// Items kept per array.
    items: usize,
    /// Unpinned keys kept per object.
    keys: usize,
    /// Measure units of a string's content kept before it is cut.
    string: usize,
    /// Containers at this depth (root = 0) are summarised.
    depth: usize,
    /// Cut pinned (outcome) strings too: the last resort.
    cut_pinned: bool,
}

/// From "re-emit compactly, cut nothing" to "summarise the root, keep only outcome keys".
/// Each step shrinks one dimension by about 30%, round-robin, so sizes fall (nearly)
/// monotonically in small steps and a binary search lands close under the budget. Objects
/// are records of different fields rather than lists of alike items, so they keep four times
/// as many keys as arrays keep items; depth is summarised only once arrays are short.
fn ladder() -> Vec<Limits> {
    let mut v = vec![Limits {
        items: usize::MAX,
        keys: usize::MAX,
        string: usize::MAX,
        depth: usize::MAX,
        cut_pinned: false,
    }];
    let mut cur = Limits {
        items: 4096,
        keys: 16384,
        string: 65536,
        depth: 64,
        cut_pinned: false,
    };
    let shrink = |x: usize| x * 7 / 10;
    v.push(cur);
    while cur.items > 0 || cur.keys > 0 || cur.string > 24 || cur.depth > 0 {
        if cur.string > 24 {
            cur.string = shrink(cur.string).max(24);
            v.push(cur);
        }
        if cur.items > 0 {
            cur.items = shrink(cur.items);
            v.push(cur);
        }
        if cur.keys > 0 {
            cur.keys = shrink(cur.keys);
            v.push(cur);
        }
        if cur.items < 32 && cur.depth > 0 {
            cur.depth = cur.depth * 2 / 3;
            v.push(cur);
        }
    }
    v.push(Limits {
        cut_pinned: true,
        ..cur
    });
    v
}

/// Counts of what one emission omitted.
#[derive(Default)]
struct Stats {
    arrays: usize,
    items: usize,
    objects: usize,
    keys: usize,
    strings: usize,
    summarised: usize,
    bytes: usize,
    dropped_err: usize,
}

struct Emitter<'s, 'c> {
    src: &'s str,
    out: Out<'s>,
    lim: Limits,
    opts: &'c JsonOptions,
    m: Measure,
    stats: Stats,
}

impl<'s> Emitter<'s, '_> {
    fn punct(&mut self, s: &str) {
        self.out.keep_or_note(s);
    }

    fn key_name<'k>(&'k self, mem: &'k Member) -> &'k str {
        match &mem.decoded {
            Some(d) => d,
            None => &self.src[mem.key[0] + 1..mem.key[1] - 1],
        }
    }

    fn pinned(&self, name: &str) -> bool {
        self.opts.keep_keys.iter().any(|k| k == name)
            || self.opts.keep_id_keys && (name.ends_with("_id") || name.ends_with("Id"))
    }

    /// `"_omitted"`, or a longer underscore form when the object already has that key.
    fn record_key(&self, members: &[Member]) -> String {
        let mut key = self.opts.omitted_key.clone();
        while members.iter().any(|m| self.key_name(m) == key) {
            key.insert(0, '_');
        }
        key
    }

    fn note_record(&mut self, key: &str, text: &str) {
        let key = serde_json::to_string(key).unwrap_or_default();
        self.out.marker(&format!("{key}:\"{text}\""));
    }

    fn node(&mut self, n: &Node, depth: usize, pinned: bool) {
        match &n.kind {
            Kind::Scalar => self.out.keep(n.span[0], n.span[1]),
            Kind::Str => self.string(n, pinned),
            Kind::Arr(items) => self.array(n, items, depth),
            Kind::Obj(members) => self.object(n, members, depth),
        }
    }

    fn array(&mut self, n: &Node, items: &[Node], depth: usize) {
        self.punct("[");
        let k = if depth >= self.lim.depth && !items.is_empty() {
            self.stats.summarised += 1;
            0
        } else {
            items.len().min(self.lim.items)
        };
        for (i, item) in items[..k].iter().enumerate() {
            if i > 0 {
                self.punct(",");
            }
            self.node(item, depth + 1, false);
        }
        if k < items.len() {
            let rest = &items[k..];
            let bytes = rest[rest.len() - 1].span[1] - rest[0].span[0];
            if k > 0 {
                self.punct(",");
                self.stats.arrays += 1;
            }
            self.stats.items += rest.len();
            self.stats.bytes += bytes;
            self.stats.dropped_err += rest.iter().map(|r| r.err).sum::<usize>();
            let text = count_of(rest.len(), "item", k > 0, bytes);
            let key = serde_json::to_string(&self.opts.omitted_key).unwrap_or_default();
            self.out.marker(&format!("{{{key}:\"{text}\"}}"));
        }
        let _ = n;
        self.punct("]");
    }

    fn object(&mut self, n: &Node, members: &[Member], depth: usize) {
        let summarise = depth >= self.lim.depth && !members.is_empty();
        // Outcome keys always stay; then members holding an error-matching value; then the
        // rest in order.
        let mut room = if summarise { 0 } else { self.lim.keys };
        let pins: Vec<bool> = members
            .iter()
            .map(|m| self.pinned(self.key_name(m)))
            .collect();
        let mut show = pins.clone();
        for pass in 0..2 {
            for (i, mem) in members.iter().enumerate() {
                if room > 0 && !show[i] && (pass == 1 || mem.value.err > 0) {
                    show[i] = true;
                    room -= 1;
                }
            }
        }
        self.punct("{");
        let mut first = true;
        let mut dropped = 0;
        let mut dropped_bytes = 0;
        for (i, mem) in members.iter().enumerate() {
            if show[i] {
                if !first {
                    self.punct(",");
                }
                first = false;
                self.out.keep(mem.key[0], mem.key[1]);
                self.punct(":");
                self.node(&mem.value, depth + 1, pins[i]);
            } else {
                dropped += 1;
                dropped_bytes += mem.value.span[1] - mem.key[0];
                self.stats.dropped_err += mem.value.err;
            }
        }
        if dropped > 0 {
            if summarise {
                self.stats.summarised += 1;
            } else {
                self.stats.objects += 1;
            }
            self.stats.keys += dropped;
            self.stats.bytes += dropped_bytes;
            if !first {
                self.punct(",");
            }
            let key = self.record_key(members);
            self.note_record(&key, &count_of(dropped, "key", !first, dropped_bytes));
        }
        let _ = n;
        self.punct("}");
    }

    fn string(&mut self, n: &Node, pinned: bool) {
        let [start, end] = n.span;
        let raw = &self.src[start + 1..end - 1];
        if (pinned && !self.lim.cut_pinned) || self.m.of(raw) <= self.lim.string {
            self.out.keep(start, end);
            return;
        }
        let toks = decode(raw);
        let chars: Vec<char> = toks.iter().map(|t| t.1).collect();
        let offset = |t: usize| toks.get(t).map_or(raw.len(), |x| x.0);
        let cost = |t: usize| self.m.of(&raw[offset(t)..offset(t + 1)]);
        let want = self.lim.string;
        let mut used = 0;
        let mut h = 0;
        while h < toks.len() && used + cost(h) <= want / 2 {
            used += cost(h);
            h += 1;
        }
        while !is_boundary_chars(&chars, h) {
            h -= 1;
        }
        let head_used: usize = (0..h).map(cost).sum();
        let mut used = 0;
        let mut t = toks.len();
        while t > h && used + cost(t - 1) <= want - head_used {
            used += cost(t - 1);
            t -= 1;
        }
        while !is_boundary_chars(&chars, t) {
            t += 1;
        }
        let t = t.max(h);
        let (head_end, tail_start) = (offset(h), offset(t));
        self.out.keep(start, start + 1 + head_end);
        self.out.marker(&inline_marker(tail_start - head_end, None));
        self.out.keep(start + 1 + tail_start, end);
        self.stats.strings += 1;
        self.stats.bytes += tail_start - head_end;
    }
}

/// `"3 more items (120 bytes)"`.
fn count_of(n: usize, noun: &str, more: bool, bytes: usize) -> String {
    let more = if more { "more " } else { "" };
    let s = if n == 1 { "" } else { "s" };
    format!("{n} {more}{noun}{s} ({bytes} bytes)")
}

fn emit<'s>(ctx: &Ctx<'s>, doc: &Doc<'s>, lim: Limits) -> (Out<'s>, Stats) {
    let mut e = Emitter {
        src: doc.src,
        out: Out::new(ctx.src),
        lim,
        opts: &ctx.opts.json,
        m: ctx.m,
        stats: Stats::default(),
    };
    e.node(&doc.root, 0, false);
    (e.out, e.stats)
}

/// The summary for the envelope (the JSON text itself stays valid JSON: its records say
/// what was cut where).
fn summary(ctx: &Ctx, s: &Stats) -> String {
    let mut parts = Vec::new();
    if s.arrays > 0 {
        parts.push(format!(
            "{} trimmed ({})",
            plural(s.arrays, "array"),
            plural(s.items, "item")
        ));
    }
    if s.objects > 0 {
        parts.push(format!("{} trimmed", plural(s.objects, "object")));
    }
    if s.strings > 0 {
        parts.push(format!("{} cut", plural(s.strings, "string")));
    }
    if s.summarised > 0 {
        parts.push(format!(
            "{} summarised",
            plural(s.summarised, "nested value")
        ));
    }
    let mut text = format!("[... truncated JSON: {} bytes of values omitted", s.bytes);
    if !parts.is_empty() {
        let _ = write!(text, " ({})", parts.join(", "));
    }
    text.push_str("; outcome keys kept");
    if let Some(f) = ctx.fetch_call(0) {
        let _ = write!(text, "; fetch the original with {f}");
    }
    text.push_str(" ...]");
    text
}

pub(crate) fn build<'a>(ctx: &Ctx<'a>, doc: &Doc<'a>, limit: usize) -> Result<Built<'a>, usize> {
    let levels = ladder();
    let m = ctx.m;
    let fits = |o: &Out| m.of(&o.text) <= limit;
    let last = levels.len() - 1;
    let mut best = emit(ctx, doc, levels[last]);
    if !fits(&best.0) {
        return Err(m.of(&best.0.text));
    }
    // Most generous level that fits; sizes shrink (nearly) monotonically down the ladder,
    // and only measured emissions are kept.
    let first = emit(ctx, doc, levels[0]);
    if fits(&first.0) {
        best = first;
    } else {
        let (mut lo, mut hi) = (0, last);
        while hi - lo > 1 {
            let mid = lo + (hi - lo) / 2;
            let e = emit(ctx, doc, levels[mid]);
            if fits(&e.0) {
                hi = mid;
                best = e;
            } else {
                lo = mid;
            }
        }
    }
    let (out, stats) = best;
    let marker = summary(ctx, &stats);
    let total = doc.root.err;
    let mut built = Built::new(out, Some(marker));
    built.errors = Some(ErrorLines {
        total,
        kept: total - stats.dropped_err.min(total),
        dropped: stats.dropped_err.min(total),
    });
    Ok(built)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parser_accepts_json_and_rejects_the_rest() {
        for ok in [
            "0",
            "-1.5e+3",
            "\"a\\u00e9\\ud83d\\ude00\"",
            "[]",
            "{}",
            " [1, {\"a\": [null, true]}] ",
            "12345678901234567890123",
        ] {
            assert!(Doc::parse(ok).is_ok(), "{ok}");
        }
        for bad in [
            "",
            "[1,]",
            "{\"a\" 1}",
            "01",
            "1.",
            "tru",
            "\"\\x\"",
            "[1] 2",
            "{'a': 1}",
            "\"a\u{1}\"",
            "[\"unterminated]",
        ] {
            assert!(Doc::parse(bad).is_err(), "{bad}");
        }
        let deep = "[".repeat(600) + &"]".repeat(600);
        assert!(Doc::parse(&deep).err().unwrap().contains("512"));
    }

    #[test]
    fn ladder_only_ever_tightens() {
        let l = ladder();
        assert!(l.len() < 200);
        for w in l.windows(2) {
            let (a, b) = (w[0], w[1]);
            assert!(
                b.items <= a.items
                    && b.keys <= a.keys
                    && b.string <= a.string
                    && b.depth <= a.depth
            );
        }
        let last = l[l.len() - 1];
        assert_eq!((last.items, last.keys, last.depth), (0, 0, 0));
        assert!(last.cut_pinned);
    }

    #[test]
    fn decode_handles_escapes() {
        let d: String = decode("a\\n\\u00e9\\ud83d\\ude00\\ud800x")
            .into_iter()
            .map(|t| t.1)
            .collect();
        assert_eq!(d, "a\né😀\u{FFFD}x");
    }
}
