#!/usr/bin/env node
// Load test of the OTLP endpoint on 127.0.0.1, bounded in time (not part of the test
// suite; figures go in BENCHMARKS.md). Several concurrent senders each replay agent runs:
// per run a new trace, one export request with its tool spans, the next with the model call
// that received them (and an agent span), alternately in protobuf and JSON. Every request
// is also timed straight to the receiver, so the endpoint's added latency is measured against
// the same upstream. With --outage the upstream answers 503 for two seconds in the middle;
// senders retry as exporters do (after Retry-After). At the end every span sent must have
// arrived upstream, and every tool span annotated.
//
//   node pkg-tests/otlp-endpoint/load.mjs [--target workerd|node] [--seconds 10] [--senders 8]
//        [--tools 4] [--outage] [--storage disk|memory]
import { spawn } from 'node:child_process';
import { createServer } from 'node:http';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { randomBytes } from 'node:crypto';
import { freePort, sleep, startWorkerd } from './common.mjs';
import { pb } from './encode.mjs';

const { values } = parseArgs({
  options: {
    target: { type: 'string', default: 'workerd' },
    seconds: { type: 'string', default: '10' },
    senders: { type: 'string', default: '8' },
    tools: { type: 'string', default: '4' },
    outage: { type: 'boolean', default: false },
    storage: { type: 'string', default: 'disk' },
  },
});
const seconds = Number(values.seconds);
const senders = Number(values.senders);
const toolsPerRun = Number(values.tools);

// --- the upstream: counts spans and annotated tool spans (by span id, so duplicates show)
const seen = new Map(); // spanId -> annotated?
let down = false;
const upstream = createServer((req, res) => {
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    if (down) {
      res.writeHead(503, { 'retry-after': '1' });
      return res.end();
    }
    const body = Buffer.concat(chunks);
    const proto = (req.headers['content-type'] ?? '').includes('protobuf');
    count(body, proto);
    res.writeHead(200, { 'content-type': proto ? 'application/x-protobuf' : 'application/json' });
    res.end(proto ? '' : '{}');
  });
});
function count(body, proto) {
  if (proto) {
    // Span ids of a protobuf request: each span's field 2 (tag 0x12, length 8), read
    // straight from the bytes (the test's own reader, independent of the package's).
    const annotated = body.includes(Buffer.from('toolslice.status'));
    for (let i = body.indexOf(0x12); i >= 0 && i + 10 <= body.length; i = body.indexOf(0x12, i + 1)) {
      if (body[i + 1] !== 8) continue;
      const id = body.subarray(i + 2, i + 10).toString('hex');
      if (sentIds.has(id)) seen.set(id, annotated);
    }
    return;
  }
  const doc = JSON.parse(body.toString('utf8'));
  for (const rs of doc.resourceSpans) for (const ss of rs.scopeSpans) for (const s of ss.spans) {
    seen.set(s.spanId, s.attributes.some((a) => a.key === 'toolslice.status'));
  }
}
// Every span id a sender will send (registered before sending), and the tool spans' ids.
const sentIds = new Set();
const toolIdsSent = new Set();

// --- requests of one run
function hex(n) {
  return randomBytes(n).toString('hex');
}
function kv(key, value) {
  return { key, value: { stringValue: value } };
}
function run(register = true) {
  const traceId = hex(16);
  const root = hex(8);
  const t0 = BigInt(Date.now()) * 1_000_000n;
  const ns = (ms) => String(t0 + BigInt(ms) * 1_000_000n);
  const result = 'x'.repeat(2000);
  const tools = [];
  const parts = [];
  for (let i = 0; i < toolsPerRun; i++) {
    const id = hex(8);
    tools.push({
      traceId, spanId: id, parentSpanId: root, name: 'execute_tool read', kind: 1,
      startTimeUnixNano: ns(i), endTimeUnixNano: ns(i + 1),
      attributes: [kv('gen_ai.operation.name', 'execute_tool'), kv('gen_ai.tool.call.id', `call_${i}`), kv('gen_ai.tool.call.result', result)],
    });
    parts.push({ type: 'tool_call_response', id: `call_${i}`, response: i % 2 ? result : result.slice(0, 500) });
  }
  const chat = {
    traceId, spanId: hex(8), parentSpanId: root, name: 'chat', kind: 3,
    startTimeUnixNano: ns(100), endTimeUnixNano: ns(200),
    attributes: [kv('gen_ai.operation.name', 'chat'), kv('gen_ai.input.messages', JSON.stringify([{ role: 'tool', parts }]))],
  };
  const agent = {
    traceId, spanId: root, name: 'invoke_agent', kind: 1, startTimeUnixNano: ns(0), endTimeUnixNano: ns(300),
    attributes: [kv('gen_ai.operation.name', 'invoke_agent')],
  };
  const req = (spans) => ({ resourceSpans: [{ resource: { attributes: [kv('service.name', 'load')] }, scopeSpans: [{ scope: { name: 'load' }, spans }] }] });
  const ids = [...tools, chat, agent].map((s) => s.spanId);
  if (register) {
    for (const id of ids) sentIds.add(id);
    for (const t of tools) toolIdsSent.add(t.spanId);
  }
  return { ids, bodies: [req(tools), req([chat, agent])] };
}

