//! The scanner: one pass over bytes, stopping only where a rule can begin.
//!
//! A regex engine would cost tens of kilobytes of wasm and would try every rule at every
//! position. Secrets, though, announce themselves: every rule has a literal anchor (`sk-`,
//! `ghp_`, `AKIA`, `xox`, `AIza`, `eyJ`, `-----BEGIN`, `Bearer`, `://`, a `=` or `:` after a
//! key named like a secret, a digit that starts a number ...). [`verifier_of`] names the
//! verifier each byte starts, and [`gate_of`] the bytes before and after it that verifier
//! needs to do anything at all (`s` must be followed by `h` or `k` and start a word, a
//! digit must start a number ...). The scan stops only at positions whose three bytes pass
//! the gate (found sixteen positions at a time in wasm: see `gate.rs`, whose tables are
//! derived from these two functions, so they cannot drift apart), and its dispatch calls
//! [`verifier_of`]. Most anchor letters (`s`, `e`, `r` ...) are common in text; the pairs
//! and word starts they need are not. At a position that passes, a small hand-written
//! verifier reads the candidate and decides (charset, length, boundaries, mixed case, Luhn,
//! a base64-decoded JWT header ...).
//!
//! Boundaries are what keep precision: a token must not be the middle of a longer word, so
//! `task-sk-...`, hex digests, UUIDs and base64 blobs do not match by accident. Regions that
//! are known not to hold secrets (`data:...;base64,` payloads, `sha512-` integrity strings)
//! are skipped whole.

use super::gate;
use super::rules::{self, classify_key, KeyClass, Rule};
use super::verify::*;

/// One thing to replace: a byte range of the scanned text and the rule that found it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Finding {
    pub start: usize,
    pub end: usize,
    pub rule: Rule,
    /// When the secret was an unquoted scalar under a double-quoted key (`"pin": 1234`),
    /// the placeholder is wrapped in quotes so JSON stays JSON; the number is how many
    /// backslashes escape those quotes (`\"pin\": 1234` inside a JSON string).
    pub wrap: Option<u8>,
}

/// The compiled policy the scanner consults.
#[derive(Debug, Clone, Default)]
pub(crate) struct Cfg {
    pub enabled: [bool; Rule::ALL.len()],
    /// Extra secret key names, lowercase without separators.
    pub extra_keys: Vec<String>,
}

impl Cfg {
    #[inline]
    pub fn on(&self, rule: Rule) -> bool {
        self.enabled[rule as usize]
    }
}

/// The verifier an anchor byte starts ([`Verifier::Skip`]: not an anchor).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub(super) enum Verifier {
    /// No rule begins here: the scan steps over the byte.
    Skip,
    /// `sk-` (OpenAI, Anthropic), `sk_live_` (Stripe), `sha512-` integrity strings.
    AtS,
    /// `rk_live_`, `rk_test_`: Stripe restricted keys.
    StripeRestricted,
    /// `whsec_`: Stripe webhook signing secrets.
    StripeWebhook,
    /// `ghp_` ... `github_pat_`.
    Github,
    /// `AKIA` ... (AWS), `AIza` (Google).
    AtUpperA,
    /// `xoxb-`, `xapp-` ...
    Slack,
    /// `eyJ`: a JWT's header.
    Jwt,
    /// `-----BEGIN ...`, or a command-line flag (`--password=...`).
    Dash,
    /// `Bearer`, `Basic`, either case.
    AuthScheme,
    /// The `T3BlbkFJ` infix of OpenAI keys.
    OpenaiInfix,
    /// `hooks.slack.com/services/...`.
    SlackWebhook,
    /// `://` (a URL's password), else a key's `:`.
    Colon,
    /// A key's `=`.
    KeyValue,
    /// An e-mail address's `@`.
    Email,
    /// `data:...;base64,` payloads, skipped whole.
    DataUri,
    /// Card numbers, SSNs.
    Digits,
}

/// The verifier each byte starts: the one definition the scan's gate tables (`gate.rs`, with
/// [`gate_of`]) and its dispatch ([`at_anchor`]) both read. A rule whose first byte has no arm here is never
/// looked for; the tests check every rule is found from the anchor it names. The dispatch
/// matches on this function of the byte (not on a table entry), so the compiler sees the
/// byte behind each arm, as a match on the byte itself would let it.
#[inline(always)]
pub(super) const fn verifier_of(b: u8) -> Verifier {
    match b {
        b's' => Verifier::AtS,
        b'r' => Verifier::StripeRestricted,
        b'w' => Verifier::StripeWebhook,
        b'g' => Verifier::Github,
        b'A' => Verifier::AtUpperA,
        b'x' => Verifier::Slack,
        b'e' => Verifier::Jwt,
        b'-' => Verifier::Dash,
        b'B' | b'b' => Verifier::AuthScheme,
        b'T' => Verifier::OpenaiInfix,
        b'h' => Verifier::SlackWebhook,
        b':' => Verifier::Colon,
        b'=' => Verifier::KeyValue,
        b'@' => Verifier::Email,
        b'd' => Verifier::DataUri,
        b'0'..=b'9' => Verifier::Digits,
        _ => Verifier::Skip,
    }
}

/// What the byte before an anchor must not be for its verifier to look further.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(super) enum Before {
    /// Anything (and the start of the text).
    Any,
    /// A letter or digit: the verifier wants a word start (`Bearer`, `data:`).
    NotAlnum,
    /// A token character `[A-Za-z0-9_-]` (see `left_boundary`): a token starts here.
    NotToken,
    /// A token character or `.`, `/`, `+`: a number starts here (not `v1.2`, `a/1`).
    NotNumberPart,
}

