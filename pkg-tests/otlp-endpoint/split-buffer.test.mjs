// A split's byte arrays are views of one buffer per request (`otlpSplit`: one allocation
// rather than one per array). What a user of the split relies on: each view holds exactly its
// part; `ownBytes` gives a trace's part bytes of its own for another isolate; the keeper
// stores a held span so that neither a copying storage (a Durable Object's) copies the whole
// request for it, nor an in-memory one keeps a large request alive for a small span.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as api from 'toolslice';
import { ownBytes } from 'toolslice/otlp/endpoint.js';
import { keptBytes, MemoryStorage, SHARED_BUFFER_BYTES, TraceKeeper } from 'toolslice/otlp/keeper.js';

const attr = (key, v) => ({ key, value: { stringValue: v } });
const traceA = '4bf92f3577b34da6a3ce929d0e0e4736';
const traceB = '00000000000000000000000000000abc';
let n = 0;
const span = (traceId, name, attrs) => {
  n += 1;
  return { traceId, spanId: n.toString(16).padStart(16, '0'), name, startTimeUnixNano: String(1000 * n), endTimeUnixNano: String(1000 * n + 1), attributes: attrs };
};
const tool = (traceId, id, result) => span(traceId, 'execute_tool ls', [attr('gen_ai.operation.name', 'execute_tool'), attr('gen_ai.tool.call.id', id), attr('gen_ai.tool.call.result', result)]);
const chat = (traceId, pairs) => span(traceId, 'chat', [attr('gen_ai.operation.name', 'chat'), attr('gen_ai.input.messages', JSON.stringify(pairs.map(([id, r]) => ({ role: 'tool', parts: [{ type: 'tool_call_response', id, response: r }] }))))]);
const other = (traceId) => span(traceId, 'http GET', [attr('http.method', 'GET')]);
const request = (spans) => new TextEncoder().encode(JSON.stringify({ resourceSpans: [{ scopeSpans: [{ spans }] }] }));
const spansOf = (bytes) => JSON.parse(new TextDecoder().decode(bytes)).resourceSpans.flatMap((r) => r.scopeSpans.flatMap((s) => s.spans));

test("a split's arrays are views of one buffer, each holding exactly its part", () => {
  const spans = [tool(traceA, 'a1', 'one'), other(traceA), tool(traceB, 'b1', 'two'), tool(traceA, 'a2', 'three'), chat(traceB, [['b0', 'x']])];
  const split = api.otlpSplit(request(spans), 'json');
  const arrays = [split.passthrough, ...split.traces.flatMap((t) => [t.measures, ...t.held.map((h) => h.body)])];
  assert.equal(arrays.length, 1 + 2 + 2 + 1);
  const buffer = split.passthrough.buffer;
  for (const a of arrays) assert.equal(a.buffer, buffer);
  // Their parts, end to end, fill the buffer: no view reaches into another's bytes.
  assert.equal(arrays.reduce((sum, a) => sum + a.byteLength, 0), buffer.byteLength);
  const ranges = arrays.map((a) => [a.byteOffset, a.byteOffset + a.byteLength]).sort((x, y) => x[0] - y[0]);
  for (let i = 1; i < ranges.length; i++) assert.equal(ranges[i][0], ranges[i - 1][1]);
  // The passthrough is the request without the tool spans; each held body is its span alone.
  assert.deepEqual(spansOf(split.passthrough).map((s) => s.spanId), [spans[1].spanId, spans[4].spanId]);
  const held = split.traces.flatMap((t) => t.held);
  assert.deepEqual(held.map((h) => spansOf(h.body).map((s) => s.spanId)), [[spans[0].spanId], [spans[3].spanId], [spans[2].spanId]]);
  assert.deepEqual(held.map((h) => h.key), [spans[0].spanId, spans[3].spanId, spans[2].spanId]);
  // Each trace takes its measures from the view (the core reads the view's bytes only).
  for (const t of split.traces) {
    const trace = new api.OtlpTrace(t.traceId);
    try {
      const got = trace.ingest(t.measures, 0, 60_000);
      assert.deepEqual(got.accepted.sort(), t.held.map((h) => h.key).sort());
    } finally {
      trace.free();
    }
  }
});

test('ownBytes copies one trace out of the request: a structured clone of it carries that trace only', () => {
  const spans = [tool(traceA, 'a1', 'x'.repeat(5000)), tool(traceB, 'b1', 'short'), other(traceB)];
  const split = api.otlpSplit(request(spans), 'json');
  const b = split.traces.find((t) => t.traceId === traceB);
  const own = ownBytes(b.measures, b.held);
  assert.deepEqual([...own.measures], [...b.measures]);
  assert.deepEqual(own.held.map((h) => [h.key, [...h.body]]), b.held.map((h) => [h.key, [...h.body]]));
  // One buffer of exactly the trace's bytes, shared by its views, so a clone (a Durable
  // Object call) copies them once and nothing of trace A's 5,000-byte result or the passthrough.
  assert.equal(own.measures.buffer.byteLength, b.measures.byteLength + b.held.reduce((s, h) => s + h.body.byteLength, 0));
  for (const h of own.held) assert.equal(h.body.buffer, own.measures.buffer);
  const cloned = structuredClone(own);
  assert.equal(cloned.measures.buffer.byteLength, own.measures.buffer.byteLength);
  assert.equal(cloned.held[0].body.buffer, cloned.measures.buffer);
  const viaSplit = structuredClone({ measures: b.measures });
  assert.ok(viaSplit.measures.buffer.byteLength > 5000, 'the split view alone would carry the whole request');
});

