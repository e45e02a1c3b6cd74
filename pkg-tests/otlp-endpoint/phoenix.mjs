#!/usr/bin/env node
// Extended run (not in the default suite): Arize Phoenix as the real upstream. The real
// Python and JS SDKs export to the endpoint (the worker in workerd, or the Node command);
// the annotations are then read back through Phoenix's own REST API
// (GET /v1/projects/default/spans?trace_id=...).
//
//   pip install arize-phoenix && phoenix serve          # OTLP/HTTP and API on :6006
//   node pkg-tests/otlp-endpoint/phoenix.mjs [--phoenix http://127.0.0.1:6006] [--target workerd|node]
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { runOpenInference } from './js_exporter.mjs';
import { runPython, sleep, startWorkerd } from './common.mjs';

const { values } = parseArgs({ options: { phoenix: { type: 'string', default: 'http://127.0.0.1:6006' }, target: { type: 'string', default: 'workerd' } } });
const phoenix = new URL(values.phoenix);

let endpoint;
let stop;
if (values.target === 'node') {
  const cli = fileURLToPath(new URL('../node_modules/toolslice/cli.cjs', import.meta.url));
  const proc = spawn(process.execPath, [cli, 'otlp-endpoint', '--upstream', new URL('/v1/traces', phoenix).href, '--port', '0', '--deadline', '2', '--upstream-protobuf'], { stdio: ['ignore', 'pipe', 'inherit'] });
  const first = await new Promise((r) => proc.stdout.once('data', (d) => r(String(d).split('\n')[0])));
  endpoint = `${first}/v1/traces`;
  stop = async () => { proc.kill('SIGTERM'); await new Promise((r) => proc.once('exit', r)); };
} else {
  // config.capnp sends the upstream's requests to http://upstream/v1/traces: Phoenix's path.
  // Phoenix takes protobuf only: the same config with UPSTREAM_ENCODING = "protobuf".
  const { readFileSync, writeFileSync, rmSync } = await import('node:fs');
  const tmp = new URL('./.phoenix.capnp', import.meta.url);
  writeFileSync(tmp, readFileSync(new URL('./config.capnp', import.meta.url), 'utf8').replace(
    '(name = "DEADLINE_SECONDS", text = "2"),',
    '(name = "DEADLINE_SECONDS", text = "2"),\n    (name = "UPSTREAM_ENCODING", text = "protobuf"),'));
  process.on('exit', () => rmSync(tmp, { force: true }));
  const w = await startWorkerd(Number(phoenix.port || 80), './.phoenix.capnp');
  endpoint = w.url;
  stop = async () => w.stop();
}

const py = await runPython(endpoint, '--gzip');
// Phoenix's OTLP/HTTP receiver takes protobuf only (it answers JSON with 415): the endpoint
// forwards the JS SDK's JSON exports as protobuf (--upstream-protobuf, UPSTREAM_ENCODING).
const js = await runOpenInference(endpoint);
await sleep(4000); // past the 2 s deadline: get_news is forwarded incomplete
await stop();

async function spans(traceId, want) {
  for (let i = 0; i < 40; i++) {
    const url = new URL('/v1/projects/default/spans', phoenix);
    url.searchParams.set('trace_id', traceId);
    url.searchParams.set('limit', '100');
    const res = await fetch(url);
    const body = await res.json();
    const got = new Map((body.data ?? []).map((s) => [s.context?.span_id ?? s.span_id, s]));
    if (want.every((id) => got.has(id))) return got;
    await sleep(500);
  }
  throw new Error(`Phoenix does not have every span of trace ${traceId}`);
}

const report = [];
const expect = [
  [py.trace_id, py.spans.get_weather, 'get_weather (Python, protobuf+gzip, GenAI)', 'silent_clip'],
  [py.trace_id, py.spans.get_time, 'get_time (Python, protobuf+gzip, GenAI)', 'ok'],
  [py.trace_id, py.spans.get_news, 'get_news (Python, no later model call)', 'incomplete'],
  [js.traceId, js.spans.search, 'search (JS, JSON, OpenInference)', 'clipped'],
  [js.traceId, js.spans.lookup, 'lookup (JS, JSON, OpenInference, no id)', 'ok'],
];
const pySpans = await spans(py.trace_id, Object.values(py.spans));
const jsSpans = await spans(js.traceId, Object.values(js.spans));
for (const [traceId, id, label, status] of expect) {
  const s = (traceId === py.trace_id ? pySpans : jsSpans).get(id);
  const a = s.attributes ?? {};
  const get = (k) => a[k] ?? k.split('.').reduce((o, part) => o?.[part], a);
  const row = {
    span: label,
    'toolslice.status': get('toolslice.status'),
    'toolslice.join': get('toolslice.join'),
    'toolslice.observed_bytes': get('toolslice.observed_bytes'),
    'toolslice.injected_bytes': get('toolslice.injected_bytes'),
    'toolslice.detail': String(get('toolslice.detail') ?? '').slice(0, 80),
  };
  report.push(row);
  assert.equal(row['toolslice.status'], status, `${label}: ${JSON.stringify(a)}`);
}
console.log(`Phoenix ${phoenix.href}, endpoint in ${values.target}; read back with GET /v1/projects/default/spans:`);
console.table(report);