impl Before {
    /// Whether `b` may precede the anchor.
    pub(super) const fn allows(self, b: u8) -> bool {
        match self {
            Before::Any => true,
            Before::NotAlnum => !b.is_ascii_alphanumeric(),
            Before::NotToken => !(b.is_ascii_alphanumeric() || b == b'_' || b == b'-'),
            Before::NotNumberPart => {
                !(b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-' | b'/' | b'+'))
            }
        }
    }
}

/// The bytes around an anchor that its verifier needs before it does anything: elsewhere
/// it returns at its first checks (no finding, no skip ahead), so the scan need not call
/// it. `next` lists the bytes that may follow the anchor (empty: any).
#[derive(Debug, Clone, Copy)]
pub(super) struct Gate {
    pub before: Before,
    pub next: &'static [u8],
}

/// Each verifier's [`Gate`], read off its first checks (the test
/// `a_verifier_outside_its_gate_does_nothing` tries every byte before and after every
/// sample's anchor). The start of the text passes every `before`.
pub(super) const fn gate_of(v: Verifier) -> Gate {
    const fn gate(before: Before, next: &'static [u8]) -> Gate {
        Gate { before, next }
    }
    match v {
        // Nothing starts here (the scan never asks).
        Verifier::Skip => gate(Before::Any, b""),
        // `left_boundary`, then `sha...-` or `sk-`, `sk_live_` ...
        Verifier::AtS => gate(Before::NotToken, b"hk"),
        Verifier::StripeRestricted => gate(Before::NotToken, b"k"),
        Verifier::StripeWebhook => gate(Before::NotToken, b"h"),
        // `ghp_` ..., `github_pat_`.
        Verifier::Github => gate(Before::NotToken, b"hi"),
        // `AIza` and the AWS prefixes (AKIA, ASIA, AGPA, AIDA, AROA, AIPA, ANPA, ANVA, ABIA,
        // ACCA).
        Verifier::AtUpperA => gate(Before::NotToken, b"BCGIKNRS"),
        Verifier::Slack => gate(Before::NotToken, b"ao"),
        Verifier::Jwt => gate(Before::NotToken, b"y"),
        // `-----BEGIN` (anywhere), `--password`, MySQL's `-p`.
        Verifier::Dash => gate(Before::Any, b"-p"),
        Verifier::AuthScheme => gate(Before::NotAlnum, b"aAeE"),
        Verifier::OpenaiInfix => gate(Before::Any, b"3"),
        Verifier::SlackWebhook => gate(Before::Any, b"o"),
        // A key before the separator is read backwards over spaces and quotes: always asked.
        Verifier::Colon | Verifier::KeyValue | Verifier::Email => gate(Before::Any, b""),
        Verifier::DataUri => gate(Before::NotAlnum, b"a"),
        Verifier::Digits => gate(Before::NotNumberPart, b""),
    }
}

/// Whether the verifier at `cur` can do anything with `prev` before it and `next` after it:
/// what the gate tables compute (the start of the text is a `prev` of `b' '`, the end a
/// `next` of 0), written out for the tests to check them against.
#[cfg(test)]
pub(super) const fn passes(prev: u8, cur: u8, next: u8) -> bool {
    let v = verifier_of(cur);
    if matches!(v, Verifier::Skip) {
        return false;
    }
    let g = gate_of(v);
    if !g.before.allows(prev) {
        return false;
    }
    if g.next.is_empty() {
        return true;
    }
    let mut k = 0;
    while k < g.next.len() {
        if g.next[k] == next {
            return true;
        }
        k += 1;
    }
    false
}

/// Appends every finding in `s` to `out` (unsorted, possibly overlapping).
///
/// Linear in `s`: every verifier reads a bounded neighbourhood of its anchor, or a run it
/// then skips, or (for values that run to the end of a line) asks [`Memo`], which answers
/// "where does this value end" once per stretch of text however many keys precede it.
pub(crate) fn scan(s: &[u8], cfg: &Cfg, out: &mut Vec<Finding>) {
    let first = out.len();
    let mut memo = Memo::default();
    scan_range(s, 0, s.len(), cfg, out, &mut memo, true);
    if cfg.on(Rule::AwsSecretKey) {
        let ids: Vec<(usize, usize)> = out[first..]
            .iter()
            .filter(|f| f.rule == Rule::AwsAccessKeyId)
            .map(|f| (f.start, f.end))
            .collect();
        for (a, b) in ids {
            aws_secret_near(s, a, b, out);
        }
    }
}

/// Runs the verifiers at every position from `from` to `until` that passes its gate;
/// returns where the scan stopped (past `until` when a finding runs on). The one place
/// [`at_anchor`] is inlined, so that each verifier keeps a single call site and is inlined
/// into this loop too.
fn scan_range(
    s: &[u8],
    from: usize,
    until: usize,
    cfg: &Cfg,
    out: &mut Vec<Finding>,
    memo: &mut Memo,
    data: bool,
) -> usize {
    let gate = gate::Search::new();
    let mut i = from;
    while i < until {
        i = next_stop(&gate, s, i, until);
        if i >= until {
            break;
        }
        let next = at_anchor(s, i, cfg, out, memo, data);
        i = match next {
            Some(n) if n > i => n,
            _ => i + 1,
        };
    }
    i
}

/// The next position from `i` (before `until`) whose gate passes, else `until`. The tests
/// can make it every anchor byte, as the scan was before the gates, to compare the two.
#[inline(always)]
fn next_stop(gate: &gate::Search, s: &[u8], i: usize, until: usize) -> usize {
    #[cfg(test)]
    if tests::EVERY_ANCHOR.with(std::cell::Cell::get) {
        return (i..until)
            .find(|&k| verifier_of(s[k]) != Verifier::Skip)
            .unwrap_or(until);
    }
    gate.next(s, i, until)
}

/// Runs the verifier the byte at `i` starts ([`verifier_of`]): the findings it makes, and
/// where to resume (`None`: at `i + 1`). `data` is false inside a `data:` payload's
/// first bytes, which are checked for tokens but must not start another payload skip.
/// Inlined: it runs at every anchor byte (`s`, `e`, `r` ... are common letters), where a
/// call would cost more than most verifiers' first check.
#[inline(always)]
fn at_anchor(
    s: &[u8],
    i: usize,
    cfg: &Cfg,
    out: &mut Vec<Finding>,
    memo: &mut Memo,
    data: bool,
) -> Option<usize> {
    match verifier_of(s[i]) {
        Verifier::Skip => None,
        Verifier::AtS => at_s(s, i, cfg, out),
        Verifier::StripeRestricted => stripe(s, i, cfg, out, &[b"rk_live_", b"rk_test_"]),
        Verifier::StripeWebhook => stripe(s, i, cfg, out, &[b"whsec_"]),
        Verifier::Github => github(s, i, cfg, out),
        Verifier::AtUpperA => at_upper_a(s, i, cfg, out),
        Verifier::Slack => slack(s, i, cfg, out),
        Verifier::Jwt => jwt(s, i, cfg, out),
        Verifier::Dash if starts_with(s, i, b"-----") => pem(s, i, cfg, out),
        Verifier::Dash => cli_flag(s, i, cfg, out),
        Verifier::AuthScheme => auth_scheme(s, i, cfg, out),
        Verifier::OpenaiInfix => openai_infix(s, i, cfg, out),
        Verifier::SlackWebhook => slack_webhook(s, i, cfg, out),
        Verifier::Colon if starts_with(s, i, b"://") => url_password(s, i, cfg, out),
        Verifier::Colon | Verifier::KeyValue => key_value(s, i, cfg, out, memo),
        Verifier::Email => email(s, i, cfg, out),
        Verifier::DataUri if data => data_uri(s, i, cfg, out, memo),
        Verifier::DataUri => None,
        Verifier::Digits => digits(s, i, cfg, out),
    }
}

/// Where unquoted values end, remembered per kind of stop set. A value's end is the first
/// stop byte at or after its start, a function of the position alone for a given stop set,
/// so one answer serves every key whose value starts inside the stretch it covers: a line
/// of `Cookie: Cookie: Cookie: ...` is read once, not once per key.
#[derive(Default)]
pub(crate) struct Memo {
    /// Per stop set: (first position asked, the stop found from there).
    ends: [Option<(usize, usize)>; 5],
}

fn push(out: &mut Vec<Finding>, start: usize, end: usize, rule: Rule) -> Option<usize> {
    out.push(Finding {
        start,
        end,
        rule,
        wrap: None,
    });
    Some(end)
}

/// `sk-` (OpenAI, Anthropic), `sk_live_` (Stripe), and integrity strings to skip.
fn at_s(s: &[u8], i: usize, cfg: &Cfg, out: &mut Vec<Finding>) -> Option<usize> {
    if !left_boundary(s, i) {
        return None;
    }
    for prefix in [&b"sha512-"[..], b"sha384-", b"sha256-", b"sha1-"] {
        if starts_with(s, i, prefix) {
            let n = run(s, i + prefix.len(), is_b64);
            return (n >= 20).then_some(i + prefix.len() + n);
        }
    }
    if starts_with(s, i, b"sk_live_") || starts_with(s, i, b"sk_test_") {
        return stripe(s, i, cfg, out, &[b"sk_live_", b"sk_test_"]);
    }
    if !starts_with(s, i, b"sk-") {
        return None;
    }
    if starts_with(s, i, b"sk-ant-") {
        let n = run(s, i + 7, is_tok);
        let body = &s[i + 7..i + 7 + n];
        if cfg.on(Rule::AnthropicKey) && n >= 32 && mixed(body) {
            return push(out, i, i + 7 + n, Rule::AnthropicKey);
        }
        return None;
    }
    let n = run(s, i + 3, is_tok);
    let body = &s[i + 3..i + 3 + n];
    if cfg.on(Rule::OpenaiKey) && n >= 20 && mixed(body) {
        return push(out, i, i + 3 + n, Rule::OpenaiKey);
    }
    None
}

fn stripe(
    s: &[u8],
    i: usize,
    cfg: &Cfg,
    out: &mut Vec<Finding>,
    prefixes: &[&[u8]],
) -> Option<usize> {
    if !cfg.on(Rule::StripeKey) || !left_boundary(s, i) {
        return None;
    }
    let p = prefixes.iter().find(|p| starts_with(s, i, p))?;
    let n = run(s, i + p.len(), is_alnum);
    let min = if p.starts_with(b"whsec") { 20 } else { 10 };
    if n >= min && !is_tok(*s.get(i + p.len() + n).unwrap_or(&b' ')) {
        return push(out, i, i + p.len() + n, Rule::StripeKey);
    }
    None
}

fn github(s: &[u8], i: usize, cfg: &Cfg, out: &mut Vec<Finding>) -> Option<usize> {
    if !cfg.on(Rule::GithubToken) || !left_boundary(s, i) {
        return None;
    }
    if starts_with(s, i, b"github_pat_") {
        let n = run(s, i + 11, is_word);
        return (n >= 50).then(|| push(out, i, i + 11 + n, Rule::GithubToken))?;
    }
    if s.len() >= i + 4
        && s[i + 1] == b'h'
        && matches!(s[i + 2], b'p' | b'o' | b'u' | b's' | b'r')
        && s[i + 3] == b'_'
    {
        let n = run(s, i + 4, is_alnum);
        if n >= 30 && !is_tok(*s.get(i + 4 + n).unwrap_or(&b' ')) {
            return push(out, i, i + 4 + n, Rule::GithubToken);
        }
    }
    None
}

const AWS_PREFIXES: [&[u8]; 10] = [
    b"AKIA", b"ASIA", b"AGPA", b"AIDA", b"AROA", b"AIPA", b"ANPA", b"ANVA", b"ABIA", b"ACCA",
];

/// `AIza` (Google) and the AWS access key id prefixes.
fn at_upper_a(s: &[u8], i: usize, cfg: &Cfg, out: &mut Vec<Finding>) -> Option<usize> {
    if !left_boundary(s, i) {
        return None;
    }
    if starts_with(s, i, b"AIza") {
        let n = run(s, i + 4, is_tok);
        if cfg.on(Rule::GoogleApiKey) && n == 35 {
            return push(out, i, i + 39, Rule::GoogleApiKey);
        }
        return None;
    }
    if cfg.on(Rule::AwsAccessKeyId) && AWS_PREFIXES.iter().any(|p| starts_with(s, i, p)) {
        let n = run(s, i + 4, |b| b.is_ascii_uppercase() || b.is_ascii_digit());
        let after = *s.get(i + 4 + n).unwrap_or(&b' ');
        if n == 16 && !is_alnum(after) {
            return push(out, i, i + 20, Rule::AwsAccessKeyId);
        }
    }
    None
}

/// A 40-character secret access key within 320 bytes of an access key id.
fn aws_secret_near(s: &[u8], a: usize, b: usize, out: &mut Vec<Finding>) {
    let lo = a.saturating_sub(320);
    let hi = (b + 320).min(s.len());
    let is_key = |c: u8| c.is_ascii_alphanumeric() || c == b'/' || c == b'+';
    let mut k = lo;
    while k < hi {
        if !is_key(s[k]) || (k > 0 && (is_key(s[k - 1]) || s[k - 1] == b'=')) {
            k += 1;
            continue;
        }
        let n = run(s, k, is_key);
        let t = &s[k..k + n];
        let after = *s.get(k + n).unwrap_or(&b' ');
        if n == 40
            && after != b'='
            && t.iter().any(u8::is_ascii_uppercase)
            && t.iter().any(u8::is_ascii_lowercase)
            && !t.iter().all(u8::is_ascii_hexdigit)
        {
            out.push(Finding {
                start: k,
                end: k + n,
                rule: Rule::AwsSecretKey,
                wrap: None,
            });
        }
        k += n.max(1);
    }
}

fn slack(s: &[u8], i: usize, cfg: &Cfg, out: &mut Vec<Finding>) -> Option<usize> {
    if !cfg.on(Rule::SlackToken) || !left_boundary(s, i) {
        return None;
    }
    let xox = starts_with(s, i, b"xox")
        && matches!(
            s.get(i + 3),
            Some(b'a' | b'b' | b'p' | b'o' | b's' | b'r' | b'e')
        )
        && s.get(i + 4) == Some(&b'-');
    if !xox && !starts_with(s, i, b"xapp-") {
        return None;
    }
    let body_at = i + 5;
    let n = run(s, body_at, |b| b.is_ascii_alphanumeric() || b == b'-');
    let body = &s[body_at..body_at + n];
    if n >= 10 && body.iter().any(u8::is_ascii_digit) {
        return push(out, i, body_at + n, Rule::SlackToken);
    }
    None
}

fn slack_webhook(s: &[u8], i: usize, cfg: &Cfg, out: &mut Vec<Finding>) -> Option<usize> {
    if !cfg.on(Rule::SlackWebhook) || !starts_with(s, i, b"hooks.slack.com/") {
        return None;
    }
    let rest = i + 16;
    let seg = [&b"services/"[..], b"workflows/", b"triggers/"]
        .into_iter()
        .find(|p| starts_with(s, rest, p))?;
    let at = rest + seg.len();
    let n = run(s, at, |b| is_tok(b) || b == b'/');
    (n >= 20).then(|| push(out, at, at + n, Rule::SlackWebhook))?
}

/// `eyJ...`: three base64url segments; the first decodes to a JSON object naming `alg`.
fn jwt(s: &[u8], i: usize, cfg: &Cfg, out: &mut Vec<Finding>) -> Option<usize> {
    if !cfg.on(Rule::Jwt) || !starts_with(s, i, b"eyJ") || !left_boundary(s, i) {
        return None;
    }
    let b64url = |b: u8| b.is_ascii_alphanumeric() || b == b'-' || b == b'_';
    let h = run(s, i, b64url);
    if h < 10 || s.get(i + h) != Some(&b'.') {
        return None;
    }
    let p_at = i + h + 1;
    let p = run(s, p_at, b64url);
    if p < 10 || s.get(p_at + p) != Some(&b'.') {
        return None;
    }
    let sig_at = p_at + p + 1;
    let sig = run(s, sig_at, b64url);
    let header = b64_decode(&s[i..i + h], true)?;
    let header = trim(&header);
    if header.first() != Some(&b'{') || !header.windows(5).any(|w| w == b"\"alg\"") {
        return None;
    }
    push(out, i, sig_at + sig, Rule::Jwt)
}

/// `-----BEGIN <...> PRIVATE KEY-----` through the matching END line (or the end of the
/// text, when the block was cut: a partial key is still a secret).
fn pem(s: &[u8], i: usize, cfg: &Cfg, out: &mut Vec<Finding>) -> Option<usize> {
    if !cfg.on(Rule::PrivateKey) || !starts_with(s, i, b"-----BEGIN ") {
        return None;
    }
    let label_at = i + 11;
    let label_len = s[label_at..]
        .iter()
        .take(64)
        .position(|&b| b == b'-' || b == b'\n')?;
    let label = &s[label_at..label_at + label_len];
    if !label.windows(11).any(|w| w == b"PRIVATE KEY") {
        return None;
    }
    let body = label_at + label_len;
    let end = match find(&s[body..], b"-----END ") {
        Some(e) => {
            let e = body + e + 9;
            match find(&s[e..], b"-----") {
                Some(f) if f <= 80 => e + f + 5,
                _ => e,
            }
        }
        None => s.len(),
    };
    push(out, i, end, Rule::PrivateKey)
}

pub(crate) fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    if needle.is_empty() || hay.len() < needle.len() {
        return None;
    }
    let first = needle[0];
    let mut k = 0;
    while k + needle.len() <= hay.len() {
        match hay[k..=hay.len() - needle.len()]
            .iter()
            .position(|&b| b == first)
        {
            None => return None,
            Some(p) => {
                k += p;
                if &hay[k..k + needle.len()] == needle {
                    return Some(k);
                }
                k += 1;
            }
        }
    }
    None
}

