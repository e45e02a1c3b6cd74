//! The rollup of a report, kept compactly (issue 17): each entry one record in a shared
//! text, handed out as an owned [`Rollup`] when asked for.
//!
//! A `Vec<Rollup>` held a heap block for each entry's id and name and one per failing
//! descendant it names (up to [`super::MAX_ROLLUP_EXAMPLES`]): some 450 bytes an entry in
//! wasm, 34 MB for the 109,093 parents of a 300 MB mostly flagged run, allocated while the
//! rows and the span facts were all still live. A record is its texts and a dozen bytes.
//!
//! A record: flags (bits 0-2: own status, its index in [`Status::ALL`], or 7 for none; bit
//! 3: line present; bit 4: name present), the line, silent_clip, incomplete, the lengths of
//! span_id, name and the count and lengths of the flagged labels, as
//! [`super::rows::put`] writes them; then the texts in that order.

use serde::ser::SerializeSeq;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::blocks::TextBlocks;
use super::classify::Status;
use super::report::Rollup;
use super::rows::{get, put};

const NO_STATUS: u64 = 7;
const LINE: u64 = 1 << 3;
const NAME: u64 = 1 << 4;

/// The parents whose own span looks fine while their subtree holds a failure, in report
/// order (by line, parents absent from the input last, then by id).
#[derive(Default)]
pub struct Rollups {
    text: TextBlocks,
    /// Where each entry's record ends in `text` (it starts where the previous one ends).
    ends: Vec<usize>,
}

impl Rollups {
    /// Room for `n` entries, so the list of where they end never grows past it.
    pub(super) fn with_capacity(n: usize) -> Rollups {
        Rollups {
            text: TextBlocks::default(),
            ends: Vec::with_capacity(n),
        }
    }

    pub fn len(&self) -> usize {
        self.ends.len()
    }

    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }

    /// Entry `i`, with owned fields.
    pub fn get(&self, i: usize) -> Option<Rollup> {
        let end = *self.ends.get(i)?;
        let start = i.checked_sub(1).map_or(0, |p| self.ends[p]);
        let record = self.text.get(start, end);
        let bytes = record.as_bytes();
        let mut at = 0;
        let flags = get(bytes, &mut at);
        let own_status = Status::ALL.get((flags & 7) as usize).copied();
        let line = (flags & LINE != 0).then(|| get(bytes, &mut at));
        let silent_clip = get(bytes, &mut at);
        let incomplete = get(bytes, &mut at);
        let id_len = get(bytes, &mut at) as usize;
        let name_len = (flags & NAME != 0).then(|| get(bytes, &mut at) as usize);
        let count = get(bytes, &mut at) as usize;
        let mut lens = Vec::with_capacity(count);
        for _ in 0..count {
            lens.push(get(bytes, &mut at) as usize);
        }
        let mut take = |len: usize| {
            let text = &record[at..at + len];
            at += len;
            text.to_string()
        };
        let span_id = take(id_len);
        let name = name_len.map(&mut take);
        let flagged = lens.into_iter().map(take).collect();
        Some(Rollup {
            span_id,
            own_status,
            line,
            name,
            silent_clip,
            incomplete,
            flagged,
        })
    }

    /// Bytes of every record together: their texts and a few bytes each, to size what is
    /// rendered from them.
    pub fn record_bytes(&self) -> usize {
        self.text.len()
    }

    /// Every entry, in order, with owned fields.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = Rollup> + '_ {
        (0..self.len()).map(move |i| self.get(i).expect("index within len"))
    }

    /// Every entry with owned fields.
    pub fn to_vec(&self) -> Vec<Rollup> {
        self.iter().collect()
    }

    /// Appends an entry (callers append them in report order).
    pub(super) fn push(&mut self, entry: &Rollup) {
        let status = entry
            .own_status
            .map_or(NO_STATUS, |s| u64::from(s.priority()));
        let flags = status
            | if entry.line.is_some() { LINE } else { 0 }
            | if entry.name.is_some() { NAME } else { 0 };
        let texts = entry.span_id.len()
            + entry.name.as_ref().map_or(0, String::len)
            + entry.flagged.iter().map(String::len).sum::<usize>();
        let mut record = String::with_capacity(texts + 11 * (6 + entry.flagged.len()));
        put(&mut record, flags);
        if let Some(line) = entry.line {
            put(&mut record, line);
        }
        put(&mut record, entry.silent_clip);
        put(&mut record, entry.incomplete);
        put(&mut record, entry.span_id.len() as u64);
        if let Some(name) = &entry.name {
            put(&mut record, name.len() as u64);
        }
        put(&mut record, entry.flagged.len() as u64);
        for label in &entry.flagged {
            put(&mut record, label.len() as u64);
        }
        record.push_str(&entry.span_id);
        if let Some(name) = &entry.name {
            record.push_str(name);
        }
        for label in &entry.flagged {
            record.push_str(label);
        }
        self.text.push(&record);
        self.ends.push(self.text.len());
    }

    /// The bytes these entries hold (capacities), for `examples/check_memory.rs`.
    #[doc(hidden)]
    pub fn held_bytes(&self) -> usize {
        self.text.held_bytes() + self.ends.capacity() * std::mem::size_of::<usize>()
    }
}

impl Clone for Rollups {
    fn clone(&self) -> Rollups {
        Rollups::from(self.to_vec())
    }
}

impl From<Vec<Rollup>> for Rollups {
    /// Entries already in report order (as a report's JSON lists them).
    fn from(entries: Vec<Rollup>) -> Rollups {
        let mut out = Rollups::with_capacity(entries.len());
        for entry in &entries {
            out.push(entry);
        }
        out
    }
}

impl PartialEq for Rollups {
    fn eq(&self, other: &Rollups) -> bool {
        self.len() == other.len() && self.iter().eq(other.iter())
    }
}

impl PartialEq<Vec<Rollup>> for Rollups {
    fn eq(&self, other: &Vec<Rollup>) -> bool {
        self.len() == other.len() && self.iter().zip(other).all(|(a, b)| a == *b)
    }
}

impl std::fmt::Debug for Rollups {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

impl Serialize for Rollups {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut seq = serializer.serialize_seq(Some(self.len()))?;
        for entry in self.iter() {
            seq.serialize_element(&entry)?;
        }
        seq.end()
    }
}

impl<'de> Deserialize<'de> for Rollups {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Rollups, D::Error> {
        Vec::<Rollup>::deserialize(deserializer).map(Rollups::from)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_give_back_every_field() {
        let entries = vec![
            Rollup {
                span_id: "turn-1".into(),
                own_status: Some(Status::Ok),
                line: Some(u64::MAX),
                name: Some("agent é".into()),
                silent_clip: 3,
                incomplete: u64::MAX,
                flagged: vec!["a".into(), String::new(), "line 7".into()],
            },
            Rollup {
                span_id: String::new(),
                own_status: None,
                line: None,
                name: None,
                silent_clip: 0,
                incomplete: 1,
                flagged: vec![],
            },
            Rollup {
                span_id: "x".repeat(3 << 20),
                own_status: Some(Status::Reformatted),
                line: Some(0),
                name: Some(String::new()),
                silent_clip: 64,
                incomplete: 0,
                flagged: vec!["y".repeat(100); 10],
            },
        ];
        let kept = Rollups::from(entries.clone());
        assert_eq!(kept.len(), 3);
        assert_eq!(kept.to_vec(), entries);
        assert_eq!(kept.get(3), None);
        assert_eq!(kept.clone(), kept);
    }
}
