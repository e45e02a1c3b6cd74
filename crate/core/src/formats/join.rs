//! The join: each tool result with what a later model call actually received of it, then
//! one seed-000 span record per tool call.
//!
//! Traces record the tool's result on the tool span and, separately, the messages the next
//! model call was sent; none records whether the second is a cut of the first. The join finds
//! out:
//!
//! 1. **By call id.** When the tool call has an id and the later model calls' inputs carry
//!    ids, the tool message with the same id in the earliest later model call is what the
//!    model received (`join = tool_call_id`). If no captured later input carries the id, the
//!    result never reached the model: `injected_bytes = 0`, a silent clip, noted
//!    `not_received`. If some later input was not captured, the row is `incomplete`.
//! 2. **By order**, when ids are absent on either side: the tool calls whose next model call
//!    is M are paired, in time order, with the tool messages after M's last assistant message
//!    (the answers to the calls that message made), same tool name first (`join = order`).
//! 3. A tool call with no later model call in its trace is `incomplete`, noted `not_received`
//!    (`join = unmatched`): the run ended, or the model call was not exported.
//!
//! "Later" means the model call started at or after the tool span ended, when both have
//! times; otherwise it came after it in the input. Model calls are only considered within
//! the tool span's trace.
//!
//! The record is then built from the measures alone (bytes, SHA-256, markers), and the
//! classifier of the span format decides the status, so the verdict rules exist once.

use std::collections::{BTreeMap, HashMap, HashSet};

use super::content::Content;
use super::model::{Captured, ModelCall, SpanRef, ToolCall};
use crate::record::{Join, Provenance};
use crate::span::{ClipReason, SpanRecord};

/// One tool call, ready for the report.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct JoinedRow {
    pub entry: u64,
    pub record: SpanRecord,
    pub provenance: Provenance,
}

/// Where a tool result ended up.
enum Outcome {
    /// The tool message `message` of model call `model`.
    Received { model: usize, message: usize },
    /// A later model call's input was not captured; the reason.
    NotCaptured { model: usize },
    /// Later inputs were captured and none carried it.
    NotReceived(String),
    /// No later model call in the trace.
    NoLaterCall,
}

