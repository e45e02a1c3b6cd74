// `toolslice otlp-endpoint`, the same endpoint on one machine (per-trace state in memory):
// the real CLI process, the real SDK exporters, and a receiver standing in for the backend.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { startReceiver } from './receiver.mjs';
import { runOpenInference } from './js_exporter.mjs';
import { runPython, waitForSpans } from './common.mjs';

const cli = fileURLToPath(new URL('../node_modules/toolslice/cli.cjs', import.meta.url));

async function startEndpoint(upstream, ...args) {
  const proc = spawn(process.execPath, [cli, 'otlp-endpoint', '--upstream', upstream, '--port', '0', ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  proc.stderr.on('data', (d) => (err += d));
  proc.stdout.on('data', (d) => (out += d));
  for (let i = 0; i < 100 && !out.includes('\n'); i++) {
    if (proc.exitCode !== null) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  const first = out.split('\n')[0];
  assert.match(first, /^http:\/\/127\.0\.0\.1:\d+$/, `first line is the URL (stderr: ${err})`);
  return { proc, base: first, url: `${first}/v1/traces`, stderr: () => err };
}

test('Node endpoint: annotates across batches, and forwards what it holds on SIGTERM', async () => {
  const receiver = await startReceiver();
  const ep = await startEndpoint(receiver.url, '--deadline', '600');
  try {
    // Python, protobuf: a tool and the model call that received it, in two batches.
    const pair = await runPython(ep.url, '--scenario', 'pair');
    const { spans } = await waitForSpans(receiver, Object.values(pair.spans));
    const time = spans.find((s) => s.spanId === pair.spans.get_time).attrs;
    assert.equal(time['toolslice.status'], 'ok');
    assert.equal(time['toolslice.join'], 'tool_call_id');

    // JS, JSON: tool spans and no model call; the deadline is far, so they are held ...
    const run = await runOpenInference(ep.url, { withModelCall: false });
    const summary = await (await fetch(`${ep.base}/v1/toolslice/traces/${run.traceId}`)).json();
    assert.equal(summary.waiting, 2);
    assert.ok(!receiver.requests.some((r) => r.body.includes(Buffer.from(run.spans.search))));
    // ... until a clean shutdown forwards them, annotated incomplete, saying why.
    ep.proc.kill('SIGTERM');
    const [code] = await once(ep.proc, 'exit');
    assert.equal(code, 0, ep.stderr());
    const after = await waitForSpans(receiver, [run.spans.search, run.spans.lookup], 2000);
    for (const id of [run.spans.search, run.spans.lookup]) {
      const a = after.spans.find((s) => s.spanId === id).attrs;
      assert.equal(a['toolslice.status'], 'incomplete');
      assert.match(a['toolslice.detail'], /^shutdown: /);
    }
  } finally {
    ep.proc.kill();
    await receiver.stop();
  }
});

test('Node endpoint, --upstream-protobuf: JSON exports reach the upstream as protobuf, annotated', async () => {
  const receiver = await startReceiver();
  const ep = await startEndpoint(receiver.url, '--deadline', '600', '--upstream-protobuf');
  try {
    const run = await runOpenInference(ep.url);
    const { spans } = await waitForSpans(receiver, Object.values(run.spans));
    for (const r of receiver.requests) assert.equal(r.contentType, 'application/x-protobuf');
    // Decoded by the opentelemetry-proto classes: the same spans, with the verdicts.
    const search = spans.find((s) => s.spanId === run.spans.search);
    assert.equal(search.attrs['toolslice.status'], 'clipped');
    assert.equal(search.attrs['tool_call.id'], 'call_s');
    assert.equal(search.resource.attributes.find((a) => a.key === 'service.name').value.stringValue, 'js-agent');
    assert.equal(spans.find((s) => s.spanId === run.spans.llm).traceId, run.traceId);

    // A request the protobuf writer refuses (a trace id that is not hex) is refused when it
    // arrives, in its own encoding, and nothing of it is held: before, its tool span was
    // held, and forwarding it could only fail, again at every retry.
    const before = receiver.requests.length;
    const tool = { traceId: 'not-hex!', spanId: '0102030405060708', name: 'execute_tool ls', endTimeUnixNano: '2',
      attributes: [{ key: 'gen_ai.operation.name', value: { stringValue: 'execute_tool' } }] };
    const res = await fetch(ep.url, { method: 'POST', headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ resourceSpans: [{ scopeSpans: [{ spans: [tool] }] }] }) });
    assert.equal(res.status, 400);
    assert.equal(res.headers.get('content-type'), 'application/json');
    assert.match((await res.json()).message, /traceId.*not hex/);
    const held = await fetch(`${ep.base}/v1/toolslice/traces/not-hex!`);
    assert.equal(held.status, 404, await held.text());
    assert.equal(receiver.requests.length, before);
  } finally {
    ep.proc.kill();
    await receiver.stop();
  }
});

test('Node endpoint: usage errors exit 2 with one line', async () => {
  const proc = spawn(process.execPath, [cli, 'otlp-endpoint', '--port', '1'], { stdio: ['ignore', 'pipe', 'pipe'] });
  let err = '';
  proc.stderr.on('data', (d) => (err += d));
  const [code] = await once(proc, 'exit');
  assert.equal(code, 2);
  assert.match(err, /--upstream URL is required/);
});