test('keptBytes: a copying storage gets the span alone; memory keeps the view unless its request is large', () => {
  const small = api.otlpSplit(request([tool(traceA, 'a1', 'r'), other(traceA)]), 'json');
  const body = small.traces[0].held[0].body;
  assert.ok(body.buffer.byteLength > body.byteLength && body.buffer.byteLength < SHARED_BUFFER_BYTES);
  const copying = { get: async () => undefined };
  const memory = new MemoryStorage();
  const copied = keptBytes(body, copying);
  assert.notEqual(copied.buffer, body.buffer);
  assert.equal(copied.buffer.byteLength, body.byteLength);
  assert.deepEqual([...copied], [...body]);
  assert.equal(keptBytes(body, memory), body);
  // A small span of a request larger than SHARED_BUFFER_BYTES: copied even in memory.
  const large = api.otlpSplit(request([tool(traceA, 'a1', 'r'), other(traceA), span(traceA, 'log', [attr('big', 'y'.repeat(SHARED_BUFFER_BYTES))])]), 'json');
  const lone = large.traces[0].held[0].body;
  assert.ok(lone.buffer.byteLength > SHARED_BUFFER_BYTES);
  const kept = keptBytes(lone, memory);
  assert.equal(kept.buffer.byteLength, lone.byteLength);
  assert.deepEqual([...kept], [...lone]);
  // A span that is most of its buffer stays a view whatever the size.
  const most = api.otlpSplit(request([tool(traceA, 'a1', 'z'.repeat(SHARED_BUFFER_BYTES)), other(traceA)]), 'json');
  const big = most.traces[0].held[0].body;
  assert.equal(keptBytes(big, memory), big);
});

test('a keeper over a copying storage stores each held span as its own bytes, and forwards it annotated', async () => {
  // A storage that clones what it is given, as a Durable Object's does.
  class CloningStorage extends MemoryStorage {
    get keepsValues() {
      return false;
    }
    async put(key, value) {
      return super.put(structuredClone(key), structuredClone(value));
    }
  }
  const storage = new CloningStorage();
  const forwarded = [];
  const k = new TraceKeeper({
    api,
    traceId: traceA,
    storage,
    setAlarm: async () => {},
    forward: async (encoding, b) => {
      forwarded.push(spansOf(b));
      return new Response('{}', { status: 200 });
    },
    deadlineMs: 60_000,
  });
  const first = api.otlpSplit(request([tool(traceA, 'c1', 'hello world'), other(traceA), span(traceA, 'pad', [attr('pad', 'p'.repeat(10_000))])]), 'json');
  for (const t of first.traces) await k.ingest(t.measures, t.held, first.encoding);
  const stored = [...storage.map].filter(([key]) => key.startsWith('held:'));
  assert.equal(stored.length, 1);
  const [, value] = stored[0];
  assert.equal(value.body.buffer.byteLength, value.body.byteLength, 'stored without the rest of the request');
  const second = api.otlpSplit(request([chat(traceA, [['c1', 'hello']])]), 'json');
  for (const t of second.traces) await k.ingest(t.measures, t.held, second.encoding);
  assert.equal(forwarded.length, 1);
  const [s] = forwarded[0];
  assert.equal(s.attributes.find((a) => a.key === 'toolslice.status').value.stringValue, 'silent_clip');
});

test('names of any length and script, a split with no passthrough or no trace: as the core made them', () => {
  const longKey = `${'k'.repeat(100)}é`;
  const both = api.otlpSplit(request([tool('tracé-ü', 'c1', 'one'), { ...tool('x'.repeat(80), 'c2', 'two'), spanId: longKey }]), 'json');
  assert.equal(both.passthrough, undefined);
  assert.deepEqual(both.traces.map((t) => [t.traceId, t.held.length]), [['tracé-ü', 1], ['x'.repeat(80), 1]]);
  assert.equal(both.traces[1].held[0].key, longKey);
  assert.deepEqual([both.spans, both.tools, both.models], [2, 2, 0]);
  // One buffer for both traces' parts, end to end, nothing else in it.
  const parts = both.traces.flatMap((t) => [t.measures, ...t.held.map((h) => h.body)]);
  assert.equal(parts.reduce((n, p) => n + p.byteLength, 0), parts[0].buffer.byteLength);
  // A span without a span id is held under a digest of its bytes.
  const anonymous = api.otlpSplit(request([{ ...tool('', 'c3', 'three'), spanId: '' }]), 'json');
  assert.equal(anonymous.traces[0].traceId, '');
  assert.match(anonymous.traces[0].held[0].key, /^sha256:[0-9a-f]{32}$/);
  // Nothing to hold: the request passes whole and no trace is named.
  const body = request([other(traceA)]);
  const none = api.otlpSplit(body, 'json');
  assert.deepEqual([none.traces, none.spans, none.tools, none.models, none.encoding], [[], 1, 0, 0, 'json']);
  assert.deepEqual([...none.passthrough], [...body]);
  // Written as protobuf for a protobuf-only upstream: the encoding says so.
  assert.equal(api.otlpSplit(request([tool(traceA, 'c4', 'four')]), 'json', true).encoding, 'protobuf');
});
