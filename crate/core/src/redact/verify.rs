//! Small verifiers: byte classes, the Luhn check, base64 decoding. A prefilter finds an
//! anchor (`ghp_`, `eyJ`, `://` ...); these decide whether what follows really is a secret.

/// `[A-Za-z0-9]`
#[inline]
pub(crate) fn is_alnum(b: u8) -> bool {
    b.is_ascii_alphanumeric()
}

/// `[A-Za-z0-9_]`
#[inline]
pub(crate) fn is_word(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

/// `[A-Za-z0-9_-]`: the characters of most API tokens and of base64url.
#[inline]
pub(crate) fn is_tok(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b == b'-'
}

/// `[A-Za-z0-9+/=]`: standard base64.
#[inline]
pub(crate) fn is_b64(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'+' || b == b'/' || b == b'='
}

/// Length of the run of bytes satisfying `f` starting at `i`.
#[inline]
pub(crate) fn run(s: &[u8], i: usize, f: impl Fn(u8) -> bool) -> usize {
    s.get(i..)
        .map_or(0, |t| t.iter().position(|&b| !f(b)).unwrap_or(t.len()))
}

/// True when `s[i..]` starts with `pat`, ASCII case-insensitively.
#[inline]
pub(crate) fn starts_with_ci(s: &[u8], i: usize, pat: &[u8]) -> bool {
    s.get(i..i + pat.len())
        .is_some_and(|t| t.eq_ignore_ascii_case(pat))
}

/// True when `s[i..]` starts with `pat`.
#[inline]
pub(crate) fn starts_with(s: &[u8], i: usize, pat: &[u8]) -> bool {
    s.get(i..i + pat.len()).is_some_and(|t| t == pat)
}

/// True when the byte before `i` cannot continue a token (start of text, or not
/// `[A-Za-z0-9_-]`): a token anchored at `i` starts there and is not the middle of a word.
#[inline]
pub(crate) fn left_boundary(s: &[u8], i: usize) -> bool {
    i == 0 || !is_tok(s[i - 1])
}

/// Upper, lower and digit all present: random keys have all three, words and slugs do not.
pub(crate) fn mixed(t: &[u8]) -> bool {
    t.iter().any(u8::is_ascii_uppercase)
        && t.iter().any(u8::is_ascii_lowercase)
        && t.iter().any(u8::is_ascii_digit)
}

/// The Luhn checksum over ASCII digits.
pub(crate) fn luhn(digits: &[u8]) -> bool {
    let mut sum = 0u32;
    for (i, &d) in digits.iter().rev().enumerate() {
        let mut v = u32::from(d - b'0');
        if i % 2 == 1 {
            v *= 2;
            if v > 9 {
                v -= 9;
            }
        }
        sum += v;
    }
    sum % 10 == 0
}

/// Whether a 13-19 digit number starts like a card of a major network (Visa, Mastercard,
/// Amex, Discover, JCB, Diners, UnionPay, Maestro), with a length that network issues.
pub(crate) fn card_prefix(d: &[u8]) -> bool {
    let n = d.len();
    let p = |k: usize| -> u32 {
        d[..k]
            .iter()
            .fold(0u32, |acc, &c| acc * 10 + u32::from(c - b'0'))
    };
    match d[0] {
        b'4' => matches!(n, 13 | 16 | 19),
        b'5' => {
            (51..=55).contains(&p(2)) && n == 16
                || (p(2) == 50 || (56..=58).contains(&p(2))) && (12..=19).contains(&n)
        }
        b'2' => (2221..=2720).contains(&p(4)) && n == 16,
        b'3' => {
            (p(2) == 34 || p(2) == 37) && n == 15
                || (3528..=3589).contains(&p(4)) && (16..=19).contains(&n)
                || (p(2) == 36 || p(2) == 38 || (300..=305).contains(&p(3)))
                    && (14..=19).contains(&n)
        }
        b'6' => {
            (p(4) == 6011 || p(2) == 65 || (644..=649).contains(&p(3))) && (16..=19).contains(&n)
                || p(2) == 62 && (16..=19).contains(&n)
                || (p(2) == 67 || p(2) == 63) && (12..=19).contains(&n)
        }
        _ => false,
    }
}

fn b64_value(b: u8, url: bool) -> Option<u32> {
    Some(match b {
        b'A'..=b'Z' => u32::from(b - b'A'),
        b'a'..=b'z' => u32::from(b - b'a') + 26,
        b'0'..=b'9' => u32::from(b - b'0') + 52,
        b'+' if !url => 62,
        b'/' if !url => 63,
        b'-' if url => 62,
        b'_' if url => 63,
        _ => return None,
    })
}

/// Decodes base64 (standard or url-safe alphabet; padding optional). `None` when a byte is
/// outside the alphabet or the length is impossible.
pub(crate) fn b64_decode(s: &[u8], url: bool) -> Option<Vec<u8>> {
    let body = s
        .iter()
        .rposition(|&b| b != b'=')
        .map_or(&s[..0], |p| &s[..=p]);
    if s.len() - body.len() > 2 || body.len() % 4 == 1 {
        return None;
    }
    let mut out = Vec::with_capacity(body.len() * 3 / 4);
    let mut acc = 0u32;
    let mut bits = 0u32;
    for &b in body {
        acc = (acc << 6) | b64_value(b, url)?;
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
            acc &= (1 << bits) - 1;
        }
    }
    Some(out)
}

