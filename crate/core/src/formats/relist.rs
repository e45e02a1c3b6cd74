//! Model inputs that re-list an earlier input: read from where that one ended.
//!
//! An agent's model call sends the whole conversation so far, so each model input of a run
//! is the previous one's list of messages and a few more, and the inputs are most of the
//! bytes of a Langfuse or Agents SDK export (an Agents SDK run of 60 tool calls: 93% of its
//! bytes are earlier inputs re-listed). [`super::memo`] spares measuring a re-listed text
//! again, but each message was still read: its fields, its strings, the tool calls it
//! names. Here, when an input's text starts with the text of a recent input's entries, byte
//! for byte, and an entry ends there, the list is read from that point on, starting from
//! what reading that input's entries left ([`Listed`]): what reading a message adds depends
//! only on the message and on what the entries before it left, so the same bytes leave the
//! same reading, and the tool messages come out as a reading from the start gives them.
//!
//! How the two readers meet: the line deserializer ([`super::line_de`]) answers a request
//! for a model input by name ([`super::line_de::RELISTED_INPUT`]); at a list it asks
//! [`resume`] where to start, hands the list visitor its reading through [`resumed`], takes
//! the visitor's reading after the last entry ([`offer`]) and keeps it with the list's text
//! once the list is read ([`end`]). Only a list read to its end, by the visitor of a model
//! input ([`super::message_list`]), is kept.
//!
//! What makes a resumed reading the one a full reading gives:
//! - the kept text runs from the `[` to the end of the last entry, and the new text goes on
//!   after it (past whitespace) with `,` or `]`, so every kept entry ends where it ended
//!   before (a number cannot go on with more digits);
//! - the kept entries were accepted at a nesting depth no smaller than the new list's, and
//!   under the same limit on object members, so the deserializer would accept them again
//!   (a deeper list may not resume: its entries could pass serde_json's depth limit);
//! - a list whose first entry was itself read as the list ([`super::message_list`]'s
//!   LangChain batch) is not kept.
//!
//! Bounded whatever the input: at most [`KEPT`] inputs, each of at most [`MAX_TEXT`] bytes
//! and [`MAX_MESSAGES`] tool messages, and one spare buffer (a kept text's, which a resume
//! took); a resume compares each kept text once with the new one (a memory compare, never
//! more bytes than the new list has). Like the memo it is a thread's, and [`forget`] drops
//! it when a check ends.

#[cfg(test)]
use std::cell::Cell;
use std::cell::RefCell;

use super::messages::Reading;

/// Inputs kept: a few, for exports in which runs' spans interleave.
const KEPT: usize = 4;
/// The largest input text kept (longer ones are read whole every time).
const MAX_TEXT: usize = 4 << 20;
/// The most tool messages a kept reading holds: a text of tiny messages would otherwise
/// keep hundreds of bytes of measures per few bytes of text.
const MAX_MESSAGES: usize = 1 << 14;

/// What reading a list's entries left: the reading after the last one, and how many there
/// were.
pub(super) struct Listed {
    pub reading: Reading,
    pub entries: usize,
}

struct Kept {
    /// The list's text from its `[` to the end of its last entry.
    text: String,
    depth: u32,
    max_members: u32,
    listed: Listed,
}

#[derive(Default)]
struct Relist {
    kept: Vec<Kept>,
    /// The reading a resumed list starts from, until its visitor takes it.
    resumed: Option<Listed>,
    /// A list is being read for keeping ([`resume`] was asked), and what its visitor offered.
    recording: bool,
    offered: Option<Listed>,
    /// The text buffer of the input a resume took, for [`end`] to keep the new text in:
    /// the new text is that one and more, and a fresh buffer for it each time (the taken
    /// one freed, too small to be reused for it) moved the kept texts into untouched memory
    /// again and again (a thousand page faults, 4 MB, on 50 MB of Langfuse export).
    spare: String,
}

thread_local! {
    static RELIST: RefCell<Relist> = RefCell::default();
}

