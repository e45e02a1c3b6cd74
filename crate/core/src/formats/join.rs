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

use std::borrow::Cow;
use std::collections::BTreeMap;

use super::content::Content;
use super::model::{Captured, ModelCall, SpanRef, ToolCall};
use crate::bytes::eq;
use crate::hash::{Digest, DIGEST_LEN};
use crate::intern::Interner;
use crate::record::{Join, Provenance};
use crate::span::{ClipReason, LazyText, SpanView};

/// One tool call, ready for the report: its record lent, not given (the report copies what
/// it keeps into its own arena), so nothing is allocated for a field the row only passes on:
/// the clip reason is the closed enum's text, the preview is borrowed from the model call's
/// input (`'m`), and the digests stay digests until [`JoinedRow::lend`] writes their hex
/// into the caller's buffers. (Each of those was a `String` made, copied into the report and
/// freed, per row.)
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct JoinedRow<'m> {
    pub entry: u64,
    /// The record, its `sha256_observed` and `sha256_injected` unset: see `lend`.
    pub record: SpanView<'m>,
    pub sha256_observed: Option<Digest>,
    pub sha256_injected: Option<Digest>,
    pub provenance: Provenance,
    /// What is left of the tool call once its record has its fields: its trace id, call id
    /// and measured result, handed back so that the caller frees them as it frees the
    /// record ([`super::End`]). Dropped here, each row's preview (a shared text, its count
    /// in a block read long before) cost a cache miss to count down: half the samples of
    /// building the rows of a Langfuse export (`perf annotate` of V8's code).
    pub spent: Spent,
}

/// The parts of a [`ToolCall`] its row does not take: trace id, call id, result.
pub(crate) type Spent = (Option<String>, Option<String>, Captured);

/// Room for the hex of a row's two digests, where [`JoinedRow::lend`] writes them.
pub(crate) type HexPair = [[u8; 2 * DIGEST_LEN]; 2];

impl<'m> JoinedRow<'m> {
    /// The row's line, its whole record (the digests' hex written into `hex` and borrowed
    /// from there) and its provenance.
    pub fn lend<'s>(self, hex: &'s mut HexPair) -> (u64, SpanView<'s>, Provenance, Spent)
    where
        'm: 's,
    {
        let [observed, injected] = hex;
        let mut record: SpanView<'s> = self.record;
        record.sha256_observed = self
            .sha256_observed
            .map(|d| Cow::Borrowed(d.hex_in(observed)));
        record.sha256_injected = self
            .sha256_injected
            .map(|d| Cow::Borrowed(d.hex_in(injected)));
        (self.entry, record, self.provenance, self.spent)
    }
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

/// One tool message of a model call's input, as the join reads it.
#[derive(Debug, Clone, Copy)]
pub(crate) struct MessageRef<'a> {
    pub call_id: Option<&'a str>,
    pub name: Option<&'a str>,
    pub trailing: bool,
    /// The message's place in a table of distinct messages, when the inputs are read from one
    /// (the OTLP pipeline's state): the same place is the same message, so its call id is
    /// looked up once per distinct message rather than once per input re-listing it.
    pub distinct: Option<usize>,
}

/// The model calls as the join reads them. A checked file holds each input whole (a slice
/// of [`ModelCall`]); the OTLP pipeline's state keeps each distinct tool message once and an
/// input as runs of them (`pipeline::messages`), and is read through this as it is kept: a
/// decision there copied every message of every input for the join (two strings each) and
/// looked up the id of each copy, most of a long run's time (issue 17).
pub(crate) trait Inputs {
    fn len(&self) -> usize;
    fn at(&self, m: usize) -> &SpanRef;
    /// How many tool messages model call `m`'s input carries, or why it was not captured.
    fn captured(&self, m: usize) -> Result<usize, &str>;
    /// Model call `m`'s tool messages in input order (none when it was not captured).
    fn each<'s>(&'s self, m: usize, f: impl FnMut(MessageRef<'s>));
    /// The content of tool message `k` of model call `m`'s input, read only for the one a
    /// tool call received.
    fn content(&self, m: usize, k: usize) -> &Captured;
    /// The size of the table [`MessageRef::distinct`] indexes: 0 when there is none.
    fn distinct(&self) -> usize {
        0
    }
}

impl Inputs for [ModelCall] {
    fn len(&self) -> usize {
        <[ModelCall]>::len(self)
    }
    fn at(&self, m: usize) -> &SpanRef {
        &self[m].at
    }
    fn captured(&self, m: usize) -> Result<usize, &str> {
        match &self[m].input {
            Ok(list) => Ok(list.len()),
            Err(why) => Err(why),
        }
    }
    #[inline]
    fn each<'s>(&'s self, m: usize, mut f: impl FnMut(MessageRef<'s>)) {
        for x in message_list(&self[m]) {
            f(MessageRef {
                call_id: x.call_id.as_deref(),
                name: x.name.as_deref(),
                trailing: x.trailing,
                distinct: None,
            });
        }
    }
    fn content(&self, m: usize, k: usize) -> &Captured {
        &message_list(&self[m])[k].content
    }
}

/// Joins every tool call with what a later model call received, in read order. The tool
/// calls are taken: their ids, names and status move into the rows, which the report keeps,
/// rather than being copied there and freed with the collector (copies and frees were a
/// tenth of the join's time in wasm). The rows are built one at a time as the caller takes
/// them, never held together: each is consumed while it is still in cache, and a report of
/// tens of thousands of rows does not first fill fresh memory with all of them.
pub(crate) fn join<'a, I: Inputs + ?Sized>(
    tools: Vec<ToolCall>,
    models: &'a I,
) -> impl Iterator<Item = JoinedRow<'a>> + 'a {
    let outcomes = outcomes(&tools, models);
    tools.into_iter().zip(outcomes).map(move |(tool, outcome)| {
        let (outcome, join) = outcome.unwrap_or((Outcome::NoLaterCall, Join::Unmatched));
        build(tool, outcome, join, models)
    })
}

