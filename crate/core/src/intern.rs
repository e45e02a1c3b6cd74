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
//!
//! The hash is fast, unkeyed and invertible, so a file can be made of names that all hash
//! alike: 16,000 such parent ids took `toolslice check` 0.77 s against 0.16 s for ordinary
//! ones, and 64,000 took 11.9 s (the cost grew with the square of their number). So a
//! lookup probes at most [`PROBES`] slots: a name that finds no free slot among its first
//! [`PROBES`] goes to an ordered overflow table instead, where finding it costs a logarithm
//! of that table's size (64,000 such ids: 0.37 s). Every lookup is then bounded whatever the
//! names; ordinary names never get there (a test checks 250,000 ids of each of four usual
//! shapes).

use std::collections::BTreeMap;

use crate::bytes::eq;

/// Slots a lookup tries before the overflow table. On 250,000 ordinary ids of each of the
/// test's shapes a lookup took 1.15 probes on average and 11 at most.
const PROBES: usize = 32;

/// What one overflow entry costs beyond its bytes (a B-tree slot, the box), for
/// [`Interner::held_bytes`].
const OVERFLOW_ENTRY_BYTES: usize = 48;

#[derive(Clone, Default)]
pub struct Interner {
    /// Every name, end to end, in index order.
    text: String,
    /// Where each name is in `text`, and its hash.
    entries: Vec<Entry>,
    /// Open addressing with linear probing: 0 is an empty slot, else a name's index + 1.
    /// A power of two in size, never more than half full (empty before the first name).
    slots: Vec<u32>,
    /// The names that found every one of their [`PROBES`] slots taken when placed, by their
    /// bytes (their copy here is counted in `overflow_bytes`). Slots are only ever filled
    /// between two growths, and a growth places every name anew, so a name here always has
    /// its [`PROBES`] slots taken: a lookup that meets a free one may stop.
    overflow: BTreeMap<Box<[u8]>, u32>,
    overflow_bytes: usize,
    last: u32,
    /// Slots probed by lookups so far, for the tests of the bound.
    #[cfg(test)]
    probed: std::cell::Cell<u64>,
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
        let mut at = home(h, self.slots.len());
        for _ in 0..PROBES {
            #[cfg(test)]
            self.probed.set(self.probed.get() + 1);
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
        self.find_overflow(key)
    }

    #[cold]
    #[inline(never)]
    fn find_overflow(&self, key: &[u8]) -> Option<u32> {
        self.overflow.get(key).copied()
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
            + self.overflow_bytes
    }

    #[inline(always)]
    fn bytes(&self, e: &Entry) -> &[u8] {
        &self.text.as_bytes()[e.range()]
    }

    /// Doubles the table (to at least four slots per name, so it is half full at most after
    /// as many names again) and places every name anew from its kept hash, the overflow's
    /// too.
    fn grow(&mut self) {
        let size = (4 * self.entries.len()).next_power_of_two().max(16);
        self.slots = vec![0; size];
        self.overflow.clear();
        self.overflow_bytes = 0;
        for i in 0..self.entries.len() as u32 {
            self.place(i);
        }
    }

