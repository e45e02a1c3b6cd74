//! The state of one trace in the pipeline: its tool and model calls (measures only, never the
//! text), which tool spans still wait for their verdict, and until when.
//!
//! A tool span is decided as soon as the trace holds a model call that is *later* than it in
//! the join's sense (started at or after the tool span ended; read order when times are
//! missing). The decision runs the check's own join and classifier over every call of the
//! trace held so far, so the verdict is the one `toolslice check` gives on those spans. A
//! tool span still waiting when its deadline passes is decided the same way, which finds no
//! later model call and says `incomplete`, with the deadline named in the detail.
//!
//! The state is plain data (serde), so a Durable Object can store it between requests and a
//! Node process can keep it in a map. A trace holds at most [`MAX_CALLS_PER_TRACE`] calls:
//! beyond that, a new tool span is decided at once as `incomplete` (saying so) and a model
//! call is not kept, so neither memory nor the per-request join grows without bound. The
//! model calls' inputs, which re-list the conversation, are kept as runs of one table of the
//! trace's distinct tool messages ([`super::messages`]), so the state grows with the calls.

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};

use super::messages::{Message, Messages, Run, NONE};
use super::{Annotation, TraceBatch};
use crate::check::{CheckOptions, ReportBuilder, RowRef, Status};
use crate::formats::pipeline_parts::{
    self as parts, join_into, Captured, MessageRef, ModelCall, SpanRef, ToolCall, ToolMessage,
};

/// Tool and model calls one trace may hold.
pub const MAX_CALLS_PER_TRACE: usize = 20_000;

/// Tool messages the model calls' inputs of one trace may carry in all (each counted in
/// every input that re-lists it), and distinct ones the trace may keep. A decision joins
/// every call of the trace, reading each input's runs of the message table (a step per
/// message carried, its id looked up once per distinct message), so its work and memory grow
/// with the first: 1,000,000 (a run of about 1,400 tool calls sent span by span, each model
/// call re-listing the conversation) is about 50 ms and 9 MiB of wasm memory for the
/// request decided on this 2-core machine on 2026-12-04 (pkg-tests/otlp-endpoint/bench.mjs;
/// the bound was 200,000 while each decision copied every input out, which took 71-75 ms
/// and 47 MiB at a 600-call run). The stored state and the table grow with the second (each
/// distinct message some 450 bytes of JSON): 20,000, as many as the calls a trace holds.
/// Model calls carrying 8,000 distinct messages each reached 366 MiB of wasm memory and a
/// 75 MB state in 25 requests under the first bound alone; a Worker has 128 MB. An input
/// past either is not kept: the model call is held as uncaptured, saying why, so the tool
/// calls it would have answered are `incomplete` with that reason rather than joined with a
/// later one.
pub const MAX_MESSAGES_PER_TRACE: usize = 1_000_000;
/// Distinct tool messages one trace may keep (see [`MAX_MESSAGES_PER_TRACE`]). An input of
/// more messages than this is dropped by the split already (`export::file_span`), before its
/// measures are written out and read back.
pub const MAX_DISTINCT_MESSAGES_PER_TRACE: usize = 20_000;
/// Runs of the message table one trace's kept inputs may take in all (see
/// [`super::messages::Run`]). A conversation re-listed is one or two runs per model call, so
/// this never binds a real run; inputs that pick their messages out of order (each message a
/// run of its own) reached 1,000,000 runs under the carried bound: a 20 MB state and 87 MB
/// of wasm memory (a Worker has 128 MB). At this bound such a trace stores about 4 MB of runs.
pub const MAX_RUNS_PER_TRACE: usize = 200_000;

#[derive(Debug, Clone, Serialize, Deserialize)]
struct Tool {
    key: String,
    call: ToolCall,
    /// When it stops waiting (ms since the epoch); `None` once decided.
    due_ms: Option<u64>,
}

/// A model call as the state keeps it: its input's tool messages as runs of the trace's
/// message table, or why the input was not captured.
#[derive(Debug, Clone, Serialize)]
struct Model {
    at: SpanRef,
    #[serde(rename = "runs")]
    input: Result<Vec<Run>, String>,
}

/// One trace's calls and waiting tool spans.
#[derive(Debug, Clone, Serialize)]
pub struct TraceState {
    trace_id: String,
    seq: u64,
    tools: Vec<Tool>,
    models: Vec<Model>,
    /// The distinct tool messages of the model calls' inputs.
    messages: Messages,
    /// Keys of the tool spans and ids of the model calls taken, so a retried export adds
    /// nothing twice.
    seen: BTreeSet<String>,
    /// Decided tool spans per status.
    counts: BTreeMap<String, u64>,
    /// Tool spans decided at the deadline (or at shutdown).
    expired: u64,
    /// Tool spans decided at once because the trace was full.
    overflow: u64,
    /// Tool messages the kept inputs carry, each counted per input (see
    /// [`MAX_MESSAGES_PER_TRACE`]); counted again when a stored state is read.
    #[serde(skip)]
    carried: usize,
    /// Runs the kept inputs take (see [`MAX_RUNS_PER_TRACE`]); counted again on reading.
    #[serde(skip)]
    runs: usize,
    #[serde(skip)]
    max_messages: usize,
    #[serde(skip)]
    max_runs: usize,
    #[serde(skip)]
    max_distinct: usize,
}