pub(crate) fn join(tools: &[ToolCall], models: &[ModelCall]) -> Vec<JoinedRow> {
    // Model calls per trace, in time order (read order when times are missing).
    let mut by_trace: HashMap<Option<&str>, Vec<usize>> = HashMap::new();
    for (i, m) in models.iter().enumerate() {
        by_trace
            .entry(m.at.trace_id.as_deref())
            .or_default()
            .push(i);
    }
    for list in by_trace.values_mut() {
        in_time_order(list, |i| &models[i].at);
    }
    let later = |tool: &ToolCall| -> Vec<usize> {
        let done = tool.at.times.end.or(tool.at.times.start);
        by_trace
            .get(&tool.at.trace_id.as_deref())
            .map(|list| {
                list.iter()
                    .copied()
                    .filter(|&i| match (models[i].at.times.start, done) {
                        (Some(start), Some(done)) => start >= done,
                        _ => models[i].at.seq > tool.at.seq,
                    })
                    .collect()
            })
            .unwrap_or_default()
    };

    // Per model call: its tool messages by call id (the first of each id), once, so each
    // tool's lookup costs one probe per later model call, not a scan of its messages.
    let ids: Vec<HashMap<&str, usize>> = models
        .iter()
        .map(|m| {
            let mut index = HashMap::new();
            for (k, x) in m.input.as_deref().unwrap_or_default().iter().enumerate() {
                if let Some(id) = x.call_id.as_deref() {
                    index.entry(id).or_insert(k);
                }
            }
            index
        })
        .collect();

    let mut outcomes: Vec<Option<(Outcome, Join)>> = (0..tools.len()).map(|_| None).collect();
    let mut claimed: HashSet<(usize, usize)> = HashSet::new();
    // Tool calls left for the order join, grouped by their next model call.
    let mut by_next: BTreeMap<usize, Vec<usize>> = BTreeMap::new();

    for (t, tool) in tools.iter().enumerate() {
        let later = later(tool);
        let ids_in_use = tool.call_id.is_some() && later.iter().any(|&m| !ids[m].is_empty());
        if let (Some(id), true) = (&tool.call_id, ids_in_use) {
            let mut uncaptured = None;
            let mut found = None;
            for &m in &later {
                if models[m].input.is_err() {
                    uncaptured.get_or_insert(m);
                } else if let Some(&k) = ids[m].get(id.as_str()) {
                    found = Some((m, k));
                    break;
                }
            }
            let outcome = match (found, uncaptured) {
                (Some((model, message)), _) => {
                    claimed.insert((model, message));
                    Outcome::Received { model, message }
                }
                (None, Some(model)) => Outcome::NotCaptured { model },
                (None, None) => Outcome::NotReceived(format!(
                    "no later model call's input carries call id {id:?} ({} checked)",
                    later.len()
                )),
            };
            outcomes[t] = Some((outcome, Join::ToolCallId));
            continue;
        }
        match later.first() {
            None => outcomes[t] = Some((Outcome::NoLaterCall, Join::Unmatched)),
            Some(&m) if models[m].input.is_err() => {
                // Ids would have been the key had the input been captured.
                let key = if tool.call_id.is_some() {
                    Join::ToolCallId
                } else {
                    Join::Order
                };
                outcomes[t] = Some((Outcome::NotCaptured { model: m }, key));
            }
            Some(&m) => by_next.entry(m).or_default().push(t),
        }
    }

    for (m, mut group) in by_next {
        in_time_order(&mut group, |t| &tools[t].at);
        let msgs = models[m].input.as_ref().map_or(&[][..], Vec::as_slice);
        let mut free: Vec<usize> = (0..msgs.len())
            .filter(|&k| msgs[k].trailing && !claimed.contains(&(m, k)))
            .collect();
        let mut take = |t: usize, pick: &dyn Fn(usize) -> bool| -> bool {
            match free.iter().position(|&k| pick(k)) {
                Some(i) => {
                    let message = free.remove(i);
                    outcomes[t] = Some((Outcome::Received { model: m, message }, Join::Order));
                    true
                }
                None => false,
            }
        };
        let mut rest = Vec::new();
        for &t in &group {
            let name = tools[t].name.as_deref();
            if !(name.is_some() && take(t, &|k| msgs[k].name.as_deref() == name)) {
                rest.push(t);
            }
        }
        let mut unpaired = Vec::new();
        for t in rest {
            if !take(t, &|k| msgs[k].name.is_none()) {
                unpaired.push(t);
            }
        }
        for t in unpaired {
            let why = format!(
                "the next model call{} has no unclaimed tool message for it after its last \
                 assistant message",
                at_model(&models[m])
            );
            outcomes[t] = Some((Outcome::NotReceived(why), Join::Order));
        }
    }

    tools
        .iter()
        .zip(outcomes)
        .map(|(tool, outcome)| {
            let (outcome, join) = outcome.unwrap_or((Outcome::NoLaterCall, Join::Unmatched));
            build(tool, outcome, join, models)
        })
        .collect()
}

/// Sorts indexes of spans by start time, then read order (spans without a time last, in read
/// order). One sort of plain keys, so the module carries one sort routine, not one per caller.
fn in_time_order<'a>(indexes: &mut [usize], at: impl Fn(usize) -> &'a SpanRef) {
    let mut keyed: Vec<(bool, i128, u64, usize)> = indexes
        .iter()
        .map(|&i| {
            let at = at(i);
            let start = at.times.start;
            (start.is_none(), start.unwrap_or(0), at.seq, i)
        })
        .collect();
    crate::sort::sort(&mut keyed);
    for (slot, key) in indexes.iter_mut().zip(keyed) {
        *slot = key.3;
    }
}

fn at_model(model: &ModelCall) -> String {
    match &model.at.span_id {
        Some(id) => format!(" ({id})"),
        None => format!(" (at {})", model.at.entry),
    }
}

