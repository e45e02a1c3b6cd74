//! The measures of texts measured since the previous model input began, so that a run's
//! texts are measured about once each, not once per model input that re-lists them.
//!
//! A model input re-lists every earlier tool result of its run, and every tool message it
//! holds is measured ([`Content`]: SHA-256, character count, markers, preview). A run of n
//! tool calls so had about n^2 / 2 measures for n distinct texts: reading four OpenAI Agents
//! SDK runs of 60 tool calls of 2 KB each (17 MB) took 2245M instructions, and 326M with this
//! memo (`scripts/count-instructions`). A tool message is most often
//! the very text of a tool result read just before it, or of a tool message of the previous
//! model input, and both are kept here.
//!
//! Measuring is a function of the text alone, so an answer from here is what measuring would
//! give: the memo changes how long reading takes, never what any reader gets. That is why it
//! is a thread's, not the checker's: every reader, of every format, tree or fast, measures
//! through [`Content::of_text`], most from inside a deserializer's visitor, and a handle
//! threaded through all of them would change nothing they read.
//!
//! Bounded whatever the input:
//! - Two generations. A model input starting ([`next_input`]) makes the current generation
//!   the previous one and drops the one before; a text found in the previous generation is
//!   kept in the current one too. So what is kept is what two model inputs and the tool
//!   results between them hold, at most [`GENERATION_BYTES`] of text and
//!   [`GENERATION_TEXTS`] texts each; past that, texts are measured and not kept.
//! - A lookup probes at most [`PROBES`] slots. The table's hash is fast, not keyed, and
//!   a crafted file can make many texts share a slot; those are then not kept and are
//!   measured, which is what they cost without the memo.
//! - [`forget`] drops both generations when a check ends, so a thread keeps nothing between
//!   checks.

use std::cell::RefCell;

use super::content::Content;
use crate::bytes::eq;
use crate::intern::{hash, home};

/// Texts shorter than this are measured every time. Of 0, 16, 32, 64 and 128, 16 read the
/// three trace-format fixtures in the fewest instructions in all (`scripts/count-instructions`):
/// a shorter text costs about as much to find as to measure.
const MIN_BYTES: usize = 16;
/// The most text bytes a generation keeps.
const GENERATION_BYTES: usize = 4 << 20;
/// The most texts a generation keeps (a model input re-listing thousands of tool results).
const GENERATION_TEXTS: usize = 4096;
/// Slots a lookup or an insertion probes before it gives up.
const PROBES: usize = 8;
/// The largest slot table a cleared generation keeps.
const KEPT_SLOTS: usize = 64;
/// Texts measured in a row without one found here, after which only a sample is kept.
const MISSES_BEFORE_SAMPLING: u32 = 64;
const SAMPLE_EVERY: u32 = 16;

thread_local! {
    static MEMO: RefCell<Memo> = RefCell::default();
}

/// The measures of `text`: kept ones when it was measured since the previous model input
/// began, else `measure(text)`, then kept.
pub(super) fn measured(text: &str, measure: fn(&str) -> Content) -> Content {
    if text.len() < MIN_BYTES {
        return measure(text);
    }
    let h = hash(text.as_bytes());
    if let Some(known) = MEMO.with_borrow_mut(|memo| {
        memo.asked = true;
        memo.get(text, h)
    }) {
        return known;
    }
    // Measured outside the borrow: nothing in measuring reads the memo, and should that
    // change, it must not find it borrowed.
    let content = measure(text);
    MEMO.with_borrow_mut(|memo| memo.missed(text, h, &content));
    content
}

/// A model input starts being read (see the module docs). Two in a row with nothing looked
/// up between them (a list nested in a list, an input without tool messages) keep both
/// generations.
pub(super) fn next_input() {
    MEMO.with_borrow_mut(|memo| {
        if std::mem::take(&mut memo.asked) {
            // The dropped generation's tables are the new current one's, cleared: with a
            // model input every few spans, fresh tables at each rotation cost 0.4% of the
            // instructions of reading OTLP's fixture.
            std::mem::swap(&mut memo.current, &mut memo.previous);
            memo.current.clear();
        }
    });
}