function p(list, q) {
  const s = [...list].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))];
}

async function post(url, body, proto) {
  for (let attempt = 0; ; attempt++) {
    const t = performance.now();
    const res = await fetch(url, { method: 'POST', headers: { 'content-type': proto ? 'application/x-protobuf' : 'application/json' }, body });
    await res.arrayBuffer();
    const ms = performance.now() - t;
    if (res.ok) return { ms, retried: attempt > 0 };
    if (res.status === 503 || res.status === 429) {
      await sleep(Number(res.headers.get('retry-after') ?? 1) * 1000);
      continue;
    }
    throw new Error(`export refused: ${res.status} ${await res.text()}`);
  }
}

async function main() {
  await new Promise((r) => upstream.listen(0, '127.0.0.1', r));
  const upPort = upstream.address().port;
  const direct = `http://127.0.0.1:${upPort}/v1/traces`;
  let endpoint;
  let stop;
  if (values.target === 'node') {
    const cli = fileURLToPath(new URL('../node_modules/toolslice/cli.cjs', import.meta.url));
    const port = await freePort();
    const proc = spawn(process.execPath, [cli, 'otlp-endpoint', '--upstream', direct, '--port', String(port), '--deadline', '2'], { stdio: ['ignore', 'pipe', 'inherit'] });
    await new Promise((r) => proc.stdout.once('data', r));
    endpoint = `http://127.0.0.1:${port}/v1/traces`;
    stop = () => proc.kill('SIGTERM');
  } else {
    // --storage memory: the same config with the Durable Objects in memory, to separate the
    // endpoint's own cost from local workerd's on-disk storage (a SQLite file per object,
    // that is per trace).
    let config;
    if (values.storage === 'memory') {
      const { readFileSync, writeFileSync, rmSync } = await import('node:fs');
      const src = new URL('./config.capnp', import.meta.url);
      const tmp = new URL('./.load-memory.capnp', import.meta.url);
      writeFileSync(tmp, readFileSync(src, 'utf8').replace('durableObjectStorage = (localDisk = "do-storage")', 'durableObjectStorage = (inMemory = void)'));
      config = './.load-memory.capnp';
      process.on('exit', () => rmSync(tmp, { force: true }));
    }
    const w = await startWorkerd(upPort, config);
    endpoint = w.url;
    stop = w.stop;
  }

  const sent = new Set();
  const through = [];
  const straight = [];
  let spans = 0;
  let retried = 0;
  const end = Date.now() + seconds * 1000;
  if (values.outage) {
    setTimeout(() => { down = true; }, (seconds * 1000) / 3);
    setTimeout(() => { down = false; }, (seconds * 1000) / 3 + 2000);
  }
  const t0 = performance.now();
  let n = 0;
  await Promise.all(Array.from({ length: senders }, async () => {
    while (Date.now() < end) {
      const r = run();
      const proto = n++ % 2 === 0;
      for (const doc of r.bodies) {
        const body = proto ? pb(doc) : JSON.stringify(doc);
        const res = await post(endpoint, body, proto);
        through.push(res.ms);
        if (res.retried) retried++;
        spans += doc.resourceSpans[0].scopeSpans[0].spans.length;
      }
      for (const id of r.ids) sent.add(id);
    }
  }));
  const elapsed = (performance.now() - t0) / 1000;
  // The same kind of requests straight to the upstream, for the baseline latency.
  down = false;
  await Promise.all(Array.from({ length: senders }, async () => {
    for (let i = 0; i < 50; i++) {
      const r = run(false);
      for (const doc of r.bodies) straight.push((await post(direct, JSON.stringify(doc), false)).ms);
    }
  }));
  // Wait for the held tool spans and the outbox retries to land.
  const deadline = Date.now() + 30_000;
  let missing;
  for (;;) {
    missing = [...sent].filter((id) => !seen.has(id));
    if (missing.length === 0 || Date.now() > deadline) break;
    await sleep(500);
  }
  stop();
  upstream.close();
  const toolIds = [...toolIdsSent].filter((id) => seen.get(id) === true).length;
  const out = {
    target: values.target,
    storage: values.target === 'workerd' ? values.storage : 'memory',
    senders,
    seconds: Number(elapsed.toFixed(2)),
    requests: through.length,
    spans,
    spans_per_second: Math.round(spans / elapsed),
    p50_ms: Number(p(through, 0.5).toFixed(2)),
    p99_ms: Number(p(through, 0.99).toFixed(2)),
    direct_p50_ms: Number(p(straight, 0.5).toFixed(2)),
    direct_p99_ms: Number(p(straight, 0.99).toFixed(2)),
    added_p99_ms: Number((p(through, 0.99) - p(straight, 0.99)).toFixed(2)),
    outage: values.outage,
    requests_retried: retried,
    spans_sent: sent.size,
    spans_missing_upstream: missing.length,
    tool_spans_sent: toolIdsSent.size,
    tool_spans_annotated: toolIds,
  };
  console.log(JSON.stringify(out, null, 2));
  process.exit(missing.length === 0 ? 0 : 1);
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
