//! The output being assembled, and the map from it back to the original.
//!
//! Every byte of the output is one of: a header line the caller asked for, a *kept* slice
//! copied verbatim from the original, a *marker* that tells the model what was cut, or an
//! *annotation* (a line-number prefix, a repeat count, a newline that a kept slice lacked).
//! [`Out`] records which is which as it appends, so the counts reported to the caller are
//! computed from what was actually written, never estimated: omitted bytes are the original's
//! length minus the kept slices, and the classroom demo can paint both texts from the same
//! segment list.

use serde::{Deserialize, Serialize};

use super::budget::Measure;
use super::grapheme::{ceil_boundary, floor_boundary};

/// What a stretch of the output is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SegmentKind {
    /// The rendering header (`Tool: terminal`, `Exit code: 1` ...), outside the cut.
    Header,
    /// Copied verbatim from the original.
    Kept,
    /// Tells the model what was cut and how to fetch it.
    Marker,
    /// Added for reading: line-number prefixes, repeat counts, structural JSON punctuation.
    Annotation,
}

/// One stretch of the output. `output` is a byte range of the output text; `source`, for
/// kept segments only, is the byte range of the original it was copied from (same length).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Segment {
    pub kind: SegmentKind,
    pub output: [usize; 2],
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<[usize; 2]>,
}

/// An output under construction over the original `src`.
pub(crate) struct Out<'a> {
    src: &'a str,
    pub text: String,
    pub segments: Vec<Segment>,
}

impl<'a> Out<'a> {
    pub fn new(src: &'a str) -> Self {
        Out {
            src,
            text: String::new(),
            segments: Vec::new(),
        }
    }

    /// Copies `src[start..end]`; adjacent copies of adjacent source merge into one segment.
    pub fn keep(&mut self, start: usize, end: usize) {
        if start >= end {
            return;
        }
        let at = self.text.len();
        self.text.push_str(&self.src[start..end]);
        if let Some(last) = self.segments.last_mut() {
            if last.kind == SegmentKind::Kept
                && last.output[1] == at
                && last.source.is_some_and(|s| s[1] == start)
            {
                last.output[1] = self.text.len();
                last.source = last.source.map(|s| [s[0], end]);
                return;
            }
        }
        self.segments.push(Segment {
            kind: SegmentKind::Kept,
            output: [at, self.text.len()],
            source: Some([start, end]),
        });
    }

    pub fn marker(&mut self, s: &str) {
        self.push(SegmentKind::Marker, s);
    }

    pub fn note(&mut self, s: &str) {
        self.push(SegmentKind::Annotation, s);
    }

    fn push(&mut self, kind: SegmentKind, s: &str) {
        if s.is_empty() {
            return;
        }
        let at = self.text.len();
        self.text.push_str(s);
        if let Some(last) = self.segments.last_mut() {
            if last.kind == kind && kind != SegmentKind::Kept && last.output[1] == at {
                last.output[1] = self.text.len();
                return;
            }
        }
        self.segments.push(Segment {
            kind,
            output: [at, self.text.len()],
            source: None,
        });
    }

    /// Writes `s`, as a kept copy when the source continues with exactly `s` right after the
    /// last kept slice (JSON punctuation of a compact input), else as an annotation.
    pub fn keep_or_note(&mut self, s: &str) {
        if let Some(last) = self.segments.last() {
            if let (SegmentKind::Kept, Some(src)) = (last.kind, last.source) {
                if self.src[src[1]..].starts_with(s) && last.output[1] == self.text.len() {
                    self.keep(src[1], src[1] + s.len());
                    return;
                }
            }
        }
        self.note(s);
    }

    /// Ends the current line if the output so far does not end with a newline.
    pub fn newline_if_needed(&mut self) {
        if !self.text.is_empty() && !self.text.ends_with('\n') {
            self.note("\n");
        }
    }

    /// Writes a line cut in its middle: its kept start, the inline marker, its kept end.
    pub fn keep_cut(&mut self, cut: &MiddleCut) {
        self.keep(cut.start, cut.head_end);
        self.marker(&cut.marker);
        self.keep(cut.tail_start, cut.end);
    }

    /// The kept source ranges, sorted and merged.
    pub fn kept_ranges(&self) -> Vec<[usize; 2]> {
        kept_ranges(&self.segments)
    }
}

/// Sorted, merged source ranges of the kept segments.
pub(crate) fn kept_ranges(segments: &[Segment]) -> Vec<[usize; 2]> {
    let mut ranges: Vec<[usize; 2]> = segments.iter().filter_map(|s| s.source).collect();
    crate::sort::sort(&mut ranges);
    let mut merged: Vec<[usize; 2]> = Vec::with_capacity(ranges.len());
    for r in ranges {
        match merged.last_mut() {
            Some(last) if r[0] <= last[1] => last[1] = last[1].max(r[1]),
            _ => merged.push(r),
        }
    }
    merged
}