/// `Bearer <token>` and `Basic <base64 of user:password>`, any case.
fn auth_scheme(s: &[u8], i: usize, cfg: &Cfg, out: &mut Vec<Finding>) -> Option<usize> {
    if i > 0 && is_alnum(s[i - 1]) {
        return None;
    }
    let (rule, word) = if starts_with_ci(s, i, b"bearer") {
        (Rule::BearerToken, 6)
    } else if starts_with_ci(s, i, b"basic") {
        (Rule::BasicAuth, 5)
    } else {
        return None;
    };
    if !cfg.on(rule) {
        return None;
    }
    let sp = run(s, i + word, |b| b == b' ' || b == b'\t');
    if sp == 0 {
        return None;
    }
    let at = i + word + sp;
    match rule {
        Rule::BearerToken => {
            let n = run(s, at, |b| {
                b.is_ascii_alphanumeric() || b".-_~+/=".contains(&b)
            });
            let t = &s[at..at + n];
            let symbolic = t
                .iter()
                .any(|b| b.is_ascii_digit() || b".-_~+/=".contains(b));
            if n >= 8 && symbolic && !is_dummy_value(t) {
                return push(out, at, at + n, rule);
            }
        }
        _ => {
            let n = run(s, at, is_b64);
            if n >= 8 {
                let decoded = b64_decode(&s[at..at + n], false)?;
                let printable = decoded.iter().all(|b| (0x20..0x7f).contains(b));
                if printable && decoded.contains(&b':') {
                    return push(out, at, at + n, rule);
                }
            }
        }
    }
    None
}

