// The OTLP endpoint worker in real workerd with real Durable Objects, fed by the real
// OpenTelemetry SDKs (Python: protobuf, gzip; JS: JSON), forwarding to a receiver that
// stands in for the backend. What a user relies on: every span arrives upstream, each tool
// span carries the verdict `toolslice check` gives, in the encoding it was sent in; bad
// input gets OTLP's answers; an upstream outage loses nothing.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { gzipSync } from 'node:zlib';
import { startReceiver } from './receiver.mjs';
import { runOpenInference } from './js_exporter.mjs';
import { checkRows, runPython, sleep, startWorkerd, waitForSpans } from './common.mjs';

let receiver;
let worker;

before(async () => {
  receiver = await startReceiver();
  worker = await startWorkerd(receiver.port);
});

after(async () => {
  worker?.stop();
  await receiver?.stop();
});

const toolAttrs = (spans, id) => spans.find((s) => s.spanId === id)?.attrs ?? {};

test('Python SDK, protobuf + gzip: tool spans wait across batches, are annotated as check says, deadline gives incomplete', async () => {
  const run = await runPython(worker.url, '--gzip');
  const ids = run.spans;
  const { spans, docs } = await waitForSpans(receiver, Object.values(ids));
  const mine = receiver.requests.filter((r) => r.body.includes(Buffer.from(run.trace_id, 'hex')));
  assert.ok(mine.length >= 2);
  for (const r of mine) assert.equal(r.contentType, 'application/x-protobuf', 'forwarded in the encoding it came in');

  const weather = toolAttrs(spans, ids.get_weather);
  assert.equal(weather['toolslice.status'], 'silent_clip');
  assert.equal(weather['toolslice.join'], 'tool_call_id');
  assert.equal(weather['toolslice.injected_bytes'], 60);
  assert.ok(weather['toolslice.observed_bytes'] > 60);
  assert.equal(weather['gen_ai.tool.call.id'], 'call_w', 'the span keeps its own attributes');
  const time = toolAttrs(spans, ids.get_time);
  assert.equal(time['toolslice.status'], 'ok');
  const news = toolAttrs(spans, ids.get_news);
  assert.equal(news['toolslice.status'], 'incomplete');
  assert.match(news['toolslice.detail'], /^deadline: no later model call of this trace arrived within 2 s/);
  assert.equal(news['toolslice.join'], 'unmatched');
  assert.equal(toolAttrs(spans, ids.chat)['toolslice.status'], undefined, 'only tool spans are annotated');

  // The verdicts are toolslice check's on the same spans.
  const rows = checkRows(docs);
  for (const name of ['get_weather', 'get_time', 'get_news']) {
    const row = rows.get(ids[name]);
    const a = toolAttrs(spans, ids[name]);
    assert.equal(a['toolslice.status'], row.status, name);
    assert.equal(a['toolslice.observed_bytes'], row.observed_bytes ?? undefined, name);
    assert.equal(a['toolslice.injected_bytes'], row.injected_bytes ?? undefined, name);
  }

  const summary = await (await fetch(`${worker.base}/v1/toolslice/traces/${run.trace_id}`)).json();
  assert.deepEqual(summary.counts, { incomplete: 1, ok: 1, silent_clip: 1 });
  assert.equal(summary.waiting, 0);
  assert.equal(Math.round(summary.silent_clips_per_100 * 100) / 100, 33.33);
});

test('JS SDK, JSON, OpenInference: declared cut is clipped, an id-less tool joins by order', async () => {
  const run = await runOpenInference(worker.url);
  const { spans, docs } = await waitForSpans(receiver, Object.values(run.spans));
  const search = toolAttrs(spans, run.spans.search);
  assert.equal(search['toolslice.status'], 'clipped');
  assert.equal(search['toolslice.join'], 'tool_call_id');
  const lookup = toolAttrs(spans, run.spans.lookup);
  assert.equal(lookup['toolslice.status'], 'ok');
  assert.equal(lookup['toolslice.join'], 'order');
  const rows = checkRows(docs);
  assert.equal(rows.get(run.spans.search).status, 'clipped');
  assert.equal(rows.get(run.spans.lookup).status, 'ok');
  const jsonBodies = receiver.requests.filter((r) => r.body.includes(Buffer.from(run.traceId)));
  assert.ok(jsonBodies.length >= 2);
  for (const r of jsonBodies) assert.equal(r.contentType, 'application/json');
});

