//! **Redact**: replace secrets with typed placeholders before anything else sees the text.
//!
//! Redaction runs first in the pack path (seed 004: "handler result → redact → truncate"),
//! so no cut, preview, hash or log can hold a fragment of a secret. Each replacement leaves
//! a [`Receipt`] (seed 003: `field_path`, `rule_id`, `original_len`, the placeholder), which
//! never holds a character of the secret, so a change of rule between two runs shows up as
//! policy drift instead of a model regression.
//!
//! ## How it finds secrets without a regex engine
//!
//! The wasm module must stay small, so there is no `regex` crate. Secrets announce
//! themselves with literal anchors (`sk-`, `ghp_`, `AKIA`, `xox`, `AIza`, `eyJ`,
//! `-----BEGIN`, `Bearer`, `://`, a `=` or `:` after a key named like a secret ...); the
//! scanner (`scan.rs`) makes one pass and stops only at bytes that can begin an anchor and
//! whose neighbours let it (`sk` at a word start, a digit that starts a number: `gate.rs`
//! finds them, sixteen positions at a time in wasm), where a small verifier decides
//! (charset, length, word boundaries, mixed case, the Luhn check, a JWT header that decodes
//! to JSON). The rule list and the key names are in
//! [`Rule`] and `rules.rs`.
//!
//! ## Precision
//!
//! Identifiers that look random but are not secret are left alone: git SHAs, UUIDs,
//! SHA-256 hex digests, `sha512-` integrity strings, base64 image data (`data:...;base64,`
//! payloads are skipped whole). A labelled corpus in `tests/fixtures/redact/` holds
//! positives for every rule and hard negatives; the tests require 100 % recall and no false
//! positive on it.
//!
//! ## Forms
//!
//! - [`Redactor::text`]: any text. Secrets are also found inside JSON-escaped strings
//!   (`\"password\":\"...\"`, `https:\/\/user:pw@host`) and percent-encoded URLs, by
//!   scanning decoded views and mapping each finding back to its encoded bytes.
//! - [`Redactor::json`]: a parsed JSON value. Only string values change (a secret number
//!   under a secret key becomes a placeholder string), so the document stays valid JSON;
//!   receipts name the path (`$.headers.Authorization`, `$.items[3].token`).
//! - In text that is JSON, a secret number under a quoted key (`"pin": 1234`) is replaced
//!   by a quoted placeholder, so that text stays valid JSON too.
//!
//! ```
//! use toolslice::redact::{Policy, Redactor};
//!
//! let r = Redactor::new(&Policy::default()).unwrap();
//! let out = r.text("push failed: token ghp_aB3dE5fG7hI9jK1lM3nO5pQ7rS9tU1vW3xY5 expired");
//! assert_eq!(out.text, "push failed: token [REDACTED:github_token] expired");
//! assert_eq!(out.receipts[0].rule_id, "github_token");
//! assert_eq!(out.receipts[0].original_len, 40);
//! ```

mod gate;
mod rules;
mod scan;
mod stream;
mod verify;
mod views;

use std::fmt;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::error::Coded;

pub use rules::Rule;
pub use stream::RedactStream;

use rules::{classify_key, KeyClass};
use scan::{Cfg, Finding};

/// Version of the rule set; it changes whenever a rule's behaviour changes, and the packer
/// writes it into `prompt_builder_version` so two runs with different rules never compare
/// as the same policy.
pub const RULES_VERSION: &str = "redact-v3";

/// What to redact. The default redacts every secret rule and card numbers, and leaves
/// e-mail addresses and US social security numbers alone (turn them on when the policy
/// says so).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Policy {
    /// Redact e-mail addresses.
    pub emails: bool,
    /// Redact US social security numbers (`123-45-6789`).
    pub us_ssn: bool,
    /// Redact card numbers that pass the Luhn check.
    pub card_numbers: bool,
    /// Rule ids to turn off (`"jwt"` ...).
    pub disable: Vec<String>,
    /// More key names whose values are secret (compared without case and separators, so
    /// `pin_code` also matches `PinCode`).
    pub secret_keys: Vec<String>,
    /// Also scan JSON-unescaped and percent-decoded views of the text.
    pub decode: bool,
}

