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