/// A check ended: nothing is kept for the next one (and with [`super::End::Leave`], the
/// tables are left taken rather than freed).
pub(super) fn forget(end: super::End) {
    end.release(MEMO.take());
}

#[derive(Default)]
struct Memo {
    current: Generation,
    previous: Generation,
    /// Texts measured since the last one found here.
    misses: u32,
    /// Whether a text was looked up since the current generation began.
    asked: bool,
}

impl Memo {
    fn get(&mut self, text: &str, h: u32) -> Option<Content> {
        let c = match self.current.get(text, h) {
            Some(c) => c.clone(),
            None => {
                let c = self.previous.get(text, h)?.clone();
                self.current.add(text, h, &c);
                c
            }
        };
        self.misses = 0;
        Some(c)
    }

    /// `text` was measured. Kept, unless the memo has long found nothing: a trace whose
    /// model inputs do not re-list tool results (OTLP's GenAI events carry each tool message
    /// once) would pay a copy of every text for no answer; then only every
    /// [`SAMPLE_EVERY`]th text is kept, and the first one found again keeps every text again,
    /// as a model input re-listing its run's results finds one within a few texts.
    fn missed(&mut self, text: &str, h: u32, content: &Content) {
        self.misses = self.misses.saturating_add(1);
        if self.misses <= MISSES_BEFORE_SAMPLING || self.misses % SAMPLE_EVERY == 0 {
            self.current.add(text, h, content);
        }
    }
}

/// Texts and their measures: the texts end to end in one string, found through an open
/// addressing table of entry indexes, with [`crate::intern`]'s hash and compare. Not an
/// [`crate::intern::Interner`]: that one must find every name it holds (the checker reads
/// them back by index), so it probes and places without bound; this one looks at most
/// [`PROBES`] slots, leaves out a text with no room within them, and is cleared at every
/// model input.
#[derive(Default)]
struct Generation {
    text: String,
    entries: Vec<Kept>,
    /// 0 is an empty slot, else an entry's index + 1. A power of two in size, never more than
    /// half full (empty before the first text).
    slots: Vec<u32>,
}

struct Kept {
    start: u32,
    len: u32,
    hash: u32,
    content: Content,
}

impl Generation {
    /// Empty, its small tables kept for reuse. A large table is dropped instead: cleared at
    /// each model input, the slots one model input of thousands of texts grew would cost
    /// every later small input their whole length, where growing them again is paid by the
    /// texts that fill them.
    fn clear(&mut self) {
        self.text.clear();
        self.entries.clear();
        if self.slots.len() <= KEPT_SLOTS {
            self.slots.fill(0);
        } else {
            self.slots = Vec::new();
        }
    }

    fn get(&self, text: &str, h: u32) -> Option<&Content> {
        if self.slots.is_empty() {
            return None;
        }
        let mask = self.slots.len() - 1;
        let mut at = home(h, self.slots.len());
        for _ in 0..PROBES {
            let slot = self.slots[at];
            if slot == 0 {
                return None;
            }
            let e = &self.entries[slot as usize - 1];
            if e.hash == h && eq(self.bytes(e), text.as_bytes()) {
                return Some(&e.content);
            }
            at = (at + 1) & mask;
        }
        None
    }

    fn add(&mut self, text: &str, h: u32, content: &Content) {
        if self.entries.len() >= GENERATION_TEXTS || self.text.len() + text.len() > GENERATION_BYTES
        {
            return;
        }
        if self.slots.len() < 2 * (self.entries.len() + 1) {
            self.grow();
        }
        let i = self.entries.len() as u32;
        let Some(at) = free_slot(&self.slots, h) else {
            return;
        };
        self.slots[at] = i + 1;
        self.entries.push(Kept {
            start: self.text.len() as u32,
            len: text.len() as u32,
            hash: h,
            content: content.clone(),
        });
        self.text.push_str(text);
    }