impl Default for Policy {
    fn default() -> Self {
        Policy {
            emails: false,
            us_ssn: false,
            card_numbers: true,
            disable: Vec::new(),
            secret_keys: Vec::new(),
            decode: true,
        }
    }
}

/// One replacement. It never holds a character of what was replaced.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Receipt {
    /// Where: `$` for a text, `$.a.b[2]` for a JSON value.
    pub field_path: String,
    pub rule_id: String,
    /// Bytes replaced, as they appeared (escaped form included).
    pub original_len: u64,
    /// The placeholder written in their place.
    pub replacement: String,
    /// Byte offset of the placeholder in the redacted text (or string value).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub offset: Option<u64>,
}

/// A redacted text and its receipts.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Redacted {
    pub text: String,
    pub receipts: Vec<Receipt>,
}

/// Why a policy could not be compiled.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RedactError {
    UnknownRule(String),
}

impl fmt::Display for RedactError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RedactError::UnknownRule(id) => write!(
                f,
                "unknown redaction rule {id:?} (known: {})",
                Rule::ALL.map(Rule::id).join(", ")
            ),
        }
    }
}

impl std::error::Error for RedactError {}

impl Coded for RedactError {
    fn code(&self) -> &'static str {
        "invalid_policy"
    }
}

/// A compiled [`Policy`]: build once, redact many texts and values.
#[derive(Debug, Clone)]
pub struct Redactor {
    cfg: Cfg,
    decode: bool,
}

impl Default for Redactor {
    fn default() -> Self {
        Redactor::new(&Policy::default()).expect("the default policy is valid")
    }
}

impl Redactor {
    pub fn new(policy: &Policy) -> Result<Redactor, RedactError> {
        let mut enabled = [true; Rule::ALL.len()];
        enabled[Rule::Email as usize] = policy.emails;
        enabled[Rule::UsSsn as usize] = policy.us_ssn;
        enabled[Rule::CardNumber as usize] = policy.card_numbers;
        for id in &policy.disable {
            let rule = Rule::parse(id).ok_or_else(|| RedactError::UnknownRule(id.clone()))?;
            enabled[rule as usize] = false;
        }
        let extra_keys = policy
            .secret_keys
            .iter()
            .map(|k| rules::key_words(k).concat())
            .filter(|k| !k.is_empty())
            .collect();
        Ok(Redactor {
            cfg: Cfg {
                enabled,
                extra_keys,
            },
            decode: policy.decode,
        })
    }

    /// Redacts a text; receipts have `field_path` `$`.
    pub fn text(&self, text: &str) -> Redacted {
        let mut receipts = Vec::new();
        let text = self
            .redact_str(text, "$", &mut receipts)
            .unwrap_or_else(|| text.to_string());
        Redacted { text, receipts }
    }

    /// Redacts every string of a JSON value in place (and secret scalars under secret
    /// keys); returns the receipts, with JSON paths.
    pub fn json(&self, value: &mut Value) -> Vec<Receipt> {
        let mut receipts = Vec::new();
        let mut path = String::from("$");
        self.walk(value, &mut path, None, &mut receipts);
        receipts
    }

    /// The merged, sorted, non-overlapping findings of a text (all views).
    pub(crate) fn findings(&self, s: &[u8]) -> Vec<Finding> {
        let mut found = Vec::new();
        scan::scan(s, &self.cfg, &mut found);
        if self.decode && s.len() < u32::MAX as usize {
            for view in views::views(s) {
                let mut more = Vec::new();
                scan::scan(&view.bytes, &self.cfg, &mut more);
                for f in more {
                    let (start, end) = view.source(f.start, f.end);
                    if start < end {
                        found.push(Finding {
                            start,
                            end,
                            rule: f.rule,
                            wrap: None,
                        });
                    }
                }
            }
        }
        without_placeholder_only(s, merge(found))
    }