/// A state as stored: this version's, or one saved before the message table (whose model
/// calls carry their `input` whole), which is read into the table.
#[derive(Deserialize)]
struct Stored {
    trace_id: String,
    seq: u64,
    tools: Vec<Tool>,
    models: Vec<StoredModel>,
    #[serde(default)]
    messages: Vec<Message>,
    seen: BTreeSet<String>,
    counts: BTreeMap<String, u64>,
    expired: u64,
    overflow: u64,
}

#[derive(Deserialize)]
struct StoredModel {
    at: SpanRef,
    #[serde(default)]
    runs: Option<Result<Vec<Run>, String>>,
    #[serde(default)]
    input: Option<Result<Vec<ToolMessage>, String>>,
}

/// A verdict on a held span.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Decision {
    pub key: String,
    pub annotation: Annotation,
}

/// What an ingest did.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Ingested {
    /// Keys of the held spans taken (the rest were already held or decided: a retry).
    pub accepted: Vec<String>,
    pub decisions: Vec<Decision>,
}

/// A trace's run summary.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TraceSummary {
    pub trace_id: String,
    /// Tool spans decided, per status (`silent_clip`, `incomplete`, `hash_mismatch`,
    /// `clipped`, `ok`, `skipped`).
    pub counts: BTreeMap<String, u64>,
    pub decided: u64,
    /// Tool spans still waiting for a model call.
    pub waiting: u64,
    pub model_calls: u64,
    /// Silent clips per 100 decided tool spans.
    pub silent_clips_per_100: f64,
    pub expired_at_deadline: u64,
    pub over_limit: u64,
}

impl TraceState {
    pub fn new(trace_id: &str) -> TraceState {
        TraceState {
            trace_id: trace_id.to_string(),
            seq: 0,
            tools: Vec::new(),
            models: Vec::new(),
            messages: Messages::default(),
            seen: BTreeSet::new(),
            counts: BTreeMap::new(),
            expired: 0,
            overflow: 0,
            carried: 0,
            runs: 0,
            max_messages: MAX_MESSAGES_PER_TRACE,
            max_runs: MAX_RUNS_PER_TRACE,
            max_distinct: MAX_DISTINCT_MESSAGES_PER_TRACE,
        }
    }

    pub fn to_json(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }

    /// [`TraceState::to_json`] cut into pieces where its content says (see
    /// [`super::pieces`]): joined, they are that JSON; a save after a request is mostly the
    /// pieces of the save before.
    pub fn to_json_pieces(&self) -> Vec<String> {
        let json = self.to_json();
        super::pieces::cut(&json)
            .into_iter()
            .map(str::to_string)
            .collect()
    }

    pub fn from_json(text: &str) -> Result<TraceState, super::MalformedExport> {
        let bad = |e: String| super::MalformedExport(format!("stored trace state: {e}"));
        let stored: Stored = serde_json::from_str(text).map_err(|e| bad(e.to_string()))?;
        let mut messages = Messages::from_list(stored.messages);
        let mut models = Vec::with_capacity(stored.models.len());
        let (mut carried, mut kept_runs) = (0, 0);
        for (i, m) in stored.models.into_iter().enumerate() {
            let input = match (m.runs, m.input) {
                (Some(Ok(runs)), _) if !messages.holds(&runs) => {
                    return Err(bad(format!("models[{i}].runs: past the message table")))
                }
                (Some(runs), _) => runs,
                (None, Some(input)) => input.map(|msgs| messages.runs_of(msgs)),
                (None, None) => return Err(bad(format!("models[{i}]: no runs"))),
            };
            if let Ok(runs) = &input {
                carried += runs.iter().map(Run::len).sum::<usize>();
                kept_runs += runs.len();
            }
            models.push(Model { at: m.at, input });
        }
        Ok(TraceState {
            trace_id: stored.trace_id,
            seq: stored.seq,
            tools: stored.tools,
            models,
            messages,
            seen: stored.seen,
            counts: stored.counts,
            expired: stored.expired,
            overflow: stored.overflow,
            carried,
            runs: kept_runs,
            max_messages: MAX_MESSAGES_PER_TRACE,
            max_runs: MAX_RUNS_PER_TRACE,
            max_distinct: MAX_DISTINCT_MESSAGES_PER_TRACE,
        })
    }

    fn calls(&self) -> usize {
        self.tools.len() + self.models.len()
    }

