//! The rows of a report, kept compactly (issue 17): each row is one record in a shared text
//! arena, its numbers and text lengths as variable-length integers ahead of its texts, and
//! the report's order as a list of indexes.
//!
//! A [`Row`] of owned `String`s cost some 380 bytes plus a heap block per text (about 600
//! bytes for a typical span). A fixed-size record of 64-bit numbers and 32-bit lengths cost
//! 108 bytes per row before its text; most of those bytes were zeros, as the numbers of a
//! span are byte and token counts and line numbers below 2^24 and its texts are short. The
//! record here spends one byte per six bits a value needs (a length of a short text, a
//! status, most flags: one byte each), some 25 bytes for a typical span, plus 4 for where it
//! starts. Rows are materialised only as borrowed views ([`RowRef`]) when they are rendered
//! or serialised, or as owned [`Row`]s for callers that ask ([`Rows::row`],
//! [`RowRef::to_row`]).
//!
//! A record, at its offset in its arena chunk:
//! - status (its index in [`Status::ALL`]), flags (bits 0-3: which numbers are present; bit
//!   4: clip_ratio present; bit 5: clip_ratio stored rather than derived from the lengths),
//!   and bits 0-1 the join (0 none), bit 2 injected_tokens_estimated, bit 3 whether the row
//!   has warnings or notes: one byte each;
//! - the line, each present number, and a stored clip_ratio (its bits), as [`put`] writes
//!   them;
//! - per text field ([`FIELDS`]): 0 when absent, else 1 + (the text's length << 1), or
//!   1 + (its index in [`Rows::shared`] << 1 | 1);
//! - the item counts of detail, warnings and notes, then each item's length;
//! - the inline texts in field order, then the items.
//!
//! Every byte of the header is below 0x80, so the arena stays a `String` (ASCII between the
//! texts) and every text is borrowed from it as a `&str` without unsafe code.

use serde::ser::SerializeSeq;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::blocks::Blocks;
use super::classify::{clip_ratio_of, Status};
use super::report::Row;
use crate::intern::Interner;
use crate::record::Join;

/// Bytes per arena chunk (a row longer than this gets a chunk of its own).
const CHUNK_BYTES: usize = 1 << 20;
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

/// Flag bits of a record's second byte.
const CLIP_RATIO: u8 = 1 << 4;
const CLIP_RATIO_STORED: u8 = 1 << 5;
/// Bits of a record's third byte (bits 0-1 are the join).
const TOKENS_ESTIMATED: u8 = 1 << 2;
/// The row has warnings, or notes: the table's tail, which lists them (the warnings of every
/// row, then the notes), decodes only such rows.
const WARNED: u8 = 1 << 3;
const NOTED: u8 = 1 << 4;
/// The bits of a row's mark ([`Rows`]) that hold its status's priority: the rest are
/// [`WARNED`] and [`NOTED`], where the record's third byte has them.
const STATUS_BITS: u8 = 0b111;
const _: () = assert!(Status::ALL.len() <= STATUS_BITS as usize + 1);
/// Payload bits per byte of [`put`]'s integers, and the bit that says another byte follows.
const SIX_BITS: u64 = 0x3f;
const MORE: u8 = 0x40;

/// Appends `value` six bits a byte, least significant first, [`MORE`] set on every byte
/// but the last: ASCII, so the arena stays a `String`. A value below 64 takes one byte,
/// below 2^18 three, a `u64` at most eleven.
#[inline]
pub(super) fn put(out: &mut String, mut value: u64) {
    while value > SIX_BITS {
        out.push(char::from((value & SIX_BITS) as u8 | MORE));
        value >>= 6;
    }
    out.push(char::from(value as u8));
}

/// Reads what [`put`] wrote at `*at`, moving `at` past it. Most values of a record (flags,
/// text descriptors of shared texts, list counts, short lengths) are one byte: that case
/// returns before the loop.
#[inline(always)]
pub(super) fn get(bytes: &[u8], at: &mut usize) -> u64 {
    let b = bytes[*at];
    *at += 1;
    if b & MORE == 0 {
        return u64::from(b);
    }
    get_more(bytes, at, b)
}

/// [`get`] past a first byte that says more follow.
#[inline]
fn get_more(bytes: &[u8], at: &mut usize, first: u8) -> u64 {
    let mut value = u64::from(first & SIX_BITS as u8);
    let mut shift = 6;
    loop {
        let b = bytes[*at];
        *at += 1;
        value |= u64::from(b & SIX_BITS as u8) << shift;
        if b & MORE == 0 {
            return value;
        }
        shift += 6;
    }
}