/// The `T3BlbkFJ` infix of OpenAI keys ("OpenAI" in base64), wherever the key starts.
fn openai_infix(s: &[u8], i: usize, cfg: &Cfg, out: &mut Vec<Finding>) -> Option<usize> {
    if !cfg.on(Rule::OpenaiKey) || !starts_with(s, i, b"T3BlbkFJ") {
        return None;
    }
    let mut a = i;
    while a > 0 && is_tok(s[a - 1]) {
        a -= 1;
    }
    let e = i + run(s, i, is_tok);
    (e - a >= 40).then(|| push(out, a, e, Rule::OpenaiKey))?
}

/// `scheme://user:password@host`: the password, for any scheme.
fn url_password(s: &[u8], p: usize, cfg: &Cfg, out: &mut Vec<Finding>) -> Option<usize> {
    if !cfg.on(Rule::UrlPassword) {
        return None;
    }
    let mut a = p;
    while a > 0 && (s[a - 1].is_ascii_alphanumeric() || b"+.-".contains(&s[a - 1])) {
        a -= 1;
    }
    if a == p || !s[a].is_ascii_alphabetic() {
        return None;
    }
    let u = p + 3;
    let stop = u + s[u..]
        .iter()
        .position(|b| b"/?#\"'<>\\` \t\r\n".contains(b))
        .unwrap_or(s.len() - u);
    let at = u + s[u..stop].iter().rposition(|&b| b == b'@')?;
    // Userinfo that already holds a placeholder was redacted: its `:` may be the
    // placeholder's own (`user-[REDACTED:secret_field]}@host`), and redacting again would
    // not be idempotent (found by the redact fuzz target).
    if s[u..at].windows(10).any(|w| w == b"[REDACTED:") {
        return None;
    }
    let colon = u + s[u..at].iter().position(|&b| b == b':')?;
    let pw = &s[colon + 1..at];
    if pw.is_empty() || is_dummy_value(pw) {
        return None;
    }
    push(out, colon + 1, at, Rule::UrlPassword)?;
    // Scan on from the user name, not the password: a token used as the user name
    // (`https://sk-...:x@host`) is a secret too. Resuming after it missed it, and a second
    // pass found it once the password was a placeholder (the redact fuzz target, seed 2).
    Some(u)
}

/// Longest key name read backwards from a separator. A longer name is classified by its
/// last words (`..._password`), which is what names a secret.
const KEY_SCAN: usize = 256;

