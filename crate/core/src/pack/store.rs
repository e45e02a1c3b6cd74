//! The page store behind `get_more(id, offset)`.
//!
//! When a result is cut, the packer keeps the full *redacted and shaped* text under the
//! call's id, so the model can page through the rest (seed 004: "Truncation without a
//! follow-up tool trains hallucination"). Pages are cut from that stored text, so they are
//! redacted exactly like the first page; nothing unredacted is ever stored.
//!
//! Every store is a [`PageStore`] (as [`crate::gate::BodyStore`] is for bodies): the
//! module's own [`MemoryPageStore`], and in the JS binding a caller's `Map` or KV. What a
//! store keeps is a [`StoredPage`]: the text **and the page size** of the call that stored
//! it, so `get_more` cuts the same pages whichever store holds them (before, a caller's
//! store paged at the default size and the module's at the tool's registered one).
//! Stores that hold strings keep the one encoding of [`StoredPage::to_record`].
//!
//! The in-module store is bounded: at most [`MemoryPageStore::max_bytes`] of text and
//! [`MemoryPageStore::max_entries`] results. Putting a new result evicts the **oldest**
//! ones (first in, first out) until it fits; a result larger than the whole store is not
//! kept, and the packer then says "narrow the query" instead of offering `get_more`.

use std::borrow::Cow;
use std::collections::VecDeque;
use std::fmt;

use serde::{Deserialize, Serialize};

use super::{get_more_from, PackError, PackOptions, Packed, Stored};
use crate::error::Coded;

/// What a page store keeps under a call's id: the full redacted text `get_more` pages
/// through, and the page size the pack chose for it (the options' `page_bytes`, else the
/// tool's registered one).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredPage<'a> {
    pub text: Cow<'a, str>,
    pub page_bytes: usize,
}

/// The first line of a stored page's string form; the text follows it unchanged.
const RECORD_TAG: &str = "toolslice-page page_bytes=";

impl<'a> StoredPage<'a> {
    /// The string a store of strings (a JS `Map`, a KV) keeps: one header line with the
    /// page size, then the text, untouched (no escaping, so a large result costs one copy).
    pub fn to_record(&self) -> String {
        let mut out = String::with_capacity(self.text.len() + RECORD_TAG.len() + 12);
        out.push_str(RECORD_TAG);
        out.push_str(&self.page_bytes.to_string());
        out.push('\n');
        out.push_str(&self.text);
        out
    }

    /// Reads [`StoredPage::to_record`]'s form back; anything else is
    /// [`PageStoreError::InvalidRecord`] (a value put there by hand, or by a version that
    /// stored the bare text).
    pub fn from_record(id: &str, record: &'a str) -> Result<StoredPage<'a>, PageStoreError> {
        let invalid = |why: &str| PageStoreError::InvalidRecord {
            id: id.to_string(),
            why: why.to_string(),
        };
        let rest = record
            .strip_prefix(RECORD_TAG)
            .ok_or_else(|| invalid("it does not start with the page-record header"))?;
        let (size, text) = rest
            .split_once('\n')
            .ok_or_else(|| invalid("the header line has no end"))?;
        let page_bytes = size
            .parse::<usize>()
            .ok()
            .filter(|n| *n > 0)
            .ok_or_else(|| invalid("the page size is not a positive integer"))?;
        Ok(StoredPage {
            text: Cow::Borrowed(text),
            page_bytes,
        })
    }
}

/// Why a page store could not keep or give back a page.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PageStoreError {
    /// The value under the id is not a stored page.
    InvalidRecord { id: String, why: String },
    /// The backend failed (a JS exception, a value that is not a string).
    Backend { message: String },
}

impl fmt::Display for PageStoreError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PageStoreError::InvalidRecord { id, why } => {
                write!(
                    f,
                    "the page store's value for id {id:?} is not a stored page: {why}"
                )
            }
            PageStoreError::Backend { message } => write!(f, "page store failed: {message}"),
        }
    }
}

impl std::error::Error for PageStoreError {}

impl Coded for PageStoreError {
    fn code(&self) -> &'static str {
        match self {
            PageStoreError::InvalidRecord { .. } => "invalid_page_record",
            PageStoreError::Backend { .. } => "store_error",
        }
    }
}