fn message_list(model: &ModelCall) -> &[super::model::ToolMessage] {
    model.input.as_ref().map_or(&[][..], Vec::as_slice)
}

/// Where each tool call's result ended up, and by which key.
fn outcomes<I: Inputs + ?Sized>(tools: &[ToolCall], models: &I) -> Vec<Option<(Outcome, Join)>> {
    // Model calls grouped by trace, each group in time order (read order when times are
    // missing). Trace ids are numbered by the crate's interner (`TraceGroups`), whose every
    // look-up is bounded whatever the ids: the OTLP endpoint joins ids it did not choose, so
    // no table here may be floodable (std's SipHash, besides, hashed every id of every input
    // again). Within a trace, call ids are sorted and searched by comparison.
    let traces_of = TraceGroups::new((0..models.len()).map(|m| models.at(m).trace_id.as_deref()));
    // Read order breaks ties of start time; where it is the models' own order (always, in a
    // checked file), the sort's stability does that and the key leaves it out.
    let seq_in_order = (1..models.len()).all(|m| models.at(m - 1).seq < models.at(m).seq);
    let order = grouped_order(
        models.len(),
        traces_of.groups(),
        |i| traces_of.group[i],
        |i| time_key(models.at(i), seq_in_order),
    );
    // The call ids of the tool calls, once each per trace, in the same trace order: the only
    // ids the model calls' inputs are indexed by (an input re-lists every earlier call of
    // its run; a tool call has one id).
    let mut find = traces_of.finder();
    let tool_trace: Vec<Option<u32>> = tools
        .iter()
        .map(|t| find(t.at.trace_id.as_deref()))
        .collect();
    let with_ids: Vec<(u32, &str)> = tools
        .iter()
        .zip(&tool_trace)
        .filter_map(|(t, g)| Some(((*g)?, t.call_id.as_deref()?)))
        .collect();
    let by_id = grouped_order(
        with_ids.len(),
        traces_of.groups(),
        |k| with_ids[k].0,
        |k| Id(with_ids[k].1),
    );
    let mut tool_ids: Vec<(u32, &str)> = by_id.iter().map(|&k| with_ids[k]).collect();
    tool_ids.dedup_by(|a, b| a.0 == b.0 && eq(a.1.as_bytes(), b.1.as_bytes()));
    // Per trace, what makes "the later model calls of a tool" a pair of ranges of its time
    // ordered list, searched by bisection rather than filtered per tool (issue 13: a trace of
    // n tool calls and n model calls cost n^2). Indexed by trace group.
    let mut traces: Vec<TraceIndex<'_>> = Vec::new();
    let mut memo = Memo::new(models.distinct());
    let (mut rest, mut ids) = (&order[..], &tool_ids[..]);
    while let Some(&first) = rest.first() {
        let group = traces_of.group[first];
        let len = rest.partition_point(|&i| traces_of.group[i] == group);
        let here = ids.partition_point(|x| x.0 == group);
        let trace_ids = ids[..here].iter().map(|x| x.1).collect();
        traces.push(TraceIndex::new(&rest[..len], models, trace_ids, &mut memo));
        (rest, ids) = (&rest[len..], &ids[here..]);
    }

    let mut outcomes: Vec<Option<(Outcome, Join)>> = (0..tools.len()).map(|_| None).collect();
    // Per model call, where its tool messages start in `claimed`: whether the id join gave
    // each message to a tool call (the order join leaves those).
    let mut claimed_at = Vec::with_capacity(models.len());
    let mut total = 0;
    for m in 0..models.len() {
        claimed_at.push(total);
        total += models.captured(m).unwrap_or(0);
    }
    let mut claimed = vec![false; total];
    // Tool calls left for the order join, grouped by their next model call.
    let mut by_next: BTreeMap<usize, Vec<usize>> = BTreeMap::new();

    for (t, tool) in tools.iter().enumerate() {
        let trace = tool_trace[t].map(|g| &traces[g as usize]);
        match first_pass(tool, trace, models, &mut claimed, &claimed_at) {
            Ok(outcome) => outcomes[t] = Some(outcome),
            Err(next) => by_next.entry(next).or_default().push(t),
        }
    }

    for (m, mut group) in by_next {
        in_time_order(&mut group, |t| &tools[t].at);
        // Unclaimed trailing messages by tool name, each name's in input order (a stable
        // sort), with the next free one of each name at the name's first place in `next`:
        // taking the first free message of a name is a bisection and a step, not a scan and
        // a removal.
        let claimed = &claimed[claimed_at[m]..];
        let mut free: Vec<(Option<&str>, usize)> = Vec::new();
        let mut k = 0;
        models.each(m, |x| {
            if x.trailing && !claimed[k] {
                free.push((x.name, k));
            }
            k += 1;
        });
        crate::sort::sort_by(&mut free, |a, b| a.0.cmp(&b.0));
        let mut next: Vec<usize> = (0..free.len()).collect();
        let mut take = |t: usize, name| -> bool {
            let first = free.partition_point(|x| x.0 < name);
            let Some(&at) = next.get(first) else {
                return false;
            };
            match free.get(at) {
                Some(&(found, message)) if found == name => {
                    next[first] = at + 1;
                    outcomes[t] = Some((Outcome::Received { model: m, message }, Join::Order));
                    true
                }
                _ => false,
            }
        };
        let mut rest = Vec::new();
        for &t in &group {
            let name = tools[t].name.as_deref();
            if !(name.is_some() && take(t, name)) {
                rest.push(t);
            }
        }
        let mut unpaired = Vec::new();
        for t in rest {
            if !take(t, None) {
                unpaired.push(t);
            }
        }
        if !unpaired.is_empty() {
            let why = unclaimed(models.at(m));
            for t in unpaired {
                outcomes[t] = Some((Outcome::NotReceived(why.clone()), Join::Order));
            }
        }
    }

    outcomes
}

