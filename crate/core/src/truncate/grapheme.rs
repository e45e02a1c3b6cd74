//! Where a cut may fall inside a line: never inside a UTF-8 sequence, and never inside the
//! grapheme clusters a reader would see broken.
//!
//! A full UAX #29 segmenter needs Unicode property tables (tens of kilobytes of wasm). Cuts
//! do not need full segmentation: they need to *avoid* bad places, and moving a cut a few
//! characters towards the kept side's edge is always safe. So this module answers one
//! question conservatively, "may a cut fall between these two characters?", and says no for:
//!
//! - `\r` followed by `\n`;
//! - anything followed by a combining mark, variation selector, emoji modifier, tag
//!   character, ZWJ/ZWNJ, Hangul medial/final jamo, or a character of the Indic and other
//!   complex-script blocks whose marks we do not list one by one (cuts in those scripts land
//!   before spaces and punctuation instead);
//! - a ZWJ followed by anything (emoji ZWJ sequences);
//! - the middle of a regional-indicator pair (flags), by counting the run's parity;
//! - a Hangul leading jamo followed by another Hangul character.
//!
//! Everything else is a boundary. The start and the end of the text always are.

/// Whether a cut at byte `i` of `s` keeps every character and recognized cluster whole.
pub(crate) fn is_boundary(s: &str, i: usize) -> bool {
    if i == 0 || i >= s.len() {
        return i == 0 || i == s.len();
    }
    if !s.is_char_boundary(i) {
        return false;
    }
    let (Some(prev), Some(next)) = (s[..i].chars().next_back(), s[i..].chars().next()) else {
        return true;
    };
    pair_allows(prev, next, || {
        s[..i]
            .chars()
            .rev()
            .take_while(|&c| is_regional_indicator(c))
            .count()
    })
}

/// The same rule over decoded characters (JSON strings, whose source has escapes): may a
/// cut fall before `chars[t]`?
pub(crate) fn is_boundary_chars(chars: &[char], t: usize) -> bool {
    if t == 0 || t >= chars.len() {
        return true;
    }
    pair_allows(chars[t - 1], chars[t], || {
        chars[..t]
            .iter()
            .rev()
            .take_while(|&&c| is_regional_indicator(c))
            .count()
    })
}

/// The pair rules; `ri_run` counts the regional indicators just before the cut.
fn pair_allows(prev: char, next: char, ri_run: impl Fn() -> usize) -> bool {
    if prev == '\r' && next == '\n' {
        return false;
    }
    if extends(next) || prev == '\u{200D}' {
        return false;
    }
    if is_hangul_leading(prev) && is_hangul(next) {
        return false;
    }
    if is_regional_indicator(prev) && is_regional_indicator(next) {
        // Flags pair up from the start of the run: the cut is inside a pair when an odd
        // number of indicators precede it.
        return ri_run() % 2 == 0;
    }
    true
}

/// The largest boundary at or below `i`.
pub(crate) fn floor_boundary(s: &str, i: usize) -> usize {
    let mut j = i.min(s.len());
    while !is_boundary(s, j) {
        j -= 1;
    }
    j
}

/// The smallest boundary at or above `i`.
pub(crate) fn ceil_boundary(s: &str, i: usize) -> usize {
    let mut j = i.min(s.len());
    while !is_boundary(s, j) {
        j += 1;
    }
    j
}

