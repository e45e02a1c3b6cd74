//! The rows of a report, kept compactly (issue 17): one fixed-size record per row, every
//! text of the row in a shared arena, and the report's order as a list of indexes.
//!
//! A [`Row`] of owned `String`s cost some 380 bytes plus a heap block per text (about 600
//! bytes for a typical span), and the vectors holding them doubled as they grew and were
//! moved once more into priority order; a packed record costs 96 bytes plus the text
//! itself. Rows are materialised only as borrowed views ([`RowRef`]) when they are rendered
//! or serialised, or as owned [`Row`]s for callers that ask ([`Rows::row`],
//! [`RowRef::to_row`]).

use serde::ser::SerializeSeq;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::classify::Status;
use super::report::Row;
use crate::intern::Interner;
use crate::record::Join;

/// Records per block: blocks never move once allocated, so the rows grow without the
/// doubling (and copying) of one large vector.
const BLOCK_ROWS: usize = 4096;
/// Bytes per arena chunk (a row longer than this gets a chunk of its own).
const CHUNK_BYTES: usize = 1 << 20;
/// A text field that is absent.
const NONE: u32 = u32::MAX;
/// A text field's slot with this bit set holds an index into [`Rows::shared`], not a length.
const SHARED: u32 = 1 << 31;
/// Texts shared between rows: at most this many distinct ones, each at most
/// [`MAX_SHARED_LEN`] bytes, so a run whose texts never repeat wastes at most a few MB.
const MAX_SHARED: usize = 1 << 16;
const MAX_SHARED_LEN: usize = 128;
/// The fields worth sharing: parent_id, name, clip_reason, injected_preview and
/// prompt_builder_version repeat across rows (a turn's tool calls, a handful of tools, the
/// closed enum, a builder per deploy, the same file read again); ids and digests do not.
const SHARED_FIELDS: [bool; FIELDS] = [false, true, true, true, false, false, true, true];

/// The text fields of a row, in the arena in this order: span_id, parent_id, name,
/// clip_reason, sha256_observed, sha256_injected, injected_preview, prompt_builder_version;
/// then the items of detail, warnings and notes.
const FIELDS: usize = 8;

/// One row, packed: numbers inline, texts as lengths into the arena.
#[derive(Clone, PartialEq)]
struct Packed {
    line: u64,
    numbers: [u64; 4],
    clip_ratio: f64,
    /// Where the row's text starts: arena chunk and byte offset.
    chunk: u32,
    offset: u32,
    /// Lengths of the text fields in the arena ([`NONE`] when absent), or with [`SHARED`]
    /// set, indexes into [`Rows::shared`].
    lens: [u32; FIELDS],
    /// Where this row's list item lengths start in [`Rows::item_lens`].
    items: u32,
    /// Items in detail, warnings and notes.
    counts: [u16; 3],
    /// Bits 0-3: which of `numbers` are present; bit 4: clip_ratio present; bit 5:
    /// injected_tokens_estimated.
    flags: u8,
    status: Status,
    join: Option<Join>,
}

/// The rows of a report in priority order (worst first, then by line).
#[derive(Clone, Default)]
pub struct Rows {
    blocks: Vec<Vec<Packed>>,
    arena: Vec<String>,
    /// Lengths of the list items (detail, warnings, notes) of every row, end to end.
    item_lens: Vec<u32>,
    /// Short texts that repeat across rows, stored once.
    shared: Interner,
    /// The report's order: indexes of records. Empty while rows are being added (then the
    /// order is the arrival order).
    order: Vec<u32>,
}

/// A list of texts of one row (its detail, warnings or notes).
#[derive(Clone, Copy, Debug)]
pub struct TextList<'a> {
    lens: &'a [u32],
    text: &'a str,
}

impl<'a> TextList<'a> {
    pub fn len(&self) -> usize {
        self.lens.len()
    }
    pub fn is_empty(&self) -> bool {
        self.lens.is_empty()
    }
    pub fn iter(&self) -> TextIter<'a> {
        TextIter {
            lens: self.lens,
            text: self.text,
        }
    }
    /// The items joined with `sep`.
    pub fn join(&self, sep: &str) -> String {
        let mut out = String::with_capacity(self.text.len() + sep.len() * self.lens.len());
        for (i, item) in self.iter().enumerate() {
            if i > 0 {
                out.push_str(sep);
            }
            out.push_str(item);
        }
        out
    }
    pub fn to_vec(&self) -> Vec<String> {
        self.iter().map(str::to_string).collect()
    }
}