/// One tool call's outcome by id, or the model call whose order join decides it (`Err`).
///
/// A function of its own, never inlined (nor by wasm-opt, see `scripts/build`), though it
/// has one caller: `outcomes` runs once per check, and V8 does not replace a running wasm
/// function's baseline code with optimized code (no on-stack replacement), so a loop body
/// inlined there runs as baseline code for the whole of a first check; called once per
/// tool call, this one can be optimized after its first calls. Measured on a first 50 MB
/// OTLP check, `finish` stayed within the noise (117 against 122 ms, 6 rounds): what the
/// split measurably changes is less for V8 to compile (`outcomes` 18.7 -> 15.1 KB; issue 17).
#[inline(never)]
fn first_pass<I: Inputs + ?Sized>(
    tool: &ToolCall,
    trace: Option<&TraceIndex<'_>>,
    models: &I,
    claimed: &mut [bool],
    claimed_at: &[usize],
) -> Result<(Outcome, Join), usize> {
    let later = trace.map_or_else(Later::default, |x| x.later(tool, models));
    let ids_in_use = tool.call_id.is_some() && trace.is_some_and(|x| later.any(|r| x.with_ids(r)));
    if let (Some(id), true, Some(x)) = (&tool.call_id, ids_in_use, trace) {
        // The first later model call whose captured input carries the id; failing that,
        // the first later one whose input was not captured.
        let found = later.first_in_stretches(x.carrying(id));
        let uncaptured = later.first_in(&x.uncaptured);
        let outcome = match (found, uncaptured) {
            (Some((at, message)), _) => {
                let model = x.list[at];
                claimed[claimed_at[model] + message] = true;
                Outcome::Received { model, message }
            }
            (None, Some(at)) => Outcome::NotCaptured {
                model: x.list[x.uncaptured[at]],
            },
            (None, None) => Outcome::NotReceived(format!(
                "no later model call's input carries call id {id:?} ({} checked)",
                later.len()
            )),
        };
        return Ok((outcome, Join::ToolCallId));
    }
    let later_first = trace.and_then(|x| later.first().map(|p| x.list[p]));
    match later_first {
        None => Ok((Outcome::NoLaterCall, Join::Unmatched)),
        Some(m) if models.captured(m).is_err() => {
            // Ids would have been the key had the input been captured.
            let key = if tool.call_id.is_some() {
                Join::ToolCallId
            } else {
                Join::Order
            };
            Ok((Outcome::NotCaptured { model: m }, key))
        }
        Some(m) => Err(m),
    }
}

/// The tool call id group (the place in a trace's `tool_ids`) of each distinct message, once
/// found: for inputs read from a table of distinct messages ([`MessageRef::distinct`]), where
/// a run's conversation is re-listed by every model call and each copy was looked up again.
/// Entries are stamped with the trace they were found for, so one table serves every trace.
struct Memo {
    /// (trace stamp, group + 1, or 0 for an id no tool call of the trace has).
    slots: Vec<(u32, u32)>,
    trace: u32,
}

impl Memo {
    fn new(distinct: usize) -> Memo {
        Memo {
            slots: vec![(0, 0); distinct],
            trace: 0,
        }
    }

    fn next_trace(&mut self) {
        self.trace += 1;
    }

    #[inline]
    fn group(
        &mut self,
        distinct: Option<usize>,
        find: impl FnOnce() -> Option<usize>,
    ) -> Option<usize> {
        let Some(slot) = distinct.and_then(|d| self.slots.get_mut(d)) else {
            return find();
        };
        if slot.0 != self.trace {
            *slot = (self.trace, find().map_or(0, |g| g as u32 + 1));
        }
        (slot.1 as usize).checked_sub(1)
    }
}

/// One trace's model calls in time order, indexed for the join's questions about "the model
/// calls later than a tool call": each answered by bisection in a sorted list of positions.
struct TraceIndex<'a> {
    /// Model indexes in time order: those with a start time first (by start, then read
    /// order), then those without (by read order).
    list: &'a [usize],
    /// How many of `list` have a start time.
    timed: usize,
    /// Positions in `list` whose captured input carries tool-message ids.
    with_ids: Vec<usize>,
    /// Positions in `list` whose input was not captured.
    uncaptured: Vec<usize>,
    /// The call ids of the trace's tool calls, sorted, each once.
    tool_ids: Vec<&'a str>,
    /// Per tool call id (by its place in `tool_ids`), the positions in `list` whose captured
    /// input carries it, with the index of the first tool message with that id in that input,
    /// as stretches of consecutive positions with the same index, ascending:
    /// `stretches[starts[g]..starts[g + 1]]` for the id `g`. A run re-listing its conversation
    /// carries an id at the same index in every later input: one stretch, where a list of
    /// positions held one entry per input re-listing it (12 MB in a decision at 1,000,000
    /// messages carried).
    starts: Vec<usize>,
    stretches: Vec<Stretch>,
}

/// Positions `from..to` of a trace's time-ordered model calls, whose inputs all carry one id
/// first at tool message `message`.
#[derive(Debug, Clone, Copy)]
struct Stretch {
    from: usize,
    to: usize,
    message: usize,
}