/// Where the packer keeps what `get_more` pages through.
pub trait PageStore {
    /// Keeps `page` under `id`, replacing what was there. `Ok(false)`: the store cannot
    /// hold it (larger than its bound), and nothing was kept.
    fn put(&mut self, id: &str, page: StoredPage<'_>) -> Result<bool, PageStoreError>;
    /// The page kept under `id`, if any.
    fn get(&self, id: &str) -> Result<Option<StoredPage<'_>>, PageStoreError>;
}

/// Keeps what a pack returned in [`Packed::stored`] (nothing when it was not cut).
pub fn keep(store: &mut dyn PageStore, stored: &Stored) -> Result<bool, PageStoreError> {
    store.put(
        &stored.id,
        StoredPage {
            text: Cow::Borrowed(&stored.text),
            page_bytes: stored.page_bytes,
        },
    )
}

/// The next page of the result kept under `id`, packed as the observation of a `get_more`
/// call, at the page size kept with it (unless `opts.page_bytes` overrides it). The same
/// function serves every store, so paging never depends on where the text is.
pub fn get_more_in(
    store: &dyn PageStore,
    id: &str,
    offset: u64,
    call_id: &str,
    opts: &PackOptions,
) -> Result<Packed, PackError> {
    let page = store
        .get(id)
        .map_err(PackError::Store)?
        .ok_or_else(|| PackError::NotFound(id.to_string()))?;
    let size = opts.page_bytes.unwrap_or(page.page_bytes);
    get_more_from(&page.text, id, offset, call_id, size, opts)
}

/// Default bound of the in-module store: 16 MiB of text.
pub const DEFAULT_STORE_BYTES: usize = 16 << 20;
/// Default bound of the in-module store: 256 results.
pub const DEFAULT_STORE_ENTRIES: usize = 256;

/// The module's own page store: bounded, first in first out, by id.
#[derive(Debug, Clone)]
pub struct MemoryPageStore {
    entries: VecDeque<(String, String, usize)>,
    bytes: usize,
    pub max_bytes: usize,
    pub max_entries: usize,
    evicted: u64,
}

impl Default for MemoryPageStore {
    fn default() -> Self {
        MemoryPageStore::new(DEFAULT_STORE_BYTES, DEFAULT_STORE_ENTRIES)
    }
}

impl PageStore for MemoryPageStore {
    fn put(&mut self, id: &str, page: StoredPage<'_>) -> Result<bool, PageStoreError> {
        Ok(self.insert(id, page.text.into_owned(), page.page_bytes))
    }

    fn get(&self, id: &str) -> Result<Option<StoredPage<'_>>, PageStoreError> {
        Ok(self.page(id).map(|(text, page_bytes)| StoredPage {
            text: Cow::Borrowed(text),
            page_bytes,
        }))
    }
}

impl MemoryPageStore {
    pub fn new(max_bytes: usize, max_entries: usize) -> MemoryPageStore {
        MemoryPageStore {
            entries: VecDeque::new(),
            bytes: 0,
            max_bytes,
            max_entries: max_entries.max(1),
            evicted: 0,
        }
    }

    /// The text kept under `id` and its page size (infallible, unlike the trait's `get`).
    pub fn page(&self, id: &str) -> Option<(&str, usize)> {
        self.entries
            .iter()
            .find(|(k, _, _)| k == id)
            .map(|(_, text, page_bytes)| (text.as_str(), *page_bytes))
    }

    /// Stores `text` under `id` (replacing an earlier text with that id), evicting the
    /// oldest entries until it fits. Returns false, storing nothing, when the text alone is
    /// larger than the store.
    pub fn insert(&mut self, id: &str, text: String, page_bytes: usize) -> bool {
        self.remove(id);
        if text.len() > self.max_bytes {
            return false;
        }
        while self.bytes + text.len() > self.max_bytes || self.entries.len() >= self.max_entries {
            match self.entries.pop_front() {
                Some((_, old, _)) => {
                    self.bytes -= old.len();
                    self.evicted += 1;
                }
                None => break,
            }
        }
        self.bytes += text.len();
        self.entries.push_back((id.to_string(), text, page_bytes));
        true
    }