impl<'a> IntoIterator for TextList<'a> {
    type Item = &'a str;
    type IntoIter = TextIter<'a>;
    fn into_iter(self) -> TextIter<'a> {
        self.iter()
    }
}

impl<'a> IntoIterator for &TextList<'a> {
    type Item = &'a str;
    type IntoIter = TextIter<'a>;
    fn into_iter(self) -> TextIter<'a> {
        self.iter()
    }
}

impl<S: AsRef<str>> PartialEq<[S]> for TextList<'_> {
    fn eq(&self, other: &[S]) -> bool {
        self.len() == other.len() && self.iter().zip(other).all(|(a, b)| a == b.as_ref())
    }
}

impl<S: AsRef<str>, const N: usize> PartialEq<[S; N]> for TextList<'_> {
    fn eq(&self, other: &[S; N]) -> bool {
        *self == other[..]
    }
}

impl std::ops::Index<usize> for TextList<'_> {
    type Output = str;
    /// Item `i`; panics when there is no such item, as a slice does.
    fn index(&self, i: usize) -> &str {
        match self.iter().nth(i) {
            Some(item) => item,
            None => panic!("item {i} of {}", self.len()),
        }
    }
}

impl Serialize for TextList<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut seq = serializer.serialize_seq(Some(self.len()))?;
        for item in self.iter() {
            seq.serialize_element(item)?;
        }
        seq.end()
    }
}

pub struct TextIter<'a> {
    lens: &'a [u32],
    text: &'a str,
}

impl<'a> Iterator for TextIter<'a> {
    type Item = &'a str;
    fn next(&mut self) -> Option<&'a str> {
        let (&len, rest) = self.lens.split_first()?;
        self.lens = rest;
        let (item, rest) = self.text.split_at(len as usize);
        self.text = rest;
        Some(item)
    }
}

/// One row of a report, borrowed from its [`Rows`]: the fields of [`Row`], serialised the
/// same way.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct RowRef<'a> {
    pub line: u64,
    pub span_id: Option<&'a str>,
    pub parent_id: Option<&'a str>,
    pub name: &'a str,
    pub status: Status,
    pub detail: TextList<'a>,
    pub observed_bytes: Option<u64>,
    pub injected_bytes: Option<u64>,
    pub injected_tokens: Option<u64>,
    pub clip_ratio: Option<f64>,
    pub clip_reason: Option<&'a str>,
    pub sha256_observed: Option<&'a str>,
    pub sha256_injected: Option<&'a str>,
    pub injected_preview: Option<&'a str>,
    pub prompt_builder_version: Option<&'a str>,
    pub model_context_limit_tokens: Option<u64>,
    #[serde(skip_serializing_if = "TextList::is_empty")]
    pub warnings: TextList<'a>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub join: Option<Join>,
    #[serde(skip_serializing_if = "TextList::is_empty")]
    pub notes: TextList<'a>,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub injected_tokens_estimated: bool,
}

impl RowRef<'_> {
    /// The row with owned fields.
    pub fn to_row(&self) -> Row {
        let own = |t: Option<&str>| t.map(str::to_string);
        Row {
            line: self.line,
            span_id: own(self.span_id),
            parent_id: own(self.parent_id),
            name: self.name.to_string(),
            status: self.status,
            detail: self.detail.to_vec(),
            observed_bytes: self.observed_bytes,
            injected_bytes: self.injected_bytes,
            injected_tokens: self.injected_tokens,
            clip_ratio: self.clip_ratio,
            clip_reason: own(self.clip_reason),
            sha256_observed: own(self.sha256_observed),
            sha256_injected: own(self.sha256_injected),
            injected_preview: own(self.injected_preview),
            prompt_builder_version: own(self.prompt_builder_version),
            model_context_limit_tokens: self.model_context_limit_tokens,
            warnings: self.warnings.to_vec(),
            join: self.join,
            notes: self.notes.to_vec(),
            injected_tokens_estimated: self.injected_tokens_estimated,
        }
    }
}