/// The traces of the model calls, numbered: model call `i` is in trace `group[i]`, the
/// numbers in the order the traces first appear. A trace's calls come in runs in read order,
/// so the id of each run is looked up once, in the crate's [`Interner`]: a hash and a probe
/// or two, where sorting the runs' ids and bisecting them compared 32-byte ids a dozen times
/// each (on 50 MB of OTLP with a trace per agent run, 5,875 traces, the sort and the tool
/// calls' bisections were a ninth of the join in wasm). Its look-ups are bounded whatever
/// the ids (see [`crate::intern`]), so ids made to collide cost a logarithm each, not a scan.
struct TraceGroups {
    group: Vec<u32>,
    /// The distinct trace ids; a trace's number is its id's index here.
    ids: Interner,
    /// The number of the calls without a trace id, when there are any (after the ids').
    none: Option<u32>,
}

/// `str` order a word at a time ([`crate::bytes::cmp`]): in wasm, `str::cmp` is a
/// byte-by-byte `memcmp`, and the ids are sorted and searched tens of thousands of times.
fn str_cmp(a: &str, b: &str) -> std::cmp::Ordering {
    crate::bytes::cmp(a.as_bytes(), b.as_bytes())
}

/// A call id ordered by [`str_cmp`], for [`grouped_order`]'s keys.
#[derive(PartialEq, Eq)]
struct Id<'a>(&'a str);

impl Ord for Id<'_> {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        str_cmp(self.0, other.0)
    }
}

impl PartialOrd for Id<'_> {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

#[inline(always)]
fn same(a: Option<&str>, b: Option<&str>) -> bool {
    match (a, b) {
        (Some(a), Some(b)) => eq(a.as_bytes(), b.as_bytes()),
        (a, b) => a.is_none() && b.is_none(),
    }
}

impl TraceGroups {
    fn new<'a>(traces: impl Iterator<Item = Option<&'a str>>) -> TraceGroups {
        // The calls without a trace id are numbered after every id, once all are known.
        const NONE: u32 = u32::MAX;
        let mut ids = Interner::default();
        let mut group = Vec::new();
        let mut last: Option<(Option<&str>, u32)> = None;
        for trace in traces {
            let g = match last {
                Some((id, g)) if same(id, trace) => g,
                _ => trace.map_or(NONE, |t| ids.intern(t)),
            };
            last = Some((trace, g));
            group.push(g);
        }
        let none = group.contains(&NONE).then_some(ids.len() as u32);
        if let Some(n) = none {
            for g in group.iter_mut().filter(|g| **g == NONE) {
                *g = n;
            }
        }
        TraceGroups { group, ids, none }
    }

    /// How many trace numbers there are.
    fn groups(&self) -> usize {
        self.ids.len() + usize::from(self.none.is_some())
    }

    /// Finds the number of a trace id (`None` when no model call is in it); the previous
    /// answer is tried first, as tool calls too come in runs of one trace.
    fn finder(&self) -> impl FnMut(Option<&str>) -> Option<u32> + '_ {
        let mut last: Option<u32> = None;
        move |trace| {
            let Some(id) = trace else { return self.none };
            if let Some(g) = last.filter(|&g| eq(self.ids.name(g).as_bytes(), id.as_bytes())) {
                return Some(g);
            }
            let g = self.ids.lookup(id.as_bytes())?;
            last = Some(g);
            Some(g)
        }
    }
}

/// The positions `0..group.len()` ordered by (`group[i]`, `key(i)`, `i`): model calls
/// grouped by trace, each trace's in time order; tool call ids grouped by trace, each
/// trace's in id order. A counting sort by group (stable, so each group comes out in read
/// order), then a group is sorted by its keys only when they are not already in order. Read
/// order is usually time order and a trace has few tool calls, so on a real export this is
/// about linear, where one comparison sort of everything by the whole tuple (behind
/// `crate::sort`'s `dyn` comparison) took about a fifth of the join on 300 MB of OTLP.
/// `group(i) < groups` for every `i < len`.
fn grouped_order<K: Ord>(
    len: usize,
    groups: usize,
    group: impl Fn(usize) -> u32,
    key: impl Fn(usize) -> K,
) -> Vec<usize> {
    let mut starts = vec![0usize; groups + 1];
    for i in 0..len {
        starts[group(i) as usize + 1] += 1;
    }
    for g in 0..groups {
        starts[g + 1] += starts[g];
    }
    let mut fill = starts.clone();
    let mut order = vec![0usize; len];
    for i in 0..len {
        let g = group(i) as usize;
        order[fill[g]] = i;
        fill[g] += 1;
    }
    for g in 0..groups {
        let run = &mut order[starts[g]..starts[g + 1]];
        // Within a group the positions ascend, so keys that never decrease leave the run in
        // the order of the whole tuple (equal keys are ordered by position).
        if in_key_order(run, &key) {
            continue;
        }
        // By the key alone, stably: `keyed` is in position order, so equal keys stay in it,
        // as sorting by (key, position) would leave them, and a run of equal keys is one
        // partition of the standard sort rather than a comparison of positions each time
        // (a trace whose calls share a few start times or call ids, as the bench's OTLP
        // copies do: its join about a tenth faster).
        let mut keyed: Vec<(K, usize)> = run.iter().map(|&i| (key(i), i)).collect();
        crate::sort::sort_by(&mut keyed, |a, b| a.0.cmp(&b.0));
        for (slot, (_, i)) in run.iter_mut().zip(keyed) {
            *slot = i;
        }
    }
    order
}

/// Whether the keys of `run` never decrease: each key made once.
fn in_key_order<K: Ord>(run: &[usize], key: impl Fn(usize) -> K) -> bool {
    let mut keys = run.iter().map(|&i| key(i));
    let Some(mut last) = keys.next() else {
        return true;
    };
    for k in keys {
        if k < last {
            return false;
        }
        last = k;
    }
    true
}