/// Characters that attach to the one before them (or that we conservatively treat so).
fn extends(c: char) -> bool {
    let c = c as u32;
    if c < 0x0300 {
        return false;
    }
    matches!(
        c,
        0x0300..=0x036F   // combining diacritical marks
        | 0x0483..=0x0489 // Cyrillic combining
        | 0x0591..=0x05BD | 0x05BF | 0x05C1..=0x05C2 | 0x05C4..=0x05C5 | 0x05C7 // Hebrew points
        | 0x0610..=0x061A | 0x064B..=0x065F | 0x0670 | 0x06D6..=0x06DC | 0x06DF..=0x06E4
        | 0x06E7..=0x06E8 | 0x06EA..=0x06ED // Arabic marks
        | 0x0711 | 0x0730..=0x074A | 0x07A6..=0x07B0 | 0x07EB..=0x07F3 // Syriac, Thaana, NKo
        | 0x0900..=0x0DFF // Indic blocks: conservative (letters too; cuts go before spaces)
        | 0x0E31 | 0x0E34..=0x0E3A | 0x0E47..=0x0E4E // Thai marks
        | 0x0EB1 | 0x0EB4..=0x0EBC | 0x0EC8..=0x0ECE // Lao marks
        | 0x0F00..=0x0FFF | 0x1000..=0x109F | 0x1780..=0x17FF // Tibetan, Myanmar, Khmer: conservative
        | 0x1160..=0x11FF | 0xD7B0..=0xD7FF // Hangul medial and final jamo
        | 0x1AB0..=0x1AFF | 0x1DC0..=0x1DFF // combining extended and supplement
        | 0x200C..=0x200D // ZWNJ, ZWJ
        | 0x20D0..=0x20FF // combining marks for symbols (keycap U+20E3)
        | 0x302A..=0x302F | 0x3099..=0x309A // CJK tone marks, kana voicing
        | 0xFE00..=0xFE0F // variation selectors
        | 0xFE20..=0xFE2F // combining half marks
        | 0xFF9E..=0xFF9F // halfwidth kana voicing
        | 0x1F3FB..=0x1F3FF // emoji skin-tone modifiers
        | 0xE0020..=0xE007F // tags (subdivision flags)
        | 0xE0100..=0xE01EF // variation selectors supplement
    )
}

fn is_regional_indicator(c: char) -> bool {
    matches!(c as u32, 0x1F1E6..=0x1F1FF)
}

fn is_hangul_leading(c: char) -> bool {
    matches!(c as u32, 0x1100..=0x115F | 0xA960..=0xA97F)
}

fn is_hangul(c: char) -> bool {
    matches!(c as u32, 0x1100..=0x11FF | 0xA960..=0xA97F | 0xAC00..=0xD7A3 | 0xD7B0..=0xD7FF)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn boundaries(s: &str) -> Vec<usize> {
        (0..=s.len()).filter(|&i| is_boundary(s, i)).collect()
    }

    #[test]
    fn ascii_everywhere() {
        assert_eq!(boundaries("abc"), vec![0, 1, 2, 3]);
        assert_eq!(boundaries(""), vec![0]);
    }

    #[test]
    fn never_inside_utf8() {
        let s = "é€😀";
        assert_eq!(boundaries(s), vec![0, 2, 5, 9]);
    }

    #[test]
    fn combining_marks_stay_with_base() {
        let s = "e\u{301}x"; // é as e + combining acute
        assert_eq!(boundaries(s), vec![0, 3, 4]);
    }

    #[test]
    fn zwj_sequences_stay_whole() {
        let family = "\u{1F468}\u{200D}\u{1F469}\u{200D}\u{1F467}";
        let s = format!("a{family}b");
        assert_eq!(boundaries(&s), vec![0, 1, 1 + family.len(), s.len()]);
    }

    #[test]
    fn flags_pair_up() {
        let s = "\u{1F1E9}\u{1F1EA}\u{1F1EB}\u{1F1F7}"; // DE FR
        assert_eq!(boundaries(s), vec![0, 8, 16]);
        let odd = "\u{1F1E9}\u{1F1EA}\u{1F1EB}"; // DE + lone F
        assert_eq!(boundaries(odd), vec![0, 8, 12]);
    }

    #[test]
    fn skin_tone_and_variation_selector_attach() {
        let s = "\u{1F44D}\u{1F3FD}\u{2764}\u{FE0F}";
        assert_eq!(boundaries(s), vec![0, 8, s.len()]);
    }

    #[test]
    fn crlf_is_one() {
        assert_eq!(boundaries("a\r\nb"), vec![0, 1, 3, 4]);
    }

    #[test]
    fn floor_and_ceil_move_to_safe_places() {
        let s = "ab\u{1F468}\u{200D}\u{1F469}cd";
        for i in 0..=s.len() {
            let f = floor_boundary(s, i);
            let c = ceil_boundary(s, i);
            assert!(f <= i && i <= c);
            assert!(is_boundary(s, f) && is_boundary(s, c));
        }
        assert_eq!(floor_boundary(s, 5), 2);
        assert_eq!(ceil_boundary(s, 5), 2 + 4 + 3 + 4);
    }
}