/// The join as a record stores it (0: none).
fn join_code(join: Option<Join>) -> u8 {
    match join {
        None => 0,
        Some(Join::ToolCallId) => 1,
        Some(Join::Order) => 2,
        Some(Join::Unmatched) => 3,
    }
}

fn join_of(code: u8) -> Option<Join> {
    match code & 3 {
        1 => Some(Join::ToolCallId),
        2 => Some(Join::Order),
        3 => Some(Join::Unmatched),
        _ => None,
    }
}

/// The rows of a report in priority order (worst first, then by line).
#[derive(Clone, Default)]
pub struct Rows {
    /// Where each row's record starts in its arena chunk.
    offsets: Blocks<u32>,
    /// A byte per row: its status's priority (bits 0-2) with [`WARNED`] and [`NOTED`], what
    /// the report's order and the table's tail ask of every row, here rather than from its
    /// record. A record is a few hundred bytes away from the next, in an arena of megabytes:
    /// reading its first byte was a cache miss per row in the sort and again in each list of
    /// the tail (83% of the samples of `record` on 50 MB of Agents SDK export, `perf
    /// annotate` over V8's code). Now the sort reads a row's record once, for its line, and
    /// the tail only the records of the rows it lists. (The line too was kept here at first,
    /// 8 bytes more a row: 5-10 MB more peak memory on 300 MB of span JSONL.)
    marks: Blocks<u8>,
    /// The first row of each arena chunk (rows are written to the chunks in row order).
    chunk_rows: Vec<u32>,
    arena: Vec<String>,
    len: usize,
    /// Short texts that repeat across rows, stored once.
    shared: Interner,
    /// The report's order: indexes of records, in blocks (made at the end of a check, when
    /// memory peaks, they fit where the builder's freed blocks were). Empty while rows are
    /// being added, and when the arrival order is the report's.
    order: Blocks<u32>,
}

/// A list of texts of one row (its detail, warnings or notes).
#[derive(Clone, Copy, Debug)]
pub struct TextList<'a> {
    /// The items' lengths, as [`put`] wrote them.
    lens: &'a [u8],
    count: usize,
    text: &'a str,
}

impl<'a> TextList<'a> {
    pub fn len(&self) -> usize {
        self.count
    }
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }
    pub fn iter(&self) -> TextIter<'a> {
        TextIter {
            lens: self.lens,
            text: self.text,
        }
    }
    /// The items joined with `sep`.
    pub fn join(&self, sep: &str) -> String {
        let mut out = String::with_capacity(self.text.len() + sep.len() * self.count);
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
    lens: &'a [u8],
    text: &'a str,
}

impl<'a> Iterator for TextIter<'a> {
    type Item = &'a str;
    fn next(&mut self) -> Option<&'a str> {
        if self.lens.is_empty() {
            return None;
        }
        let mut at = 0;
        let len = get(self.lens, &mut at) as usize;
        self.lens = &self.lens[at..];
        let (item, rest) = self.text.split_at(len);
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

/// What a row costs beyond its texts (and the length of each list item): 4 bytes for where
/// it starts, 4 for its place in the order, 1 for its mark, and its header, which
/// stays within 48 bytes while its line and numbers are below 2^24 and its texts below 2 KiB
/// (3 flag bytes, 4 per number, 2 per text field, 1 per list count).
pub const PACKED_BYTES: u64 = 57;

impl Rows {
    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Row `i` in the report's order, borrowed.
    pub fn get(&self, i: usize) -> Option<RowRef<'_>> {
        let at = self.arrival(i)?;
        (at < self.len).then(|| self.view(at))
    }

    /// Where row `i` of the report's order is in arrival order.
    #[inline]
    fn arrival(&self, i: usize) -> Option<usize> {
        if self.order.len() == 0 {
            Some(i)
        } else {
            self.order.get(i).map(|&at| at as usize)
        }
    }

    /// The rows with warnings among rows `from..to` (clamped to the rows there are), in the
    /// report's order, borrowed: the others are passed over on one byte of their record, not
    /// decoded.
    pub fn warned(&self, from: usize, to: usize) -> impl Iterator<Item = RowRef<'_>> + '_ {
        self.marked(WARNED, from, to)
    }

