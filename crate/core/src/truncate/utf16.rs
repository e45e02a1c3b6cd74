//! UTF-16 offsets: a truncation's ranges as JavaScript string indices. The driver works in
//! UTF-8 bytes; a binding that hands ranges to JavaScript converts them here, reading the
//! text once and a word at a time.

use serde::{Deserialize, Serialize};

use super::{budget, Truncation};

/// What the offsets in [`Truncation::kept`] and [`Truncation::segments`] count.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Offsets {
    /// UTF-8 bytes (Rust string indices): what [`truncate`](super::truncate) returns.
    #[default]
    Utf8,
    /// UTF-16 code units (JavaScript string indices): see [`Truncation::into_utf16_offsets`].
    Utf16,
}

impl Truncation {
    /// The same result with `kept` and `segments` in UTF-16 code units, so that JavaScript
    /// can slice its strings with them (`input` is the text that was truncated).
    pub fn into_utf16_offsets(self, input: &str) -> Truncation {
        self.utf16_offsets(input, None)
    }

    /// [`Truncation::into_utf16_offsets`] for a caller that knows the input's length in
    /// UTF-16 units (JavaScript's `length`). When that equals its length in bytes the input
    /// is ASCII and its offsets are the same in both units, so only the output is read.
    pub fn into_utf16_offsets_of(self, input: &str, input_utf16_len: usize) -> Truncation {
        self.utf16_offsets(input, Some(input_utf16_len))
    }

    fn utf16_offsets(mut self, input: &str, input_utf16_len: Option<usize>) -> Truncation {
        if self.offsets == Offsets::Utf16 {
            return self;
        }
        let src_at: Vec<usize> = self
            .kept
            .iter()
            .flatten()
            .chain(
                self.segments
                    .iter()
                    .filter_map(|s| s.source.as_ref())
                    .flatten(),
            )
            .copied()
            .collect();
        let out_at: Vec<usize> = self.segments.iter().flat_map(|s| s.output).collect();
        let src = if input_utf16_len == Some(input.len()) {
            Utf16Map::identity(input.len())
        } else {
            Utf16Map::new(input, src_at)
        };
        let out = Utf16Map::new(&self.text, out_at);
        for r in &mut self.kept {
            *r = [src.get(r[0]), src.get(r[1])];
        }
        for s in &mut self.segments {
            s.output = [out.get(s.output[0]), out.get(s.output[1])];
            if let Some(r) = &mut s.source {
                *r = [src.get(r[0]), src.get(r[1])];
            }
        }
        self.offsets = Offsets::Utf16;
        self
    }
}

/// Byte offset → UTF-16 offset for a known set of byte offsets: the UTF-16 units before each
/// one, counted from the previous one, so the text is read once and only up to the last
/// offset. The count works on bytes, a word at a time (`budget::utf16_units`), not char by
/// char: the input is often megabytes of ASCII.
pub(crate) enum Utf16Map {
    Counted(Vec<(usize, usize)>),
    /// An ASCII text of this length: every offset up to it maps to itself.
    Identity(usize),
}

impl Utf16Map {
    fn identity(len: usize) -> Utf16Map {
        Utf16Map::Identity(len)
    }

    pub(crate) fn new(text: &str, mut at: Vec<usize>) -> Utf16Map {
        crate::sort::sort(&mut at);
        at.dedup();
        let bytes = text.as_bytes();
        let mut map = Vec::with_capacity(at.len());
        let mut units = 0;
        let mut prev = 0;
        // Offsets beyond the text have no mapping (and read as 0), as before.
        for b in at.into_iter().take_while(|&b| b <= bytes.len()) {
            units += budget::utf16_units(&bytes[prev..b]);
            map.push((b, units));
            prev = b;
        }
        Utf16Map::Counted(map)
    }

    pub(crate) fn get(&self, byte: usize) -> usize {
        match self {
            Utf16Map::Counted(map) => map
                .binary_search_by_key(&byte, |p| p.0)
                .map_or(0, |i| map[i].1),
            // Offsets beyond the text read as 0, as in the counted map.
            Utf16Map::Identity(len) => {
                if byte <= *len {
                    byte
                } else {
                    0
                }
            }
        }
    }
}
