// An agent run traced with the real OpenTelemetry JS SDK, OpenInference conventions, and
// exported with its OTLP/HTTP exporter (JSON in Node): the tool spans in one export request,
// the model call that received their results in the next.
import { context, trace } from '@opentelemetry/api';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BasicTracerProvider, BatchSpanProcessor } from '@opentelemetry/sdk-trace-base';

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

export const SEARCH_RESULT = 'result line: the quick brown fox jumps over the lazy dog. '.repeat(6);

/**
 * Runs the traced agent; returns the trace id and span ids by name. `protobuf`: export with
 * the SDK's OTLP/HTTP protobuf exporter instead (Phoenix accepts only protobuf).
 */
export async function runOpenInference(url, { withModelCall = true, protobuf = false } = {}) {
  const Exporter = protobuf ? (await import('@opentelemetry/exporter-trace-otlp-proto')).OTLPTraceExporter : OTLPTraceExporter;
  const exporter = new Exporter({ url });
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes({ 'service.name': 'js-agent' }),
    spanProcessors: [new BatchSpanProcessor(exporter)],
  });
  const tracer = provider.getTracer('toolslice-test');
  const ids = {};
  const root = tracer.startSpan('agent', { attributes: { 'openinference.span.kind': 'AGENT' } });
  const ctx = trace.setSpan(context.active(), root);
  const tool = (name, attrs) => {
    const s = tracer.startSpan(name, { attributes: { 'openinference.span.kind': 'TOOL', 'tool.name': name, ...attrs } }, ctx);
    ids[name] = s.spanContext().spanId;
    s.end();
  };
  tool('search', { 'tool_call.id': 'call_s', 'output.value': SEARCH_RESULT });
  tool('lookup', { 'output.value': 'answer: 42' });
  await provider.forceFlush();
  await sleep(5);
  if (withModelCall) {
    const cut = SEARCH_RESULT.slice(0, 100) + `...[truncated ${SEARCH_RESULT.length - 100} chars]`;
    const llm = tracer.startSpan('ChatCompletion', {
      attributes: {
        'openinference.span.kind': 'LLM',
        'llm.input_messages.0.message.role': 'user',
        'llm.input_messages.0.message.content': 'find it',
        'llm.input_messages.1.message.role': 'assistant',
        'llm.input_messages.1.message.tool_calls.0.tool_call.id': 'call_s',
        'llm.input_messages.1.message.tool_calls.0.tool_call.function.name': 'search',
        'llm.input_messages.1.message.tool_calls.1.tool_call.function.name': 'lookup',
        'llm.input_messages.2.message.role': 'tool',
        'llm.input_messages.2.message.tool_call_id': 'call_s',
        'llm.input_messages.2.message.content': cut,
        'llm.input_messages.3.message.role': 'tool',
        'llm.input_messages.3.message.name': 'lookup',
        'llm.input_messages.3.message.content': 'answer: 42',
      },
    }, ctx);
    ids.llm = llm.spanContext().spanId;
    llm.end();
  }
  root.end();
  await provider.forceFlush();
  await provider.shutdown();
  return { traceId: root.spanContext().traceId, spans: ids };
}