    /// The rows with notes among rows `from..to`, as [`warned`](Self::warned).
    pub fn noted(&self, from: usize, to: usize) -> impl Iterator<Item = RowRef<'_>> + '_ {
        self.marked(NOTED, from, to)
    }

    fn marked(&self, mask: u8, from: usize, to: usize) -> impl Iterator<Item = RowRef<'_>> + '_ {
        let to = to.min(self.len());
        (from.min(to)..to).filter_map(move |i| {
            let at = self.arrival(i).filter(|&at| at < self.len)?;
            (self.marks[at] & mask != 0).then(|| self.view(at))
        })
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
        // Each text field's descriptor (see the module docs), and the bytes of the record.
        let mut fields = [0u64; FIELDS];
        let mut size = 3 + 11 * 6 + FIELDS * 11 + 3 * 11;
        for ((field, text), share) in fields.iter_mut().zip(row.texts).zip(SHARED_FIELDS) {
            let Some(text) = text else { continue };
            let shared = if !share || text.len() > MAX_SHARED_LEN {
                None
            } else if self.shared.len() < MAX_SHARED {
                Some(self.shared.intern(text))
            } else {
                self.shared.find(text)
            };
            *field = match shared {
                Some(i) => 1 + (u64::from(i) << 1 | 1),
                None => {
                    size += text.len();
                    1 + ((text.len() as u64) << 1)
                }
            };
        }
        for item in lists.iter().flat_map(|l| l.iter()) {
            size += item.len() + 11;
        }
        // `size` is at least what the record takes: a chunk with that much room holds it.
        let room = self
            .arena
            .last()
            .is_some_and(|c| c.capacity() - c.len() >= size);
        if !room {
            self.arena
                .push(String::with_capacity(size.max(CHUNK_BYTES)));
            self.chunk_rows.push(self.len as u32);
        }
        let arena = self.arena.last_mut().expect("a chunk was just ensured");
        // A chunk is at most CHUNK_BYTES or one row's size (a row comes from one line, at
        // most 128 MiB): offsets fit 32 bits.
        let offset = arena.len() as u32;

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
        let stored_ratio = match row.clip_ratio {
            None => None,
            Some(r) => {
                flags |= CLIP_RATIO;
                let derived = clip_ratio_of(row.observed_bytes, row.injected_bytes);
                // Bit for bit: a ratio equal to the derived one renders the same.
                if derived.map(f64::to_bits) == Some(r.to_bits()) {
                    None
                } else {
                    flags |= CLIP_RATIO_STORED;
                    Some(r.to_bits())
                }
            }
        };
        let status = row.status.priority();
        let misc = join_code(row.join)
            | (u8::from(row.injected_tokens_estimated) * TOKENS_ESTIMATED)
            | (u8::from(!row.warnings.is_empty()) * WARNED)
            | (u8::from(!row.notes.is_empty()) * NOTED);
        arena.push(char::from(status));
        arena.push(char::from(flags));
        arena.push(char::from(misc));
        put(arena, row.line);
        for n in numbers.into_iter().flatten() {
            put(arena, n);
        }
        if let Some(bits) = stored_ratio {
            put(arena, bits);
        }
        for field in fields {
            put(arena, field);
        }
        for list in lists {
            put(arena, list.len() as u64);
        }
        for item in lists.iter().flat_map(|l| l.iter()) {
            put(arena, item.len() as u64);
        }
        for (&field, text) in fields.iter().zip(row.texts) {
            if let Some(text) = text.filter(|_| field & 1 == 1) {
                crate::bytes::push_str(arena, text);
            }
        }
        for item in lists.iter().flat_map(|l| l.iter()) {
            crate::bytes::push_str(arena, item);
        }

        self.offsets.push(offset);
        self.marks.push(status | (misc & (WARNED | NOTED)));
        self.len += 1;
    }

