//! Decoded views of a text: the same bytes with one layer of JSON string escaping or of
//! percent-encoding undone, and a map from every decoded byte back to its source offset.
//!
//! A secret inside an escaped JSON string (`\"password\":\"...\"`, `https:\/\/user:pw@`)
//! or a percent-encoded URL (`redirect=https%3A%2F%2F...%3Ftoken%3D...`) has the right
//! characters but the wrong neighbours: the scanner's boundaries see `\n` or `%3D` glued to
//! the token. Scanning the decoded view and mapping each finding back to the source range
//! redacts the secret in its original, encoded form.

/// Decoded bytes and, for each, the offset in the original text where its source began;
/// `map[bytes.len()]` is the end of the source. Offsets are `u32` (4 bytes per byte of
/// text, not 8); texts of 4 GiB and more are scanned without views.
pub(crate) struct View {
    pub bytes: Vec<u8>,
    pub map: Vec<u32>,
}

impl View {
    /// The original byte range of the decoded range `start..end`.
    pub fn source(&self, start: usize, end: usize) -> (usize, usize) {
        (self.map[start] as usize, self.map[end] as usize)
    }

    fn compose(self, outer: &View) -> View {
        View {
            map: self.map.iter().map(|&k| outer.map[k as usize]).collect(),
            bytes: self.bytes,
        }
    }
}

fn hex(b: u8) -> Option<u8> {
    match b {
        b'0'..=b'9' => Some(b - b'0'),
        b'a'..=b'f' => Some(b - b'a' + 10),
        b'A'..=b'F' => Some(b - b'A' + 10),
        _ => None,
    }
}

/// One layer of JSON string escapes undone (`\" \\ \/ \n \r \t \b \f \uXXXX`, surrogate
/// pairs joined). `None` when there is no backslash, so nothing to do.
pub(crate) fn json_unescape(s: &[u8]) -> Option<View> {
    memchr::memchr(b'\\', s)?;
    let mut bytes = Vec::with_capacity(s.len());
    let mut map = Vec::with_capacity(s.len() + 1);
    let mut i = 0;
    while i < s.len() {
        if s[i] != b'\\' || i + 1 >= s.len() {
            bytes.push(s[i]);
            map.push(i as u32);
            i += 1;
            continue;
        }
        let simple = match s[i + 1] {
            b'"' => Some(b'"'),
            b'\\' => Some(b'\\'),
            b'/' => Some(b'/'),
            b'n' => Some(b'\n'),
            b'r' => Some(b'\r'),
            b't' => Some(b'\t'),
            b'b' => Some(8),
            b'f' => Some(12),
            b'\'' => Some(b'\''),
            _ => None,
        };
        if let Some(c) = simple {
            bytes.push(c);
            map.push(i as u32);
            i += 2;
            continue;
        }
        if s[i + 1] == b'u' {
            if let Some((ch, used)) = unicode_escape(s, i) {
                let mut buf = [0u8; 4];
                for &b in ch.encode_utf8(&mut buf).as_bytes() {
                    bytes.push(b);
                    map.push(i as u32);
                }
                i += used;
                continue;
            }
        }
        bytes.push(s[i]);
        map.push(i as u32);
        i += 1;
    }
    map.push(s.len() as u32);
    Some(View { bytes, map })
}

fn u16_at(s: &[u8], i: usize) -> Option<u32> {
    if s.get(i) != Some(&b'\\') || s.get(i + 1) != Some(&b'u') {
        return None;
    }
    let h = s.get(i + 2..i + 6)?;
    h.iter()
        .try_fold(0u32, |acc, &b| Some(acc * 16 + u32::from(hex(b)?)))
}

fn unicode_escape(s: &[u8], i: usize) -> Option<(char, usize)> {
    let hi = u16_at(s, i)?;
    if (0xD800..0xDC00).contains(&hi) {
        let lo = u16_at(s, i + 6)?;
        if !(0xDC00..0xE000).contains(&lo) {
            return None;
        }
        let c = 0x10000 + ((hi - 0xD800) << 10) + (lo - 0xDC00);
        return char::from_u32(c).map(|c| (c, 12));
    }
    char::from_u32(hi).map(|c| (c, 6))
}

/// One layer of percent-encoding undone. `None` when there is no `%XX`.
pub(crate) fn percent_decode(s: &[u8]) -> Option<View> {
    // The `%`s found by memchr (a vector search), not every window of three bytes: most
    // texts have none, and this check runs on every text redacted.
    let has = memchr::memchr_iter(b'%', s)
        .any(|p| p + 2 < s.len() && hex(s[p + 1]).is_some() && hex(s[p + 2]).is_some());
    if !has {
        return None;
    }
    let mut bytes = Vec::with_capacity(s.len());
    let mut map = Vec::with_capacity(s.len() + 1);
    let mut i = 0;
    while i < s.len() {
        if s[i] == b'%' && i + 2 < s.len() {
            if let (Some(a), Some(b)) = (hex(s[i + 1]), hex(s[i + 2])) {
                bytes.push(a * 16 + b);
                map.push(i as u32);
                i += 3;
                continue;
            }
        }
        bytes.push(s[i]);
        map.push(i as u32);
        i += 1;
    }
    map.push(s.len() as u32);
    Some(View { bytes, map })
}

/// Every decoded view worth scanning besides the text itself: JSON-unescaped (twice, for
/// JSON in a JSON string), percent-decoded (twice, for double encoding), and both.
pub(crate) fn views(s: &[u8]) -> Vec<View> {
    let mut out: Vec<View> = Vec::new();
    // Most texts have neither a backslash nor a `%`: one search says so for both views.
    // From the end: the scan before it read the text front to back, so its end is still
    // in the core's cache (see `shape::simd::has_mark`).
    if memchr::memrchr2(b'\\', b'%', s).is_none() {
        return out;
    }
    if let Some(j1) = json_unescape(s) {
        if let Some(j2) = json_unescape(&j1.bytes) {
            let j2 = j2.compose(&j1);
            out.push(j2);
        }
        if let Some(jp) = percent_decode(&j1.bytes) {
            let jp = jp.compose(&j1);
            out.push(jp);
        }
        out.push(j1);
    }
    if let Some(p1) = percent_decode(s) {
        if let Some(p2) = percent_decode(&p1.bytes) {
            let p2 = p2.compose(&p1);
            out.push(p2);
        }
        out.push(p1);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unescape_maps_back() {
        let s = br#"a\"b\u00e9\n\ud83d\ude00c"#;
        let v = json_unescape(s).unwrap();
        assert_eq!(v.bytes, "a\"bé\n😀c".as_bytes());
        let c = v.bytes.len() - 1;
        assert_eq!(v.source(c, c + 1), (s.len() - 1, s.len()));
        assert_eq!(v.source(1, 2), (1, 3));
    }

    #[test]
    fn percent_maps_back() {
        let s = b"x%3Dy%2";
        let v = percent_decode(s).unwrap();
        assert_eq!(v.bytes, b"x=y%2");
        assert_eq!(v.source(1, 2), (1, 4));
        assert_eq!(v.source(2, 5), (4, 7));
        assert!(percent_decode(b"100%").is_none());
    }
}
