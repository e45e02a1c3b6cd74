//! The page store behind `get_more(id, offset)`.
//!
//! When a result is cut, the packer keeps the full *redacted and shaped* text under the
//! call's id, so the model can page through the rest (seed 004: "Truncation without a
//! follow-up tool trains hallucination"). Pages are cut from that stored text, so they are
//! redacted exactly like the first page; nothing unredacted is ever stored.
//!
//! The in-module store is bounded: at most [`PageStore::max_bytes`] of text and
//! [`PageStore::max_entries`] results. Putting a new result evicts the **oldest** ones
//! (first in, first out) until it fits; a result larger than the whole store is not kept,
//! and the packer then says "narrow the query" instead of offering `get_more`. A caller that
//! needs pages to survive (several worker instances, restarts) keeps the stored text in
//! its own store (a JS `Map`, a KV binding) and calls [`page`] with it.

use std::collections::VecDeque;

use serde::{Deserialize, Serialize};

/// Default bound of the in-module store: 16 MiB of text.
pub const DEFAULT_STORE_BYTES: usize = 16 << 20;
/// Default bound of the in-module store: 256 results.
pub const DEFAULT_STORE_ENTRIES: usize = 256;

/// A bounded first-in-first-out store of full results, by id.
#[derive(Debug, Clone)]
pub struct PageStore {
    entries: VecDeque<(String, String)>,
    bytes: usize,
    pub max_bytes: usize,
    pub max_entries: usize,
    evicted: u64,
}

impl Default for PageStore {
    fn default() -> Self {
        PageStore::new(DEFAULT_STORE_BYTES, DEFAULT_STORE_ENTRIES)
    }
}

impl PageStore {
    pub fn new(max_bytes: usize, max_entries: usize) -> PageStore {
        PageStore {
            entries: VecDeque::new(),
            bytes: 0,
            max_bytes,
            max_entries: max_entries.max(1),
            evicted: 0,
        }
    }

    /// Stores `text` under `id` (replacing an earlier text with that id), evicting the
    /// oldest entries until it fits. Returns false, storing nothing, when the text alone is
    /// larger than the store.
    pub fn put(&mut self, id: &str, text: String) -> bool {
        self.remove(id);
        if text.len() > self.max_bytes {
            return false;
        }
        while self.bytes + text.len() > self.max_bytes || self.entries.len() >= self.max_entries {
            match self.entries.pop_front() {
                Some((_, old)) => {
                    self.bytes -= old.len();
                    self.evicted += 1;
                }
                None => break,
            }
        }
        self.bytes += text.len();
        self.entries.push_back((id.to_string(), text));
        true
    }

    pub fn get(&self, id: &str) -> Option<&str> {
        self.entries
            .iter()
            .find(|(k, _)| k == id)
            .map(|(_, t)| t.as_str())
    }

    pub fn remove(&mut self, id: &str) -> bool {
        match self.entries.iter().position(|(k, _)| k == id) {
            Some(i) => {
                if let Some((_, t)) = self.entries.remove(i) {
                    self.bytes -= t.len();
                }
                true
            }
            None => false,
        }
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Bytes of text held.
    pub fn bytes(&self) -> usize {
        self.bytes
    }

    /// Entries evicted so far.
    pub fn evicted(&self) -> u64 {
        self.evicted
    }
}

/// One page of a stored text.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Page {
    /// The page text (at most the page size, whole lines when a line ends in the page).
    pub text: String,
    /// Byte offset of the page in the stored text.
    pub offset: u64,
    /// Where the next page starts; `None` on the last page.
    pub next_offset: Option<u64>,
    /// Bytes of the whole stored text.
    pub total_bytes: u64,
}

/// The page of `text` that starts at `offset` (moved forward to a character boundary) and
/// holds at most `page_bytes` bytes, ending after a newline when one falls in the second
/// half of the page, else at a character boundary.
pub fn page(text: &str, offset: u64, page_bytes: usize) -> Page {
    let total = text.len();
    let mut start = usize::try_from(offset).unwrap_or(usize::MAX).min(total);
    while !text.is_char_boundary(start) {
        start += 1;
    }
    let mut end = start.saturating_add(page_bytes.max(1)).min(total);
    if end < total {
        while end > start && !text.is_char_boundary(end) {
            end -= 1;
        }
        if let Some(nl) = text[start..end].rfind('\n') {
            if nl + 1 >= (end - start) / 2 {
                end = start + nl + 1;
            }
        }
        if end == start {
            // A page smaller than one character: take that character whole.
            end = start + text[start..].chars().next().map_or(0, char::len_utf8);
        }
    }
    Page {
        text: text[start..end].to_string(),
        offset: start as u64,
        next_offset: (end < total).then_some(end as u64),
        total_bytes: total as u64,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn evicts_oldest_first() {
        let mut s = PageStore::new(10, 8);
        assert!(s.put("a", "1234".into()));
        assert!(s.put("b", "5678".into()));
        assert!(s.put("c", "90ab".into()));
        assert_eq!(s.get("a"), None);
        assert_eq!(s.get("b"), Some("5678"));
        assert_eq!(s.evicted(), 1);
        assert!(!s.put("big", "x".repeat(11)));
        assert_eq!(s.bytes(), 8);
        let mut s = PageStore::new(100, 2);
        s.put("a", "1".into());
        s.put("b", "2".into());
        s.put("c", "3".into());
        assert_eq!(s.len(), 2);
        assert_eq!(s.get("a"), None);
    }

    #[test]
    fn pages_cover_the_text_exactly() {
        let text = "line one\nline two\nlíne three é\nfour\n".repeat(7);
        for size in [1, 3, 10, 25, 1000] {
            let mut at = 0;
            let mut joined = String::new();
            loop {
                let p = page(&text, at, size);
                assert!(p.text.len() <= size.max(2), "size {size}");
                assert_eq!(p.offset, at);
                joined.push_str(&p.text);
                match p.next_offset {
                    Some(n) => {
                        assert!(n > at);
                        at = n;
                    }
                    None => break,
                }
            }
            assert_eq!(joined, text, "size {size}");
        }
        assert_eq!(page("abc", 99, 4).text, "");
    }
}