    /// Puts the rows in the report's order: by status priority (worst first), then by line;
    /// rows of one status keep their arrival order when it is already by line (span JSONL).
    pub(super) fn sort(&mut self) {
        let n = self.len();
        if n == 0 {
            return;
        }
        let statuses: Vec<u8> = self.marks.iter().map(|m| m & STATUS_BITS).collect();
        let line = |i: u32| {
            let (bytes, _) = self.record(i as usize);
            get(bytes, &mut 3)
        };
        let mut order: Blocks<u32> = Blocks::default();
        for status in 0..Status::ALL.len() as u8 {
            let start = order.len();
            let mut sorted = true;
            let mut last = 0;
            for (i, _) in (statuses.iter().enumerate()).filter(|&(_, &s)| s == status) {
                let line = line(i as u32);
                sorted &= order.len() == start || last <= line;
                last = line;
                order.push(i as u32);
            }
            if !sorted {
                // Keyed once per row, not looked up twice per comparison; stable, so rows of
                // one line keep their arrival order.
                let mut bucket: Vec<(u64, u32)> = (start..order.len())
                    .map(|k| (line(order[k]), order[k]))
                    .collect();
                crate::sort::sort_by(&mut bucket, |a, b| a.0.cmp(&b.0));
                for (k, (_, i)) in (start..).zip(bucket) {
                    order[k] = i;
                }
            }
        }
        drop(statuses);
        // Arrival order already is the report's: no index list needed.
        if order.iter().enumerate().all(|(i, &at)| i as u32 == at) {
            return;
        }
        self.order = order;
    }

