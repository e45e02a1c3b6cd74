//! A table of distinct names, each with a dense index: the checker's per-span lookups of
//! tool names, prompt builder versions and parent ids.
//!
//! A run has millions of spans but few distinct tools and builders, and siblings are written
//! together, so a lookup first tries the previous hit, then (while the table is small) a
//! scan a word at a time, and only then the hash map. On wasm32 this matters: slice `==` is
//! the compiler's byte-by-byte memcmp.

use crate::fxhash::FxHashMap;

/// Below this many names a linear scan beats hashing the key.
const SCAN: usize = 16;

#[derive(Default)]
pub struct Interner {
    names: Vec<Box<str>>,
    index: FxHashMap<Box<str>, u32>,
    last: u32,
}

impl Interner {
    /// The index of `key`, adding it when new.
    #[inline]
    pub fn intern(&mut self, key: &str) -> u32 {
        if let Some(i) = self.find(key) {
            self.last = i;
            return i;
        }
        let i = self.names.len() as u32;
        self.names.push(key.into());
        self.index.insert(key.into(), i);
        self.last = i;
        i
    }

    /// The index of `key`, when present.
    #[inline]
    pub fn find(&self, key: &str) -> Option<u32> {
        if let Some(last) = self.names.get(self.last as usize) {
            if eq(last.as_bytes(), key.as_bytes()) {
                return Some(self.last);
            }
        }
        if self.names.len() <= SCAN {
            return (self.names.iter())
                .position(|n| eq(n.as_bytes(), key.as_bytes()))
                .map(|i| i as u32);
        }
        self.index.get(key).copied()
    }

    pub fn name(&self, i: u32) -> &str {
        &self.names[i as usize]
    }

    pub fn len(&self) -> usize {
        self.names.len()
    }

    /// The names in index order.
    pub fn into_names(self) -> Vec<Box<str>> {
        self.names
    }
}

/// Byte equality a word at a time.
#[inline(always)]
pub fn eq(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    let mut x = a.chunks_exact(8);
    let mut y = b.chunks_exact(8);
    for (p, q) in (&mut x).zip(&mut y) {
        if u64::from_le_bytes(p.try_into().unwrap()) != u64::from_le_bytes(q.try_into().unwrap()) {
            return false;
        }
    }
    x.remainder().iter().zip(y.remainder()).all(|(p, q)| p == q)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn indexes_are_dense_and_stable_past_the_scan_limit() {
        let mut t = Interner::default();
        let keys: Vec<String> = (0..100)
            .map(|i| format!("name-{i}-{}", "x".repeat(i % 11)))
            .collect();
        for (i, k) in keys.iter().enumerate() {
            assert_eq!(t.intern(k), i as u32);
        }
        for (i, k) in keys.iter().enumerate().rev() {
            assert_eq!(t.intern(k), i as u32);
            assert_eq!(t.find(k), Some(i as u32));
            assert_eq!(t.name(i as u32), k);
        }
        assert_eq!(t.find("name-1"), None);
        assert_eq!(t.len(), 100);
    }

    #[test]
    fn eq_is_slice_equality() {
        let words = [
            "",
            "a",
            "ab",
            "abcdefgh",
            "abcdefghi",
            "abcdefgx",
            "abcdefghij",
            "bbcdefghi",
        ];
        for a in words {
            for b in words {
                assert_eq!(eq(a.as_bytes(), b.as_bytes()), a == b, "{a:?} {b:?}");
            }
        }
    }
}