/// A model input's list starts at `text[0]` (its `[`), read at nesting `depth` with at most
/// `max_members` members an object: where to read it from, when a kept input's entries are
/// its first ones (the end of the longest such text), whose reading [`resumed`] then hands
/// out. `None`: read it from the start. Either way the list is recorded for keeping.
pub(super) fn resume(text: &[u8], depth: u32, max_members: u32) -> Option<usize> {
    RELIST.with_borrow_mut(|r| {
        r.recording = true;
        r.offered = None;
        r.resumed = None;
        #[cfg(test)]
        if tests::OFF.with(Cell::get) {
            return None;
        }
        let usable = |k: &Kept| {
            k.depth >= depth
                && k.max_members == max_members
                && crate::bytes::starts_with(text, k.text.as_bytes())
                && next_is_end_of_entry(&text[k.text.len()..])
        };
        let (i, _) = r
            .kept
            .iter()
            .enumerate()
            .filter(|(_, k)| usable(k))
            .max_by_key(|(_, k)| k.text.len())?;
        // Taken, not copied: the list read now is kept in its place.
        let kept = r.kept.remove(i);
        #[cfg(test)]
        tests::RESUMED.with(|n| n.set(n.get() + 1));
        let at = kept.text.len();
        r.resumed = Some(kept.listed);
        r.spare = kept.text;
        Some(at)
    })
}

/// Whether `rest`, past whitespace, starts with what may follow a list's entry.
fn next_is_end_of_entry(rest: &[u8]) -> bool {
    rest.iter()
        .find(|c| !matches!(c, b' ' | b'\n' | b'\t' | b'\r'))
        .is_some_and(|c| matches!(c, b',' | b']'))
}

/// For the visitor of a model input's list: the reading to start from, when [`resume`] found
/// one for this list.
pub(super) fn resumed() -> Option<Listed> {
    RELIST.with_borrow_mut(|r| r.resumed.take())
}

/// For the visitor of a model input's list, its entries all read: what they left, kept with
/// the list's text if the list is being recorded.
pub(super) fn offer(reading: &Reading, entries: usize) {
    RELIST.with_borrow_mut(|r| {
        if r.recording && r.offered.is_none() && reading.tool_messages() <= MAX_MESSAGES {
            r.offered = Some(Listed {
                reading: reading.clone(),
                entries,
            });
        }
    })
}

/// The recorded list was read (`read`: its text, from `[` to `]`) or failed (`None`): what
/// its visitor offered is kept with its text, or dropped.
pub(super) fn end(read: Option<&str>, depth: u32, max_members: u32) {
    RELIST.with_borrow_mut(|r| {
        r.recording = false;
        r.resumed = None;
        let offered = r.offered.take();
        let (Some(text), Some(listed)) = (read, offered) else {
            return;
        };
        // Without the closing bracket and the whitespace before it: the end of the last entry.
        let text = text
            .strip_suffix(']')
            .unwrap_or(text)
            .trim_end_matches([' ', '\n', '\t', '\r']);
        if listed.entries == 0 || text.len() > MAX_TEXT {
            return;
        }
        // The oldest goes, and its string is reused; else the one a resume took, if any.
        let mut buffer = if r.kept.len() >= KEPT {
            r.kept.remove(0).text
        } else {
            std::mem::take(&mut r.spare)
        };
        buffer.clear();
        buffer.push_str(text);
        r.kept.push(Kept {
            text: buffer,
            depth,
            max_members,
            listed,
        });
    })
}

/// A check ended: nothing is kept for the next one (and with [`super::End::Leave`], the
/// kept inputs are left taken rather than freed).
pub(super) fn forget(end: super::End) {
    end.release(RELIST.take());
}

#[cfg(test)]
mod tests {
    use std::cell::Cell;

    use super::super::message_list::{read_text, Input};
    use super::*;

    thread_local! {
        /// Lists resumed on this thread.
        pub(super) static RESUMED: Cell<usize> = const { Cell::new(0) };
        /// Nothing resumes on this thread (a reading from the start, for comparison).
        pub(super) static OFF: Cell<bool> = const { Cell::new(false) };
    }