    /// Takes a batch of one export request (the measures of its held tool spans and model
    /// calls), and decides every waiting tool span that now has a later model call.
    pub fn ingest(&mut self, batch: TraceBatch, now_ms: u64, deadline_ms: u64) -> Ingested {
        let mut out = Ingested::default();
        let mut full = Vec::new();
        // In the request's read order (the join orders by it when times are missing).
        enum Call {
            Tool(String, Box<ToolCall>),
            Model(Option<String>, Box<ModelCall>),
        }
        let mut calls: Vec<(u64, Call)> = Vec::new();
        calls.extend(
            batch
                .tools
                .into_iter()
                .map(|(k, c)| (c.at.seq, Call::Tool(k, Box::new(c)))),
        );
        calls.extend(
            batch
                .models
                .into_iter()
                .map(|(i, c)| (c.at.seq, Call::Model(i, Box::new(c)))),
        );
        calls.sort_by_key(|c| c.0);
        // One trace, one id: the state's key (lowercase hex), whatever case the export used.
        let trace_id = (!self.trace_id.is_empty()).then(|| self.trace_id.clone());
        for (_, call) in calls {
            match call {
                Call::Model(id, mut call) => {
                    if let Some(id) = &id {
                        if !self.seen.insert(format!("model:{id}")) {
                            continue;
                        }
                    }
                    if self.calls() >= MAX_CALLS_PER_TRACE {
                        continue;
                    }
                    self.seq += 1;
                    call.at.seq = self.seq;
                    call.at.entry = self.seq;
                    call.at.trace_id = trace_id.clone();
                    let ModelCall { at, input } = *call;
                    let input = match input {
                        Ok(msgs) if self.carried + msgs.len() > self.max_messages => Err(format!(
                            "not kept: the trace's model inputs carry more than {} tool \
                             messages, the endpoint's limit per trace",
                            self.max_messages
                        )),
                        Ok(msgs)
                            if self.messages.len() + self.messages.new_in(&msgs)
                                > self.max_distinct =>
                        {
                            Err(format!(
                                "not kept: the trace's model inputs carry more than {} \
                                 distinct tool messages, the endpoint's limit per trace",
                                self.max_distinct
                            ))
                        }
                        Ok(msgs) => {
                            let (carried, table) = (msgs.len(), self.messages.len());
                            let runs = self.messages.runs_of(msgs);
                            if self.runs + runs.len() > self.max_runs {
                                // The messages it added go again: nothing refers to them.
                                self.messages.truncate(table);
                                Err(format!(
                                    "not kept: the trace's model inputs list their tool \
                                     messages out of the order first seen too often (kept as \
                                     more than {} runs of it), the endpoint's limit per trace",
                                    self.max_runs
                                ))
                            } else {
                                self.carried += carried;
                                self.runs += runs.len();
                                Ok(runs)
                            }
                        }
                        Err(why) => Err(why),
                    };
                    self.models.push(Model { at, input });
                }
                Call::Tool(key, mut call) => {
                    if !self.seen.insert(format!("tool:{key}")) {
                        continue;
                    }
                    out.accepted.push(key.clone());
                    if self.calls() >= MAX_CALLS_PER_TRACE {
                        full.push(key);
                        continue;
                    }
                    self.seq += 1;
                    call.at.seq = self.seq;
                    call.at.entry = self.seq;
                    call.at.trace_id = trace_id.clone();
                    self.tools.push(Tool {
                        key,
                        call: *call,
                        due_ms: Some(now_ms.saturating_add(deadline_ms)),
                    });
                }
            }
        }
        let latest = Latest::of(&self.models);
        let ready: Vec<usize> = (0..self.tools.len())
            .filter(|&t| self.tools[t].due_ms.is_some() && latest.after(&self.tools[t].call))
            .collect();
        out.decisions = self.decide(&ready, None);
        for key in full {
            self.overflow += 1;
            *self.counts.entry("incomplete".into()).or_default() += 1;
            out.decisions.push(Decision {
                key,
                annotation: Annotation {
                    status: "incomplete".into(),
                    detail: format!(
                        "not_joined: the trace holds more than {MAX_CALLS_PER_TRACE} tool and \
                         model calls, the endpoint's limit per trace"
                    ),
                    observed_bytes: None,
                    injected_bytes: None,
                    join: "unmatched".into(),
                },
            });
        }
        out
    }

    /// Decides every tool span whose deadline is at or before `now_ms`.
    pub fn expire(&mut self, now_ms: u64, deadline_ms: u64) -> Vec<Decision> {
        let due: Vec<usize> = (0..self.tools.len())
            .filter(|&t| self.tools[t].due_ms.is_some_and(|d| d <= now_ms))
            .collect();
        let why = format!(
            "deadline: no later model call of this trace arrived within {} s of the tool span",
            deadline_ms as f64 / 1000.0
        );
        self.decide(&due, Some(why))
    }

    /// Decides every waiting tool span now: the endpoint is shutting down and forwards what
    /// it holds rather than drop it.
    pub fn release_all(&mut self) -> Vec<Decision> {
        let waiting: Vec<usize> = (0..self.tools.len())
            .filter(|&t| self.tools[t].due_ms.is_some())
            .collect();
        let why = "shutdown: the endpoint stopped before a later model call of this trace arrived"
            .to_string();
        self.decide(&waiting, Some(why))
    }

    /// When the next waiting tool span's deadline passes (ms since the epoch).
    pub fn next_due(&self) -> Option<u64> {
        self.tools.iter().filter_map(|t| t.due_ms).min()
    }

    pub fn waiting(&self) -> usize {
        self.tools.iter().filter(|t| t.due_ms.is_some()).count()
    }

    /// Joins and classifies every call of the trace, as `toolslice check` would a file
    /// holding them, and returns the rows of the tool spans `which`.
    fn decide(&mut self, which: &[usize], early: Option<String>) -> Vec<Decision> {
        if which.is_empty() {
            return Vec::new();
        }
        let tools = self.tools.iter().map(|t| t.call.clone()).collect();
        let models = Kept {
            models: &self.models,
            messages: &self.messages,
        };
        let mut builder = ReportBuilder::new("otlp", CheckOptions::default());
        join_into(tools, &models, &mut builder, parts::End::Free);
        let report = builder.finish();
        let rows: BTreeMap<u64, RowRef<'_>> = report.rows.iter().map(|r| (r.line, r)).collect();
        let mut out = Vec::new();
        for &t in which {
            let tool = &mut self.tools[t];
            let mut annotation = match rows.get(&tool.call.at.entry) {
                Some(row) => annotation_of(row),
                None => Annotation {
                    status: "skipped".into(),
                    detail: "the tool span has no name; toolslice check skips such records".into(),
                    observed_bytes: None,
                    injected_bytes: None,
                    join: "unmatched".into(),
                },
            };
            if let Some(why) = &early {
                self.expired += 1;
                annotation.detail = format!("{why}; {}", annotation.detail);
            }
            *self.counts.entry(annotation.status.clone()).or_default() += 1;
            tool.due_ms = None;
            out.push(Decision {
                key: tool.key.clone(),
                annotation,
            });
        }
        out
    }