    /// Doubles the table and places every kept text anew; one with no free slot in reach is
    /// no longer found (it is measured again, if asked for).
    fn grow(&mut self) {
        self.slots = vec![0; (2 * self.slots.len()).max(16)];
        for (i, e) in self.entries.iter().enumerate() {
            if let Some(at) = free_slot(&self.slots, e.hash) {
                self.slots[at] = i as u32 + 1;
            }
        }
    }

    fn bytes(&self, e: &Kept) -> &[u8] {
        &self.text.as_bytes()[e.start as usize..(e.start + e.len) as usize]
    }
}

/// An empty slot of `slots` within [`PROBES`] of the hash's, if any.
fn free_slot(slots: &[u32], h: u32) -> Option<usize> {
    let mask = slots.len() - 1;
    let at = home(h, slots.len());
    (0..PROBES)
        .map(|k| (at + k) & mask)
        .find(|&s| slots[s] == 0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::Cell;

    thread_local! {
        static MEASURED: Cell<usize> = const { Cell::new(0) };
    }

    /// Measures as the readers do, counting.
    fn counted(text: &str) -> Content {
        MEASURED.set(MEASURED.get() + 1);
        Content::of_text_unkept(text)
    }

    /// How many of `texts` [`measured`] measured, each answer checked against measuring.
    fn measure_all(texts: &[&str]) -> usize {
        let before = MEASURED.get();
        for text in texts {
            assert_eq!(
                measured(text, counted),
                Content::of_text_unkept(text),
                "{text:?}"
            );
        }
        MEASURED.get() - before
    }

    fn long(tag: &str) -> String {
        format!("{tag}: {}", "cargo build output line\n".repeat(4))
    }

    #[test]
    fn a_run_measures_each_text_once() {
        forget(crate::formats::End::Free);
        let results: Vec<String> = (0..6).map(|i| long(&format!("result {i}"))).collect();
        let mut measures = 0;
        // Each model input re-lists every earlier result: 6 results, 15 tool messages.
        for n in 0..=results.len() {
            next_input();
            let input: Vec<&str> = results[..n].iter().map(String::as_str).collect();
            measures += measure_all(&input);
            if let Some(result) = results.get(n) {
                measures += measure_all(&[result]);
            }
        }
        assert_eq!(measures, results.len());
        forget(crate::formats::End::Free);
    }

    #[test]
    fn a_check_ending_either_way_leaves_nothing_for_the_next() {
        // With `End::Leave` the tables are not freed, but the next check still finds nothing:
        // a text measured before is measured again.
        for end in [crate::formats::End::Free, crate::formats::End::Leave] {
            forget(crate::formats::End::Free);
            let a = long("a");
            assert_eq!(measure_all(&[&a]), 1);
            assert_eq!(measure_all(&[&a]), 0);
            forget(end);
            assert_eq!(
                MEMO.with_borrow(|m| m.current.entries.len() + m.previous.entries.len()),
                0
            );
            assert_eq!(measure_all(&[&a]), 1, "{end:?}");
        }
        forget(crate::formats::End::Free);
    }

    #[test]
    fn a_text_older_than_the_previous_input_is_measured_again() {
        forget(crate::formats::End::Free);
        let (a, b, c) = (long("a"), long("b"), long("c"));
        assert_eq!(measure_all(&[&a]), 1);
        next_input();
        assert_eq!(measure_all(&[&b]), 1);
        next_input();
        // `a` was kept before the previous input began: dropped.
        assert_eq!(measure_all(&[&c, &a, &b]), 2);
        // An input with nothing measured keeps both generations.
        next_input();
        next_input();
        assert_eq!(measure_all(&[&a, &b, &c]), 0);
        forget(crate::formats::End::Free);
        assert_eq!(measure_all(&[&a]), 1);
        forget(crate::formats::End::Free);
    }

    #[test]
    fn after_many_misses_a_sample_is_kept_until_one_is_found() {
        forget(crate::formats::End::Free);
        let n = MISSES_BEFORE_SAMPLING as usize + 4 * SAMPLE_EVERY as usize;
        let texts: Vec<String> = (0..n).map(|i| long(&format!("once {i}"))).collect();
        let all: Vec<&str> = texts.iter().map(String::as_str).collect();
        assert_eq!(measure_all(&all), n);
        // Every text of the first misses is kept, then one in SAMPLE_EVERY.
        let kept = MEMO.with_borrow(|m| m.current.entries.len());
        assert_eq!(kept, MISSES_BEFORE_SAMPLING as usize + 4);
        // An input that re-lists them finds the kept ones, and then keeps every text again.
        next_input();
        assert_eq!(measure_all(&all), n - kept);
        next_input();
        assert_eq!(measure_all(&all), 0);
        // Texts looked up and none kept still make an input's worth: the input after them
        // drops what was kept before them.
        forget(crate::formats::End::Free);
        let (a, b) = (long("a"), long("b"));
        assert_eq!(measure_all(&[&a]), 1);
        next_input();
        MEMO.with_borrow_mut(|m| m.misses = MISSES_BEFORE_SAMPLING + 1);
        assert_eq!(measure_all(&[&b]), 1);
        assert_eq!(MEMO.with_borrow(|m| m.current.entries.len()), 0);
        next_input();
        assert_eq!(measure_all(&[&a]), 1);
        forget(crate::formats::End::Free);
    }

    #[test]
    fn short_texts_are_not_kept() {
        forget(crate::formats::End::Free);
        let short = "x".repeat(MIN_BYTES - 1);
        assert_eq!(measure_all(&[&short, &short]), 2);
        let at_min = "x".repeat(MIN_BYTES);
        assert_eq!(measure_all(&[&at_min, &at_min]), 1);
        forget(crate::formats::End::Free);
    }

    #[test]
    fn texts_of_one_hash_are_answered_right_or_measured() {
        // A crafted file can give many texts one hash: lookups stay within PROBES slots, the
        // texts past them are not kept, and no text is answered with another's measures.
        let mut g = Generation::default();
        let texts: Vec<String> = (0..40).map(|i| long(&format!("t{i}"))).collect();
        for t in &texts {
            g.add(t, 7, &Content::of_text_unkept(t));
        }
        assert_eq!(g.entries.len(), PROBES);
        for (i, t) in texts.iter().enumerate() {
            match g.get(t, 7) {
                Some(c) => {
                    assert!(i < PROBES);
                    assert_eq!(*c, Content::of_text_unkept(t));
                }
                None => assert!(i >= PROBES),
            }
        }
        // And a kept text is found under its own hash only.
        assert!(g.get(&texts[0], 8).is_none());
    }

    #[test]
    fn a_generation_is_bounded() {
        let mut g = Generation::default();
        let c = Content::of_text_unkept("x");
        for i in 0..GENERATION_TEXTS + 100 {
            let t = format!("{i:0>70}");
            g.add(&t, hash(t.as_bytes()), &c);
        }
        assert!(g.entries.len() <= GENERATION_TEXTS);
        assert!(g.slots.len() <= 4 * GENERATION_TEXTS);
        // Cleared, it keeps no large table for the inputs after it to clear again.
        g.clear();
        assert!(g.entries.is_empty() && g.slots.len() <= KEPT_SLOTS);
        let t = "z".repeat(70);
        g.add(&t, 3, &c);
        assert!(g.get(&t, 3).is_some());
        let mut g = Generation::default();
        let big = "y".repeat(GENERATION_BYTES / 2 + 1);
        g.add(&big, 1, &c);
        g.add(&big.replace('y', "z"), 2, &c);
        assert_eq!(g.entries.len(), 1);
        assert!(g.text.len() <= GENERATION_BYTES);
    }
}