/// `name = value`, `name: value`, `"name": "value"`, `?name=value&`, `NAME=value` lines,
/// `Name: value` headers and `:name => "value"` hashes (Ruby, Perl, PHP), where the name
/// says the value is a secret. A JSON array or object under such a name has every value
/// redacted (`{"password": ["x"]}`, `{"password": {"value": "x"}}`).
fn key_value(
    s: &[u8],
    p: usize,
    cfg: &Cfg,
    out: &mut Vec<Finding>,
    memo: &mut Memo,
) -> Option<usize> {
    let sep = s[p];
    let arrow = sep == b'=' && s.get(p + 1) == Some(&b'>');
    if sep == b'='
        && !arrow
        && (s.get(p + 1) == Some(&b'=') || p > 0 && b"=!<>".contains(&s[p - 1]))
    {
        return None;
    }
    if sep == b':' && (s.get(p + 1) == Some(&b':') || p > 0 && s[p - 1] == b':') {
        return None;
    }
    // The key, reading backwards: spaces, an optional closing quote (maybe escaped), the name.
    let mut j = p;
    while j > 0 && matches!(s[j - 1], b' ' | b'\t') && p - j < KEY_SCAN {
        j -= 1;
    }
    let mut key_quote: Option<(u8, u8)> = None; // (quote byte, backslashes)
                                                // PHP's `$config['password'] => ...`: the key in brackets.
    if arrow && j > 1 && s[j - 1] == b']' && matches!(s[j - 2], b'"' | b'\'') {
        j -= 1;
    }
    if j > 0 && matches!(s[j - 1], b'"' | b'\'') {
        let q = s[j - 1];
        j -= 1;
        let mut bs = 0u8;
        while j > 0 && s[j - 1] == b'\\' && bs < 8 {
            j -= 1;
            bs += 1;
        }
        key_quote = Some((q, bs));
    }
    let kend = j;
    while j > 0 && (is_tok(s[j - 1]) || s[j - 1] == b'.') && kend - j < KEY_SCAN {
        j -= 1;
    }
    let kstart = j;
    if kend - kstart < 2 {
        return None;
    }
    let key = std::str::from_utf8(&s[kstart..kend]).ok()?;
    let class = classify_key(key, &cfg.extra_keys);
    let rule = match class {
        KeyClass::Plain => return None,
        KeyClass::Secret(rule) => rule,
        KeyClass::Authorization => Rule::Authorization,
    };
    if !(cfg.on(rule) || rule == Rule::Authorization && cfg.on(Rule::BearerToken)) {
        return None;
    }
    // What precedes the key: a query string, or the start of a line (env file, YAML, header).
    let mut t = kstart;
    if let Some((_, bs)) = key_quote {
        if t > 0 && matches!(s[t - 1], b'"' | b'\'') {
            t -= 1;
            t -= usize::from(bs).min(t);
        }
    }
    // Ruby's `:password => ...` symbol.
    if arrow && t > 0 && s[t - 1] == b':' {
        t -= 1;
    }
    let before = if t == 0 { b'\n' } else { s[t - 1] };
    let query = matches!(before, b'?' | b'&' | b';');
    let mut u = t;
    while u > 0 && matches!(s[u - 1], b' ' | b'\t') && t - u < KEY_SCAN {
        u -= 1;
    }
    let mut line_start = u == 0 || matches!(s[u - 1], b'\n' | b'\r');
    if !line_start && u >= 6 && &s[u - 6..u] == b"export" {
        line_start = u == 6 || matches!(s[u - 7], b'\n' | b'\r');
    }

    // The value.
    let mut v = p + if arrow { 2 } else { 1 };
    while v < s.len() && matches!(s[v], b' ' | b'\t') {
        v += 1;
    }
    let mut q = v;
    let mut bs = 0usize;
    while q < s.len() && s[q] == b'\\' && bs < 8 {
        q += 1;
        bs += 1;
    }
    let (vstart, vend, wrap) = if q < s.len() && matches!(s[q], b'"' | b'\'') {
        let qc = s[q];
        let start = q + 1;
        let mut k = start;
        let mut end = None;
        while k < s.len() {
            let c = s[k];
            if c == b'\n' || c == b'\r' {
                end = Some(k);
                break;
            }
            if c == qc {
                let mut back = 0;
                while k - back > start && s[k - back - 1] == b'\\' {
                    back += 1;
                }
                if back == bs {
                    end = Some(k - bs);
                    break;
                }
            }
            k += 1;
        }
        (start, end.unwrap_or(s.len()), None)
    } else if bs > 0 {
        return None;
    } else {
        if v >= s.len() {
            return None;
        }
        // A placeholder at the start of the value (`[REDACTED:x]hunter22`) is not a JSON
        // array: the value goes on after it, and is a dummy only if nothing follows.
        let after_mark = placeholder_end(s, v);
        if after_mark.is_none() && matches!(s[v], b'{' | b'[') {
            // Escaped JSON (`\"password\": [...]`) is read in the JSON-unescaped view.
            return match key_quote {
                Some((_, 0)) | None => container(s, v, rule, cfg, out),
                _ => None,
            };
        }
        let whole_line = matches!(class, KeyClass::Authorization)
            || rule == Rule::Cookie
            || (line_start && !query);
        let k = match after_mark {
            // Only letters and digits right after the placeholder extend the value: a space
            // or punctuation means the placeholder was the value (`password=[REDACTED:x] next`
            // even where the value runs to the line's end, `user:[REDACTED:url_password]@host`
            // as the URL rule writes it), so redacting a redacted text changes nothing.
            Some(a) if !s.get(a).is_some_and(u8::is_ascii_alphanumeric) => a,
            Some(a) => memo.value_end(s, a, whole_line, query, before),
            None => memo.value_end(s, v, whole_line, query, before),
        };
        let mut end = k;
        while end > v && matches!(s[end - 1], b' ' | b'\t') {
            end -= 1;
        }
        let wrap = match key_quote {
            Some((b'"', kbs)) => Some(kbs),
            _ => None,
        };
        (v, end, wrap)
    };
    let value = &s[vstart..vend];
    // A key that names a password or a token is explicit enough for a value of any length
    // (`PGPASSWORD=x`); weaker names (`pass`, `sig`, `auth`) need three characters.
    let min = if rules::strong_key(key) { 1 } else { 3 };
    if value.len() < min || is_dummy_value(value) {
        return None;
    }
    // In running prose (`the token: expires`), a bare lowercase word after a colon is a
    // word, not a credential; on its own line, in quotes or in a query it is a value.
    let prose = sep == b':'
        && !line_start
        && !query
        && s[v] != b'"'
        && s[v] != b'\\'
        && s[v] != b'\''
        && !matches!(class, KeyClass::Authorization)
        && rule != Rule::Cookie;
    if prose {
        let word = value
            .iter()
            .rposition(|b| !b".!?".contains(b))
            .map_or(&value[..0], |p| &value[..=p]);
        if word.iter().all(u8::is_ascii_lowercase) {
            return None;
        }
    }
    // An authorization value keeps its scheme word: `Bearer [REDACTED:bearer_token]`.
    let (mut start, mut rule) = (vstart, rule);
    if matches!(class, KeyClass::Authorization) {
        let w = run(s, vstart, |b| b.is_ascii_alphabetic()).min(vend - vstart);
        let sp = run(s, vstart + w, |b| b == b' ').min(vend - vstart - w);
        if w > 0 && sp > 0 && vstart + w + sp < vend {
            let scheme = &s[vstart..vstart + w];
            rule = if scheme.eq_ignore_ascii_case(b"bearer") {
                Rule::BearerToken
            } else if scheme.eq_ignore_ascii_case(b"basic") {
                Rule::BasicAuth
            } else {
                Rule::Authorization
            };
            start = vstart + w + sp;
        }
    }
    if !cfg.on(rule) || is_dummy_value(&s[start..vend]) {
        return None;
    }
    out.push(Finding {
        start,
        end: vend,
        rule,
        wrap: if start == vstart { wrap } else { None },
    });
    // Scan on inside the value: a token found there is more specific (`ghp_` under `token`).
    Some(start)
}

/// Where a placeholder (`[REDACTED]`, `[REDACTED:rule]`) that starts at `v` ends.
fn placeholder_end(s: &[u8], v: usize) -> Option<usize> {
    const OPEN: &[u8] = b"[REDACTED";
    if !s[v..].starts_with(OPEN) {
        return None;
    }
    // A rule name is short; the bound keeps a line of `[REDACTED` repeats linear.
    let close = s[v + OPEN.len()..]
        .iter()
        .take(64)
        .position(|&b| b == b']')?;
    Some(v + OPEN.len() + close + 1)
}

impl Memo {
    /// The end of an unquoted value starting at `v`: the first stop byte at or after `v`.
    fn value_end(
        &mut self,
        s: &[u8],
        v: usize,
        whole_line: bool,
        query: bool,
        before: u8,
    ) -> usize {
        let set = match (whole_line, before) {
            (true, b'"') => 0,
            (true, b'\'') => 1,
            (true, _) => 2,
            (false, _) if query => 3,
            (false, _) => 4,
        };
        if let Some((from, end)) = self.ends[set] {
            if from <= v && v <= end {
                return end;
            }
        }
        let mut k = v;
        while k < s.len() {
            let c = s[k];
            let stop = match c {
                b'\n' | b'\r' => true,
                b'\\' => matches!(s.get(k + 1), Some(b'n' | b'r' | b't' | b'"' | b'\'')),
                b'"' | b'\'' => !whole_line || before == c,
                _ if whole_line => false,
                b' ' | b'\t' | b'&' | b'<' | b'>' => true,
                b'#' => query,
                b',' | b';' | b')' | b'}' | b']' => !query,
                _ => false,
            };
            if stop {
                break;
            }
            k += 1;
        }
        self.ends[set] = Some((v, k));
        k
    }
}

/// Deepest nesting read inside a secret JSON value; deeper, it is left to the other rules.
/// The bound also keeps the scan linear: a byte is read by at most this many enclosing
/// secret keys' walks.
const CONTAINER_DEPTH: usize = 32;

/// A JSON array or object under a secret key, in text: every string and number value in it
/// is redacted (keys are kept, so the text stays JSON and readable). Only a well-formed,
/// closed value is taken; anything else (`password: [see docs]`) is left to the other rules.
/// Returns where the value ends, so the scan resumes after it.
fn container(s: &[u8], v: usize, rule: Rule, cfg: &Cfg, out: &mut Vec<Finding>) -> Option<usize> {
    if !cfg.on(rule) {
        return None;
    }
    // (is object, expecting a key) per open level.
    let mut stack: Vec<(bool, bool)> = Vec::new();
    let mut found: Vec<Finding> = Vec::new();
    let mut k = v;
    while k < s.len() {
        let c = s[k];
        match c {
            b' ' | b'\t' | b'\n' | b'\r' | b',' | b':' => {
                if c == b',' {
                    if let Some(top) = stack.last_mut() {
                        top.1 = top.0;
                    }
                } else if c == b':' {
                    if let Some(top) = stack.last_mut() {
                        top.1 = false;
                    }
                }
                k += 1;
            }
            b'[' | b'{' => {
                if stack.len() >= CONTAINER_DEPTH {
                    return None;
                }
                stack.push((c == b'{', c == b'{'));
                k += 1;
            }
            b']' | b'}' => {
                let (obj, _) = stack.pop()?;
                if obj != (c == b'}') {
                    return None;
                }
                k += 1;
                if stack.is_empty() {
                    out.extend(found);
                    return Some(k);
                }
            }
            b'"' => {
                let start = k + 1;
                let mut e = start;
                loop {
                    match s.get(e) {
                        None | Some(b'\n' | b'\r') => return None,
                        Some(b'\\') => e += 2,
                        Some(b'"') => break,
                        Some(_) => e += 1,
                    }
                }
                let is_key = stack.last().is_some_and(|t| t.1);
                if !is_key && e > start && !is_dummy_value(&s[start..e]) {
                    found.push(Finding {
                        start,
                        end: e,
                        rule,
                        wrap: None,
                    });
                }
                k = e + 1;
            }
            _ => {
                // A bare scalar: a number (redacted, quoted), or true / false / null.
                let n = run(s, k, |b| b.is_ascii_alphanumeric() || b"+-.".contains(&b));
                let word = &s[k..k + n];
                if n == 0 || stack.is_empty() {
                    return None;
                }
                if word[0].is_ascii_digit() || word[0] == b'-' {
                    found.push(Finding {
                        start: k,
                        end: k + n,
                        rule,
                        wrap: Some(0),
                    });
                } else if !matches!(word, b"true" | b"false" | b"null") {
                    return None;
                }
                k += n;
            }
        }
    }
    None
}