/// The order of model calls within a trace: by start time, then read order; calls without
/// a start time last, in read order. `by_position`: read order is the order of the calls'
/// positions, which a stable sort keeps for equal keys, so the key leaves it out.
fn time_key(at: &SpanRef, by_position: bool) -> (bool, i128, u64) {
    (
        at.times.start.is_none(),
        at.times.start.unwrap_or(0),
        if by_position { 0 } else { at.seq },
    )
}

/// The later model calls of one tool call: ranges of positions in its trace's list, in order,
/// none empty.
///
/// A tool call with times has at most two (the timed model calls after it, the untimed ones
/// read after it), kept in place: one of these is made per tool call, and a vector of them
/// was an allocation and a free per tool call (some 125 instructions each in wasm). Only a
/// tool call without times against timed model calls can have more, and those spill into
/// `spilled`.
#[derive(Default)]
struct Later {
    inline: [(usize, usize); 2],
    n: usize,
    spilled: Vec<(usize, usize)>,
}

impl Later {
    fn ranges(&self) -> &[(usize, usize)] {
        if self.spilled.is_empty() {
            &self.inline[..self.n]
        } else {
            &self.spilled
        }
    }
    /// Adds a range after the others; an empty one is left out.
    fn push(&mut self, range: (usize, usize)) {
        if range.0 >= range.1 {
            return;
        }
        if !self.spilled.is_empty() {
            self.spilled.push(range);
        } else if self.n < self.inline.len() {
            self.inline[self.n] = range;
            self.n += 1;
        } else {
            self.spilled = self.inline.to_vec();
            self.spilled.push(range);
        }
    }
    /// Where the last range ends, if any.
    fn end(&self) -> Option<usize> {
        self.ranges().last().map(|r| r.1)
    }
    /// Moves the end of the last range on by one position.
    fn extend_last(&mut self) {
        let last = match self.spilled.last_mut() {
            Some(last) => last,
            None => &mut self.inline[self.n - 1],
        };
        last.1 += 1;
    }
    fn len(&self) -> usize {
        self.ranges().iter().map(|(a, b)| b - a).sum()
    }
    fn first(&self) -> Option<usize> {
        self.ranges().first().map(|r| r.0)
    }
    fn any(&self, mut f: impl FnMut((usize, usize)) -> bool) -> bool {
        self.ranges().iter().any(|&r| f(r))
    }
    /// Where in `positions` (ascending) the first of them inside these ranges is, in range
    /// order.
    fn first_in(&self, positions: &[usize]) -> Option<usize> {
        self.ranges().iter().find_map(|&(a, b)| {
            let i = positions.partition_point(|&p| p < a);
            positions.get(i).is_some_and(|&p| p < b).then_some(i)
        })
    }
    /// The first position inside these ranges, in range order, that one of `stretches`
    /// (ascending, disjoint) holds, and that stretch's message.
    fn first_in_stretches(&self, stretches: &[Stretch]) -> Option<(usize, usize)> {
        self.ranges().iter().find_map(|&(a, b)| {
            let s = stretches.get(stretches.partition_point(|s| s.to <= a))?;
            let p = s.from.max(a);
            (p < b).then_some((p, s.message))
        })
    }
}

impl<'a> TraceIndex<'a> {
    fn new<I: Inputs + ?Sized>(
        list: &'a [usize],
        models: &I,
        tool_ids: Vec<&'a str>,
        memo: &mut Memo,
    ) -> TraceIndex<'a> {
        let timed = list.partition_point(|&i| models.at(i).times.start.is_some());
        let (mut with_ids, mut uncaptured) = (Vec::new(), Vec::new());
        // (tool call id, stretch), in position order; each id once per position: the id's
        // open stretch (`open[g]`, in `found`) ends at a position once the id is seen there.
        let mut found: Vec<(usize, Stretch)> = Vec::new();
        let mut open = vec![usize::MAX; tool_ids.len()];
        memo.next_trace();
        for (p, &i) in list.iter().enumerate() {
            if models.captured(i).is_err() {
                uncaptured.push(p);
                continue;
            }
            let (mut any, mut k) = (false, 0);
            models.each(i, |x| {
                if let Some(id) = x.call_id {
                    any = true;
                    // An id no tool call has is never asked for.
                    let group = memo.group(x.distinct, || {
                        tool_ids.binary_search_by(|x| str_cmp(x, id)).ok()
                    });
                    if let Some(g) = group {
                        match found.get_mut(open[g]) {
                            Some((_, s)) if s.to == p + 1 => {}
                            Some((_, s)) if s.to == p && s.message == k => s.to = p + 1,
                            _ => {
                                open[g] = found.len();
                                let s = Stretch {
                                    from: p,
                                    to: p + 1,
                                    message: k,
                                };
                                found.push((g, s));
                            }
                        }
                    }
                }
                k += 1;
            });
            if any {
                with_ids.push(p);
            }
        }
        // Grouped by id with a counting sort, which keeps each id's positions ascending.
        let mut starts = vec![0; tool_ids.len() + 1];
        for &(g, ..) in &found {
            starts[g + 1] += 1;
        }
        for g in 0..tool_ids.len() {
            starts[g + 1] += starts[g];
        }
        let mut fill = starts.clone();
        let none = Stretch {
            from: 0,
            to: 0,
            message: 0,
        };
        let mut stretches = vec![none; found.len()];
        for (g, s) in found {
            stretches[fill[g]] = s;
            fill[g] += 1;
        }
        TraceIndex {
            list,
            timed,
            with_ids,
            uncaptured,
            tool_ids,
            starts,
            stretches,
        }
    }

    /// The model calls later than `tool`: started at or after it ended when both have
    /// times, else read after it.
    fn later<I: Inputs + ?Sized>(&self, tool: &ToolCall, models: &I) -> Later {
        let seq = tool.at.seq;
        let untimed =
            self.timed + self.list[self.timed..].partition_point(|&i| models.at(i).seq <= seq);
        let mut later = Later::default();
        match tool.at.times.end.or(tool.at.times.start) {
            Some(done) => {
                let from = self.list[..self.timed]
                    .partition_point(|&i| models.at(i).times.start.is_some_and(|s| s < done));
                later.push((from, self.timed));
            }
            // A tool call without times against timed model calls: read order decides, and
            // the timed list is not in read order, so it is filtered (the one case that scans).
            None => {
                for p in 0..self.timed {
                    if models.at(self.list[p]).seq > seq {
                        if later.end() == Some(p) {
                            later.extend_last();
                        } else {
                            later.push((p, p + 1));
                        }
                    }
                }
            }
        }
        later.push((untimed, self.list.len()));
        later
    }

    fn with_ids(&self, (a, b): (usize, usize)) -> bool {
        let i = self.with_ids.partition_point(|&p| p < a);
        self.with_ids.get(i).is_some_and(|&p| p < b)
    }

    /// The stretches of positions whose captured input carries `id` (see `stretches`).
    fn carrying(&self, id: &str) -> &[Stretch] {
        match self.tool_ids.binary_search_by(|x| str_cmp(x, id)) {
            Ok(g) => &self.stretches[self.starts[g]..self.starts[g + 1]],
            Err(_) => &[],
        }
    }
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

