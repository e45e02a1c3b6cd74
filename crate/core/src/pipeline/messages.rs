//! A trace's tool messages, each kept once, and model call inputs as runs of them.
//!
//! Every model call's input re-lists the conversation so far: the results of every earlier
//! tool call of the run. Kept per model call, as the state did before, a run of n tool calls
//! sent span by span held n²/2 measures (each with its digests and a 128-character preview,
//! some 450 bytes as JSON): 2.2 MB of state at 100 calls, past a Durable Object's 2 MB
//! value limit, 34 MB at 400, written whole after every request (in workerd, SQLITE_TOOBIG
//! and 503 from about 200 calls on, spans lost). Here each distinct message is kept once, in
//! the order first seen, and an input is runs of consecutive messages of that table: a
//! conversation re-listed is one run, or two when its last results are `trailing`. The state
//! grows with the calls, not with their square.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize, Serializer};

use crate::formats::pipeline_parts::{Captured, MessageRef, ToolMessage};
use crate::hash::Digest;

/// The content of a message that is not there (see [`Messages::content`]).
pub(super) static NONE: Captured = Captured::Missing(String::new());

/// A tool message without its place in an input (`trailing`, kept in the [`Run`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(super) struct Message {
    call_id: Option<String>,
    name: Option<String>,
    content: Captured,
}

/// Messages `from..from + len` of the table, all trailing or all not; stored as
/// `[from, len, trailing]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub(super) struct Run(u32, u32, bool);

impl Run {
    /// Messages in the run.
    pub fn len(&self) -> usize {
        self.1 as usize
    }
}

/// What finds a message's earlier copies: its call id and the digest of its text. Equal
/// keys are compared whole. Ordered, never hashed: the ids are the exporter's, and a map
/// with a fast hash could be flooded (see `formats::join`).
type Key = (Option<String>, Option<Digest>);

/// The distinct tool messages of a trace's model calls, in the order first seen.
#[derive(Debug, Clone, Default)]
pub(super) struct Messages {
    list: Vec<Message>,
    index: BTreeMap<Key, Vec<u32>>,
}

fn key_of(call_id: &Option<String>, content: &Captured) -> Key {
    let digest = match content {
        Captured::Text(c) => Some(c.sha256),
        Captured::Missing(_) => None,
    };
    (call_id.clone(), digest)
}

impl Messages {
    /// A table read back from storage: its list, the index built again.
    pub fn from_list(list: Vec<Message>) -> Messages {
        let mut index: BTreeMap<Key, Vec<u32>> = BTreeMap::new();
        for (i, m) in list.iter().enumerate() {
            index
                .entry(key_of(&m.call_id, &m.content))
                .or_default()
                .push(i as u32);
        }
        Messages { list, index }
    }

    pub fn len(&self) -> usize {
        self.list.len()
    }

    /// An input's tool messages as runs of the table, each message added when it is new.
    /// Work in the input's length (a lookup each), not in the table's.
    pub fn runs_of(&mut self, input: Vec<ToolMessage>) -> Vec<Run> {
        let mut runs: Vec<Run> = Vec::new();
        for m in input {
            let i = self.add(Message {
                call_id: m.call_id,
                name: m.name,
                content: m.content,
            });
            match runs.last_mut() {
                Some(r) if r.0 + r.1 == i && r.2 == m.trailing => r.1 += 1,
                _ => runs.push(Run(i, 1, m.trailing)),
            }
        }
        runs
    }

    /// How many of `input`'s messages have no equal one in the table (a message repeated
    /// within the input counted each time): what [`Messages::runs_of`] would add, at most.
    pub fn new_in(&self, input: &[ToolMessage]) -> usize {
        let known = |m: &ToolMessage| {
            self.index
                .get(&key_of(&m.call_id, &m.content))
                .is_some_and(|same| {
                    same.iter().any(|&i| {
                        let t = &self.list[i as usize];
                        t.call_id == m.call_id && t.name == m.name && t.content == m.content
                    })
                })
        };
        input.iter().filter(|m| !known(m)).count()
    }

    /// The place of `message` in the table, added at the end when no equal one is there.
    /// (The table's length fits a `u32`: each message takes more than a byte of memory.)
    fn add(&mut self, message: Message) -> u32 {
        let Messages { list, index } = self;
        let same = index
            .entry(key_of(&message.call_id, &message.content))
            .or_default();
        if let Some(&i) = same.iter().find(|&&i| list[i as usize] == message) {
            return i;
        }
        let i = list.len() as u32;
        list.push(message);
        same.push(i);
        i
    }

    /// Forgets the messages from `len` on (added for an input that was then not kept).
    pub fn truncate(&mut self, len: usize) {
        let gone = self.list.split_off(len.min(self.list.len()));
        for (at, m) in (len as u32..).zip(gone) {
            let key = key_of(&m.call_id, &m.content);
            if let Some(same) = self.index.get_mut(&key) {
                same.retain(|&i| i != at);
                if same.is_empty() {
                    self.index.remove(&key);
                }
            }
        }
    }