    pub fn summary(&self) -> TraceSummary {
        let decided: u64 = self.counts.values().sum();
        let silent = self
            .counts
            .get(Status::SilentClip.as_str())
            .copied()
            .unwrap_or(0);
        TraceSummary {
            trace_id: self.trace_id.clone(),
            counts: self.counts.clone(),
            decided,
            waiting: self.waiting() as u64,
            model_calls: self.models.len() as u64,
            silent_clips_per_100: if decided == 0 {
                0.0
            } else {
                silent as f64 * 100.0 / decided as f64
            },
            expired_at_deadline: self.expired,
            over_limit: self.overflow,
        }
    }
}

/// The state's model calls as the join reads them: each input as the runs of the message
/// table it is kept as, never copied out (see [`parts::Inputs`]).
struct Kept<'a> {
    models: &'a [Model],
    messages: &'a Messages,
}

impl parts::Inputs for Kept<'_> {
    fn len(&self) -> usize {
        self.models.len()
    }
    fn at(&self, m: usize) -> &SpanRef {
        &self.models[m].at
    }
    fn captured(&self, m: usize) -> Result<usize, &str> {
        match &self.models[m].input {
            Ok(runs) => Ok(runs.iter().map(Run::len).sum()),
            Err(why) => Err(why),
        }
    }
    fn each<'s>(&'s self, m: usize, f: impl FnMut(MessageRef<'s>)) {
        if let Ok(runs) = &self.models[m].input {
            self.messages.each(runs, f);
        }
    }
    fn content(&self, m: usize, k: usize) -> &Captured {
        match &self.models[m].input {
            Ok(runs) => self.messages.content(runs, k),
            Err(_) => &NONE,
        }
    }
    fn distinct(&self) -> usize {
        self.messages.len()
    }
}

/// What the join's "later" asks of a trace's model calls, found in one pass over them: a
/// model call is later than a tool span when it started at or after the span ended (or
/// started), or, when either lacks the time, when it was read after it. Asked per waiting
/// tool span after each request; a scan of every model call per span was quadratic in a
/// trace holding many of both.
#[derive(Default)]
struct Latest {
    /// The latest start of a model call that has one.
    start: Option<i128>,
    /// The last read of the model calls without a start, and of all of them.
    seq_untimed: Option<u64>,
    seq: Option<u64>,
}

impl Latest {
    fn of(models: &[Model]) -> Latest {
        let mut l = Latest::default();
        for m in models {
            let seq = Some(m.at.seq);
            match m.at.times.start {
                Some(start) => l.start = l.start.max(Some(start)),
                None => l.seq_untimed = l.seq_untimed.max(seq),
            }
            l.seq = l.seq.max(seq);
        }
        l
    }

    /// Whether some model call is later than `tool`.
    fn after(&self, tool: &ToolCall) -> bool {
        let later_read = |last: Option<u64>| last.is_some_and(|q| q > tool.at.seq);
        match tool.at.times.end.or(tool.at.times.start) {
            Some(done) => self.start.is_some_and(|s| s >= done) || later_read(self.seq_untimed),
            None => later_read(self.seq),
        }
    }
}