/// A line (or any stretch) cut in its middle: `start..head_end` and `tail_start..end` are
/// kept, the bytes between are replaced by `marker`.
#[derive(Clone, Debug)]
pub(crate) struct MiddleCut {
    pub start: usize,
    pub head_end: usize,
    pub tail_start: usize,
    pub end: usize,
    pub marker: String,
}

impl MiddleCut {
    /// Source bytes this cut keeps.
    pub fn kept(&self) -> usize {
        (self.head_end - self.start) + (self.end - self.tail_start)
    }
}

/// The inline marker for `n` bytes cut out of one line, with the fetch call when the caller
/// gave one.
pub(crate) fn inline_marker(n: usize, fetch: Option<&str>) -> String {
    match fetch {
        Some(call) => format!("[...{n} bytes cut; {call}...]"),
        None => format!("[...{n} bytes cut...]"),
    }
}

/// Fewest measure units worth keeping around an inline marker; below this the line is
/// dropped whole instead.
const MIN_CUT_KEEP: usize = 8;

/// Cuts `src[start..end]` in its middle so that kept start + inline marker + kept end take
/// at most `room` units. Cut points are grapheme-safe (see `grapheme`). `fetch` renders the
/// fetch call for the omitted byte offset. `None` when `room` is too small to keep anything
/// useful or the stretch already fits.
pub(crate) fn cut_middle(
    src: &str,
    start: usize,
    end: usize,
    room: usize,
    m: Measure,
    fetch: &dyn Fn(usize) -> Option<String>,
) -> Option<MiddleCut> {
    let piece = &src[start..end];
    if m.of(piece) <= room {
        return None;
    }
    // Widest marker this cut could need: every count at its largest.
    let reserve = m.of(&inline_marker(piece.len().max(10), fetch(end).as_deref()));
    let avail = room.checked_sub(reserve)?;
    if avail < MIN_CUT_KEEP {
        return None;
    }
    let want_head = avail / 2;
    let mut used = 0;
    let mut head = 0;
    for (i, c) in piece.char_indices() {
        let w = m.of_char(c);
        if used + w > want_head {
            break;
        }
        used += w;
        head = i + c.len_utf8();
    }
    let head = floor_boundary(piece, head);
    let want_tail = avail - m.of(&piece[..head]);
    let mut used = 0;
    let mut tail = piece.len();
    for (i, c) in piece.char_indices().rev() {
        let w = m.of_char(c);
        if used + w > want_tail {
            break;
        }
        used += w;
        tail = i;
    }
    let tail = ceil_boundary(piece, tail).max(head);
    let marker = inline_marker(tail - head, fetch(start + head).as_deref());
    Some(MiddleCut {
        start,
        head_end: start + head,
        tail_start: start + tail,
        end,
        marker,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn adjacent_keeps_merge() {
        let src = "abcdef";
        let mut out = Out::new(src);
        out.keep(0, 2);
        out.keep(2, 4);
        out.marker("[x]");
        out.marker("[y]");
        out.keep(5, 6);
        assert_eq!(out.text, "abcd[x][y]f");
        assert_eq!(out.segments.len(), 3);
        assert_eq!(out.kept_ranges(), vec![[0, 4], [5, 6]]);
        for seg in &out.segments {
            if let Some(s) = seg.source {
                assert_eq!(&out.text[seg.output[0]..seg.output[1]], &src[s[0]..s[1]]);
            }
        }
    }

    #[test]
    fn middle_cut_fits_and_keeps_both_ends() {
        let line = format!("{}{}\n", "a".repeat(500), "z".repeat(500));
        for room in [40, 100, 333] {
            let cut = cut_middle(&line, 0, line.len(), room, Measure::Bytes, &|_| None).unwrap();
            let mut out = Out::new(&line);
            out.keep_cut(&cut);
            assert!(out.text.len() <= room, "{room}: {}", out.text.len());
            assert!(out.text.starts_with('a') && out.text.ends_with("z\n"));
            assert_eq!(
                cut.tail_start - cut.head_end,
                line.len() - (out.text.len() - cut.marker.len())
            );
        }
        assert!(cut_middle(&line, 0, line.len(), 20, Measure::Bytes, &|_| None).is_none());
    }

    #[test]
    fn middle_cut_respects_graphemes_and_chars() {
        let unit = "e\u{301}\u{1F468}\u{200D}\u{1F469}\u{1F1E9}\u{1F1EA}";
        let line = unit.repeat(100);
        for m in [Measure::Bytes, Measure::Chars, Measure::Utf16] {
            for room in [30, 47, 90, 200] {
                let cut = cut_middle(&line, 0, line.len(), room, m, &|_| None).unwrap();
                let mut out = Out::new(&line);
                out.keep_cut(&cut);
                assert!(m.of(&out.text) <= room);
                assert!(super::super::grapheme::is_boundary(&line, cut.head_end));
                assert!(super::super::grapheme::is_boundary(&line, cut.tail_start));
            }
        }
    }
}