/// Values that are not secrets whatever key they sit under: empty, booleans and null,
/// masks (`***`, `xxxx`), template references (`${VAR}`, `{{ x }}`, `<token>`), and our
/// own placeholders.
/// What follows the placeholders `v` starts with. The `]` is looked for among the next 64
/// bytes only (a rule name is short), so that values of `[REDACTED` without one, under many
/// keys, are not each read to their end.
fn after_placeholders(mut v: &[u8]) -> &[u8] {
    while v.starts_with(b"[REDACTED") {
        match v.iter().take(64).position(|&b| b == b']') {
            Some(close) => v = &v[close + 1..],
            None => return v,
        }
    }
    v
}

pub(crate) fn is_dummy_value(v: &[u8]) -> bool {
    let v = trim(v);
    if v.is_empty() {
        return true;
    }
    // Leading placeholders make a dummy unless a letter or digit follows them directly:
    // `[REDACTED:x]hunter22` is a password written after a placeholder (a hostile or careless
    // value) and is redacted, while `[REDACTED:a][REDACTED:b]'rest` is how a first pass can
    // leave a value (what follows a quote was not part of it), so it stays, and redacting
    // a redacted text changes nothing.
    if v.starts_with(b"[REDACTED") {
        return !after_placeholders(v)
            .first()
            .is_some_and(u8::is_ascii_alphanumeric);
    }
    if v.starts_with(b"${") || v.starts_with(b"{{") {
        return true;
    }
    // `$DB_PASSWORD`, `$password`: a shell or template variable. A mixed-case run with
    // digits after the `$` (`$xK9mQ2pL`) is a password that begins with `$`.
    if v.first() == Some(&b'$')
        && v.len() > 1
        && v[1..].iter().all(|&b| is_word(b))
        && !mixed(&v[1..])
    {
        return true;
    }
    if v.first() == Some(&b'<') && v.last() == Some(&b'>') {
        return true;
    }
    // Masks: `***`, `xxxx`, `...`. A lone `x` or `xx` is too short to be a mask of
    // anything, and may well be the value (`PGPASSWORD=x`).
    if v.iter().all(|&b| b == v[0])
        && (matches!(v[0], b'*' | b'.' | b'-' | b'#')
            || matches!(v[0], b'x' | b'X') && v.len() >= 3)
    {
        return true;
    }
    const WORDS: [&[u8]; 14] = [
        b"true",
        b"false",
        b"null",
        b"none",
        b"nil",
        b"undefined",
        b"yes",
        b"no",
        b"redacted",
        b"[redacted]",
        b"********",
        b"<redacted>",
        b"hidden",
        b"masked",
    ];
    WORDS.iter().any(|w| v.eq_ignore_ascii_case(w))
}

pub(crate) fn trim(v: &[u8]) -> &[u8] {
    let start = v
        .iter()
        .position(|b| !b.is_ascii_whitespace())
        .unwrap_or(v.len());
    let end = v
        .iter()
        .rposition(|b| !b.is_ascii_whitespace())
        .map_or(start, |p| p + 1);
    &v[start..end]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn luhn_and_prefixes() {
        assert!(luhn(b"4111111111111111"));
        assert!(!luhn(b"4111111111111112"));
        assert!(luhn(b"378282246310005"));
        assert!(card_prefix(b"4111111111111111"));
        assert!(card_prefix(b"378282246310005"));
        assert!(card_prefix(b"5555555555554444"));
        assert!(card_prefix(b"2223003122003222"));
        assert!(card_prefix(b"6011111111111117"));
        assert!(!card_prefix(b"1700000000000"));
        assert!(!card_prefix(b"9999999999999995"));
    }

    #[test]
    fn base64() {
        assert_eq!(b64_decode(b"dXNlcjpwYXNz", false).unwrap(), b"user:pass");
        assert_eq!(b64_decode(b"dXNlcjpwYXM=", false).unwrap(), b"user:pas");
        assert_eq!(
            b64_decode(b"eyJhbGciOiJIUzI1NiJ9", true).unwrap(),
            br#"{"alg":"HS256"}"#
        );
        assert!(b64_decode(b"a", false).is_none());
        assert!(b64_decode(b"ab!d", false).is_none());
    }

    #[test]
    fn dummies() {
        for v in [
            "",
            "  ",
            "null",
            "True",
            "***",
            "xxxx",
            "${TOKEN}",
            "{{ token }}",
            "<token>",
            "$API_KEY",
            "[REDACTED:secret_field]",
        ] {
            assert!(is_dummy_value(v.as_bytes()), "{v}");
        }
        for v in ["hunter22", "s3cr3t!", "abc123"] {
            assert!(!is_dummy_value(v.as_bytes()), "{v}");
        }
    }
}