// The notes of a row are made per row, most of them for every row of a run whose model
// calls lack a tool message: put together with `concat`, one allocation of the right size,
// rather than by `format!` (its formatter, a growing string), and the order join's reason
// made once per model call, not per tool call: checking 5 MB of an Agents SDK export, whose
// every row has such a note, takes 2.9% fewer instructions (215.58M -> 209.35M).

fn at_model(at: &SpanRef) -> String {
    match &at.span_id {
        Some(id) => [" (", id, ")"].concat(),
        None => format!(" (at {})", at.entry),
    }
}

/// Why a tool call the order join leaves unpaired before model call `at` was not received.
fn unclaimed(at: &SpanRef) -> String {
    [
        "the next model call",
        &at_model(at),
        " has no unclaimed tool message for it after its last assistant message",
    ]
    .concat()
}

// Never inlined, as `first_pass` (see there): the loop that takes the rows runs once.
#[inline(never)]
fn build<'m, I: Inputs + ?Sized>(
    tool: ToolCall,
    outcome: Outcome,
    join: Join,
    models: &'m I,
) -> JoinedRow<'m> {
    let mut notes = Vec::new();
    let mut warnings = Vec::new();

    let observed = match &tool.result {
        Captured::Text(c) => Some(c),
        Captured::Missing(why) => {
            notes.push(["not_captured: the tool result: ", why].concat());
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

    // (bytes, sha256, preview) of what the model received, and its measures.
    let mut injected: Option<(u64, Option<Digest>, Option<&'m str>)> = None;
    let mut injected_content: Option<&Content> = None;
    match outcome {
        Outcome::Received { model, message } => {
            let m = models.at(model);
            match models.content(model, message) {
                Captured::Text(c) => {
                    injected = Some((c.bytes, Some(c.sha256), Some(&*c.preview)));
                    injected_content = Some(c);
                }
                Captured::Missing(why) => notes.push(
                    [
                        "not_captured: the tool message in the input of model call",
                        &at_model(m),
                        ": ",
                        why,
                    ]
                    .concat(),
                ),
            }
        }
        Outcome::NotCaptured { model } => {
            let why = models.captured(model).err().unwrap_or("");
            notes.push(
                [
                    "not_captured: the input of the later model call",
                    &at_model(models.at(model)),
                    ": ",
                    why,
                ]
                .concat(),
            );
        }
        Outcome::NotReceived(why) => {
            notes.push(["not_received: ", &why].concat());
            injected = Some((0, None, None));
        }
        Outcome::NoLaterCall => notes.push(
            "not_received: no later model call in this trace (the run ended after this tool, \
             or the model call was not exported)"
                .to_string(),
        ),
    }

    let mut clip_reason = ClipReason::None;
    let mut reformatted = false;
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
            let same_data = obs.value_sha256.is_some() && obs.value_sha256 == inj.value_sha256;
            if obs.sha256 != inj.sha256 && same_data {
                let syntax = |c: &Content| c.syntax.map_or("text", |s| s.as_str());
                notes.push(format!(
                    "reformatted: the model received the same data as the tool returned, in \
                     another serialisation ({} observed, {} bytes; {} injected, {} bytes): not a \
                     cut, measured as equal",
                    syntax(obs),
                    obs.bytes,
                    syntax(inj),
                    inj.bytes
                ));
                injected = Some((obs.bytes, Some(obs.sha256), Some(&*inj.preview)));
                reformatted = true;
            }
        }
    }

    let (injected_bytes, sha256_injected, injected_preview) = match injected {
        Some((bytes, sha256, preview)) => (Some(bytes), sha256, preview),
        None => (None, None, None),
    };
    let estimated = injected_content.is_some();
    let observed_bytes = observed.map(|c| c.bytes);
    let sha256_observed = observed.map(|c| c.sha256);
    let record = SpanView {
        span_id: tool.at.span_id.map(Cow::Owned),
        parent_id: tool.at.parent_id.map(Cow::Owned),
        name: tool.name.map(Cow::Owned),
        status: tool.status.map(Cow::Owned),
        observed_bytes,
        injected_bytes,
        // Traces count tokens per model call, never per message: estimate, and say so.
        injected_tokens: injected_bytes.map(|b| b.div_ceil(4)),
        clip_reason: Some(Cow::Borrowed(clip_reason.as_str())),
        sha256_observed: None,
        sha256_injected: None,
        injected_preview: injected_preview.map(|p| LazyText::Text(Cow::Borrowed(p))),
        prompt_builder_version: None,
        model_context_limit_tokens: None,
    };
    JoinedRow {
        entry: tool.at.entry,
        record,
        sha256_observed,
        sha256_injected,
        provenance: Provenance {
            join: Some(join),
            notes,
            warnings,
            injected_tokens_estimated: estimated,
            reformatted,
        },
        spent: (tool.at.trace_id, tool.call_id, tool.result),
    }
}