    /// Real producers' exports (pkg-tests/producers/corpus) are read the same whether their
    /// inputs resume or not: every model call's tool messages, and what the join makes of
    /// them. The Agents SDK's own export, the AI SDK's `ai.prompt.messages` and
    /// pydantic-ai's `gen_ai.input.messages` re-list, and resume.
    #[test]
    fn real_exports_read_the_same_with_or_without_resuming() {
        use super::super::otlp_json::tests::Recorder;
        use super::super::reader::json_line_as;
        use super::super::{Collector, Format};
        let files = crate::real_texts::corpus_files(".jsonl");
        assert!(files.len() >= 15, "{files:?}");
        let mut resumed_in = Vec::new();
        for file in &files {
            let text = std::fs::read(file).unwrap();
            let name = file.file_name().unwrap().to_string_lossy().into_owned();
            let format = if name.ends_with(".otlp.jsonl") {
                Format::Otlp
            } else {
                Format::OpenaiAgents
            };
            let read = |off: bool| {
                OFF.with(|o| o.set(off));
                RESUMED.with(|n| n.set(0));
                let (mut collector, mut sink) = (Collector::default(), Recorder::default());
                for (i, line) in text.split(|&b| b == b'\n').enumerate() {
                    json_line_as(format, i as u64 + 1, line, &mut collector, &mut sink, true);
                }
                sink.0
                    .push(format!("{:?} {:?}", collector.tools, collector.models));
                collector.finish(&mut sink, crate::formats::End::Free);
                OFF.with(|o| o.set(false));
                (sink.0, RESUMED.with(Cell::get))
            };
            let (with, resumed) = read(false);
            let (without, none) = read(true);
            assert_eq!(none, 0);
            assert_eq!(with, without, "{name}");
            if resumed > 0 {
                resumed_in.push(name);
            }
        }
        for producer in [
            "openai-agents.jsonl",
            "ai-sdk-generate.otlp.jsonl",
            "pydantic-ai.otlp.jsonl",
        ] {
            let found = resumed_in.iter().any(|n| n == producer);
            assert!(found, "{producer} did not resume: {resumed_in:?}");
        }
    }

    #[test]
    fn a_check_ending_either_way_leaves_nothing_for_the_next() {
        // With `End::Leave` the kept inputs are not freed, but the next check resumes from
        // none of them.
        let longer = format!("{}{MORE}", &FIRST[..FIRST.len() - 1]);
        for end in [crate::formats::End::Free, crate::formats::End::Leave] {
            forget(crate::formats::End::Free);
            RESUMED.with(|n| n.set(0));
            read_text(FIRST);
            read_text(&longer);
            assert_eq!(RESUMED.with(Cell::get), 1, "kept within a check");
            forget(end);
            assert_eq!(RELIST.with_borrow(|r| r.kept.len()), 0);
            read_text(&longer);
            assert_eq!(
                RESUMED.with(Cell::get),
                1,
                "{end:?}: resumed from a check before"
            );
        }
        forget(crate::formats::End::Free);
    }

    /// `text` read alone, nothing kept before or after.
    fn fresh(text: &str) -> Option<Option<Input>> {
        forget(crate::formats::End::Free);
        let read = read_text(text);
        forget(crate::formats::End::Free);
        read
    }

    /// `texts` read in turn on one thread: what the last gave, and how many were resumed.
    fn in_turn(texts: &[&str]) -> (Option<Option<Input>>, usize) {
        forget(crate::formats::End::Free);
        RESUMED.with(|n| n.set(0));
        let mut last = None;
        for text in texts {
            last = read_text(text);
        }
        forget(crate::formats::End::Free);
        (last, RESUMED.with(Cell::get))
    }

    const FIRST: &str = r#"[{"role": "system", "content": "s"}, {"role": "assistant", "content": null, "tool_calls": [{"id": "c1", "function": {"name": "ls"}}]}, {"role": "tool", "tool_call_id": "c1", "content": "a\nb"}]"#;
    const MORE: &str = r#", {"role": "assistant", "content": null, "tool_calls": [{"id": "c2", "function": {"name": "cat"}}]}, {"role": "tool", "tool_call_id": "c2", "content": "x"}, {"role": "tool", "tool_call_id": "c1", "content": "again"}]"#;

    fn relisting(first: &str, more: &str) -> String {
        format!("{}{more}", first.strip_suffix(']').unwrap())
    }

