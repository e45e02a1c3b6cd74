//! What an OTLP span is, by the semantic conventions it follows: a tool call, a model call,
//! or context (an agent, a chain, an HTTP request ...).
//!
//! A span with `openinference.span.kind` is read by [`super::openinference`]; one with the
//! Vercel AI SDK's `ai.operationId` by [`super::ai_sdk`]; otherwise one with GenAI attributes
//! by [`super::genai`]. Everything else is a context span: skipped with
//! its reason, and kept in the span graph so a failing tool span charges every ancestor.

use std::borrow::Cow;

use super::model::{ModelCall, ToolCall};
use super::otel::{OtelSpan, Read};
use super::{ai_sdk, genai, openinference, Collector, Sink};

/// Interprets one span. Each convention's reader is a function of its own, never inlined
/// here (nor by wasm-opt: see `scripts/build`): V8 compiles a hot wasm function with its
/// optimizing tier (TurboFan) in the background, in time that grows with the function's
/// size, and until then runs baseline code. With the readers inlined this was one 20.6 KB
/// function that took 120 ms to optimize, so on a first check, which is every CLI run,
/// the spans of the first megabytes were read by baseline code, and the GenAI path waited
/// on the compilation of the OpenInference and AI SDK paths it never takes (issue 17;
/// `node --trace-wasm-compilation-times`).
pub(crate) fn interpret(
    span: OtelSpan<'_>,
    entry: u64,
    collector: &mut Collector,
    sink: &mut dyn Sink,
) {
    let (read, source) = if span.attrs.contains_key(openinference::SPAN_KIND) {
        (openinference::read(&span), "openinference")
    } else if span.attrs.contains_key(ai_sdk::OPERATION) {
        // Before GenAI: the AI SDK's model-call spans carry a few gen_ai.* attributes too.
        (ai_sdk::read(&span), "ai_sdk")
    } else if let Some(read) = genai::read(&span) {
        (read, "gen_ai")
    } else {
        (
            Read::Context("not a GenAI or OpenInference span".into()),
            "",
        )
    };
    if !source.is_empty() {
        collector.saw(source);
    }
    // The collector keeps its own copies of the ids of tool and model calls (the join runs
    // when the input ends); the span's may be borrowed from the input line, which goes when
    // the line does. A context span's ids are only lent to the sink, which copies what it
    // keeps: no per-span copies for spans the join never sees.
    let owned = |s: Option<Cow<'_, str>>| s.map(Cow::into_owned);
    match read {
        Read::Tool {
            name,
            call_id,
            result,
        } => {
            let at = collector.span_ref(
                entry,
                owned(span.trace_id),
                span.span_id.as_deref().map(str::to_string),
                span.parent_id.as_deref().map(str::to_string),
                span.times,
            );
            collector.tools.push(ToolCall {
                at,
                name: name.or_else(|| owned(span.name)),
                call_id,
                status: span.status.map(str::to_string),
                result,
                source,
            })
        }
        Read::Model(input) => {
            sink.context(
                entry,
                span.span_id.as_deref(),
                span.parent_id.as_deref(),
                span.name.as_deref(),
                "model call: read for the join",
            );
            let at = collector.span_ref(
                entry,
                owned(span.trace_id),
                owned(span.span_id),
                owned(span.parent_id),
                span.times,
            );
            collector.models.push(ModelCall { at, input });
        }
        Read::Context(reason) => {
            let (id, parent) = (span.span_id.as_deref(), span.parent_id.as_deref());
            collector.context(sink, entry, id, parent, span.name.as_deref(), &reason)
        }
    }
}