// proptest is a native-only dev-dependency (see Cargo.toml).
#[cfg(all(test, not(target_arch = "wasm32")))]
mod tests {
    use super::*;
    use crate::formats::content::Content;
    use crate::formats::model::{Times, ToolMessage};
    use proptest::prelude::*;
    use proptest::test_runner::{Config, FileFailurePersistence, RngSeed};
    use std::collections::{HashMap, HashSet};

    /// The join as it was before it was indexed (a filter of every model call per tool
    /// call): the indexed join must give the same rows.
    fn naive_join<'m>(tools: &[ToolCall], models: &'m [ModelCall]) -> Vec<JoinedRow<'m>> {
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
                    at_model(&models[m].at)
                );
                outcomes[t] = Some((Outcome::NotReceived(why), Join::Order));
            }
        }

        tools
            .iter()
            .zip(outcomes)
            .map(|(tool, outcome)| {
                let (outcome, join) = outcome.unwrap_or((Outcome::NoLaterCall, Join::Unmatched));
                build(tool.clone(), outcome, join, models)
            })
            .collect()
    }

    /// Where a generated call sits: its start (a quarter of them unknown), its length, an end
    /// that a fifth of them lack, and one of two traces.
    #[derive(Clone, Debug)]
    struct At {
        start: Option<i128>,
        length: i128,
        open: bool,
        trace: u8,
    }

    impl At {
        fn span(&self, seq: u64) -> SpanRef {
            SpanRef {
                entry: seq,
                seq,
                // Traces 0 and 1 by plain ids, 2 and 3 by ids of one hash (the interner's
                // probe path), 4 without an id.
                trace_id: match self.trace {
                    0 | 1 => Some(format!("t{}", self.trace)),
                    2 | 3 => Some(colliding_ids()[usize::from(self.trace - 2)].clone()),
                    _ => None,
                },
                span_id: Some(format!("s{seq}")),
                parent_id: None,
                times: Times {
                    start: self.start,
                    end: if self.open {
                        None
                    } else {
                        self.start.map(|s| s + self.length)
                    },
                },
            }
        }
    }

    /// Two trace ids of one hash, made once.
    fn colliding_ids() -> &'static [String] {
        static IDS: std::sync::OnceLock<Vec<String>> = std::sync::OnceLock::new();
        IDS.get_or_init(|| crate::intern::names_of_one_hash(2))
    }

    fn at() -> impl Strategy<Value = At> {
        (
            prop::option::weighted(0.75, 0..20i128),
            0..3i128,
            prop::bool::weighted(0.2),
            prop_oneof![3 => 0..2u8, 1 => 2..5u8],
        )
            .prop_map(|(start, length, open, trace)| At {
                start,
                length,
                open,
                trace,
            })
    }

    const NAMES: [Option<&str>; 3] = [None, Some("ls"), Some("grep")];

    /// A generated read entry: a tool call or a model call. Ids 0..4 are shared between
    /// both sides, 4 and 5 mean "no id" (when ids are on at all).
    #[derive(Clone, Debug)]
    enum Entry {
        Tool {
            at: At,
            name: usize,
            id: u64,
        },
        Model {
            at: At,
            /// `None`: the model call's input was not captured.
            messages: Option<Vec<(u64, usize, usize, bool)>>,
        },
    }

    fn entry() -> impl Strategy<Value = Entry> {
        let message = (
            0..6u64,
            0..3usize,
            1..=8usize,
            prop::bool::weighted(2.0 / 3.0),
        );
        prop_oneof![
            (at(), 0..3usize, 0..5u64).prop_map(|(at, name, id)| Entry::Tool { at, name, id }),
            (
                at(),
                prop::option::weighted(5.0 / 6.0, prop::collection::vec(message, 0..5))
            )
                .prop_map(|(at, messages)| Entry::Model { at, messages }),
        ]
    }

    /// The calls of `entries` in read order; without `ids_on` no call has an id, so the join
    /// pairs by name and position.
    fn calls(entries: &[Entry], ids_on: bool) -> (Vec<ToolCall>, Vec<ModelCall>) {
        let id = |id: u64| (ids_on && id < 4).then(|| format!("call_{id}"));
        let (mut tools, mut models) = (Vec::new(), Vec::new());
        for (seq, entry) in (0u64..).zip(entries) {
            match entry {
                Entry::Tool { at, name, id: i } => tools.push(ToolCall {
                    at: at.span(seq),
                    name: NAMES[*name].map(str::to_string),
                    call_id: id(*i),
                    status: None,
                    result: Captured::Text(Content::of_text(&"x".repeat(seq as usize + 1))),
                    source: "gen_ai",
                }),
                Entry::Model { at, messages } => models.push(ModelCall {
                    at: at.span(seq),
                    input: match messages {
                        None => Err("not captured".to_string()),
                        Some(list) => Ok(list
                            .iter()
                            .map(|&(i, name, len, trailing)| ToolMessage {
                                call_id: id(i),
                                name: NAMES[name].map(str::to_string),
                                content: Captured::Text(Content::of_text(&"x".repeat(len))),
                                trailing,
                            })
                            .collect()),
                    },
                }),
            }
        }
        (tools, models)
    }

    fn config() -> Config {
        // A fixed seed, as in the integration tests (tests/common): every machine runs the
        // same cases; PROPTEST_RNG_SEED explores others.
        let mut config = Config::with_cases(3000);
        if std::env::var_os("PROPTEST_RNG_SEED").is_none() {
            config.rng_seed = RngSeed::Fixed(0x7001_5011_CE00_0020);
        }
        config.failure_persistence = Some(Box::new(FileFailurePersistence::WithSource(
            "proptest-regressions",
        )));
        config
    }

    /// Trace ids made to share one hash, more of them than the interner probes for (the rest
    /// go to its ordered overflow table): each tool call still finds the model call of its own
    /// trace, though every trace uses the same call id, the tool calls come first and the
    /// model calls in the reverse order of their traces.
    #[test]
    fn trace_ids_of_one_hash_keep_their_traces_apart() {
        let ids = crate::intern::names_of_one_hash(200);
        let span = |trace: &str, seq: u64| SpanRef {
            entry: seq,
            seq,
            trace_id: Some(trace.to_string()),
            span_id: Some(format!("s{seq}")),
            parent_id: None,
            times: Times::default(),
        };
        let tools: Vec<ToolCall> = (0u64..)
            .zip(&ids)
            .map(|(seq, trace)| ToolCall {
                at: span(trace, seq),
                name: Some("ls".to_string()),
                call_id: Some("call_0".to_string()),
                status: None,
                result: Captured::Text(Content::of_text(&"x".repeat(1000))),
                source: "gen_ai",
            })
            .collect();
        let models: Vec<ModelCall> = (1000u64..)
            .zip(ids.iter().enumerate().rev())
            .map(|(seq, (k, trace))| ModelCall {
                at: span(trace, seq),
                input: Ok(vec![ToolMessage {
                    call_id: Some("call_0".to_string()),
                    name: Some("ls".to_string()),
                    content: Captured::Text(Content::of_text(&"x".repeat(k + 1))),
                    trailing: true,
                }]),
            })
            .collect();
        let rows: Vec<JoinedRow<'_>> = join(tools, &models[..]).collect();
        assert_eq!(rows.len(), ids.len());
        for (k, row) in rows.iter().enumerate() {
            assert_eq!(row.record.injected_bytes, Some(k as u64 + 1), "trace {k}");
            assert_eq!(row.provenance.join, Some(Join::ToolCallId));
        }
    }

    proptest! {
        #![proptest_config(config())]
        #[test]
        fn the_indexed_join_equals_the_filtering_one(
            entries in prop::collection::vec(entry(), 1..=12),
            ids_on in any::<bool>(),
            reversed in prop::bool::weighted(0.25),
        ) {
            let (tools, mut models) = calls(&entries, ids_on);
            // Model calls held out of read order (the join then orders ties of start time
            // by `seq`, not by position).
            if reversed {
                models.reverse();
            }
            let rows = join(tools.clone(), &models[..]).collect::<Vec<_>>();
            prop_assert_eq!(&rows, &naive_join(&tools, &models));
            // Read as from a table of distinct messages, the same rows.
            let tabled = Tabled::new(&models);
            prop_assert_eq!(join(tools, &tabled).collect::<Vec<_>>(), rows);
        }

        /// The grouped order is the order of one sort by (group, key, position), for
        /// groups read in any order, keys in or out of order, and ties.
        #[test]
        fn grouped_order_is_one_sort_by_group_then_key(
            calls in prop::collection::vec((0u32..4, 0u8..3, any::<bool>()), 0..40),
            sorted in any::<bool>(),
        ) {
            let mut calls = calls;
            // Half the cases in read order already (the common case the check skips).
            if sorted {
                calls.sort_by_key(|c| (c.1, c.2));
            }
            let group: Vec<u32> = calls.iter().map(|c| c.0).collect();
            let key = |i: usize| (calls[i].1, calls[i].2);
            let mut want: Vec<usize> = (0..calls.len()).collect();
            want.sort_by_key(|&i| (group[i], key(i), i));
            prop_assert_eq!(grouped_order(calls.len(), 4, |i| group[i], key), want);
        }
    }

    /// The same model calls read as the OTLP pipeline's state reads its inputs, from a table
    /// of distinct messages: a message's place is that of its call id in one table for every
    /// trace (the generated traces share ids), so the join's memo of an id's place among a
    /// trace's tool ids must not carry one trace's answer into the next.
    struct Tabled<'a> {
        models: &'a [ModelCall],
        ids: Vec<&'a str>,
    }

    impl<'a> Tabled<'a> {
        fn new(models: &'a [ModelCall]) -> Tabled<'a> {
            let mut ids: Vec<&str> = models
                .iter()
                .flat_map(|m| message_list(m).iter().filter_map(|x| x.call_id.as_deref()))
                .collect();
            ids.sort_unstable();
            ids.dedup();
            Tabled { models, ids }
        }
    }

    impl Inputs for Tabled<'_> {
        fn len(&self) -> usize {
            self.models.len()
        }
        fn at(&self, m: usize) -> &SpanRef {
            &self.models[m].at
        }
        fn captured(&self, m: usize) -> Result<usize, &str> {
            self.models.captured(m)
        }
        fn each<'s>(&'s self, m: usize, mut f: impl FnMut(MessageRef<'s>)) {
            self.models.each(m, |x| {
                let distinct = x.call_id.and_then(|id| self.ids.binary_search(&id).ok());
                f(MessageRef { distinct, ..x })
            });
        }
        fn content(&self, m: usize, k: usize) -> &Captured {
            self.models.content(m, k)
        }
        fn distinct(&self) -> usize {
            self.ids.len()
        }
    }
}