/// The fields of a row being added, borrowed from wherever they are.
pub(super) struct NewRow<'a> {
    pub line: u64,
    pub status: Status,
    /// span_id, parent_id, name, clip_reason, sha256_observed, sha256_injected,
    /// injected_preview, prompt_builder_version.
    pub texts: [Option<&'a str>; FIELDS],
    pub observed_bytes: Option<u64>,
    pub injected_bytes: Option<u64>,
    pub injected_tokens: Option<u64>,
    pub model_context_limit_tokens: Option<u64>,
    pub clip_ratio: Option<f64>,
    pub detail: &'a [String],
    pub warnings: &'a [String],
    pub notes: &'a [String],
    pub join: Option<Join>,
    pub injected_tokens_estimated: bool,
}

/// What a packed row costs beyond its text and list item lengths.
pub const PACKED_BYTES: u64 = (std::mem::size_of::<Packed>() + 4) as u64;

impl Rows {
    pub fn len(&self) -> usize {
        self.blocks.iter().map(Vec::len).sum()
    }

    pub fn is_empty(&self) -> bool {
        self.blocks.first().is_none_or(Vec::is_empty)
    }

    /// Row `i` in the report's order, borrowed.
    pub fn get(&self, i: usize) -> Option<RowRef<'_>> {
        let at = if self.order.is_empty() {
            i
        } else {
            *self.order.get(i)? as usize
        };
        let packed = self.blocks.get(at / BLOCK_ROWS)?.get(at % BLOCK_ROWS)?;
        Some(self.view(packed))
    }

    /// Row `i` with owned fields; panics when there is no such row, as indexing does.
    pub fn row(&self, i: usize) -> Row {
        match self.get(i) {
            Some(row) => row.to_row(),
            None => panic!("row {i} of {}", self.len()),
        }
    }

    /// The rows in the report's order, borrowed.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = RowRef<'_>> + '_ {
        (0..self.len()).map(move |i| self.get(i).expect("index within len"))
    }

    /// Rows `from..to` (clamped to the rows there are), borrowed.
    pub fn range(&self, from: usize, to: usize) -> impl Iterator<Item = RowRef<'_>> + '_ {
        let to = to.min(self.len());
        (from.min(to)..to).map(move |i| self.get(i).expect("index within len"))
    }

    /// Every row with owned fields.
    pub fn to_vec(&self) -> Vec<Row> {
        self.iter().map(|r| r.to_row()).collect()
    }

    /// Adds a row at the end (in arrival order; [`Rows::sort`] puts them in the report's).
    pub(super) fn push(&mut self, row: NewRow<'_>) {
        let lists = [row.detail, row.warnings, row.notes];
        let mut lens = [NONE; FIELDS];
        let mut text_len = 0;
        for ((len, text), share) in lens.iter_mut().zip(row.texts).zip(SHARED_FIELDS) {
            let Some(text) = text else { continue };
            let shared = if !share || text.len() > MAX_SHARED_LEN {
                None
            } else if self.shared.len() < MAX_SHARED {
                Some(self.shared.intern(text))
            } else {
                self.shared.find(text)
            };
            match shared {
                Some(i) => *len = SHARED | i,
                None => {
                    // A text field comes from one line (at most 128 MiB): far below 2 GiB.
                    *len = text.len() as u32 & !SHARED;
                    text_len += text.len();
                }
            }
        }
        text_len += lists
            .iter()
            .flat_map(|l| l.iter())
            .map(String::len)
            .sum::<usize>();
        let room = self
            .arena
            .last()
            .is_some_and(|c| c.capacity() - c.len() >= text_len);
        if !room {
            self.arena
                .push(String::with_capacity(text_len.max(CHUNK_BYTES)));
        }
        let chunk = self.arena.len() - 1;
        let arena = &mut self.arena[chunk];
        let offset = arena.len() as u32;
        for (&len, text) in lens.iter().zip(row.texts) {
            if let Some(text) = text.filter(|_| len & SHARED == 0) {
                crate::bytes::push_str(arena, text);
            }
        }
        let items = self.item_lens.len() as u32;
        let mut counts = [0u16; 3];
        for (count, list) in counts.iter_mut().zip(lists) {
            // More than 65535 items in one row's list cannot come from a reader (detail
            // names a few fields, warnings and notes a few problems); clamp rather than wrap.
            for item in list.iter().take(u16::MAX as usize) {
                crate::bytes::push_str(arena, item);
                self.item_lens.push(item.len() as u32);
                *count += 1;
            }
        }
        let numbers = [
            row.observed_bytes,
            row.injected_bytes,
            row.injected_tokens,
            row.model_context_limit_tokens,
        ];
        let mut flags = 0u8;
        for (bit, n) in numbers.iter().enumerate() {
            flags |= u8::from(n.is_some()) << bit;
        }
        flags |= u8::from(row.clip_ratio.is_some()) << 4;
        flags |= u8::from(row.injected_tokens_estimated) << 5;
        let packed = Packed {
            line: row.line,
            numbers: numbers.map(|n| n.unwrap_or(0)),
            clip_ratio: row.clip_ratio.unwrap_or(0.0),
            chunk: chunk as u32,
            offset,
            lens,
            items,
            counts,
            flags,
            status: row.status,
            join: row.join,
        };
        match self.blocks.last_mut() {
            Some(block) if block.len() < BLOCK_ROWS => block.push(packed),
            _ => {
                let mut block = Vec::with_capacity(BLOCK_ROWS);
                block.push(packed);
                self.blocks.push(block);
            }
        }
    }

    /// Puts the rows in the report's order: by status priority (worst first), then by line;
    /// rows of one status keep their arrival order when it is already by line (span JSONL).
    pub(super) fn sort(&mut self) {
        let n = self.len();
        if n == 0 {
            return;
        }
        let all = || (0..n).map(|i| &self.blocks[i / BLOCK_ROWS][i % BLOCK_ROWS]);
        let mut order: Vec<u32> = Vec::with_capacity(n);
        for status in Status::ALL {
            let start = order.len();
            order.extend(
                all()
                    .enumerate()
                    .filter(|(_, p)| p.status == status)
                    .map(|(i, _)| i as u32),
            );
            let bucket = &mut order[start..];
            let line = |i: u32| self.blocks[i as usize / BLOCK_ROWS][i as usize % BLOCK_ROWS].line;
            if !bucket.windows(2).all(|w| line(w[0]) <= line(w[1])) {
                crate::sort::sort_by_key(bucket, |&i| line(i));
            }
        }
        // Arrival order already is the report's: no index list needed.
        if order.iter().enumerate().all(|(i, &at)| i as u32 == at) {
            return;
        }
        self.order = order;
    }

    fn view<'a>(&'a self, p: &'a Packed) -> RowRef<'a> {
        let text = &self.arena[p.chunk as usize][p.offset as usize..];
        let mut at = 0;
        let mut texts = [None; FIELDS];
        for (slot, &len) in texts.iter_mut().zip(&p.lens) {
            if len == NONE {
                continue;
            } else if len & SHARED != 0 {
                *slot = Some(self.shared.name(len & !SHARED));
            } else {
                *slot = Some(&text[at..at + len as usize]);
                at += len as usize;
            }
        }
        let mut item = p.items as usize;
        let mut lists = [TextList {
            lens: &[],
            text: "",
        }; 3];
        for (list, &count) in lists.iter_mut().zip(&p.counts) {
            let lens = &self.item_lens[item..item + usize::from(count)];
            let bytes: usize = lens.iter().map(|&l| l as usize).sum();
            *list = TextList {
                lens,
                text: &text[at..at + bytes],
            };
            item += usize::from(count);
            at += bytes;
        }
        let number = |bit: usize| (p.flags & (1 << bit) != 0).then_some(p.numbers[bit]);
        let [span_id, parent_id, name, clip_reason, sha256_observed, sha256_injected, injected_preview, prompt_builder_version] =
            texts;
        let [detail, warnings, notes] = lists;
        RowRef {
            line: p.line,
            span_id,
            parent_id,
            name: name.unwrap_or(""),
            status: p.status,
            detail,
            observed_bytes: number(0),
            injected_bytes: number(1),
            injected_tokens: number(2),
            clip_ratio: (p.flags & (1 << 4) != 0).then_some(p.clip_ratio),
            clip_reason,
            sha256_observed,
            sha256_injected,
            injected_preview,
            prompt_builder_version,
            model_context_limit_tokens: number(3),
            warnings,
            join: p.join,
            notes,
            injected_tokens_estimated: p.flags & (1 << 5) != 0,
        }
    }
}