fn annotation_of(row: &RowRef<'_>) -> Annotation {
    let mut detail: Vec<String> = row.detail.to_vec();
    detail.extend(row.notes.iter().map(str::to_string));
    detail.extend(row.warnings.iter().map(|w| format!("warning: {w}")));
    Annotation {
        status: row.status.as_str().to_string(),
        detail: detail.join("; "),
        observed_bytes: row.observed_bytes,
        injected_bytes: row.injected_bytes,
        join: row
            .join
            .map_or("unmatched", crate::record::Join::as_str)
            .to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::super::{split_export, Encoding};
    use super::*;
    use serde_json::{json, Value};

    fn kv(key: &str, value: &str) -> Value {
        json!({"key": key, "value": {"stringValue": value}})
    }
    fn req(spans: Vec<Value>) -> Vec<u8> {
        serde_json::to_vec(&json!({"resourceSpans": [{"scopeSpans": [{"spans": spans}]}]})).unwrap()
    }
    fn tool(id: &str, call: &str, result: &str, t: u64) -> Value {
        json!({"traceId": "t1", "spanId": id, "name": "execute_tool ls",
               "startTimeUnixNano": t.to_string(), "endTimeUnixNano": (t + 1).to_string(),
               "attributes": [kv("gen_ai.operation.name", "execute_tool"),
                              kv("gen_ai.tool.call.id", call), kv("gen_ai.tool.call.result", result)]})
    }
    fn chat(id: &str, messages: &[(&str, &str)], t: u64) -> Value {
        let msgs: Vec<Value> = messages
            .iter()
            .map(|(c, r)| json!({"role": "tool", "parts": [{"type": "tool_call_response", "id": c, "response": r}]}))
            .collect();
        json!({"traceId": "t1", "spanId": id, "name": "chat",
               "startTimeUnixNano": t.to_string(), "endTimeUnixNano": (t + 1).to_string(),
               "attributes": [kv("gen_ai.operation.name", "chat"),
                              kv("gen_ai.input.messages", &serde_json::to_string(&msgs).unwrap())]})
    }
    fn batch(spans: Vec<Value>) -> TraceBatch {
        let mut split = split_export(&req(spans), Encoding::Json).unwrap();
        split.traces.remove(0)
    }

    #[test]
    fn a_tool_waits_for_the_model_call_in_a_later_batch() {
        let mut state = TraceState::new("t1");
        let got = state.ingest(batch(vec![tool("a", "c1", "0123456789", 10)]), 0, 30_000);
        assert_eq!(got.accepted, vec!["a"]);
        assert!(got.decisions.is_empty());
        assert_eq!(state.next_due(), Some(30_000));
        // Round trip through storage between the two requests.
        let mut state = TraceState::from_json(&state.to_json()).unwrap();
        let got = state.ingest(batch(vec![chat("m", &[("c1", "01234")], 20)]), 1000, 30_000);
        assert_eq!(got.decisions.len(), 1);
        let a = &got.decisions[0].annotation;
        assert_eq!(a.status, "silent_clip");
        assert_eq!((a.observed_bytes, a.injected_bytes), (Some(10), Some(5)));
        assert_eq!(a.join, "tool_call_id");
        assert!(a.detail.contains("ratio="), "{}", a.detail);
        assert_eq!(state.next_due(), None);
        let s = state.summary();
        assert_eq!(s.counts["silent_clip"], 1);
        assert_eq!(s.silent_clips_per_100, 100.0);
    }

    #[test]
    fn a_model_call_before_the_tool_does_not_release_it_and_the_deadline_does() {
        let mut state = TraceState::new("t1");
        state.ingest(batch(vec![chat("m0", &[], 1)]), 0, 5000);
        let got = state.ingest(batch(vec![tool("a", "c1", "x", 10)]), 100, 5000);
        assert!(got.decisions.is_empty());
        assert!(state.expire(5099, 5000).is_empty());
        let got = state.expire(5100, 5000);
        assert_eq!(got.len(), 1);
        assert_eq!(got[0].annotation.status, "incomplete");
        assert_eq!(got[0].annotation.join, "unmatched");
        assert!(got[0].annotation.detail.starts_with("deadline: "));
        assert!(got[0].annotation.detail.contains("not_received"));
        assert_eq!(state.summary().expired_at_deadline, 1);
        state.ingest(batch(vec![tool("b", "c2", "y", 20)]), 6000, 5000);
        let got = state.release_all();
        assert_eq!(got[0].key, "b");
        assert!(got[0].annotation.detail.starts_with("shutdown: "));
        assert_eq!(state.waiting(), 0);
    }

    #[test]
    fn retried_exports_add_nothing_twice() {
        let mut state = TraceState::new("t1");
        let b = batch(vec![tool("a", "c1", "abc", 10)]);
        assert_eq!(state.ingest(b.clone(), 0, 1000).accepted.len(), 1);
        assert!(state.ingest(b, 0, 1000).accepted.is_empty());
        let m = batch(vec![chat("m", &[("c1", "abc")], 20)]);
        let got = state.ingest(m.clone(), 0, 1000);
        assert_eq!(got.decisions[0].annotation.status, "ok");
        assert!(state.ingest(m, 0, 1000).decisions.is_empty());
        assert_eq!(state.summary().model_calls, 1);
        // A retry of the tool after its verdict is not held again.
        assert!(state
            .ingest(batch(vec![tool("a", "c1", "abc", 10)]), 0, 1000)
            .accepted
            .is_empty());
    }

    #[test]
    fn the_verdict_is_the_checks_on_the_same_spans() {
        let spans = vec![
            tool("a", "c1", "0123456789", 10),
            tool("b", "c2", "hello", 11),
            chat("m1", &[("c1", "0123456789"), ("c2", "hel")], 20),
            tool("c", "c3", "zzz", 30),
            chat("m2", &[("c1", "0123456789")], 40),
        ];
        let report = crate::check::check_bytes(&req(spans.clone()), CheckOptions::default());
        let mut state = TraceState::new("t1");
        let mut got = BTreeMap::new();
        // One span per request, in order.
        for s in spans {
            for d in state.ingest(batch(vec![s]), 0, 1000).decisions {
                got.insert(d.key, d.annotation);
            }
        }
        assert_eq!(got.len(), 3);
        for row in &report.rows {
            let a = &got[row.span_id.unwrap()];
            assert_eq!(a.status, row.status.as_str());
            assert_eq!(a.observed_bytes, row.observed_bytes);
            assert_eq!(a.injected_bytes, row.injected_bytes);
        }
        assert_eq!(got["c"].status, "silent_clip");
        assert_eq!(got["b"].status, "silent_clip");
    }
    /// A run sent span by span as an agent's exporter sends it, each model call's input
    /// re-listing every earlier result: `n` tool calls, the last model call after them.
    fn run_span_by_span(n: usize) -> Vec<Value> {
        let mut spans = Vec::new();
        let mut results: Vec<(String, String)> = Vec::new();
        for i in 0..n {
            let refs: Vec<(&str, &str)> = results
                .iter()
                .map(|(c, r)| (c.as_str(), r.as_str()))
                .collect();
            spans.push(chat(&format!("m{i}"), &refs, 100 * i as u64));
            let (call, result) = (format!("c{i}"), format!("result {i} {}", "x".repeat(i % 7)));
            spans.push(tool(&format!("t{i}"), &call, &result, 100 * i as u64 + 50));
            // Every third result reaches the model cut.
            let seen = if i % 3 == 0 {
                result[..4].to_string()
            } else {
                result
            };
            results.push((call, seen));
        }
        let refs: Vec<(&str, &str)> = results
            .iter()
            .map(|(c, r)| (c.as_str(), r.as_str()))
            .collect();
        spans.push(chat("last", &refs, 100 * n as u64));
        spans
    }

    /// Ingests `spans` one per request (through storage after each, as a Durable Object
    /// does) and checks every decision against `toolslice check` on the spans sent so far.
    /// The deadline then decides the rest, as check says with the deadline named. Returns
    /// the largest stored state and the spans decided before the deadline.
    fn ingest_as_check_says(spans: &[Value]) -> (usize, usize) {
        let mut state = TraceState::new("t1");
        let mut largest = 0;
        let mut decided = 0;
        for i in 0..spans.len() {
            let got = state.ingest(batch(vec![spans[i].clone()]), 0, 60_000);
            // Exactly the tool spans with a later model call were decided (the definition,
            // model call by model call).
            for t in &state.tools {
                let later = state.models.iter().any(|m| {
                    match (
                        m.at.times.start,
                        t.call.at.times.end.or(t.call.at.times.start),
                    ) {
                        (Some(start), Some(done)) => start >= done,
                        _ => m.at.seq > t.call.at.seq,
                    }
                });
                assert_eq!(t.due_ms.is_none(), later, "{} after {} spans", t.key, i + 1);
            }
            let json = state.to_json();
            largest = largest.max(json.len());
            state = TraceState::from_json(&json).unwrap();
            if got.decisions.is_empty() {
                continue;
            }
            let report =
                crate::check::check_bytes(&req(spans[..=i].to_vec()), CheckOptions::default());
            for d in got.decisions {
                let row = report
                    .rows
                    .iter()
                    .find(|r| r.span_id == Some(d.key.as_str()));
                let want = annotation_of(&row.unwrap());
                assert_eq!(d.annotation, want, "span {} after {} spans", d.key, i + 1);
                decided += 1;
            }
        }
        let report = crate::check::check_bytes(&req(spans.to_vec()), CheckOptions::default());
        for d in state.expire(u64::MAX, 60_000) {
            let row = report
                .rows
                .iter()
                .find(|r| r.span_id == Some(d.key.as_str()));
            let want = annotation_of(&row.unwrap());
            let (why, detail) = d.annotation.detail.split_once("; ").unwrap();
            assert!(why.starts_with("deadline: "), "{why}");
            assert_eq!(detail, want.detail);
            assert_eq!(
                (&d.annotation.status, d.annotation.injected_bytes),
                (&want.status, want.injected_bytes)
            );
        }
        assert_eq!(state.waiting(), 0);
        (largest, decided)
    }

    /// Real producers' exports (pkg-tests/producers/corpus: pydantic-ai, LangChain with
    /// OpenLLMetry and OpenInference, the AI SDK, OpenAI v2, the Agents SDK with
    /// OpenInference), each span sent in a request of its own and given to its trace's state
    /// (through storage): every decision is `toolslice check`'s on the spans sent so far, and
    /// at the end (the deadline) every tool span is decided.
    #[test]
    fn real_exports_request_by_request_get_check_verdicts() {
        let files = crate::real_texts::corpus_files(".otlp.jsonl");
        assert!(files.len() >= 10, "{files:?}");
        let mut decided = 0;
        for file in files {
            // Each span in a request of its own (its resource and scope with it), in the
            // order the exporter wrote them, as a simple span processor sends them.
            let text = std::fs::read_to_string(&file).unwrap();
            let mut requests = Vec::new();
            for line in text.lines().filter(|l| !l.trim().is_empty()) {
                let doc: Value = serde_json::from_str(line).unwrap();
                for rs in doc["resourceSpans"].as_array().unwrap() {
                    for ss in rs["scopeSpans"].as_array().unwrap() {
                        for span in ss["spans"].as_array().unwrap() {
                            let mut scope = ss.clone();
                            scope["spans"] = json!([span]);
                            let mut resource = rs.clone();
                            resource["scopeSpans"] = json!([scope]);
                            requests.push(json!({"resourceSpans": [resource]}).to_string());
                        }
                    }
                }
            }
            let lines: Vec<&str> = requests.iter().map(String::as_str).collect();
            let mut states: BTreeMap<String, TraceState> = BTreeMap::new();
            let mut check = |upto: usize, got: Vec<Decision>| {
                if got.is_empty() {
                    return;
                }
                let so_far = lines[..upto].join("\n") + "\n";
                let report = crate::check::check_bytes(so_far.as_bytes(), CheckOptions::default());
                for d in got {
                    let row = report
                        .rows
                        .iter()
                        .find(|r| r.span_id == Some(d.key.as_str()));
                    let want = annotation_of(&row.unwrap_or_else(|| panic!("{file:?}: {}", d.key)));
                    let detail = d.annotation.detail.split_once("; ").map_or("", |x| x.1);
                    if d.annotation.detail.starts_with("deadline: ") {
                        // Only a tool span no model call followed waits for the deadline.
                        assert!(
                            want.detail.contains("no later model call"),
                            "{file:?} {}",
                            d.key
                        );
                        assert_eq!(detail, want.detail, "{file:?} {}", d.key);
                        assert_eq!(d.annotation.status, want.status, "{file:?} {}", d.key);
                    } else {
                        assert_eq!(d.annotation, want, "{file:?} {}", d.key);
                    }
                    decided += 1;
                }
            };
            for (i, line) in lines.iter().enumerate() {
                let split = split_export(line.as_bytes(), Encoding::Json).unwrap();
                for b in split.traces {
                    let state = states
                        .entry(b.trace_id.clone())
                        .or_insert_with(|| TraceState::new(&b.trace_id));
                    let got = state.ingest(b, 0, 60_000);
                    *state = TraceState::from_json(&state.to_json()).unwrap();
                    check(i + 1, got.decisions);
                }
            }
            for state in states.values_mut() {
                let got = state.expire(u64::MAX, 60_000);
                check(lines.len(), got);
                assert_eq!(state.waiting(), 0);
            }
        }
        assert!(decided >= 60, "{decided}");
    }

    #[test]
    fn a_long_run_keeps_a_state_that_grows_with_its_calls_and_check_verdicts() {
        // Before the message table: 0.58 MB at 50 calls, 2.2 MB at 100 (n^2).
        let (at_40, decided) = ingest_as_check_says(&run_span_by_span(40));
        assert_eq!(decided, 40);
        let (at_80, _) = ingest_as_check_says(&run_span_by_span(80));
        assert!(
            at_80 < at_40 * 5 / 2,
            "{at_40} -> {at_80} bytes: not linear"
        );
        assert!(at_80 < 80 * 1500, "{at_80} bytes for 80 calls");
    }

    #[test]
    fn spans_in_any_order_get_check_verdicts() {
        // Model calls before, between and after the tools, times crossing read order, spans
        // without times, ids repeated with other results, uncaptured inputs and id-less
        // tools.
        let mut seed = 11u64;
        let mut next = |m: u64| {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (seed >> 33) % m
        };
        let mut decided = 0;
        for _ in 0..60 {
            let mut spans = Vec::new();
            for k in 0..(4 + next(12)) {
                // Small times, so that a model call often starts just as a tool ended.
                let t = next(60);
                let call = format!("c{}", next(4));
                let result = format!("r{}{}", next(3), "y".repeat(next(5) as usize));
                match next(5) {
                    0 | 1 => spans.push(tool(&format!("t{k}"), &call, &result, t)),
                    2 => {
                        let mut s = tool(&format!("t{k}"), &call, &result, t);
                        s["attributes"].as_array_mut().unwrap().remove(1);
                        spans.push(s);
                    }
                    3 => {
                        let msgs: Vec<(String, String)> = (0..next(4))
                            .map(|_| {
                                (
                                    format!("c{}", next(4)),
                                    format!("r{}{}", next(3), "y".repeat(next(5) as usize)),
                                )
                            })
                            .collect();
                        let refs: Vec<(&str, &str)> =
                            msgs.iter().map(|(c, r)| (c.as_str(), r.as_str())).collect();
                        spans.push(chat(&format!("m{k}"), &refs, t));
                    }
                    _ => {
                        let mut s = chat(&format!("m{k}"), &[], t);
                        s["attributes"].as_array_mut().unwrap().truncate(1);
                        spans.push(s);
                    }
                }
            }
            // A fifth of the spans without times: "later" is then read order.
            for s in &mut spans {
                if next(5) == 0 {
                    let s = s.as_object_mut().unwrap();
                    s.remove("startTimeUnixNano");
                    s.remove("endTimeUnixNano");
                }
            }
            decided += ingest_as_check_says(&spans).1;
        }
        assert!(decided > 60, "{decided}");
    }

    #[test]
    fn a_state_saved_before_the_message_table_is_read_into_it() {
        let spans = run_span_by_span(12);
        let (first, rest) = spans.split_at(13);
        let mut state = TraceState::new("t1");
        for s in first {
            state.ingest(batch(vec![s.clone()]), 0, 60_000);
        }
        // The earlier layout: each model call with its input whole, no table.
        let mut old: Value = serde_json::from_str(&state.to_json()).unwrap();
        let table = old["messages"].take();
        let table: Vec<Value> = serde_json::from_value(table).unwrap();
        old.as_object_mut().unwrap().remove("messages");
        for m in old["models"].as_array_mut().unwrap() {
            let runs = m.as_object_mut().unwrap().remove("runs").unwrap();
            let input = match runs.get("Ok") {
                Some(runs) => {
                    let mut msgs = Vec::new();
                    for r in runs.as_array().unwrap() {
                        let (from, len) = (
                            r[0].as_u64().unwrap() as usize,
                            r[1].as_u64().unwrap() as usize,
                        );
                        for msg in &table[from..from + len] {
                            let mut msg = msg.clone();
                            msg["trailing"] = r[2].clone();
                            msgs.push(msg);
                        }
                    }
                    json!({"Ok": msgs})
                }
                None => runs,
            };
            m["input"] = input;
        }
        let mut read = TraceState::from_json(&old.to_string()).unwrap();
        assert_eq!(read.to_json(), state.to_json());
        for s in rest {
            let a = state.ingest(batch(vec![s.clone()]), 0, 60_000);
            let b = read.ingest(batch(vec![s.clone()]), 0, 60_000);
            assert_eq!(a, b);
        }
    }

    #[test]
    fn inputs_past_the_message_limit_are_not_kept_and_say_so() {
        // 10 tool calls re-listed carry 0 + 1 + ... + 9 = 45 messages before the last input.
        let spans = run_span_by_span(10);
        let mut state = TraceState::new("t1");
        state.max_messages = 40;
        let mut got = BTreeMap::new();
        for s in &spans {
            for d in state.ingest(batch(vec![s.clone()]), 0, 60_000).decisions {
                got.insert(d.key, d.annotation);
            }
            // The count is the state's, read back the same from storage.
            let back = TraceState::from_json(&state.to_json()).unwrap();
            assert_eq!(back.carried, state.carried);
        }
        assert!(state.carried <= 40, "{}", state.carried);
        assert_eq!(got.len(), 10);
        // m0..m8 carry 36 messages; m9 (9 more) is past the limit, and so is the last one:
        // the tool calls t0..t7 are answered by kept inputs, t8 and t9 only by one not kept.
        for i in 0..8 {
            assert_ne!(got[&format!("t{i}")].status, "incomplete", "t{i}");
        }
        for i in 8..10 {
            let a = &got[&format!("t{i}")];
            assert_eq!(a.status, "incomplete", "t{i}");
            assert!(
                a.detail.contains(
                    "not kept: the trace's model inputs carry more than 40 tool messages"
                ),
                "{}",
                a.detail
            );
        }
    }

    #[test]
    fn inputs_past_the_distinct_message_limit_are_not_kept_and_say_so() {
        // Each model call carries three results no earlier one did.
        let mut state = TraceState::new("t1");
        state.max_distinct = 7;
        let mut got = BTreeMap::new();
        for i in 0..4u64 {
            let results: Vec<(String, String)> = (0..3)
                .map(|k| (format!("c{i}{k}"), format!("r{i}{k}")))
                .collect();
            let refs: Vec<(&str, &str)> = results
                .iter()
                .map(|(c, r)| (c.as_str(), r.as_str()))
                .collect();
            let spans = vec![
                tool(&format!("t{i}"), &results[0].0, &results[0].1, 100 * i),
                chat(&format!("m{i}"), &refs, 100 * i + 50),
            ];
            for d in state.ingest(batch(spans), 0, 60_000).decisions {
                got.insert(d.key, d.annotation);
            }
        }
        // 3 + 3 distinct kept; the third input would make 9, the fourth 9 too.
        assert_eq!(state.messages.len(), 6);
        assert_eq!(
            (got["t0"].status.as_str(), got["t1"].status.as_str()),
            ("ok", "ok")
        );
        for t in ["t2", "t3"] {
            assert_eq!(got[t].status, "incomplete", "{t}");
            assert!(
                got[t].detail.contains("more than 7 distinct tool messages"),
                "{}",
                got[t].detail
            );
        }
    }

    #[test]
    fn inputs_past_the_run_limit_are_not_kept_and_say_so() {
        let mut state = TraceState::new("t1");
        state.max_runs = 7;
        let r = |c: &'static str| (c, "result");
        let all = [r("c0"), r("c1"), r("c2"), r("c3"), r("c4"), r("c5")];
        let spans = [
            vec![chat("m0", &all, 10)],
            // Every other message: three runs (4 in all).
            vec![
                tool("t1", "c0", "result", 100),
                chat("m1", &[r("c0"), r("c2"), r("c4")], 150),
            ],
            // Four more runs (the new message is the table's next, after c5): 8, past 7.
            vec![
                tool("t2", "c1", "result", 200),
                chat("m2", &[r("c1"), r("c3"), r("c5"), r("new"), r("c0")], 250),
            ],
        ];
        let mut got = BTreeMap::new();
        for request in spans {
            for d in state.ingest(batch(request), 0, 60_000).decisions {
                got.insert(d.key, d.annotation);
            }
            let back = TraceState::from_json(&state.to_json()).unwrap();
            assert_eq!((back.runs, back.carried), (state.runs, state.carried));
        }
        assert_eq!(state.runs, 4);
        // The input not kept added nothing to the table.
        assert_eq!(state.messages.len(), 6);
        assert_eq!(got["t1"].status, "ok");
        assert_eq!(got["t2"].status, "incomplete");
        assert!(
            got["t2"].detail.contains("more than 7 runs"),
            "{}",
            got["t2"].detail
        );
    }

    #[test]
    fn an_input_of_more_messages_than_a_trace_keeps_is_dropped_at_the_split() {
        let n = MAX_DISTINCT_MESSAGES_PER_TRACE + 1;
        let results: Vec<(String, String)> =
            (0..n).map(|k| (format!("c{k}"), k.to_string())).collect();
        let refs: Vec<(&str, &str)> = results
            .iter()
            .map(|(c, r)| (c.as_str(), r.as_str()))
            .collect();
        let mut state = TraceState::new("t1");
        state.ingest(batch(vec![tool("a", "c0", "0", 10)]), 0, 60_000);
        let b = batch(vec![chat("m", &refs, 20)]);
        // The measures carry the reason, not 20,001 messages.
        assert!(b.measures().len() < 2000, "{}", b.measures().len());
        let got = state.ingest(b, 0, 60_000);
        let a = &got.decisions[0].annotation;
        assert_eq!(a.status, "incomplete");
        assert!(
            a.detail.contains(&format!(
                "not kept: the input carries {n} tool messages, more than the 20000 distinct ones"
            )),
            "{}",
            a.detail
        );
        assert_eq!(state.messages.len(), 0);
    }

    #[test]
    fn a_damaged_stored_state_is_refused_by_field() {
        let mut state = TraceState::new("t1");
        for s in run_span_by_span(3) {
            state.ingest(batch(vec![s]), 0, 60_000);
        }
        let mut v: Value = serde_json::from_str(&state.to_json()).unwrap();
        v["models"][1]["runs"]["Ok"][0][1] = json!(99);
        let err = TraceState::from_json(&v.to_string()).unwrap_err();
        assert_eq!(
            err.0,
            "stored trace state: models[1].runs: past the message table"
        );
        v["models"][1].as_object_mut().unwrap().remove("runs");
        let err = TraceState::from_json(&v.to_string()).unwrap_err();
        assert_eq!(err.0, "stored trace state: models[1]: no runs");
    }
}