    /// Redacts `text`, appending receipts for `path`; `None` when nothing was found.
    pub(crate) fn redact_str(
        &self,
        text: &str,
        path: &str,
        receipts: &mut Vec<Receipt>,
    ) -> Option<String> {
        let found = self.findings(text.as_bytes());
        if found.is_empty() {
            return None;
        }
        Some(apply(text, &found, path, receipts))
    }

    fn walk(
        &self,
        value: &mut Value,
        path: &mut String,
        inherited: Option<Rule>,
        receipts: &mut Vec<Receipt>,
    ) {
        match value {
            Value::String(s) => {
                if let Some(rule) = inherited {
                    if !verify::is_dummy_value(s.as_bytes()) && self.cfg.on(rule) {
                        receipts.push(receipt(path, rule, s.len(), Some(0)));
                        *s = rule.placeholder().to_string();
                    }
                } else if let Some(new) = self.redact_str(s, path, receipts) {
                    *s = new;
                }
            }
            Value::Number(n) => {
                if let Some(rule) = inherited.filter(|r| self.cfg.on(*r)) {
                    receipts.push(receipt(path, rule, n.to_string().len(), None));
                    *value = Value::String(rule.placeholder().to_string());
                }
            }
            Value::Array(items) => {
                for (i, item) in items.iter_mut().enumerate() {
                    let len = path.len();
                    path.push_str(&format!("[{i}]"));
                    self.walk(item, path, inherited, receipts);
                    path.truncate(len);
                }
            }
            Value::Object(map) => {
                let keys_change = map.keys().any(|k| !self.findings(k.as_bytes()).is_empty());
                if keys_change {
                    let old = std::mem::take(map);
                    for (k, v) in old {
                        let key = self.redact_str(&k, path, receipts).unwrap_or(k);
                        let mut key2 = key.clone();
                        let mut n = 2;
                        while map.contains_key(&key2) {
                            key2 = format!("{key}#{n}");
                            n += 1;
                        }
                        map.insert(key2, v);
                    }
                }
                for (k, v) in map.iter_mut() {
                    let len = path.len();
                    crate::canonical::push_key_segment(path, k);
                    match classify_key(k, &self.cfg.extra_keys) {
                        KeyClass::Secret(rule) => {
                            self.walk(v, path, inherited.or(Some(rule)), receipts)
                        }
                        KeyClass::Authorization if inherited.is_none() => {
                            self.authorization(v, path, receipts)
                        }
                        _ => self.walk(v, path, inherited, receipts),
                    }
                    path.truncate(len);
                }
            }
            Value::Null | Value::Bool(_) => {}
        }
    }

    /// An `Authorization` value keeps its scheme word: `Bearer [REDACTED:bearer_token]`.
    fn authorization(&self, value: &mut Value, path: &mut String, receipts: &mut Vec<Receipt>) {
        let Value::String(s) = value else {
            return self.walk(value, path, Some(Rule::Authorization), receipts);
        };
        if verify::is_dummy_value(s.as_bytes()) {
            return;
        }
        let bytes = s.as_bytes();
        let w = verify::run(bytes, 0, |b| b.is_ascii_alphabetic());
        let sp = verify::run(bytes, w, |b| b == b' ');
        let (start, rule) = if w > 0 && sp > 0 && w + sp < s.len() {
            let scheme = &bytes[..w];
            let rule = if scheme.eq_ignore_ascii_case(b"bearer") {
                Rule::BearerToken
            } else if scheme.eq_ignore_ascii_case(b"basic") {
                Rule::BasicAuth
            } else {
                Rule::Authorization
            };
            (w + sp, rule)
        } else {
            (0, Rule::Authorization)
        };
        if verify::is_dummy_value(&bytes[start..]) {
            return;
        }
        if !self.cfg.on(rule) {
            if let Some(new) = self.redact_str(s, path, receipts) {
                *s = new;
            }
            return;
        }
        receipts.push(receipt(path, rule, s.len() - start, Some(start)));
        *s = format!("{}{}", &s[..start], rule.placeholder());
    }
}