    /// The bytes these rows hold, by structure (capacities, not lengths: what the allocator
    /// gave out), for `examples/check_memory.rs`.
    #[doc(hidden)]
    pub fn held_bytes(&self, out: &mut Vec<(&'static str, usize)>) {
        out.push((
            "rows: offsets",
            self.offsets.held_bytes() + self.chunk_rows.capacity() * 4,
        ));
        out.push(("rows: marks", self.marks.held_bytes()));
        out.push((
            "rows: records (arena)",
            self.arena.iter().map(String::capacity).sum(),
        ));
        out.push(("rows: shared texts", self.shared.held_bytes()));
        out.push(("rows: order", self.order.held_bytes()));
    }

    /// Record `at` (in arrival order) to the end of its chunk, and its chunk's text.
    #[inline]
    fn record(&self, at: usize) -> (&[u8], &str) {
        let chunk = self
            .chunk_rows
            .partition_point(|&first| first as usize <= at)
            - 1;
        let offset = self.offsets[at] as usize;
        let text = &self.arena[chunk][offset..];
        (text.as_bytes(), text)
    }

    fn view(&self, at: usize) -> RowRef<'_> {
        let (bytes, text) = self.record(at);
        let status = Status::ALL[usize::from(bytes[0])];
        let (flags, misc) = (bytes[1], bytes[2]);
        let mut pos = 3;
        let line = get(bytes, &mut pos);
        let mut numbers = [None; 4];
        for (bit, n) in numbers.iter_mut().enumerate() {
            if flags & (1 << bit) != 0 {
                *n = Some(get(bytes, &mut pos));
            }
        }
        let [observed_bytes, injected_bytes, injected_tokens, model_context_limit_tokens] = numbers;
        let clip_ratio = if flags & CLIP_RATIO_STORED != 0 {
            Some(f64::from_bits(get(bytes, &mut pos)))
        } else if flags & CLIP_RATIO != 0 {
            clip_ratio_of(observed_bytes, injected_bytes)
        } else {
            None
        };
        let mut fields = [0u64; FIELDS];
        for field in &mut fields {
            *field = get(bytes, &mut pos);
        }
        let mut counts = [0usize; 3];
        for count in &mut counts {
            *count = get(bytes, &mut pos) as usize;
        }
        // The item lengths, then the texts: each list's lengths (where they end, and the
        // bytes of its items) read once here; the list walks them again only if asked.
        let mut lens_at = [pos; 4];
        let mut list_bytes = [0usize; 3];
        for (k, &count) in counts.iter().enumerate() {
            for _ in 0..count {
                list_bytes[k] += get(bytes, &mut pos) as usize;
            }
            lens_at[k + 1] = pos;
        }
        let mut at = pos;
        let mut texts = [None; FIELDS];
        for (slot, &field) in texts.iter_mut().zip(&fields) {
            if field == 0 {
                continue;
            }
            let value = field - 1;
            if value & 1 == 1 {
                *slot = Some(self.shared.name((value >> 1) as u32));
            } else {
                let len = (value >> 1) as usize;
                *slot = Some(&text[at..at + len]);
                at += len;
            }
        }
        let mut lists = [TextList {
            lens: &[],
            count: 0,
            text: "",
        }; 3];
        for (k, list) in lists.iter_mut().enumerate() {
            *list = TextList {
                lens: &bytes[lens_at[k]..lens_at[k + 1]],
                count: counts[k],
                text: &text[at..at + list_bytes[k]],
            };
            at += list_bytes[k];
        }
        let [span_id, parent_id, name, clip_reason, sha256_observed, sha256_injected, injected_preview, prompt_builder_version] =
            texts;
        let [detail, warnings, notes] = lists;
        RowRef {
            line,
            span_id,
            parent_id,
            name: name.unwrap_or(""),
            status,
            detail,
            observed_bytes,
            injected_bytes,
            injected_tokens,
            clip_ratio,
            clip_reason,
            sha256_observed,
            sha256_injected,
            injected_preview,
            prompt_builder_version,
            model_context_limit_tokens,
            warnings,
            join: join_of(misc),
            notes,
            injected_tokens_estimated: misc & TOKENS_ESTIMATED != 0,
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

    pub(super) fn new_row<'a>(
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

    #[test]
    fn records_give_back_every_field_exactly() {
        let row = |line: u64, status: Status| Row {
            line,
            span_id: Some(format!("span-{line}")),
            parent_id: None,
            name: "read_file".into(),
            status,
            detail: vec!["ratio=0.50".into(), String::new(), "é".repeat(40)],
            observed_bytes: Some(u64::MAX),
            injected_bytes: Some(0),
            injected_tokens: None,
            clip_ratio: Some(super::super::classify::clip_ratio(u64::MAX, 0)),
            clip_reason: Some("prompt_token_cap".into()),
            sha256_observed: Some("ab".repeat(32)),
            sha256_injected: Some(String::new()),
            injected_preview: Some("x".repeat(5000)),
            prompt_builder_version: None,
            model_context_limit_tokens: Some(63),
            warnings: vec![],
            join: None,
            notes: vec!["n".into()],
            injected_tokens_estimated: false,
        };
        let mut rows = vec![row(1, Status::SilentClip), row(u64::MAX, Status::Ok)];
        // A ratio that is not the one the lengths give, and one without lengths at all.
        rows[1].clip_ratio = Some(0.25);
        rows.push(Row {
            observed_bytes: None,
            injected_bytes: Some(64),
            clip_ratio: Some(f64::from_bits(0x7ff8_0000_0000_0001)),
            join: Some(Join::Unmatched),
            injected_tokens_estimated: true,
            detail: vec![],
            warnings: vec!["w".into()],
            ..row(1 << 40, Status::Reformatted)
        });
        for (i, join) in [Join::ToolCallId, Join::Order].into_iter().enumerate() {
            rows.push(Row {
                join: Some(join),
                line: 4096 + i as u64,
                ..row(0, Status::Clipped)
            });
        }
        let packed = Rows::from(rows.clone());
        assert_eq!(packed.len(), rows.len());
        for (got, want) in packed.iter().zip(&rows) {
            let got = got.to_row();
            assert_eq!(
                got.clip_ratio.map(f64::to_bits),
                want.clip_ratio.map(f64::to_bits)
            );
            assert_eq!(got.line, want.line);
            assert_eq!(got.detail, want.detail);
            assert_eq!(
                (got.join, got.injected_tokens_estimated),
                (want.join, want.injected_tokens_estimated)
            );
            if want.clip_ratio.is_some_and(f64::is_nan) {
                continue;
            }
            assert_eq!(&got, want);
        }
    }

    #[test]
    fn sort_puts_statuses_worst_first_then_lines_in_order() {
        let mut rows = Rows::default();
        let arrivals = [
            (9, Status::Ok),
            (4, Status::SilentClip),
            (7, Status::Ok),
            (2, Status::Clipped),
            (1, Status::SilentClip),
            (3, Status::Ok),
        ];
        for (line, status) in arrivals {
            let mut row = new_row(line, [None; FIELDS], &[]);
            row.status = status;
            rows.push(row);
        }
        rows.sort();
        let got: Vec<(u64, Status)> = rows.iter().map(|r| (r.line, r.status)).collect();
        assert_eq!(
            got,
            [
                (1, Status::SilentClip),
                (4, Status::SilentClip),
                (2, Status::Clipped),
                (3, Status::Ok),
                (7, Status::Ok),
                (9, Status::Ok),
            ]
        );
    }

    #[test]
    fn warned_and_noted_rows_are_those_with_warnings_or_notes_in_report_order() {
        let mut rows = Rows::default();
        let (warning, note) = (["w".to_string()], ["n".to_string()]);
        // (line, status, warnings, notes): arrival order is not the report's.
        let arrivals: [(u64, Status, &[String], &[String]); 5] = [
            (5, Status::Ok, &[], &note),
            (4, Status::Ok, &[], &[]),
            (3, Status::SilentClip, &warning, &[]),
            (2, Status::SilentClip, &[], &[]),
            (1, Status::Ok, &warning, &note),
        ];
        for (line, status, warnings, notes) in arrivals {
            let mut row = new_row(line, [None; FIELDS], &[]);
            (row.status, row.warnings, row.notes) = (status, warnings, notes);
            rows.push(row);
        }
        rows.sort();
        let lines =
            |it: &mut dyn Iterator<Item = RowRef<'_>>| it.map(|r| r.line).collect::<Vec<u64>>();
        let warned = lines(&mut rows.warned(0, rows.len()));
        let noted = lines(&mut rows.noted(0, rows.len()));
        assert_eq!(
            warned,
            lines(&mut rows.iter().filter(|r| !r.warnings.is_empty()))
        );
        assert_eq!(
            noted,
            lines(&mut rows.iter().filter(|r| !r.notes.is_empty()))
        );
        assert_eq!((&warned[..], &noted[..]), (&[3, 1][..], &[1, 5][..]));
        // A range is of the report's order, clamped.
        let order = lines(&mut rows.iter());
        for (from, to) in [(0, 2), (1, 3), (2, 5), (3, 99), (9, 99)] {
            let within = |line: &u64| order[from.min(5)..to.min(5)].contains(line);
            let expect = |of: &[u64]| of.iter().copied().filter(within).collect::<Vec<u64>>();
            assert_eq!(
                lines(&mut rows.warned(from, to)),
                expect(&warned),
                "{from}..{to}"
            );
            assert_eq!(
                lines(&mut rows.noted(from, to)),
                expect(&noted),
                "{from}..{to}"
            );
        }
    }
}

// proptest is a native-only dev-dependency (see Cargo.toml).
#[cfg(all(test, not(target_arch = "wasm32")))]
mod properties {
    use super::*;
    use proptest::prelude::*;
    use proptest::test_runner::{Config, RngSeed};

    fn config() -> Config {
        // A fixed seed, as in the join's properties: every machine runs the same cases;
        // PROPTEST_RNG_SEED explores others.
        let mut config = Config::with_cases(500);
        if std::env::var_os("PROPTEST_RNG_SEED").is_none() {
            config.rng_seed = RngSeed::Fixed(0x7001_5011_CE00_0031);
        }
        config.failure_persistence = None;
        config
    }

    proptest! {
        #![proptest_config(config())]
        /// The report's order is the standard stable sort of the arrivals by (status
        /// priority, line), ties in arrival order, and the tail's lists are its rows with
        /// warnings or notes: what the rows' marks answer without loading every record.
        #[test]
        fn order_and_marks_match_a_sort_of_the_arrivals(
            arrivals in prop::collection::vec((0u64..6, 0usize..6, any::<bool>(), any::<bool>()), 0..60),
        ) {
            let (warning, note) = (["w".to_string()], ["n".to_string()]);
            let ids: Vec<String> = (0..arrivals.len()).map(|i| format!("s{i}")).collect();
            let mut rows = Rows::default();
            for (k, &(line, status, warned, noted)) in arrivals.iter().enumerate() {
                let texts = [Some(ids[k].as_str()), None, None, None, None, None, None, None];
                let mut row = super::tests::new_row(line, texts, &[]);
                row.status = Status::ALL[status];
                row.warnings = if warned { &warning } else { &[] };
                row.notes = if noted { &note } else { &[] };
                rows.push(row);
            }
            rows.sort();
            let mut want: Vec<usize> = (0..arrivals.len()).collect();
            want.sort_by_key(|&k| (arrivals[k].1, arrivals[k].0));
            let got: Vec<String> = rows.iter().map(|r| r.span_id.unwrap().to_string()).collect();
            let want_ids: Vec<String> = want.iter().map(|&k| ids[k].clone()).collect();
            prop_assert_eq!(&got, &want_ids);
            let of = |it: &mut dyn Iterator<Item = RowRef<'_>>| {
                it.map(|r| r.span_id.unwrap().to_string()).collect::<Vec<String>>()
            };
            let warned: Vec<String> = want.iter().filter(|&&k| arrivals[k].2).map(|&k| ids[k].clone()).collect();
            let noted: Vec<String> = want.iter().filter(|&&k| arrivals[k].3).map(|&k| ids[k].clone()).collect();
            prop_assert_eq!(of(&mut rows.warned(0, rows.len())), warned);
            prop_assert_eq!(of(&mut rows.noted(0, rows.len())), noted);
        }
    }
}
