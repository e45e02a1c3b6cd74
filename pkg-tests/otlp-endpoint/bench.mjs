#!/usr/bin/env node
// The endpoint's work per export request in the core (wasm, in Node), without the network:
// split (decode, read every span, hold the tool spans), the trace states' ingest (join and
// classify), and annotation of every decided tool span. For protobuf and JSON, from one
// exporter batch (512 spans, the SDKs' default max) of small results to the largest request
// the endpoint reads (8 MiB). Also the wasm memory the largest request needs (the module's
// linear memory grows and never shrinks, so its growth is the peak).
//   node pkg-tests/otlp-endpoint/bench.mjs
import { readFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import * as web from 'toolslice/web';
import { MemoryStorage, TraceKeeper } from 'toolslice/otlp/keeper.js';
import { pb } from './encode.mjs';

const { initSync, otlpSplit, otlpAnnotate, OtlpTrace } = web;
const wasm = initSync({ module: readFileSync(new URL('../node_modules/toolslice/toolslice_bg.wasm', import.meta.url)) });
const memory = () => wasm.memory.buffer.byteLength;
const startMemory = memory();

const hex = (n) => randomBytes(n).toString('hex');
const kv = (key, value) => ({ key, value: { stringValue: value } });

/** An export batch: `spans` spans over 8 traces, each trace a few tool spans then a chat. */
function batch(spans, resultBytes) {
  const list = [];
  const traces = 8;
  const per = Math.floor(spans / traces);
  for (let t = 0; t < traces; t++) {
    const traceId = hex(16);
    const tools = per - 1;
    const parts = [];
    for (let i = 0; i < tools; i++) {
      const result = String.fromCharCode(97 + (i % 26)).repeat(resultBytes);
      list.push({ traceId, spanId: hex(8), name: 'execute_tool read', kind: 1, startTimeUnixNano: String(1e18 + i), endTimeUnixNano: String(1e18 + i + 1),
        attributes: [kv('gen_ai.operation.name', 'execute_tool'), kv('gen_ai.tool.call.id', `c${i}`), kv('gen_ai.tool.call.result', result)] });
      parts.push({ type: 'tool_call_response', id: `c${i}`, response: i % 3 ? result : result.slice(0, 10) });
    }
    list.push({ traceId, spanId: hex(8), name: 'chat', kind: 3, startTimeUnixNano: String(2e18), endTimeUnixNano: String(2e18 + 1),
      attributes: [kv('gen_ai.operation.name', 'chat'), kv('gen_ai.input.messages', JSON.stringify([{ role: 'tool', parts }]))] });
  }
  return { resourceSpans: [{ resource: { attributes: [kv('service.name', 'bench')] }, scopeSpans: [{ scope: { name: 'b' }, spans: list }] }] };
}

function once(body, encoding) {
  const t0 = performance.now();
  const split = otlpSplit(body, encoding);
  const t1 = performance.now();
  let decided = 0;
  for (const t of split.traces) {
    const trace = new OtlpTrace(t.traceId);
    const got = trace.ingest(t.measures, 0, 30000);
    const held = new Map(t.held.map((h) => [h.key, h.body]));
    for (const d of got.decisions) {
      otlpAnnotate(held.get(d.key), encoding, d.annotation);
      decided++;
    }
    trace.free();
  }
  const t2 = performance.now();
  return { split: t1 - t0, total: t2 - t0, decided, spans: split.spans };
}

const LARGEST = [512, 9 * 1024];

/**
 * One agent run of `calls` tool calls as an exporter with a simple span processor sends it:
 * each span in a request of its own (the bodies, in order), each model call's input
 * re-listing the conversation.
 */
function* runRequests(calls) {
  const traceId = hex(16);
  let t = 10n ** 18n;
  const request = (name, attributes) => {
    t += 1000n;
    const span = { traceId, spanId: hex(8), name, kind: 1, startTimeUnixNano: String(t), endTimeUnixNano: String(t + 500n), attributes };
    return Buffer.from(JSON.stringify({ resourceSpans: [{ scopeSpans: [{ spans: [span] }] }] }));
  };
  const messages = [{ role: 'user', parts: [{ type: 'text', content: 'go' }] }];
  for (let i = 0; i < calls; i++) {
    const id = `call_${i}`, result = `line ${i}\n`.repeat(40);
    messages.push({ role: 'assistant', parts: [{ type: 'tool_call', id, name: 'read_file', arguments: { n: i } }] });
    yield request('chat', [kv('gen_ai.operation.name', 'chat'), kv('gen_ai.input.messages', JSON.stringify(messages))]);
    yield request('execute_tool read_file', [kv('gen_ai.operation.name', 'execute_tool'), kv('gen_ai.tool.call.id', id), kv('gen_ai.tool.call.result', result)]);
    messages.push({ role: 'tool', parts: [{ type: 'tool_call_response', id, response: result }] });
  }
  yield request('chat', [kv('gen_ai.operation.name', 'chat'), kv('gen_ai.input.messages', JSON.stringify(messages))]);
}

/**
 * A long run (see `runRequests`). Per request, the endpoint's work on it in the core: split,
 * the trace's ingest, the state written for storage (`toJson`), annotation of what was
 * decided.
 */
function longRun(calls) {
  let trace = null;
  let total = 0, last = 0, largest = 0, decided = 0, joined = 0;
  for (const body of runRequests(calls)) {
    const t0 = performance.now();
    const split = otlpSplit(body, 'json');
    for (const part of split.traces) {
      trace ??= new OtlpTrace(part.traceId);
      const got = trace.ingest(part.measures, 0, 30000);
      largest = Math.max(largest, trace.toJson().length);
      const held = new Map(part.held.map((h) => [h.key, h.body]));
      for (const d of got.decisions) if (held.has(d.key)) otlpAnnotate(held.get(d.key), 'json', d.annotation);
      decided += got.decisions.length;
      joined += got.decisions.filter((d) => d.annotation.status !== 'incomplete').length;
    }
    last = performance.now() - t0;
    total += last;
  }
  trace.free();
  return { total, last, largest, decided, joined };
}

/** The endpoint's storage, counting what each request writes of a trace's state. */
class CountingStorage extends MemoryStorage {
  written = 0;
  keys = 0;
  async put(key, value) {
    const entries = typeof key === 'object' ? Object.entries(key) : [[key, value]];
    for (const [k, v] of entries) {
      if (k.startsWith('held:') || k.startsWith('out:') || k === 'refused') continue;
      this.written += typeof v === 'string' ? v.length : JSON.stringify(v).length;
      this.keys += 1;
    }
    return super.put(key, value);
  }
}

/**
 * A long run through the endpoint's trace keeper (crate/wasm/js/otlp/keeper.js) on the Node
 * endpoint's in-memory storage, the upstream answering at once: per request, split, the
 * keeper's ingest (the core's ingest, the state saved, decided spans annotated and
 * forwarded). What the saves write of the trace's state (characters and keys), in all and
 * for the last request, and the time of all requests.
 */
async function storedRun(calls) {
  const storage = new CountingStorage();
  let keeper = null, total = 0, forwarded = 0;
  let lastChars = 0, lastKeys = 0;
  for (const body of runRequests(calls)) {
    const [chars, keys] = [storage.written, storage.keys];
    const t0 = performance.now();
    const split = otlpSplit(body, 'json');
    for (const part of split.traces) {
      keeper ??= new TraceKeeper({
        api: web, traceId: part.traceId, storage, deadlineMs: 30000, now: () => 0, setAlarm: async () => {},
        forward: async () => { forwarded += 1; return new Response('{}', { status: 200 }); },
      });
      await keeper.ingest(part.measures, part.held, split.encoding);
    }
    total += performance.now() - t0;
    [lastChars, lastKeys] = [storage.written - chars, storage.keys - keys];
  }
  const summary = await keeper.summary();
  return { total, written: storage.written, keys: storage.keys, lastChars, lastKeys, state: keeper.trace.toJson().length, decided: summary.decided, forwarded };
}

/**
 * One trace of `requests` requests, each a tool span (call id `callOf(r)`) and a model call
 * whose input carries the tool messages `inputOf(r)`. Per request: split, ingest, `toJson`.
 * The worst request, the largest state, the largest request.
 */
function modelCallRequests(requests, inputOf, callOf) {
  const traceId = hex(16);
  const trace = new OtlpTrace(traceId);
  let worst = 0, largest = 0, bytes = 0;
  for (let r = 0; r < requests; r++) {
    const spans = [
      { traceId, spanId: hex(8), name: 'execute_tool x', startTimeUnixNano: String(1e18 + 10 * r), endTimeUnixNano: String(1e18 + 10 * r + 1), attributes: [kv('gen_ai.operation.name', 'execute_tool'), kv('gen_ai.tool.call.id', callOf(r)), kv('gen_ai.tool.call.result', 'z')] },
      { traceId, spanId: hex(8), name: 'chat', startTimeUnixNano: String(1e18 + 10 * r + 5), endTimeUnixNano: String(1e18 + 10 * r + 6), attributes: [kv('gen_ai.operation.name', 'chat'), kv('gen_ai.input.messages', JSON.stringify(inputOf(r)))] },
    ];
    const body = Buffer.from(JSON.stringify({ resourceSpans: [{ scopeSpans: [{ spans }] }] }));
    bytes = Math.max(bytes, body.length);
    const t0 = performance.now();
    for (const part of otlpSplit(body, 'json').traces) {
      trace.ingest(part.measures, 0, 30000);
      largest = Math.max(largest, trace.toJson().length);
    }
    worst = Math.max(worst, performance.now() - t0);
  }
  trace.free();
  return { worst, largest, bytes };
}

const toolMessage = (id, response) => ({ role: 'tool', parts: [{ type: 'tool_call_response', id, response }] });

/**
 * Each model call carries `messages` tool messages none carried before (`short`: one-line
 * results, else 120 bytes).
 */
const manyMessages = (requests, messages, short) => modelCallRequests(
  requests,
  (r) => Array.from({ length: messages }, (_, i) => toolMessage(`m${r}_${i}`, short ? `${i}` : `result ${r} ${i} ${'y'.repeat(100)}`)),
  (r) => `m${r}_0`,
);

/**
 * Model calls that pick their tool messages out of order: the first carries `distinct`
 * one-line results, each later one `messages` of them, every other one (each a run of its
 * own in the state's table).
 */
const scattered = (requests, messages, distinct) => modelCallRequests(
  requests,
  (r) => (r === 0 ? Array.from({ length: distinct }, (_, i) => i) : Array.from({ length: messages }, (_, i) => (2 * i + r) % distinct)).map((i) => toolMessage(`m${i}`, `r${i}`)),
  (r) => `m${r}`,
);

const scatteredAt = process.argv.indexOf('--scattered');
if (scatteredAt > 0) {
  const [requests, messages, distinct] = process.argv.slice(scatteredAt + 1).map(Number);
  const r = scattered(requests, messages, distinct);
  console.log(JSON.stringify({ ...r, wasmGrowth: memory() - startMemory }));
  process.exit(0);
}

const manyAt = process.argv.indexOf('--many-messages');
if (manyAt > 0) {
  const [requests, messages, short] = process.argv.slice(manyAt + 1);
  const r = manyMessages(Number(requests), Number(messages), short === 'short');
  console.log(JSON.stringify({ ...r, wasmGrowth: memory() - startMemory }));
  process.exit(0);
}

const storedAt = process.argv.indexOf('--stored');
if (storedAt > 0) {
  console.log(JSON.stringify(await storedRun(Number(process.argv[storedAt + 1]))));
  process.exit(0);
}

// In a fresh process: one long run, and the memory it took.
const runAt = process.argv.indexOf('--long-run');
if (runAt > 0) {
  const r = longRun(Number(process.argv[runAt + 1]));
  console.log(JSON.stringify({ ...r, wasmGrowth: memory() - startMemory }));
  process.exit(0);
}

// In a fresh process: one largest request of one encoding, and the memory it took.
const only = process.argv.indexOf('--memory');
if (only > 0) {
  const encoding = process.argv[only + 1];
  const doc = batch(...LARGEST);
  const body = encoding === 'protobuf' ? pb(doc) : Buffer.from(JSON.stringify(doc));
  const heap = process.memoryUsage();
  once(body, encoding);
  console.log(JSON.stringify({ encoding, bytes: body.length, wasmGrowth: memory() - startMemory, rssMiB: heap.rss / 1048576 }));
  process.exit(0);
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const rows = [];
for (const [label, spans, resultBytes, reps] of [
  ['512 spans, 200 B results', 512, 200, 15],
  ['512 spans, 4 KiB results', 512, 4096, 7],
  ['512 spans, 9 KiB results (near the 8 MiB limit)', ...LARGEST, 3],
]) {
  const doc = batch(spans, resultBytes);
  for (const encoding of ['protobuf', 'json']) {
    const body = encoding === 'protobuf' ? pb(doc) : Buffer.from(JSON.stringify(doc));
    if (body.length > 8 * 1024 * 1024) throw new Error(`${label}: ${body.length} bytes is over the endpoint's limit`);
    once(body, encoding); // warm
    const runs = Array.from({ length: reps }, () => once(body, encoding));
    const split = median(runs.map((r) => r.split));
    const total = median(runs.map((r) => r.total));
    rows.push({ label, encoding, bytes: body.length, split, total, mbps: body.length / 1e6 / (split / 1000), decided: runs[0].decided });
  }
}
console.log('| request | encoding | size | split | split + join + annotate | split throughput | tool spans decided |');
console.log('|---|---|---:|---:|---:|---:|---:|');
for (const r of rows) {
  console.log(`| ${r.label} | ${r.encoding} | ${(r.bytes / 1024 / 1024).toFixed(2)} MiB | ${r.split.toFixed(1)} ms | ${r.total.toFixed(1)} ms | ${r.mbps.toFixed(0)} MB/s | ${r.decided} |`);
}
const { execFileSync } = await import('node:child_process');
for (const encoding of ['protobuf', 'json']) {
  const out = JSON.parse(execFileSync(process.execPath, [new URL(import.meta.url).pathname, '--memory', encoding], { encoding: 'utf8' }));
  console.log(`\nwasm memory growth for one ${(out.bytes / 1048576).toFixed(2)} MiB ${encoding} request (split, join, annotate; fresh process): ${(out.wasmGrowth / 1048576).toFixed(1)} MiB`);
}

console.log('\n| run sent span by span | requests | all requests | last request | largest stored state | wasm memory growth | tool spans decided | joined (not `incomplete`) |');
console.log('|---|---:|---:|---:|---:|---:|---:|---:|');
for (const calls of [100, 200, 400, 600, 1000, 1400]) {
  const out = JSON.parse(execFileSync(process.execPath, [new URL(import.meta.url).pathname, '--long-run', String(calls)], { encoding: 'utf8' }));
  console.log(`| ${calls} tool calls | ${2 * calls + 1} | ${(out.total / 1000).toFixed(2)} s | ${out.last.toFixed(1)} ms | ${(out.largest / 1024).toFixed(0)} KiB | ${(out.wasmGrowth / 1048576).toFixed(0)} MiB | ${out.decided} | ${out.joined} |`);
}

console.log('\n| run sent span by span, through the keeper | requests | all requests | state written, all requests | state written, last request | keys written, all requests | final state | tool spans decided |');
console.log('|---|---:|---:|---:|---:|---:|---:|---:|');
for (const calls of [100, 400, 1000, 1400]) {
  const out = JSON.parse(execFileSync(process.execPath, [new URL(import.meta.url).pathname, '--stored', String(calls)], { encoding: 'utf8' }));
  console.log(`| ${calls} tool calls | ${2 * calls + 1} | ${(out.total / 1000).toFixed(2)} s | ${(out.written / 1e6).toFixed(1)} MB | ${(out.lastChars / 1024).toFixed(0)} KiB | ${out.keys} | ${(out.state / 1024).toFixed(0)} KiB | ${out.decided} |`);
}

console.log('\n| one trace | largest request | worst request | largest stored state | wasm memory growth |');
console.log('|---|---:|---:|---:|---:|');
for (const [requests, messages, short] of [[25, 8000, ''], [1, 20000, ''], [1, 75000, 'short']]) {
  const out = JSON.parse(execFileSync(process.execPath, [new URL(import.meta.url).pathname, '--many-messages', String(requests), String(messages), short], { encoding: 'utf8' }));
  const what = `${requests} request${requests > 1 ? 's' : ''} of a model call carrying ${messages} new ${short ? 'one-line' : '120-byte'} tool results`;
  console.log(`| ${what} | ${(out.bytes / 1048576).toFixed(1)} MiB | ${out.worst.toFixed(0)} ms | ${(out.largest / 1e6).toFixed(1)} MB | ${(out.wasmGrowth / 1048576).toFixed(0)} MiB |`);
}
{
  const out = JSON.parse(execFileSync(process.execPath, [new URL(import.meta.url).pathname, '--scattered', '101', '10000', '20000'], { encoding: 'utf8' }));
  const what = '1 request of a model call carrying 20000 new one-line tool results, then 100 of one carrying 10000 of them out of order (every other one)';
  console.log(`| ${what} | ${(out.bytes / 1048576).toFixed(1)} MiB | ${out.worst.toFixed(0)} ms | ${(out.largest / 1e6).toFixed(1)} MB | ${(out.wasmGrowth / 1048576).toFixed(0)} MiB |`);
}