fn receipt(path: &str, rule: Rule, original_len: usize, offset: Option<usize>) -> Receipt {
    Receipt {
        field_path: path.to_string(),
        rule_id: rule.id().to_string(),
        original_len: original_len as u64,
        replacement: rule.placeholder().to_string(),
        offset: offset.map(|o| o as u64),
    }
}

/// Sorts findings and merges overlapping ones: the merged range is their union and its
/// rule the most specific (lowest in [`Rule`] order). Ranges are widened to UTF-8
/// boundaries (never narrowed: a wider cut cannot leak).
fn merge(mut found: Vec<Finding>) -> Vec<Finding> {
    let key = |f: &Finding| (f.start, std::cmp::Reverse(f.end), f.rule);
    // The scan finds them in text order; only the decoded views' findings come after.
    if !found.is_sorted_by_key(key) {
        crate::sort::sort_by_key(&mut found, key);
    }
    let mut out: Vec<Finding> = Vec::with_capacity(found.len());
    for f in found {
        match out.last_mut() {
            Some(last) if f.start < last.end => {
                if f.end > last.end {
                    last.end = f.end;
                    last.wrap = None;
                }
                if f.rule < last.rule {
                    last.rule = f.rule;
                }
            }
            _ => out.push(f),
        }
    }
    out
}

/// The opening of a placeholder; the rule name and `]` follow.
const OPEN: &[u8] = b"[REDACTED:";
/// The longest placeholder: the opening, a rule name of at most 48 bytes, and `]`.
const PLACEHOLDER_MAX: usize = OPEN.len() + 48 + 1;

/// The placeholder (`[REDACTED:rule]`) starting at `p`, where `s[p..]` begins with [`OPEN`]:
/// its byte range, if a rule name and `]` follow.
fn placeholder_at(s: &[u8], p: usize) -> Option<[usize; 2]> {
    let name = p + OPEN.len();
    let len = s[name..]
        .iter()
        .take(48)
        .take_while(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || **b == b'_')
        .count();
    (len > 0 && s.get(name + len) == Some(&b']')).then_some([p, name + len + 1])
}

/// The placeholders already in a text that overlap a finding, as sorted byte ranges. Only
/// the stretches around the findings are searched: a placeholder that overlaps a finding
/// starts less than [`PLACEHOLDER_MAX`] bytes before it, and on a 4 MiB log with a few
/// hundred findings a search of the whole text was most of this step.
fn placeholders(s: &[u8], found: &[Finding]) -> Vec<[usize; 2]> {
    let finder = memchr::memmem::Finder::new(OPEN);
    let mut marks = Vec::new();
    // Where the search has reached: stretches never overlap, so no mark is found twice.
    let mut searched = 0;
    for f in found {
        let lo = f.start.saturating_sub(PLACEHOLDER_MAX - 1).max(searched);
        if lo >= f.end {
            continue;
        }
        // Openings that start before the finding's end, read whole.
        let hi = (f.end + OPEN.len() - 1).min(s.len());
        marks.extend(
            finder
                .find_iter(&s[lo..hi])
                .filter_map(|p| placeholder_at(s, lo + p)),
        );
        searched = f.end;
    }
    marks
}