    /// Puts name `i` in the first free slot of its [`PROBES`], or in the overflow.
    fn place(&mut self, i: u32) {
        let mask = self.slots.len() - 1;
        let mut at = home(self.entries[i as usize].hash, self.slots.len());
        for _ in 0..PROBES {
            if self.slots[at] == 0 {
                self.slots[at] = i + 1;
                return;
            }
            at = (at + 1) & mask;
        }
        let key: Box<[u8]> = self.bytes(&self.entries[i as usize]).into();
        self.overflow_bytes += key.len() + OVERFLOW_ENTRY_BYTES;
        self.overflow.insert(key, i);
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

/// The first slot of hash `h` in a table of `slots` slots: its top bits (`h * slots / 2^32`).
/// In FxHash's last multiply a bit of the last word reaches only the bits at and above its
/// own place, and ids differ most in their last characters, the word's top bytes, which the
/// hash's low bits never see: from the low bits, a table of 250,000 `turn-N` ids took 6.8
/// probes a lookup on average and up to 72 (UUID-like ids 11 and 123); from the top bits,
/// 1.14 and 9.
#[inline(always)]
pub(crate) fn home(h: u32, slots: usize) -> usize {
    ((u64::from(h) * slots as u64) >> 32) as usize
}

/// One step of FxHash: a word folded into the state.
#[inline(always)]
fn fold(h: u64, word: u64) -> u64 {
    const SEED: u64 = 0x51_7c_c1_b7_27_22_0a_95;
    (h.rotate_left(5) ^ word).wrapping_mul(SEED)
}

/// FxHash (the multiply-rotate hash rustc uses) of the length and the bytes, read as [`eq`]
/// reads them. Not DoS-resistant: names of one hash are easily made (see the tests), which
/// is why lookups are bounded by [`PROBES`] and the memo keeps at most a few texts of a hash.
#[inline(always)]
pub(crate) fn hash(b: &[u8]) -> u32 {
    let n = b.len();
    let word = |at: usize| u64::from_le_bytes(b[at..at + 8].try_into().unwrap());
    let half = |at: usize| u64::from(u32::from_le_bytes(b[at..at + 4].try_into().unwrap()));
    let mut h = fold(0, n as u64);
    if n > 32 {
        let mut i = 0;
        while i + 8 < n {
            h = fold(h, word(i));
            i += 8;
        }
        h = fold(h, word(n - 8));
    } else if n >= 8 {
        // Unrolled up to four words, as `eq` compares them (no loop header to pay for).
        h = fold(h, word(0));
        if n > 16 {
            h = fold(h, word(8));
        }
        if n > 24 {
            h = fold(h, word(16));
        }
        h = fold(h, word(n - 8));
    } else if n >= 4 {
        h = fold(h, half(0) | half(n - 4) << 32);
    } else {
        h = fold(h, b.iter().fold(0, |w, &c| w << 8 | u64::from(c)));
    }
    (h >> 32) as u32
}

/// `n` sixteen-byte ASCII names that all have one [`hash`] (the second word cancels what the
/// first did to the state): what a file crafted against these tables holds. For the tests
/// and for `scripts/stress`, which checks a file of such parent ids for linear time. About
/// one candidate in 80 is ASCII, and the candidates run out past three million names.
#[doc(hidden)]
pub fn names_of_one_hash(n: usize) -> Vec<String> {
    const TARGET: u64 = 0x1234_5678_1234_5678 & 0x7f7f_7f7f_7f7f_7f7f;
    let mut names = Vec::new();
    let start = fold(0, 16);
    // Seven hex digits after the `p`: the first word is the name's first eight bytes.
    for i in 0u64..1 << 28 {
        if names.len() == n {
            break;
        }
        let first = format!("p{i:07x}");
        let state = fold(
            start,
            u64::from_le_bytes(first.as_bytes().try_into().unwrap()),
        );
        let second = state.rotate_left(5) ^ TARGET;
        if second & 0x8080_8080_8080_8080 != 0 {
            continue; // not ASCII
        }
        let name = first + std::str::from_utf8(&second.to_le_bytes()).unwrap();
        names.push(name);
    }
    names
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

    /// Thousands of names of one hash: each is interned once, with a dense index, and found
    /// again by a lookup that probes at most `PROBES` slots (without the bound, the last of
    /// them probed past all the others: work growing with the square of their number).
    #[test]
    fn names_of_one_hash_are_found_within_the_probe_bound() {
        let names = names_of_one_hash(3000);
        let h = hash(names[0].as_bytes());
        assert!(names
            .iter()
            .all(|k| hash(k.as_bytes()) == h && k.len() == 16));
        let mut t = Interner::default();
        for (i, k) in names.iter().enumerate() {
            let before = t.probed.get();
            assert_eq!(t.intern(k), i as u32);
            assert!(t.probed.get() - before <= PROBES as u64, "name {i}");
        }
        assert!(!t.overflow.is_empty());
        // Found again out of order (the previous-hit shortcut never applies), each within
        // the bound, and an ordinary name still gets its own index after them.
        for (i, k) in names.iter().enumerate().rev().step_by(7) {
            let before = t.probed.get();
            assert_eq!(t.lookup(k.as_bytes()), Some(i as u32));
            assert_eq!(t.name(i as u32), k);
            assert!(t.probed.get() - before <= PROBES as u64);
        }
        let mut other = names[5].clone().into_bytes();
        other[15] ^= 1;
        assert_eq!(t.lookup(&other), None);
        assert_eq!(t.intern("turn-1"), 3000);
        assert_eq!(t.find("turn-1"), Some(3000));
        assert_eq!(t.len(), 3001);
        // The overflow's copies are counted in the table's memory.
        assert!(t.held_bytes() >= t.text.capacity() + t.overflow.len() * 16);
    }

    /// Ids of the shapes traces carry never reach the overflow: the bound costs ordinary
    /// input nothing.
    #[test]
    fn ordinary_ids_never_overflow() {
        let shapes: [fn(u64) -> String; 4] = [
            |i| format!("turn-{i}"),
            |i| format!("{:016x}", i.wrapping_mul(0x9e37_79b9_7f4a_7c15)),
            |i| format!("{:08x}-0000-4000-8000-{:012x}", i >> 4, i),
            |i| format!("call_{i}_{}", i % 60),
        ];
        for shape in shapes {
            let mut t = Interner::default();
            for i in 0..250_000 {
                t.intern(&shape(i));
            }
            assert_eq!(t.len(), 250_000);
            assert!(t.overflow.is_empty(), "{}", shape(1));
        }
    }
}