impl<'a> IntoIterator for &'a Rows {
    type Item = RowRef<'a>;
    type IntoIter = Box<dyn Iterator<Item = RowRef<'a>> + 'a>;
    fn into_iter(self) -> Self::IntoIter {
        Box::new(self.iter())
    }
}

impl From<Vec<Row>> for Rows {
    /// Rows already in the report's order (as a report's JSON lists them).
    fn from(rows: Vec<Row>) -> Rows {
        let mut out = Rows::default();
        for r in &rows {
            out.push(NewRow {
                line: r.line,
                status: r.status,
                texts: [
                    r.span_id.as_deref(),
                    r.parent_id.as_deref(),
                    Some(&r.name),
                    r.clip_reason.as_deref(),
                    r.sha256_observed.as_deref(),
                    r.sha256_injected.as_deref(),
                    r.injected_preview.as_deref(),
                    r.prompt_builder_version.as_deref(),
                ],
                observed_bytes: r.observed_bytes,
                injected_bytes: r.injected_bytes,
                injected_tokens: r.injected_tokens,
                model_context_limit_tokens: r.model_context_limit_tokens,
                clip_ratio: r.clip_ratio,
                detail: &r.detail,
                warnings: &r.warnings,
                notes: &r.notes,
                join: r.join,
                injected_tokens_estimated: r.injected_tokens_estimated,
            });
        }
        out
    }
}