/// Drops the findings that hold nothing but placeholders already in the text and
/// punctuation around them: a placeholder is opaque, so redacting a redacted text changes
/// nothing (`pass=-:[REDACTED:url_password]` stays as it is; found by the redact fuzz
/// target). A finding with anything else in it (a letter, a digit, any non-ASCII byte)
/// keeps its whole span, so a secret written next to a placeholder is still replaced.
/// Linear: a substring search around each finding, then one walk over both sorted lists.
fn without_placeholder_only(s: &[u8], found: Vec<Finding>) -> Vec<Finding> {
    let marks = placeholders(s, &found);
    if marks.is_empty() {
        return found;
    }
    let mut m = 0;
    found
        .into_iter()
        .filter(|f| {
            while m < marks.len() && marks[m][1] <= f.start {
                m += 1;
            }
            let mut k = m;
            let mut at = f.start;
            let mut overlaps = false;
            while at < f.end {
                if k < marks.len() && marks[k][0] <= at {
                    overlaps |= marks[k][0] < f.end;
                    at = at.max(marks[k][1]);
                    k += 1;
                    continue;
                }
                let next = if k < marks.len() {
                    marks[k][0].min(f.end)
                } else {
                    f.end
                };
                if s[at..next]
                    .iter()
                    .any(|b| b.is_ascii_alphanumeric() || *b >= 0x80)
                {
                    return true;
                }
                at = next;
            }
            !overlaps
        })
        .collect()
}

/// Writes `text` with every finding replaced by its placeholder. Built from slices of
/// `text` at character boundaries (findings are widened to them) and ASCII placeholders, so
/// the result needs no UTF-8 check: on a 4 MiB log that check was a second full read.
fn apply(text: &str, found: &[Finding], path: &str, receipts: &mut Vec<Receipt>) -> String {
    let mut out = String::with_capacity(text.len());
    let mut last = 0;
    for (start, end, f) in replaced(text.as_bytes(), found) {
        out.push_str(&text[last..start]);
        let offset = out.len();
        placeholder(f, |p| out.push_str(p));
        receipts.push(receipt(path, f.rule, end - start, Some(offset)));
        last = end;
    }
    out.push_str(&text[last..]);
    out
}

/// Appends `s` to `out` with every finding replaced. Receipt offsets count from `base` at
/// the first byte this call writes (the stream passes the bytes it emitted before).
pub(crate) fn apply_bytes(
    s: &[u8],
    found: &[Finding],
    path: &str,
    base: u64,
    receipts: &mut Vec<Receipt>,
    out: &mut Vec<u8>,
) {
    let origin = out.len();
    let mut last = 0;
    for (start, end, f) in replaced(s, found) {
        out.extend_from_slice(&s[last..start]);
        let offset = base + (out.len() - origin) as u64;
        placeholder(f, |p| out.extend_from_slice(p.as_bytes()));
        receipts.push(receipt(path, f.rule, end - start, Some(offset as usize)));
        last = end;
    }
    out.extend_from_slice(&s[last..]);
}