test('malformed exports get the OTLP error response; unreadable ones are forwarded unchanged and counted', async () => {
  let res = await fetch(worker.url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"resourceSpans": [' });
  assert.equal(res.status, 400);
  const status = await res.json();
  assert.equal(status.code, 3);
  assert.match(status.message, /JSON export request: .*line 1/);

  res = await fetch(worker.url, { method: 'POST', headers: { 'content-type': 'application/x-protobuf' }, body: new Uint8Array([0x0a, 0x05, 0x01]) });
  assert.equal(res.status, 400);
  assert.equal(res.headers.get('content-type'), 'application/x-protobuf');
  const body = Buffer.from(await res.arrayBuffer());
  assert.ok(body.toString('latin1').includes('resource_spans') || body.toString('latin1').includes('remain'));

  res = await fetch(worker.url, { method: 'POST', headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' }, body: 'not gzip' });
  assert.equal(res.status, 400);
  assert.match((await res.json()).message, /gzip/);

  // An object of more members than any OTLP object has, the shape of a body whose keys were
  // chosen to collide in a hash map: refused before any map is built, whether the request
  // is otherwise of the ordinary shape (read from byte ranges) or not (here: a span field
  // given twice, read as a tree).
  const flood = Object.fromEntries(Array.from({ length: 2000 }, (_, i) => [`k${i}`, i]));
  const flooded = JSON.stringify({ resourceSpans: [{ resource: { flood }, scopeSpans: [{ spans: [{ traceId: 'ef'.repeat(16), name: 'x' }] }] }] });
  for (const body of [flooded, flooded.replace('"name":"x"', '"name":"x","name":"y"')]) {
    res = await fetch(worker.url, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
    assert.equal(res.status, 400);
    assert.match((await res.json()).message, /more than 1024 members .*line 1 column \d+/);
  }
  // The same request with 1000 members is forwarded.
  const fits = JSON.stringify({ resourceSpans: [{ resource: { flood: Object.fromEntries(Object.entries(flood).slice(0, 1000)) }, scopeSpans: [{ spans: [{ traceId: 'ef'.repeat(16), name: 'x' }] }] }] });
  res = await fetch(worker.url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: fits });
  assert.equal(res.status, 200);

  const before = receiver.requests.length;
  const odd = gzipSync('thrift-ish bytes');
  res = await fetch(worker.url, { method: 'POST', headers: { 'content-type': 'application/vnd.apache.thrift.binary', 'content-encoding': 'gzip' }, body: odd });
  assert.equal(res.status, 200);
  const got = receiver.requests.slice(before).find((r) => r.contentType === 'application/vnd.apache.thrift.binary');
  assert.ok(got, 'forwarded');
  assert.equal(got.body.toString(), 'thrift-ish bytes');
  const stats = await (await fetch(`${worker.base}/v1/toolslice/stats`)).json();
  assert.equal(stats.unknown_content_type, 1);
  assert.equal(stats.malformed, 5);
});

test('upstream down, then back: the exporter is told to retry, and no span is lost', async () => {
  receiver.state.mode = 'down';
  const res = await fetch(worker.url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ resourceSpans: [{ scopeSpans: [{ spans: [{ traceId: 'ab'.repeat(16), spanId: 'cd'.repeat(8), name: 'x', endTimeUnixNano: '2' }] }] }] }),
  });
  assert.equal(res.status, 503);
  assert.ok(Number(res.headers.get('retry-after')) >= 1);
  // A real exporter during the outage: it gets 503s and retries on its own.
  const running = runPython(worker.url, '--scenario', 'pair');
  await sleep(2500);
  receiver.state.mode = 'up';
  const run = await running;
  const { spans } = await waitForSpans(receiver, Object.values(run.spans));
  assert.equal(toolAttrs(spans, run.spans.get_time)['toolslice.status'], 'ok');
  const summary = await (await fetch(`${worker.base}/v1/toolslice/traces/${run.trace_id}`)).json();
  assert.equal(summary.unforwarded_requests, 0);
});

// GenAI spans of one trace as an agent's exporter sends them (OTLP JSON).
function genaiSpans(traceId) {
  let t = BigInt(Date.now()) * 1_000_000n;
  let n = 0;
  const attr = (key, v) => ({ key, value: { stringValue: v } });
  const span = (name, attrs) => {
    n += 1;
    const s = { traceId, spanId: n.toString(16).padStart(16, '0'), name, startTimeUnixNano: String(t), endTimeUnixNano: String(t + 1000n), attributes: attrs };
    t += 2000n;
    return s;
  };
  return {
    chat: (messages) => span('chat gpt-4o', [attr('gen_ai.operation.name', 'chat'), attr('gen_ai.input.messages', JSON.stringify(messages))]),
    tool: (id, result) => span('execute_tool read_file', [attr('gen_ai.operation.name', 'execute_tool'), attr('gen_ai.tool.name', 'read_file'), attr('gen_ai.tool.call.id', id), attr('gen_ai.tool.call.result', result)]),
  };
}
const post = (spans) => fetch(worker.url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ resourceSpans: [{ scopeSpans: [{ spans }] }] }) });
const newTraceId = () => [...crypto.getRandomValues(new Uint8Array(16))].map((b) => b.toString(16).padStart(2, '0')).join('');