impl PartialEq for Rows {
    fn eq(&self, other: &Rows) -> bool {
        self.len() == other.len()
            && self
                .iter()
                .zip(other.iter())
                .all(|(a, b)| a.to_row() == b.to_row())
    }
}

impl PartialEq<Vec<Row>> for Rows {
    fn eq(&self, other: &Vec<Row>) -> bool {
        self.len() == other.len() && self.iter().zip(other).all(|(a, b)| a.to_row() == *b)
    }
}

impl std::fmt::Debug for Rows {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

impl Serialize for Rows {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut seq = serializer.serialize_seq(Some(self.len()))?;
        for row in self.iter() {
            seq.serialize_element(&row)?;
        }
        seq.end()
    }
}

impl<'de> Deserialize<'de> for Rows {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Rows, D::Error> {
        Vec::<Row>::deserialize(deserializer).map(Rows::from)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn new_row<'a>(
        line: u64,
        texts: [Option<&'a str>; FIELDS],
        detail: &'a [String],
    ) -> NewRow<'a> {
        NewRow {
            line,
            status: Status::Ok,
            texts,
            observed_bytes: Some(line),
            injected_bytes: None,
            injected_tokens: Some(0),
            model_context_limit_tokens: None,
            clip_ratio: None,
            detail,
            warnings: &[],
            notes: &[],
            join: None,
            injected_tokens_estimated: false,
        }
    }

    #[test]
    fn texts_past_the_shared_table_are_stored_inline() {
        let mut rows = Rows::default();
        let n = MAX_SHARED + 500;
        let detail = ["ratio=0.50".to_string(), String::new()];
        let long = "x".repeat(MAX_SHARED_LEN + 1);
        for i in 0..n {
            let parent = format!("p{i}");
            let id = format!("s{i}");
            rows.push(new_row(
                i as u64 + 1,
                [
                    Some(&id),
                    Some(&parent),
                    Some("read"),
                    None,
                    Some(""),
                    None,
                    Some(&long),
                    Some("v1"),
                ],
                &detail[..i % 3],
            ));
        }
        rows.sort();
        assert!(rows.shared.len() <= MAX_SHARED);
        assert_eq!(rows.len(), n);
        for i in [0, 1, MAX_SHARED - 3, MAX_SHARED + 7, n - 1] {
            let r = rows.get(i).unwrap();
            assert_eq!(r.line, i as u64 + 1);
            assert_eq!(r.span_id, Some(format!("s{i}").as_str()));
            assert_eq!(r.parent_id, Some(format!("p{i}").as_str()));
            assert_eq!(
                (r.name, r.clip_reason, r.sha256_observed),
                ("read", None, Some(""))
            );
            assert_eq!(r.injected_preview, Some(long.as_str()));
            assert_eq!(r.prompt_builder_version, Some("v1"));
            assert_eq!(r.detail.to_vec(), &detail[..i % 3]);
            assert_eq!(
                (r.observed_bytes, r.injected_bytes),
                (Some(i as u64 + 1), None)
            );
        }
    }
}