    /// Whether every run lies inside the table (a stored state is checked before use).
    pub fn holds(&self, runs: &[Run]) -> bool {
        runs.iter().all(|r| {
            (r.0 as usize)
                .checked_add(r.1 as usize)
                .is_some_and(|end| end <= self.len())
        })
    }

    /// An input's tool messages for the join, in input order, each with its place in the
    /// table (read as kept: a copy of every message of every input for each decision was
    /// most of a long run's time; see `formats::join::Inputs`). Runs past the table give
    /// nothing (a stored state is checked with [`Messages::holds`] before use).
    pub fn each<'s>(&'s self, runs: &[Run], mut f: impl FnMut(MessageRef<'s>)) {
        for &Run(from, len, trailing) in runs {
            let (from, len) = (from as usize, len as usize);
            let Some(list) = self.list.get(from..from.saturating_add(len)) else {
                continue;
            };
            for (i, m) in list.iter().enumerate() {
                f(MessageRef {
                    call_id: m.call_id.as_deref(),
                    name: m.name.as_deref(),
                    trailing,
                    distinct: Some(from + i),
                });
            }
        }
    }

    /// The content of message `k` of the input made of `runs` (the join asks only for
    /// messages it was given; past the input, none, never a panic).
    pub fn content(&self, runs: &[Run], k: usize) -> &Captured {
        let mut k = k;
        for &Run(from, len, _) in runs {
            if k < len as usize {
                return self
                    .list
                    .get(from as usize + k)
                    .map_or(&NONE, |m| &m.content);
            }
            k -= len as usize;
        }
        &NONE
    }

    /// An input's tool messages again, in input order.
    #[cfg(test)]
    pub fn expand(&self, runs: &[Run]) -> Vec<ToolMessage> {
        let mut out = Vec::with_capacity(runs.iter().map(Run::len).sum());
        for &Run(from, len, trailing) in runs {
            let (from, len) = (from as usize, len as usize);
            out.extend(self.list[from..from + len].iter().map(|m| ToolMessage {
                call_id: m.call_id.clone(),
                name: m.name.clone(),
                content: m.content.clone(),
                trailing,
            }));
        }
        out
    }
}

/// Stored as the list alone.
impl Serialize for Messages {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.list.serialize(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn msg(id: &str, text: &str, trailing: bool) -> ToolMessage {
        let content = Captured::Text(crate::formats::pipeline_parts::Content::of_text(text));
        ToolMessage {
            call_id: Some(id.into()),
            name: None,
            content,
            trailing,
        }
    }

    #[test]
    fn a_conversation_relisted_is_one_run_and_reads_back_whole() {
        let mut table = Messages::default();
        let mut inputs = Vec::new();
        let mut conversation = Vec::new();
        for i in 0..50 {
            // The newest result trails the input (it follows the last assistant message).
            let input: Vec<ToolMessage> = conversation
                .iter()
                .map(|m: &ToolMessage| ToolMessage {
                    trailing: false,
                    ..m.clone()
                })
                .chain([msg(&format!("c{i}"), &format!("result {i}"), true)])
                .collect();
            conversation.push(input.last().unwrap().clone());
            let runs = table.runs_of(input.clone());
            assert!(runs.len() <= 2, "{runs:?}");
            inputs.push((input, runs));
        }
        assert_eq!(table.len(), 50);
        for (input, runs) in &inputs {
            assert!(table.holds(runs));
            assert_eq!(&table.expand(runs), input);
        }
        // Stored and read back: the same runs find the same messages.
        let back = Messages::from_list(
            serde_json::from_str(&serde_json::to_string(&table).unwrap()).unwrap(),
        );
        for (input, runs) in &inputs {
            assert_eq!(&back.expand(runs), input);
        }
    }

    #[test]
    fn messages_that_differ_in_anything_are_kept_apart() {
        let mut table = Messages::default();
        let a = msg("c1", "same text", false);
        let named = ToolMessage {
            name: Some("ls".into()),
            ..a.clone()
        };
        let other_text = msg("c1", "other text", false);
        let other_id = msg("c2", "same text", false);
        let missing = ToolMessage {
            content: Captured::Missing("not recorded".into()),
            ..a.clone()
        };
        let input = vec![a.clone(), named, other_text, other_id, missing, a];
        assert_eq!(table.new_in(&input), 6);
        let runs = table.runs_of(input.clone());
        assert_eq!(table.new_in(&input), 0);
        assert_eq!(table.new_in(&[msg("c1", "third text", true)]), 1);
        assert_eq!(table.len(), 5);
        assert_eq!(table.expand(&runs), input);
        assert!(!table.holds(&[Run(4, 2, false)]));
        assert!(!table.holds(&[Run(u32::MAX, u32::MAX, false)]));
    }
}
