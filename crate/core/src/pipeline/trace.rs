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
//! call is not kept, so neither memory nor the per-request join grows without bound.

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};

use super::{Annotation, TraceBatch};
use crate::check::{CheckOptions, ReportBuilder, RowRef, Status};
use crate::formats::pipeline_parts::{ModelCall, ToolCall};
use crate::formats::Collector;

/// Tool and model calls one trace may hold.
pub const MAX_CALLS_PER_TRACE: usize = 20_000;

#[derive(Debug, Clone, Serialize, Deserialize)]
struct Tool {
    key: String,
    call: ToolCall,
    /// When it stops waiting (ms since the epoch); `None` once decided.
    due_ms: Option<u64>,
}

/// One trace's calls and waiting tool spans.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct TraceState {
    trace_id: String,
    seq: u64,
    tools: Vec<Tool>,
    models: Vec<ModelCall>,
    /// Keys of the tool spans and ids of the model calls taken, so a retried export adds
    /// nothing twice.
    seen: BTreeSet<String>,
    /// Decided tool spans per status.
    counts: BTreeMap<String, u64>,
    /// Tool spans decided at the deadline (or at shutdown).
    expired: u64,
    /// Tool spans decided at once because the trace was full.
    overflow: u64,
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
            ..TraceState::default()
        }
    }

    pub fn to_json(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }

    pub fn from_json(text: &str) -> Result<TraceState, super::MalformedExport> {
        serde_json::from_str(text)
            .map_err(|e| super::MalformedExport(format!("stored trace state: {e}")))
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
                    self.models.push(*call);
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
        let ready: Vec<usize> = (0..self.tools.len())
            .filter(|&t| self.tools[t].due_ms.is_some() && self.has_later_model(t))
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

    /// The join's "later": a model call that started at or after the tool span ended (or
    /// started), or, without times, one read after it.
    fn has_later_model(&self, t: usize) -> bool {
        let tool = &self.tools[t].call;
        let done = tool.at.times.end.or(tool.at.times.start);
        self.models.iter().any(|m| match (m.at.times.start, done) {
            (Some(start), Some(done)) => start >= done,
            _ => m.at.seq > tool.at.seq,
        })
    }

    /// Joins and classifies every call of the trace, as `toolslice check` would a file
    /// holding them, and returns the rows of the tool spans `which`.
    fn decide(&mut self, which: &[usize], early: Option<String>) -> Vec<Decision> {
        if which.is_empty() {
            return Vec::new();
        }
        let mut collector = Collector::default();
        collector.tools = self.tools.iter().map(|t| t.call.clone()).collect();
        collector.models = self.models.clone();
        let mut builder = ReportBuilder::new("otlp", CheckOptions::default());
        collector.finish(&mut builder);
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
}