test('a long run sent span by span, each model call re-listing the conversation: every span arrives, annotated as check says', async () => {
  // 250 tool calls: the trace's state held every model call's input whole, 13 MB of JSON
  // written after each request, and from about 200 calls on workerd refused it
  // (SQLITE_TOOBIG): 503s, and spans never forwarded.
  const traceId = newTraceId();
  const make = genaiSpans(traceId);
  const messages = [{ role: 'user', parts: [{ type: 'text', content: 'go' }] }];
  const ids = [];
  const statuses = new Map();
  const send = async (span) => {
    ids.push(span.spanId);
    const res = await post([span]);
    await res.arrayBuffer();
    statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
  };
  for (let i = 0; i < 250; i++) {
    const id = `call_${i}`;
    const result = `line ${i}\n`.repeat(40);
    messages.push({ role: 'assistant', parts: [{ type: 'tool_call', id, name: 'read_file', arguments: { n: i } }] });
    await send(make.chat(messages));
    await send(make.tool(id, result));
    // Every fifth result reaches the model cut.
    messages.push({ role: 'tool', parts: [{ type: 'tool_call_response', id, response: i % 5 === 0 ? result.slice(0, 100) : result }] });
  }
  await send(make.chat(messages));
  assert.deepEqual([...statuses], [[200, 501]]);
  const { spans, docs } = await waitForSpans(receiver, ids);
  const rows = checkRows(docs);
  const tools = spans.filter((s) => s.traceId === traceId && s.name.startsWith('execute_tool'));
  assert.equal(tools.length, 250);
  for (const s of tools) {
    assert.equal(s.attrs['toolslice.status'], rows.get(s.spanId).status, s.spanId);
    assert.equal(s.attrs['toolslice.injected_bytes'], rows.get(s.spanId).injected_bytes, s.spanId);
  }
  assert.equal(tools.filter((s) => s.attrs['toolslice.status'] === 'silent_clip').length, 50);
  const summary = await (await fetch(`${worker.base}/v1/toolslice/traces/${traceId}`)).json();
  assert.equal(summary.decided, 250);
  assert.equal(summary.unforwarded_requests, 0);
});

test('a trace of 20,000 calls (its state over a Durable Object value) is stored in pieces: every span arrives annotated', async () => {
  // 10,000 tool calls and their 10,000 model calls in 8 requests: about 13 MB of state,
  // which workerd refused whole (SQLITE_TOOBIG; Cloudflare's limit is 2 MB).
  const traceId = newTraceId();
  const make = genaiSpans(traceId);
  const all = [];
  for (let i = 0; i < 10_000; i++) {
    const id = `call_${i}`;
    const result = `result ${i} ${'é'.repeat(60)}`;
    all.push(make.tool(id, result), make.chat([{ role: 'tool', parts: [{ type: 'tool_call_response', id, response: result }] }]));
  }
  for (let r = 0; r < 8; r++) {
    const res = await post(all.slice(r * 2500, (r + 1) * 2500));
    await res.arrayBuffer();
    assert.equal(res.status, 200, `request ${r}`);
  }
  const { spans } = await waitForSpans(receiver, all.map((s) => s.spanId), 60_000);
  const tools = spans.filter((s) => s.traceId === traceId && s.name.startsWith('execute_tool'));
  assert.equal(tools.length, 10_000);
  assert.ok(tools.every((s) => s.attrs['toolslice.status'] === 'ok'));
  const summary = await (await fetch(`${worker.base}/v1/toolslice/traces/${traceId}`)).json();
  assert.equal(summary.decided, 10_000);
  assert.equal(summary.model_calls, 10_000);
});