    pub fn remove(&mut self, id: &str) -> bool {
        match self.entries.iter().position(|(k, _, _)| k == id) {
            Some(i) => {
                if let Some((_, t, _)) = self.entries.remove(i) {
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

    fn text_of(s: &MemoryPageStore, id: &str) -> Option<String> {
        s.get(id).unwrap().map(|p| p.text.into_owned())
    }

    #[test]
    fn evicts_oldest_first() {
        let mut s = MemoryPageStore::new(10, 8);
        assert!(s.insert("a", "1234".into(), 7));
        assert!(s.insert("b", "5678".into(), 7));
        assert!(s.insert("c", "90ab".into(), 7));
        assert_eq!(text_of(&s, "a"), None);
        assert_eq!(text_of(&s, "b").as_deref(), Some("5678"));
        assert_eq!(s.get("b").unwrap().unwrap().page_bytes, 7);
        assert_eq!(s.evicted(), 1);
        assert!(!s.insert("big", "x".repeat(11), 7));
        assert_eq!(s.bytes(), 8);
        let mut s = MemoryPageStore::new(100, 2);
        s.insert("a", "1".into(), 1);
        s.insert("b", "2".into(), 1);
        s.insert("c", "3".into(), 1);
        assert_eq!(s.len(), 2);
        assert_eq!(text_of(&s, "a"), None);
    }

    /// A store of strings, as a JS `Map` or a KV is: it keeps page records.
    #[derive(Default)]
    struct Strings(std::collections::HashMap<String, String>);

    impl PageStore for Strings {
        fn put(&mut self, id: &str, page: StoredPage<'_>) -> Result<bool, PageStoreError> {
            self.0.insert(id.to_string(), page.to_record());
            Ok(true)
        }
        fn get(&self, id: &str) -> Result<Option<StoredPage<'_>>, PageStoreError> {
            self.0
                .get(id)
                .map(|r| StoredPage::from_record(id, r))
                .transpose()
        }
    }

    #[test]
    fn paging_is_the_same_in_every_store() {
        use crate::pack::{Registry, ToolResult, ToolSpec};
        let mut registry = Registry::new();
        registry.register(
            "rows",
            ToolSpec {
                max_bytes: 300,
                page_bytes: Some(700),
                ..ToolSpec::default()
            },
        );
        let text: String = (0..400)
            .map(|i| format!("line {i} {}\n", "x".repeat(i % 13)))
            .collect();
        let result = ToolResult::text("rows", "c1", &text);
        let opts = PackOptions::default();
        let packed = crate::pack::pack(&result, &opts, &registry, None, None).unwrap();
        let stored = packed.stored.clone().unwrap();
        assert_eq!(stored.page_bytes, 700);
        let mut memory = MemoryPageStore::default();
        let mut strings = Strings::default();
        assert!(keep(&mut memory, &stored).unwrap());
        assert!(keep(&mut strings, &stored).unwrap());
        let walk = |store: &dyn PageStore| {
            let mut pages = Vec::new();
            let mut at = packed.envelope.next_offset;
            while let Some(offset) = at {
                let p = get_more_in(store, "c1", offset, "c2", &opts).unwrap();
                at = p.envelope.next_offset;
                pages.push(p.envelope.content);
            }
            pages
        };
        let pages = walk(&memory);
        assert!(pages.len() > 3);
        assert!(pages.iter().all(|p| p.len() <= 700));
        assert!(
            pages[0].len() > 500,
            "cut at the tool's page size, not the default"
        );
        assert_eq!(walk(&strings), pages);
        let missing = get_more_in(&strings, "nope", 0, "c", &opts).unwrap_err();
        assert_eq!(missing.code(), "not_found");
        strings.0.insert("bare".into(), text.clone());
        let bare = get_more_in(&strings, "bare", 0, "c", &opts).unwrap_err();
        assert_eq!(bare.code(), "invalid_page_record");
    }

    #[test]
    fn records_round_trip_and_refuse_bare_text() {
        let page = StoredPage {
            text: Cow::Borrowed("line one\ntoolslice-page page_bytes=9\n"),
            page_bytes: 300,
        };
        let record = page.to_record();
        assert_eq!(StoredPage::from_record("c1", &record).unwrap(), page);
        let err = StoredPage::from_record("c1", "line one\n").unwrap_err();
        assert_eq!(err.code(), "invalid_page_record");
        assert!(err.to_string().contains("\"c1\""), "{err}");
        for bad in [
            "toolslice-page page_bytes=0\nx",
            "toolslice-page page_bytes=x\n",
            "toolslice-page page_bytes=5",
        ] {
            assert!(StoredPage::from_record("c", bad).is_err(), "{bad}");
        }
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