    /// An input that re-lists the previous one reads from where that one ended, and gives
    /// what a reading from its start gives: names from the assistant calls of the re-listed
    /// entries, and `trailing` after the new last assistant message.
    #[test]
    fn a_relisting_input_reads_as_one_read_from_the_start() {
        let second = relisting(FIRST, MORE);
        let (read, resumed) = in_turn(&[FIRST, &second]);
        assert_eq!(resumed, 1);
        let want = fresh(&second);
        assert_eq!(read, want);
        let Some(Some(Ok(messages))) = want else {
            panic!("not read: {want:?}")
        };
        let got: Vec<_> = messages
            .iter()
            .map(|m| (m.call_id.as_deref(), m.name.as_deref(), m.trailing))
            .collect();
        assert_eq!(
            got,
            [
                (Some("c1"), Some("ls"), false),
                (Some("c2"), Some("cat"), true),
                (Some("c1"), Some("ls"), true)
            ]
        );
        // The same input again, and a third one re-listing the second.
        let third = relisting(
            &second,
            r#", {"role": "tool", "tool_call_id": "c2", "content": "y"}]"#,
        );
        let (read, resumed) = in_turn(&[FIRST, &second, &second, &third]);
        assert_eq!((read, resumed), (fresh(&third), 3));
    }