fn build(tool: &ToolCall, outcome: Outcome, join: Join, models: &[ModelCall]) -> JoinedRow {
    let mut notes = Vec::new();
    let mut warnings = Vec::new();

    let observed = match &tool.result {
        Captured::Text(c) => Some(c),
        Captured::Missing(why) => {
            notes.push(format!("not_captured: the tool result: {why}"));
            None
        }
    };
    if let Some(c) = observed {
        warnings.extend(c.limit_warning("tool result"));
        if let Some(marker) = &c.first_cut_marker {
            notes.push(format!(
                "the tool result itself carries a cut marker {marker:?}: the tool cut its own \
                 output and said so"
            ));
        }
    }

    // (bytes, sha256, preview, content) of what the model received.
    let mut injected: Option<(u64, Option<String>, Option<String>)> = None;
    let mut injected_content: Option<&Content> = None;
    match outcome {
        Outcome::Received { model, message } => {
            let m = &models[model];
            let msgs = m.input.as_ref().map_or(&[][..], Vec::as_slice);
            match &msgs[message].content {
                Captured::Text(c) => {
                    injected = Some((c.bytes, Some(c.sha256.clone()), Some(c.preview.clone())));
                    injected_content = Some(c);
                }
                Captured::Missing(why) => notes.push(format!(
                    "not_captured: the tool message in the input of model call{}: {why}",
                    at_model(m)
                )),
            }
        }
        Outcome::NotCaptured { model } => {
            let m = &models[model];
            let why = m.input.as_ref().err().map_or("", String::as_str);
            notes.push(format!(
                "not_captured: the input of the later model call{}: {why}",
                at_model(m)
            ));
        }
        Outcome::NotReceived(why) => {
            notes.push(format!("not_received: {why}"));
            injected = Some((0, None, None));
        }
        Outcome::NoLaterCall => notes.push(
            "not_received: no later model call in this trace (the run ended after this tool, \
             or the model call was not exported)"
                .to_string(),
        ),
    }

    let mut clip_reason = ClipReason::None;
    if let Some(inj) = injected_content {
        warnings.extend(inj.limit_warning("injected tool message"));
        let (obs_cuts, obs_redactions) = observed.map_or((0, 0), |o| (o.cut_markers, o.redactions));
        if inj.cut_markers > obs_cuts {
            clip_reason = ClipReason::ToolResultCharLimit;
            notes.push(format!(
                "declared: the injected text carries the cut marker {:?}",
                inj.first_cut_marker.as_deref().unwrap_or_default()
            ));
        } else if inj.redactions > obs_redactions {
            clip_reason = ClipReason::Redaction;
            notes.push(format!(
                "declared: the injected text carries the redaction marker {:?}",
                inj.first_redaction.as_deref().unwrap_or_default()
            ));
        }
        if let Some(obs) = observed {
            let same_value = obs.json_sha256.is_some() && obs.json_sha256 == inj.json_sha256;
            if obs.sha256 != inj.sha256 && same_value {
                notes.push(format!(
                    "the model received the same JSON value as the tool returned, serialized \
                     differently ({} bytes observed, {} injected): measured as equal",
                    obs.bytes, inj.bytes
                ));
                injected = Some((
                    obs.bytes,
                    Some(obs.sha256.clone()),
                    Some(inj.preview.clone()),
                ));
            }
        }
    }

    let injected_bytes = injected.as_ref().map(|i| i.0);
    let estimated = injected_content.is_some();
    let record = SpanRecord {
        span_id: tool.at.span_id.clone(),
        parent_id: tool.at.parent_id.clone(),
        name: tool.name.clone(),
        status: tool.status.clone(),
        observed_bytes: observed.map(|c| c.bytes),
        injected_bytes,
        // Traces count tokens per model call, never per message: estimate, and say so.
        injected_tokens: injected_bytes.map(|b| b.div_ceil(4)),
        clip_reason: Some(clip_reason.as_str().to_string()),
        sha256_observed: observed.map(|c| c.sha256.clone()),
        sha256_injected: injected.as_ref().and_then(|i| i.1.clone()),
        injected_preview: injected.and_then(|i| i.2),
        prompt_builder_version: None,
        model_context_limit_tokens: None,
    };
    JoinedRow {
        entry: tool.at.entry,
        record,
        provenance: Provenance {
            join: Some(join),
            notes,
            warnings,
            injected_tokens_estimated: estimated,
        },
    }
}