/// `--password VALUE` (a secret-named flag and its value, after a space; the `=` form is a
/// key and value) and MySQL's `-pVALUE` (`mysql -uroot -pS3cret db`).
fn cli_flag(s: &[u8], i: usize, cfg: &Cfg, out: &mut Vec<Finding>) -> Option<usize> {
    if !cfg.on(Rule::SecretField) || (i > 0 && !matches!(s[i - 1], b' ' | b'\t' | b'\'' | b'"')) {
        return None;
    }
    if starts_with(s, i, b"--") {
        let n = run(s, i + 2, |b| {
            b.is_ascii_alphanumeric() || b == b'-' || b == b'_'
        });
        if !(2..=64).contains(&n) {
            return None;
        }
        let name = std::str::from_utf8(&s[i + 2..i + 2 + n]).ok()?;
        if !matches!(classify_key(name, &cfg.extra_keys), KeyClass::Secret(_)) {
            return None;
        }
        let sp = run(s, i + 2 + n, |b| b == b' ' || b == b'\t');
        if sp == 0 {
            return None;
        }
        return flag_value(s, i + 2 + n + sp, out);
    }
    // `-p` glued to its value, on a line that runs a MySQL or MariaDB client (elsewhere `-p`
    // is a port, a parent directory, a preserve flag ...).
    if s.get(i + 1) != Some(&b'p') {
        return None;
    }
    let at = i + 2;
    match s.get(at) {
        None | Some(b' ' | b'\t' | b'\n' | b'\r' | b'-') => return None,
        _ => {}
    }
    let lo = i.saturating_sub(512);
    let line = &s[lo..i];
    let line = match line.iter().rposition(|&b| b == b'\n') {
        Some(nl) => &line[nl + 1..],
        None => line,
    };
    if find(line, b"mysql").is_none() && find(line, b"mariadb").is_none() {
        return None;
    }
    flag_value(s, at, out)
}

/// A command-line value at `at`: quoted, or up to the next blank.
fn flag_value(s: &[u8], at: usize, out: &mut Vec<Finding>) -> Option<usize> {
    let (start, end) = match s.get(at) {
        Some(&q @ (b'"' | b'\'')) => {
            let e = s[at + 1..]
                .iter()
                .position(|&b| b == q || b == b'\n')
                .map_or(s.len(), |e| at + 1 + e);
            (at + 1, e)
        }
        Some(b'-') | None => return None,
        Some(_) => {
            let n = run(s, at, |b| !b.is_ascii_whitespace());
            (at, at + n)
        }
    };
    if start >= end || is_dummy_value(&s[start..end]) {
        return None;
    }
    push(out, start, end, Rule::SecretField)?;
    Some(start)
}

/// `local@domain.tld` (policy: `emails`).
fn email(s: &[u8], p: usize, cfg: &Cfg, out: &mut Vec<Finding>) -> Option<usize> {
    if !cfg.on(Rule::Email) {
        return None;
    }
    let local_ch = |b: u8| b.is_ascii_alphanumeric() || b"._%+-".contains(&b);
    let mut a = p;
    while a > 0 && local_ch(s[a - 1]) && p - a < 64 {
        a -= 1;
    }
    if a == p || s[a] == b'.' || (a > 0 && matches!(s[a - 1], b':' | b'/')) {
        return None;
    }
    if &s[a..p] == b"git" {
        return None;
    }
    let mut e = p + 1;
    let mut labels = 0;
    let mut last_label = (0, 0);
    loop {
        let n = run(s, e, |b| b.is_ascii_alphanumeric() || b == b'-');
        if n == 0 {
            break;
        }
        labels += 1;
        last_label = (e, e + n);
        e += n;
        if s.get(e) == Some(&b'.') && s.get(e + 1).is_some_and(|b| b.is_ascii_alphanumeric()) {
            e += 1;
        } else {
            break;
        }
    }
    let tld = &s[last_label.0..last_label.1];
    if labels < 2 || tld.len() < 2 || !tld.iter().all(u8::is_ascii_alphabetic) {
        return None;
    }
    push(out, a, e, Rule::Email)
}

/// `data:<mime>;base64,<payload>`: the payload (image data and the like) is skipped whole,
/// after its first bytes are checked for tokens (`data:text/plain;base64,ghp_...` is a
/// token that happens to follow the comma, not image data). A payload that runs into a
/// token character (`_`, `-`) is not base64 and is not skipped.
fn data_uri(
    s: &[u8],
    i: usize,
    cfg: &Cfg,
    out: &mut Vec<Finding>,
    memo: &mut Memo,
) -> Option<usize> {
    if !starts_with(s, i, b"data:") || (i > 0 && is_alnum(s[i - 1])) {
        return None;
    }
    let head = &s[i + 5..(i + 5 + 120).min(s.len())];
    let m = find(head, b";base64,")?;
    if !head[..m]
        .iter()
        .all(|&b| b.is_ascii_alphanumeric() || b"/+.-;=".contains(&b))
    {
        return None;
    }
    let at = i + 5 + m + 8;
    let end = at + run(s, at, is_b64);
    if s.get(end).is_some_and(|&b| b == b'_' || b == b'-') {
        return Some(at);
    }
    let stopped = scan_range(s, at, end.min(at + 128), cfg, out, memo, false);
    Some(end.max(stopped))
}