    /// Where the new text only looks like a continuation, it is read from the start: an
    /// entry that goes on past the kept text (a number with more digits), other spacing, a
    /// list whose first entry was read as the list, an empty one.
    #[test]
    fn only_a_continuation_after_a_whole_entry_resumes() {
        let cases: [(&str, &str, usize); 7] = [
            (r#"[{"role": "tool", "content": "x"}, 12]"#, r#"[{"role": "tool", "content": "x"}, 123]"#, 0),
            (r#"[{"role": "tool", "content": "x"}, 12]"#, r#"[{"role": "tool", "content": "x"}, 12, 3]"#, 1),
            (r#"[{"role": "tool", "content": "x"}, "a"]"#, r#"[{"role": "tool", "content": "x"}, "ab"]"#, 0),
            (r#"[ {"role": "tool", "content": "x"} ]"#, "[ {\"role\": \"tool\", \"content\": \"x\"} \n, {\"role\": \"tool\", \"content\": \"y\"} ]", 1),
            (r#"[{"role":"tool","content":"x"}]"#, r#"[{"role": "tool", "content": "x"}, 1]"#, 0),
            (r#"[[{"role": "tool", "content": "x"}]]"#, r#"[[{"role": "tool", "content": "x"}], {"role": "tool", "content": "y"}]"#, 0),
            ("[]", r#"[{"role": "tool", "content": "y"}]"#, 0),
        ];
        for (first, second, want_resumed) in cases {
            let (read, resumed) = in_turn(&[first, second]);
            assert_eq!(resumed, want_resumed, "{first} then {second}");
            assert_eq!(read, fresh(second), "{first} then {second}");
        }
    }

    /// A re-listing text that is not JSON after the kept entries fails as it does alone.
    #[test]
    fn a_broken_continuation_fails_as_it_does_alone() {
        for more in [", {\"role\": ]", ",]", ", 1", "} ]", ", \"\\ud800\"]"] {
            let second = relisting(FIRST, more);
            let (read, _) = in_turn(&[FIRST, &second]);
            assert_eq!(read, fresh(&second), "{second}");
            assert_eq!(read, None, "{second}");
        }
    }

    /// Runs whose inputs interleave each resume from their own previous input, up to the
    /// number kept; past it, the oldest is read whole again.
    #[test]
    fn interleaved_runs_resume_from_their_own_inputs() {
        let runs: Vec<Vec<String>> = (0..KEPT + 1)
            .map(|run| {
                let mut inputs = vec![format!(r#"[{{"role": "user", "content": "run {run}"}}]"#)];
                for call in 0..3 {
                    let more = format!(
                        r#", {{"role": "tool", "tool_call_id": "r{run}c{call}", "content": "out {run} {call}"}}]"#
                    );
                    let next = relisting(inputs.last().unwrap(), &more);
                    inputs.push(next);
                }
                inputs
            })
            .collect();
        for n in [KEPT, KEPT + 1] {
            // Input i of each of the first n runs, then input i + 1 of each.
            let order: Vec<&str> = (0..4)
                .flat_map(|i| runs[..n].iter().map(move |run| run[i].as_str()))
                .collect();
            forget(crate::formats::End::Free);
            RESUMED.with(|c| c.set(0));
            for text in &order {
                assert_eq!(read_text(text), fresh_kept(text), "{text}");
            }
            let resumed = RESUMED.with(Cell::get);
            forget(crate::formats::End::Free);
            assert_eq!(resumed, if n == KEPT { 3 * n } else { 0 }, "{n} runs");
        }
    }

    /// An input of more tool messages than a kept reading may hold is not kept: the next
    /// one is read whole, and the same.
    #[test]
    fn a_reading_of_too_many_messages_is_not_kept() {
        for n in [MAX_MESSAGES, MAX_MESSAGES + 1] {
            let entries = vec![r#"{"role": "tool", "content": "r"}"#; n];
            let first = format!("[{}]", entries.join(", "));
            let second = relisting(&first, r#", {"role": "tool", "content": "s"}]"#);
            let (read, resumed) = in_turn(&[&first, &second]);
            assert_eq!(resumed, usize::from(n == MAX_MESSAGES), "{n}");
            assert_eq!(read, fresh(&second), "{n}");
        }
    }

    /// [`fresh`] without dropping what this thread keeps.
    fn fresh_kept(text: &str) -> Option<Option<Input>> {
        let kept = RELIST.take();
        let read = read_text(text);
        RELIST.set(kept);
        read
    }

    /// A kept list resumes only a list at its nesting depth or shallower, under the same
    /// limit on object members: its entries were accepted there.
    #[test]
    fn a_deeper_list_does_not_resume() {
        forget(crate::formats::End::Free);
        let text = r#"[{"role": "tool", "content": "x"}]"#;
        let longer = r#"[{"role": "tool", "content": "x"}, 1]"#;
        end(Some(text), 5, u32::MAX);
        assert!(
            RELIST.with_borrow(|r| r.kept.is_empty()),
            "kept without an offer"
        );
        for (depth, members, resumes) in [
            (6, u32::MAX, false),
            (5, 8, false),
            (5, u32::MAX, true),
            (2, u32::MAX, true),
        ] {
            forget(crate::formats::End::Free);
            resume(b"[", 5, u32::MAX);
            offer(&Reading::new(), 1);
            end(Some(text), 5, u32::MAX);
            let at = resume(longer.as_bytes(), depth, members);
            assert_eq!(
                at,
                resumes.then_some(text.len() - 1),
                "depth {depth}, members {members}"
            );
            end(None, depth, members);
        }
        forget(crate::formats::End::Free);
    }

    /// The deserializer's nesting limit holds across a resume: entries kept from a list at
    /// the top of a string (a Langfuse input given as JSON text) are not taken for a list
    /// deeper in a line, where serde_json refuses them.
    #[test]
    fn nesting_past_the_limit_is_refused_after_a_resume() {
        use super::super::otlp_json::tests::Recorder;
        use super::super::reader::json_line_as;
        use super::super::{Collector, Format};
        let deep = format!("{}1{}", "[".repeat(125), "]".repeat(125));
        let list =
            format!(r#"[{{"role": "tool", "tool_call_id": "c", "content": "x", "d": {deep}}}]"#);
        let relisting = format!(
            r#"{}, {{"role": "tool", "tool_call_id": "d", "content": "y"}}]"#,
            list.strip_suffix(']').unwrap()
        );
        let line = |id: &str, input: String| {
            format!(
                r#"{{"id": "{id}", "traceId": "t", "type": "GENERATION", "startTime": "2025-01-01T00:00:00Z", "input": {input}}}"#
            )
        };
        let as_string = serde_json::to_string(&list).unwrap();
        let lines = [line("g1", as_string), line("g2", relisting)];
        let run = |fast: bool| {
            let (mut collector, mut sink) = (Collector::default(), Recorder::default());
            for (i, l) in lines.iter().enumerate() {
                json_line_as(
                    Format::Langfuse,
                    i as u64 + 1,
                    l.as_bytes(),
                    &mut collector,
                    &mut sink,
                    fast,
                );
            }
            collector.finish(&mut sink, crate::formats::End::Free);
            sink.0
        };
        RESUMED.with(|c| c.set(0));
        let fast = run(true);
        assert_eq!(RESUMED.with(Cell::get), 0);
        assert_eq!(fast, run(false));
        assert!(
            fast.iter().any(|e| e.contains("not valid JSON")),
            "{fast:?}"
        );
    }
}

// proptest is a native-only dev-dependency (see Cargo.toml).
#[cfg(all(test, not(target_arch = "wasm32")))]
mod properties {
    use proptest::prelude::*;
    use proptest::test_runner::{Config, RngSeed};

    use super::super::message_list::read_text;
    use super::forget;

    /// An entry of a model input: a message of one of the shapes the readers know, or
    /// something else.
    fn entry() -> impl Strategy<Value = String> {
        let id = prop::sample::select(vec!["c1", "c2", " c3 ", ""]);
        let text =
            prop::sample::select(vec!["x", "a\\nb", "[truncated 5 chars]", "{\"k\": 1}", "é"]);
        // Scalars that start alike often: a kept text ending in `12` or `"a` before one going
        // on with `123` or `"ab"`.
        let scalar =
            prop::sample::select(vec!["1", "12", "123", "\"a\"", "\"ab\"", "null", "true"]);
        prop_oneof![
            1 => (id.clone(), text.clone()).prop_map(|(id, t)| format!(r#"{{"role": "tool", "tool_call_id": "{id}", "content": "{t}"}}"#)),
            1 => (id.clone(), prop::sample::select(vec!["ls", "cat"])).prop_map(|(id, n)| format!(r#"{{"role": "assistant", "content": null, "tool_calls": [{{"id": "{id}", "function": {{"name": "{n}"}}}}]}}"#)),
            1 => (id.clone(), text.clone()).prop_map(|(id, t)| format!(r#"{{"type": "function_call_output", "call_id": "{id}", "output": "{t}"}}"#)),
            1 => (id, text).prop_map(|(id, t)| format!(r#"{{"role": "user", "content": [{{"type": "tool_result", "tool_use_id": "{id}", "content": "{t}"}}]}}"#)),
            1 => Just(r#"{"role": "user", "content": "hi"}"#.to_string()),
            1 => Just(r#"[{"role": "tool", "content": "nested"}]"#.to_string()),
            6 => scalar.prop_map(str::to_string),
        ]
    }

    fn list(entries: &[String], sep: &str) -> String {
        format!("[{}]", entries.join(sep))
    }

    proptest! {
        #![proptest_config({
            let mut config = Config::with_cases(2000);
            if std::env::var_os("PROPTEST_RNG_SEED").is_none() {
                config.rng_seed = RngSeed::Fixed(0x7E11_5700_0000_0001);
            }
            config.failure_persistence = None;
            config
        })]
        /// Inputs that re-list earlier ones (or only look like it) read as each read alone:
        /// prefixes of two lists that share their first entries, in any order and spacing.
        #[test]
        fn inputs_read_in_turn_read_as_each_alone(
            a in prop::collection::vec(entry(), 0..5),
            b in prop::collection::vec(entry(), 0..5),
            shared in 0usize..5,
            picks in prop::collection::vec((any::<bool>(), 0usize..10), 1..5),
            seps in prop::collection::vec(prop::sample::select(vec![", ", ",", " ,\n "]), 1..4),
        ) {
            let other: Vec<String> = a[..shared.min(a.len())].iter().chain(&b).cloned().collect();
            let texts: Vec<String> = picks
                .iter()
                .zip(seps.iter().cycle())
                .map(|(&(first, cut), sep)| {
                    let from = if first { &a } else { &other };
                    list(&from[..cut.min(from.len())], sep)
                })
                .collect();
            let alone: Vec<_> = texts.iter().map(|t| { forget(crate::formats::End::Free); read_text(t) }).collect();
            forget(crate::formats::End::Free);
            for (text, want) in texts.iter().zip(&alone) {
                prop_assert_eq!(&read_text(text), want, "{}", text);
            }
            forget(crate::formats::End::Free);
        }
    }
}
