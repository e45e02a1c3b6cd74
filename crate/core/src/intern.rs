//! A table of distinct names, each with a dense index: the checker's per-span lookups of
//! tool names, prompt builder versions and parent ids.
//!
//! Siblings are written together, so a lookup first tries the previous hit, then the hash
//! table. Keys are short, so hashing one is a multiply or two, and keys are compared a word
//! at a time (on wasm32 slice `==` is the compiler's byte-by-byte memcmp). A linear scan of
//! a small table, tried before, cost more than the hash (callgrind, native checker pass).
//!
//! Parent ids are the one large table (a turn or agent span per handful of tool spans), so
//! a new name costs no allocation of its own: names are stored end to end in one string, and
//! the hash table is open addressing over indexes, with each name's hash kept beside it so
//! growing never rehashes a name.

use crate::bytes::eq;

#[derive(Clone, Default)]
pub struct Interner {
    /// Every name, end to end, in index order.
    text: String,
    /// Where each name is in `text`, and its hash.
    entries: Vec<Entry>,
    /// Open addressing with linear probing: 0 is an empty slot, else a name's index + 1.
    /// A power of two in size, never more than half full (empty before the first name).
    slots: Vec<u32>,
    last: u32,
}

impl Interner {
    /// The index of `key`, adding it when new.
    ///
    /// Inlined into the checker's per-span code (a call per lookup was a tenth of the wasm
    /// profile); adding a name is the rare case and stays out of line. The check-only wasm
    /// module (built without `full`, for size) leaves the choice to the compiler: inlined,
    /// the lookups cost it 3.7 KB gzipped.
    #[cfg_attr(feature = "speed", inline(always))]
    #[cfg_attr(not(feature = "speed"), inline)]
    pub fn intern(&mut self, key: &str) -> u32 {
        let i = self.find(key).unwrap_or_else(|| self.add(key));
        self.last = i;
        i
    }

    #[cold]
    #[inline(never)]
    fn add(&mut self, key: &str) -> u32 {
        let i = self.entries.len() as u32;
        self.entries.push(Entry {
            start: self.text.len() as u32,
            len: key.len() as u32,
            hash: hash(key.as_bytes()),
        });
        crate::bytes::push_str(&mut self.text, key);
        if self.slots.len() < 2 * self.entries.len() {
            self.grow();
        } else {
            self.place(i);
        }
        i
    }

    /// The index of `key`, when present.
    #[cfg_attr(feature = "speed", inline(always))]
    #[cfg_attr(not(feature = "speed"), inline)]
    pub fn find(&self, key: &str) -> Option<u32> {
        let key = key.as_bytes();
        if let Some(last) = self.entries.get(self.last as usize) {
            if eq(self.bytes(last), key) {
                return Some(self.last);
            }
        }
        self.lookup(key)
    }

    /// [`find`](Self::find) without trying the previous hit first: for keys that are not
    /// in runs (the checker looks up every span id once when it builds the rollup).
    #[inline]
    pub fn lookup(&self, key: &[u8]) -> Option<u32> {
        if self.slots.is_empty() {
            return None;
        }
        let h = hash(key);
        let mask = self.slots.len() - 1;
        let mut at = h as usize & mask;
        loop {
            let slot = self.slots[at];
            if slot == 0 {
                return None;
            }
            let e = &self.entries[slot as usize - 1];
            if e.hash == h && eq(self.bytes(e), key) {
                return Some(slot - 1);
            }
            at = (at + 1) & mask;
        }
    }

    pub fn name(&self, i: u32) -> &str {
        &self.text[self.entries[i as usize].range()]
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// The names in index order.
    pub fn into_names(self) -> Vec<Box<str>> {
        (0..self.len() as u32)
            .map(|i| self.name(i).into())
            .collect()
    }

    /// The bytes this table holds (capacities).
    pub fn held_bytes(&self) -> usize {
        self.text.capacity()
            + self.entries.capacity() * std::mem::size_of::<Entry>()
            + self.slots.capacity() * 4
    }

    #[inline(always)]
    fn bytes(&self, e: &Entry) -> &[u8] {
        &self.text.as_bytes()[e.range()]
    }

    /// Doubles the table (to at least four slots per name, so it is half full at most after
    /// as many names again) and places every name anew from its kept hash.
    fn grow(&mut self) {
        let size = (4 * self.entries.len()).next_power_of_two().max(16);
        self.slots = vec![0; size];
        for i in 0..self.entries.len() as u32 {
            self.place(i);
        }
    }

    fn place(&mut self, i: u32) {
        let mask = self.slots.len() - 1;
        let mut at = self.entries[i as usize].hash as usize & mask;
        while self.slots[at] != 0 {
            at = (at + 1) & mask;
        }
        self.slots[at] = i + 1;
    }
}

#[derive(Clone)]
struct Entry {
    start: u32,
    len: u32,
    hash: u32,
}

impl Entry {
    /// Where the name is in [`Interner::text`].
    #[inline(always)]
    fn range(&self) -> std::ops::Range<usize> {
        self.start as usize..(self.start + self.len) as usize
    }
}

/// FxHash (the multiply-rotate hash rustc uses; not DoS-resistant, and a crafted file only
/// makes its own check slower) of the length and the bytes, read as [`eq`] reads them.
#[inline(always)]
pub(crate) fn hash(b: &[u8]) -> u32 {
    const SEED: u64 = 0x51_7c_c1_b7_27_22_0a_95;
    let add = |h: u64, word: u64| (h.rotate_left(5) ^ word).wrapping_mul(SEED);
    let n = b.len();
    let word = |at: usize| u64::from_le_bytes(b[at..at + 8].try_into().unwrap());
    let half = |at: usize| u64::from(u32::from_le_bytes(b[at..at + 4].try_into().unwrap()));
    let mut h = add(0, n as u64);
    if n > 32 {
        let mut i = 0;
        while i + 8 < n {
            h = add(h, word(i));
            i += 8;
        }
        h = add(h, word(n - 8));
    } else if n >= 8 {
        // Unrolled up to four words, as `eq` compares them (no loop header to pay for).
        h = add(h, word(0));
        if n > 16 {
            h = add(h, word(8));
        }
        if n > 24 {
            h = add(h, word(16));
        }
        h = add(h, word(n - 8));
    } else if n >= 4 {
        h = add(h, half(0) | half(n - 4) << 32);
    } else {
        h = add(h, b.iter().fold(0, |w, &c| w << 8 | u64::from(c)));
    }
    (h >> 32) as u32
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
        // Names that share a prefix, the empty name and long names, past every table growth.
        let mut t = Interner::default();
        let keys: Vec<String> = (0..5000)
            .map(|i| match i % 4 {
                0 => format!("turn-{i}"),
                1 => format!("{}{i}", "p".repeat(i % 40)),
                2 => String::new(),
                _ => format!("agent/{}/{i}", "x".repeat(i % 9)),
            })
            .collect();
        let mut first = std::collections::HashMap::new();
        for k in &keys {
            let next = first.len() as u32;
            let want = *first.entry(k.clone()).or_insert(next);
            assert_eq!(t.intern(k), want, "{k:?}");
        }
        for (k, &i) in &first {
            assert_eq!(t.find(k), Some(i));
            assert_eq!(t.name(i), k);
        }
        assert_eq!(t.len(), first.len());
        assert_eq!(t.find("turn-1"), None);
    }
}