/// The byte ranges of `s` the findings replace, in order, each with its finding: widened
/// to whole UTF-8 characters, clipped so that none overlaps the one before, empty ones
/// left out.
fn replaced<'a>(
    s: &'a [u8],
    found: &'a [Finding],
) -> impl Iterator<Item = (usize, usize, &'a Finding)> + 'a {
    let is_cont = |b: u8| b & 0xC0 == 0x80;
    let mut last = 0;
    found.iter().filter_map(move |f| {
        let mut start = f.start.max(last).min(s.len());
        let mut end = f.end.min(s.len());
        while start > last && start < s.len() && is_cont(s[start]) {
            start -= 1;
        }
        while end < s.len() && is_cont(s[end]) {
            end += 1;
        }
        if end <= start {
            return None;
        }
        last = end;
        Some((start, end, f))
    })
}

/// Writes a finding's placeholder (ASCII) through `write`: quoted with the finding's
/// backslashes when it sat in an escaped JSON string.
fn placeholder(f: &Finding, mut write: impl FnMut(&str)) {
    let p = f.rule.placeholder();
    match f.wrap {
        Some(bs) => {
            let q = format!("{}\"", "\\".repeat(usize::from(bs)));
            write(&q);
            write(p);
            write(&q);
        }
        None => write(p),
    }
}

/// Redacts a text with a policy (compiles the policy each call; keep a [`Redactor`] to
/// redact many).
pub fn redact_text(text: &str, policy: &Policy) -> Result<Redacted, RedactError> {
    Ok(Redactor::new(policy)?.text(text))
}

/// Redacts a JSON value in place with a policy; returns the receipts.
pub fn redact_json(value: &mut Value, policy: &Policy) -> Result<Vec<Receipt>, RedactError> {
    Ok(Redactor::new(policy)?.json(value))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const GH: &str = "ghp_aB3dE5fG7hI9jK1lM3nO5pQ7rS9tU1vW3xY5";

    #[test]
    fn json_paths_and_validity() {
        let mut v = json!({
            "status": "ok",
            "headers": {"Authorization": "Bearer abc.DEF-123", "x-api-key": "k3y-V4lue-99"},
            "items": [{"token": GH}, {"note": format!("used {GH}")}],
            "password": 123456,
            "max_tokens": 4096
        });
        let receipts = Redactor::default().json(&mut v);
        assert_eq!(
            v["headers"]["Authorization"],
            "Bearer [REDACTED:bearer_token]"
        );
        assert_eq!(v["headers"]["x-api-key"], "[REDACTED:secret_field]");
        assert_eq!(v["items"][0]["token"], "[REDACTED:secret_field]");
        assert_eq!(v["items"][1]["note"], "used [REDACTED:github_token]");
        assert_eq!(v["password"], "[REDACTED:secret_field]");
        assert_eq!(v["max_tokens"], 4096);
        let paths: Vec<_> = receipts.iter().map(|r| r.field_path.as_str()).collect();
        assert_eq!(
            paths,
            [
                "$.headers.Authorization",
                "$.headers[\"x-api-key\"]",
                "$.items[0].token",
                "$.items[1].note",
                "$.password"
            ]
        );
        let text = serde_json::to_string(&v).unwrap();
        assert!(!text.contains(&GH[4..8]));
    }

    #[test]
    fn text_json_stays_json() {
        let t = r#"{"user":"bob","password":123456,"nested":"{\"token\":\"abcd1234xyz\"}"}"#;
        let out = Redactor::default().text(t);
        let v: Value = serde_json::from_str(&out.text).unwrap();
        assert_eq!(v["password"], "[REDACTED:secret_field]");
        assert_eq!(v["nested"], r#"{"token":"[REDACTED:secret_field]"}"#);
        assert_eq!(v["user"], "bob");
    }

    #[test]
    fn escaped_and_percent_encoded() {
        let r = Redactor::default();
        let out = r.text(r#"log: "url=https:\/\/admin:s3cretPw@db.local\/x""#);
        assert!(
            out.text.contains("admin:[REDACTED:url_password]@db"),
            "{}",
            out.text
        );
        let out = r.text(&format!("next=%2Fcb%3Ftoken%3D{GH}%26x%3D1"));
        assert!(!out.text.contains("aB3dE5"), "{}", out.text);
        let out = r.text(&format!("line1\\n{GH}\\nline3"));
        assert_eq!(out.text, "line1\\n[REDACTED:github_token]\\nline3");
    }

    #[test]
    fn idempotent_and_policy() {
        let r = Redactor::default();
        let once = r.text(&format!(
            "a {GH} b password=hunter22 c mail bob@example.com"
        ));
        assert_eq!(r.text(&once.text).text, once.text);
        assert!(once.text.contains("bob@example.com"));
        // Found by the redact fuzz target: a placeholder inside URL userinfo has a `:` of its
        // own, which the URL-password rule took for the user/password separator.
        let url = "geA://1_sha2%e20-=--[pass-=\u{13}-%\u{8}}@x";
        let url_once = r.text(url);
        assert!(
            url_once.text.contains("[REDACTED:secret_field]"),
            "{}",
            url_once.text
        );
        assert_eq!(r.text(&url_once.text).text, url_once.text);
        // A secret key's value that is a placeholder and punctuation is not redacted again
        // (the redact fuzz target's input, as bytes read lossily).
        let kv = String::from_utf8_lossy(&[
            95, 255, 255, 204, 204, 204, 204, 204, 204, 204, 204, 204, 204, 204, 204, 204, 204,
            204, 204, 204, 204, 204, 204, 204, 204, 204, 204, 204, 204, 204, 204, 204, 204, 204,
            204, 204, 204, 204, 204, 204, 204, 204, 204, 204, 204, 204, 204, 204, 204, 204, 204,
            204, 204, 204, 204, 204, 204, 204, 204, 204, 204, 204, 204, 204, 255, 255, 103, 103,
            65, 58, 47, 47, 0, 0, 45, 46, 112, 97, 115, 115, 45, 61, 45, 0, 0, 0, 58, 255, 255,
            255, 253, 125, 250, 48, 45, 61, 45, 45, 46, 112, 97, 115, 115, 45, 61, 45, 8, 53, 49,
            64, 33, 103, 214, 255,
        ])
        .into_owned();
        let kv_once = r.text(&kv);
        assert!(kv_once.text.contains("[REDACTED:"), "{}", kv_once.text);
        assert_eq!(r.text(&kv_once.text).text, kv_once.text);
        let strict = Redactor::new(&Policy {
            emails: true,
            ..Policy::default()
        })
        .unwrap();
        assert!(strict.text(&once.text).text.contains("[REDACTED:email]"));
        let err = Redactor::new(&Policy {
            disable: vec!["nope".into()],
            ..Policy::default()
        })
        .unwrap_err();
        assert_eq!(err.code(), "invalid_policy");
    }

    /// The windowed search finds every placeholder a search of the whole text finds that
    /// overlaps a finding, for findings at every position around placeholders of every name
    /// length (the longest placeholder starts furthest before a finding it overlaps).
    #[test]
    fn placeholder_windows_match_a_whole_text_search() {
        let text = format!(
            "ab [REDACTED:github_token] cd [REDACTED:{}]ef[REDACTED:x][REDACTED:{}] [REDACTED:",
            "x".repeat(48),
            "y".repeat(49)
        );
        let s = text.as_bytes();
        let all: Vec<[usize; 2]> = memchr::memmem::find_iter(s, OPEN)
            .filter_map(|p| placeholder_at(s, p))
            .collect();
        assert_eq!(all.len(), 3);
        let f = |start, end| Finding {
            start,
            end,
            rule: Rule::SecretField,
            wrap: None,
        };
        let check = |found: &[Finding]| {
            let windowed = placeholders(s, found);
            let want: Vec<[usize; 2]> = (all.iter().copied())
                .filter(|m| found.iter().any(|f| m[0] < f.end && f.start < m[1]))
                .collect();
            for m in &want {
                assert!(windowed.contains(m), "{m:?} missed for {found:?}");
            }
            assert!(windowed.iter().all(|m| all.contains(m)), "{found:?}");
            assert!(windowed.windows(2).all(|w| w[0][1] <= w[1][0]), "{found:?}");
        };
        let n = s.len();
        for a in 0..n {
            for b in a + 1..=n {
                check(&[f(a, b)]);
            }
        }
        for a in (0..n).step_by(3) {
            for b in (a + 1..n).step_by(5) {
                for c in (b..n).step_by(7) {
                    check(&[f(a, b), f(c, (c + 4).min(n))]);
                }
            }
        }
        // And the redaction of texts holding placeholders is unchanged by a second pass.
        let r = Redactor::default();
        for t in [
            format!("password=[REDACTED:{}]", "x".repeat(48)),
            "secret=-:[REDACTED:url_password]".to_string(),
            format!("key: [REDACTED:github_token]{GH} {GH}[REDACTED:a]"),
        ] {
            let once = r.text(&t).text;
            assert_eq!(r.text(&once).text, once, "{t:?}");
        }
    }
}