/// Card numbers (13-19 digits, optionally grouped by spaces or dashes, Luhn, network
/// prefix) and US SSNs (`123-45-6789`, policy).
fn digits(s: &[u8], i: usize, cfg: &Cfg, out: &mut Vec<Finding>) -> Option<usize> {
    if i > 0 && (is_alnum(s[i - 1]) || b"._-/+".contains(&s[i - 1])) {
        return None;
    }
    let first = run(s, i, |b| b.is_ascii_digit());
    // SSN: exactly ddd-dd-dddd.
    if cfg.on(Rule::UsSsn) && first == 3 && s.get(i + 3) == Some(&b'-') {
        let g = run(s, i + 4, |b| b.is_ascii_digit());
        if g == 2 && s.get(i + 6) == Some(&b'-') {
            let n = run(s, i + 7, |b| b.is_ascii_digit());
            let after = s.get(i + 11).copied().unwrap_or(b' ');
            if n == 4 && !is_alnum(after) && after != b'-' {
                let area = &s[i..i + 3];
                let ok = area != b"000"
                    && area != b"666"
                    && area[0] != b'9'
                    && &s[i + 4..i + 6] != b"00"
                    && &s[i + 7..i + 11] != b"0000";
                if ok {
                    return push(out, i, i + 11, Rule::UsSsn);
                }
            }
        }
    }
    if !cfg.on(Rule::CardNumber) {
        return Some(i + first);
    }
    if first > 19 {
        return Some(i + first);
    }
    let mut groups = [0usize; 6];
    groups[0] = first;
    let mut ngroups = 1;
    let mut sep = None;
    let mut e = i + first;
    while ngroups < 6 {
        let c = match s.get(e) {
            Some(&c @ (b' ' | b'-')) => c,
            _ => break,
        };
        if sep.is_some_and(|x| x != c) {
            break;
        }
        let n = run(s, e + 1, |b| b.is_ascii_digit());
        if n == 0 {
            break;
        }
        sep = Some(c);
        groups[ngroups] = n;
        ngroups += 1;
        e += 1 + n;
    }
    let groups = &groups[..ngroups];
    // Trim trailing groups that cannot belong to a card (a date after a number ...).
    let shapes: [&[usize]; 6] = [
        &[4, 4, 4, 4],
        &[4, 4, 4, 4, 3],
        &[4, 6, 5],
        &[4, 6, 4],
        &[4, 4, 4, 4, 2],
        &[4, 4, 4, 4, 1],
    ];
    let (len, end) = if groups.len() == 1 {
        (first, i + first)
    } else {
        let shape = shapes
            .iter()
            .filter(|sh| groups.starts_with(sh))
            .max_by_key(|sh| sh.len())?;
        let digits: usize = shape.iter().sum();
        (digits, i + digits + shape.len() - 1)
    };
    let after = s.get(end).copied().unwrap_or(b' ');
    let after2 = s.get(end + 1).copied().unwrap_or(b' ');
    if !(13..=19).contains(&len)
        || is_alnum(after)
        || (b".,-".contains(&after) && after2.is_ascii_digit())
    {
        return Some(i + first);
    }
    let mut buf = [0u8; 19];
    let mut nd = 0;
    for &b in &s[i..end] {
        if b.is_ascii_digit() && nd < buf.len() {
            buf[nd] = b;
            nd += 1;
        }
    }
    let ds = &buf[..nd];
    if luhn(ds) && card_prefix(ds) && !ds.iter().all(|&d| d == ds[0]) {
        return push(out, i, end, Rule::CardNumber);
    }
    Some(i + first)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::Cell;

    thread_local! {
        /// Run a verifier at every anchor byte (see `next_stop`).
        pub(super) static EVERY_ANCHOR: Cell<bool> = const { Cell::new(false) };
    }

    /// The findings of `s` with the gates, and without them.
    fn gated_and_not(s: &[u8], cfg: &Cfg) -> (Vec<Finding>, Vec<Finding>) {
        let mut gated = Vec::new();
        scan(s, cfg, &mut gated);
        EVERY_ANCHOR.with(|e| e.set(true));
        let mut every = Vec::new();
        scan(s, cfg, &mut every);
        EVERY_ANCHOR.with(|e| e.set(false));
        (gated, every)
    }

    /// A verifier does nothing (no finding, no skip ahead) where its gate is shut: every
    /// byte is tried before and after each position of each sample where it does something.
    #[test]
    fn a_verifier_outside_its_gate_does_nothing() {
        let cfg = cfg_all();
        let effect = |s: &[u8], i: usize| {
            let mut out = Vec::new();
            let next = at_anchor(s, i, &cfg, &mut out, &mut Memo::default(), true);
            (out, next.filter(|&n| n > i + 1))
        };
        let mut tried = 0;
        for (_, text, _) in anchored_samples() {
            let text = text.as_bytes();
            for i in 0..text.len() {
                if effect(text, i) == (vec![], None) {
                    continue;
                }
                for (side, at) in [(0, i.wrapping_sub(1)), (1, i + 1)] {
                    if at >= text.len() {
                        continue;
                    }
                    for b in 0..=255u8 {
                        let mut t = text.to_vec();
                        t[at] = b;
                        let prev = if i == 0 { b' ' } else { t[i - 1] };
                        let next = t.get(i + 1).copied().unwrap_or(0);
                        if !passes(prev, t[i], next) {
                            tried += 1;
                            assert_eq!(
                                effect(&t, i),
                                (vec![], None),
                                "{} at {i} (byte {} set to {b})",
                                String::from_utf8_lossy(&t),
                                ["before", "after"][side]
                            );
                        }
                    }
                }
            }
        }
        assert!(tried > 5_000, "{tried}");
    }

    /// Random texts built from pieces of secrets, keys, numbers and separators: the scan
    /// finds the same with its gates as with a verifier at every anchor byte.
    #[test]
    #[cfg_attr(target_arch = "wasm32", wasm_bindgen_test::wasm_bindgen_test)]
    fn gates_change_no_finding() {
        const PIECES: &[&str] = &[
            "sk-",
            "sk-ant-",
            "sk_live_",
            "rk_test_",
            "whsec_",
            "ghp_",
            "github_pat_",
            "AKIA",
            "AIza",
            "xoxb-",
            "xapp-",
            "eyJ",
            "-----BEGIN PRIVATE KEY-----\n",
            "-----END ",
            "--password ",
            " -p",
            "mysql ",
            "Bearer ",
            "basic ",
            "T3BlbkFJ",
            "hooks.slack.com/",
            "services/",
            "://",
            "user:",
            "pw@",
            "password=",
            "token: ",
            "\"secret\": \"",
            "'key' => ",
            "data:image/png;base64,",
            "sha512-",
            "4111 1111 1111 1111",
            "123-45-6789",
            "378652206918429",
            "bob@corp.example.com",
            "@",
            ":",
            "=",
            "-",
            "_",
            ".",
            "/",
            "+",
            " ",
            "  ",
            "\n",
            "\t",
            "\"",
            "'",
            "\\",
            "%3D",
            "é",
            "[REDACTED:x]",
            "{",
            "}",
            "[",
            "]",
            "0",
            "7",
            "v1.2.3",
            "export ",
            "Cookie: ",
            "Authorization: ",
            "aB3dE5fG7hI9jK1lM3nO5pQ7rS9tU1vW3xY5",
            "K4XuegoqSLGG",
            "abcdefghij",
            "ZZZZ",
            "Compiling crate-12 v0.3.1 (/work/src/crate-12)",
            "sh",
            "ey",
            "gi",
            "xo",
            "do",
        ];
        let mut cfg = cfg_all();
        let mut seed = 0x9E37_79B9_7F4A_7C15u64;
        let mut rand = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        let rounds = if cfg!(target_arch = "wasm32") {
            400
        } else {
            4000
        };
        for round in 0..rounds {
            let mut text = String::new();
            for _ in 0..(rand() % 60) {
                text.push_str(PIECES[(rand() % PIECES.len() as u64) as usize]);
            }
            cfg.enabled[Rule::CardNumber as usize] = round % 3 != 0;
            let (gated, every) = gated_and_not(text.as_bytes(), &cfg);
            assert_eq!(gated, every, "{text:?}");
        }
        // And the hand-picked samples, with every rule found.
        for (_, text, _) in anchored_samples() {
            let (gated, every) = gated_and_not(text.as_bytes(), &cfg_all());
            assert_eq!(gated, every, "{text:?}");
        }
    }

    fn cfg_all() -> Cfg {
        Cfg {
            enabled: [true; Rule::ALL.len()],
            extra_keys: vec![],
        }
    }

    fn found(text: &str) -> Vec<(String, Rule)> {
        let mut out = Vec::new();
        scan(text.as_bytes(), &cfg_all(), &mut out);
        out.iter()
            .map(|f| (text[f.start..f.end].to_string(), f.rule))
            .collect()
    }

    #[test]
    fn finds_each_shape() {
        let gh = "ghp_aB3dE5fG7hI9jK1lM3nO5pQ7rS9tU1vW3xY5";
        assert_eq!(
            found(&format!("token {gh} ok")),
            vec![(gh.to_string(), Rule::GithubToken)]
        );
        assert_eq!(
            found("postgres://admin:hunter22@db:5432/app"),
            vec![("hunter22".into(), Rule::UrlPassword)]
        );
        assert_eq!(
            found("curl -H 'Authorization: Bearer abc.DEF-123_xyz'"),
            vec![("abc.DEF-123_xyz".into(), Rule::BearerToken)]
        );
        assert_eq!(
            found(r#"{"password": 123456, "ok": true}"#)[0],
            ("123456".into(), Rule::SecretField)
        );
        assert_eq!(
            found("card 4111 1111 1111 1111 exp"),
            vec![("4111 1111 1111 1111".into(), Rule::CardNumber)]
        );
    }

    #[test]
    fn leaves_lookalikes() {
        for text in [
            "commit 3f786850e387550fdab836ed7e6dc881de23001b",
            "id 123e4567-e89b-12d3-a456-426614174000",
            "sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
            "integrity sha512-z4PhNX7vuL3xVChQ1m2AB9Yg5AULVxXcg/SpIdNs6c5H0NE8XYXysP+DGNKHfuwvY7kxvUdBeoGlODJ6+SfaPg==",
            "use scikit-learn and sk-learn-tutorial-for-beginners",
            "timestamp 1700000000000 ms",
            "x == y and a != b",
            "max_tokens: 4096",
            "see https://example.com:8080/path?q=1",
            "Bearer tokens are described in RFC 6750",
        ] {
            assert_eq!(found(text), vec![], "{text}");
        }
    }

    /// One sample per rule (and per verifier), with the byte its verifier starts at.
    fn anchored_samples() -> Vec<(u8, String, Rule)> {
        let pem = "-----BEGIN PRIVATE KEY-----\nzk8xRlo0T4mzmj8oPMWqqm6eskb7eAG+7gj/XMZyC/3/a0Gt/9PRKqxiB4fvGclM\nQFBlal8aUTgDDrX3HnPl9hT9Kt0kDI3DdtyEean6+vYV30RCMtDJD8DS2MZFdJcw\n-----END PRIVATE KEY-----\n";
        let jwt = "eyJhbGciOiAiSFMyNTYiLCAidHlwIjogIkpXVCJ9.eyJzdWIiOiAiMTIzNDU2Nzg5MCIsICJuYW1lIjogIkFkYSIsICJpYXQiOiAxNTE2MjM5MDIyfQ.4_PByMNNjl7_EzyEcLLuJhfTmCQz3tbXbBomexJfxtk";
        let mut samples: Vec<(u8, String, Rule)> = [
            (b's', "key sk-wq9JD4OHkuhf4GwOAS2dEXdIoHzuDBGC7fFGKws449FMaSd6 ok", Rule::OpenaiKey),
            (b's', "key sk-ant-api03-0cL6Up9ZXDuJBrnUdBRAzw75JGfZkDVYAS8Z2gdN82bUUggaRslNrDKK-JsdrqI_0EtVwSLam_1FR9tDliHMRzBDJOikgAA ok", Rule::AnthropicKey),
            (b's', "key sk_live_b5JPleIQnqFySKGJOAQ5Oi8T ok", Rule::StripeKey),
            (b'r', "key rk_test_WyxVIFZwN8CTtVEabRug0kgKycqVNlWOBHkkXtrvYzGaDtrhp0cvAYIGPEMKWg00FtaUNWj1eLlDzgeD6V8F457v7cAfofa9yHd ok", Rule::StripeKey),
            (b'w', "signing secret whsec_1XcPzJ7crf4772SCmpQsrF6NfUPGtvT7 ok", Rule::StripeKey),
            (b'g', "remote: ghp_P1Ff28ktDf3UAH50WTCYy86p2mPSZ9Pg5ng1 ok", Rule::GithubToken),
            (b'A', "key AKIAZ4XKNURL3BMWR3W2 failed", Rule::AwsAccessKeyId),
            (b'A', "deploy,AKIASSSBE3S25AUDFWLF,MfDj2D0uwGfHlJEPvFj0AvNAV978R1AVz+JZR3l8\n", Rule::AwsSecretKey),
            (b'A', "maps AIzacgWvXFdA5NslndkokGIkRRiw1Pzff8ahHKm ok", Rule::GoogleApiKey),
            (b'x', "bot xoxb-552308117689-5475555262893-of8xVFotrnG8aYRlW5T7aSLD ok", Rule::SlackToken),
            (b'h', "post https://hooks.slack.com/services/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 ok", Rule::SlackWebhook),
            (b'e', &format!("session {jwt} ok"), Rule::Jwt),
            (b'-', pem, Rule::PrivateKey),
            (b'-', "mysql --password K4XuegoqSLGG db", Rule::SecretField),
            (b'B', "sent Bearer hxKM7SYmgDGesQfsWH8OTZaMC-tA/BRSlUk3MC4Q ok", Rule::BearerToken),
            (b'b', "expected basic YWRtaW46dFBuclR3cmNMM2l2", Rule::BasicAuth),
            (b'T', "legacy qv0KzCQauMI2MOp0Xmi4T3BlbkFJWwfs1BGbii9UWA3oBpzz ok", Rule::OpenaiKey),
            (b':', "postgres://app:HFgbAiSfHUQ0y4@db.internal:5432/app", Rule::UrlPassword),
            (b':', "Authorization: token b7c2621c5b7b049c1cdcb20cf312c79962b6d7a9\n", Rule::Authorization),
            (b':', "Cookie: sessionid=KHWz3O4Wm4PcDmq23pzf6pezPOh7SyGT\n", Rule::Cookie),
            (b':', "client_secret: lf7TrtMM6P3gQcPeg3y1\n", Rule::SecretField),
            (b'=', "DB_PASSWORD=K4XuegoqSLGG\n", Rule::SecretField),
            (b'@', "contact bob@corp.example.com", Rule::Email),
            (b'3', "card 378652206918429 ok", Rule::CardNumber),
            (b'4', "card 4163615238532055 ok", Rule::CardNumber),
            (b'5', "card 5161799584540471 ok", Rule::CardNumber),
            (b'6', "card 6011111111111117 ok", Rule::CardNumber),
        ]
        .into_iter()
        .map(|(b, t, r)| (b, t.to_string(), r))
        .collect();
        for d in b'0'..=b'8' {
            let ssn = format!("ssn {}23-45-6789 ok", d as char);
            samples.push((d, ssn, Rule::UsSsn));
        }
        samples
    }

    #[test]
    fn every_rule_is_found_from_an_anchor_in_the_table() {
        let samples = anchored_samples();
        for (anchor, text, rule) in &samples {
            assert!(
                verifier_of(*anchor) != Verifier::Skip,
                "{rule:?}: {:?} is not an anchor byte",
                *anchor as char
            );
            assert!(text.as_bytes().contains(anchor), "{text}");
            assert!(
                found(text).iter().any(|(_, r)| r == rule),
                "{rule:?} not found in {text:?}: {:?}",
                found(text)
            );
        }
        for rule in Rule::ALL {
            assert!(
                samples.iter().any(|(_, _, r)| *r == rule),
                "{rule:?} has no anchored sample"
            );
        }
        // Every verifier a byte starts is reached from some sample's anchor byte (the data
        // URI skip finds nothing: the test below).
        for b in 0..=255u8 {
            let verifier = verifier_of(b);
            let reached = matches!(verifier, Verifier::Skip | Verifier::DataUri)
                || samples.iter().any(|(a, _, _)| verifier_of(*a) == verifier);
            assert!(reached, "{verifier:?} has no sample");
        }
    }

    #[test]
    fn a_data_uri_payload_is_skipped_from_its_anchor() {
        assert!(passes(b' ', b'd', b'a'));
        assert_eq!(verifier_of(b'd'), Verifier::DataUri);
        // Past the payload's first 128 bytes, a key id lookalike is image data.
        let text = format!(
            "src=\"data:image/png;base64,{}/AKIAQ3EGRWXYZ7MNB2LD/{}\" ok",
            "A".repeat(200),
            "A".repeat(20)
        );
        assert_eq!(found(&text), vec![]);
        let bare = text.replace("data:", "dat:");
        assert_eq!(
            found(&bare).len(),
            1,
            "the lookalike is a key id outside a payload"
        );
    }
}
