//! An append-only vector in fixed blocks: what the checker keeps per span or per row.
//!
//! A `Vec` doubles as it grows: up to half of it is unused capacity, and while it moves to
//! its new allocation the old and the new one are both live, three times the data at that
//! moment. WebAssembly memory never shrinks, so that moment is what a check costs (issue
//! 17). Blocks of [`BLOCK`] elements never move once allocated: the waste is at most one
//! partly filled block, and growing copies nothing.

/// Elements per block.
const BLOCK: usize = 4096;

pub(super) struct Blocks<T> {
    blocks: Vec<Vec<T>>,
    len: usize,
}

impl<T> Default for Blocks<T> {
    fn default() -> Self {
        Blocks {
            blocks: Vec::new(),
            len: 0,
        }
    }
}

impl<T: Clone> Clone for Blocks<T> {
    fn clone(&self) -> Self {
        Blocks {
            blocks: self.blocks.clone(),
            len: self.len,
        }
    }
}

impl<T> Blocks<T> {
    pub fn len(&self) -> usize {
        self.len
    }

    pub fn push(&mut self, value: T) {
        match self.blocks.last_mut() {
            Some(block) if block.len() < BLOCK => block.push(value),
            _ => {
                let mut block = Vec::with_capacity(BLOCK);
                block.push(value);
                self.blocks.push(block);
            }
        }
        self.len += 1;
    }

    pub fn get(&self, i: usize) -> Option<&T> {
        self.blocks.get(i / BLOCK)?.get(i % BLOCK)
    }

    pub fn iter(&self) -> impl Iterator<Item = &T> + '_ {
        self.blocks.iter().flatten()
    }

    /// The bytes the blocks hold (capacities).
    pub fn held_bytes(&self) -> usize {
        self.blocks.iter().map(Vec::capacity).sum::<usize>() * std::mem::size_of::<T>()
            + self.blocks.capacity() * std::mem::size_of::<Vec<T>>()
    }
}

impl<T> std::ops::Index<usize> for Blocks<T> {
    type Output = T;
    /// Element `i`; panics past the end, as a slice does.
    fn index(&self, i: usize) -> &T {
        &self.blocks[i / BLOCK][i % BLOCK]
    }
}

impl<T> std::ops::IndexMut<usize> for Blocks<T> {
    fn index_mut(&mut self, i: usize) -> &mut T {
        &mut self.blocks[i / BLOCK][i % BLOCK]
    }
}

/// Bytes per chunk of [`TextBlocks`] (a longer text gets a chunk of its own).
const CHUNK_BYTES: usize = 1 << 20;

/// Texts end to end, in chunks that never move. A text's place is its offset in the
/// concatenation of all of them; no text straddles two chunks.
#[derive(Default)]
pub(super) struct TextBlocks {
    chunks: Vec<String>,
    /// Where each chunk starts in the concatenation.
    starts: Vec<usize>,
    len: usize,
}

impl TextBlocks {
    /// Bytes of every text together.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Appends `text`; it spans `len()` before the call to `len()` after.
    pub fn push(&mut self, text: &str) {
        let room = (self.chunks.last()).is_some_and(|c| c.capacity() - c.len() >= text.len());
        if !room {
            self.chunks
                .push(String::with_capacity(text.len().max(CHUNK_BYTES)));
            self.starts.push(self.len);
        }
        let chunk = self.chunks.last_mut().expect("a chunk was just ensured");
        crate::bytes::push_str(chunk, text);
        self.len += text.len();
    }

    /// The text pushed at `from..to` (empty when `from == to`).
    pub fn get(&self, from: usize, to: usize) -> &str {
        if from == to {
            return "";
        }
        let chunk = self.starts.partition_point(|&s| s <= from) - 1;
        let start = self.starts[chunk];
        &self.chunks[chunk][from - start..to - start]
    }

    /// The bytes the chunks hold (capacities).
    pub fn held_bytes(&self) -> usize {
        self.chunks.iter().map(String::capacity).sum::<usize>()
            + self.starts.capacity() * std::mem::size_of::<usize>()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn elements_keep_their_index_across_blocks() {
        let mut b = Blocks::default();
        let n = 3 * BLOCK + 5;
        for i in 0..n {
            b.push(i as u32 * 3);
        }
        assert_eq!(b.len(), n);
        for i in [0, 1, BLOCK - 1, BLOCK, 2 * BLOCK + 7, n - 1] {
            assert_eq!(b[i], i as u32 * 3);
            assert_eq!(b.get(i), Some(&(i as u32 * 3)));
        }
        assert_eq!(b.get(n), None);
        assert!(b.iter().copied().eq((0..n as u32).map(|i| i * 3)));
        b[BLOCK] = 1;
        assert_eq!(b[BLOCK], 1);
        assert_eq!(b.held_bytes() / 4 / BLOCK, 4, "four blocks, no doubling");
    }

    #[test]
    fn texts_come_back_whole_across_chunks() {
        let mut t = TextBlocks::default();
        // Enough short texts to fill chunks, and two longer than a chunk.
        let texts: Vec<String> = (0..150_000)
            .map(|i| match i {
                7 | 90_001 => "x".repeat(CHUNK_BYTES + i),
                _ if i % 5 == 0 => String::new(),
                _ => format!("id-{i}-{}", "é".repeat(i % 7)),
            })
            .collect();
        let mut at = Vec::new();
        for text in &texts {
            let from = t.len();
            t.push(text);
            at.push((from, t.len()));
        }
        for (text, &(from, to)) in texts.iter().zip(&at) {
            assert_eq!(t.get(from, to), text);
        }
        assert!(t.chunks.len() > 4, "{} chunks", t.chunks.len());
    }
}
