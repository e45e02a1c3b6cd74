#!/usr/bin/env node
// The MCP packing proxy's added latency per tools/call, measured in one run against a proxy
// doing nothing (pass-through), and written into BENCHMARKS.md between its markers.
// Invoked by scripts/bench (which builds the package first); alone:
//   node scripts/bench-mcp.mjs [--quick]     (--quick: fewer runs, prints, writes nothing)
//
// Upstream: a real MCP server from the SDK (pkg-tests/mcp/json-server.mjs, JSON responses)
// whose `blob` tool returns exactly 1 KiB, 64 KiB or 4 MiB of text. Each request is a raw
// JSON-RPC tools/call POST, timed from the request to the last byte of the response body.
// Routes, all on 127.0.0.1: direct to the server; through workerd running a pass-through
// worker and the packing worker (the package's mcp/worker.js, default budget 4096 bytes, so
// the larger results are redacted, cut, stored for get_more and spanned); through Node
// running a pass-through proxy (pkg-tests/mcp/passthrough-node.mjs) and `toolslice
// mcp-proxy`, each its own process like the upstream and workerd.
import { spawn } from 'node:child_process';
import { cpus, loadavg } from 'node:os';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { startWorkerd } from '../pkg-tests/workerd/harness.mjs';
import { McpPacker } from '../pkg/node.mjs';

const repo = fileURLToPath(new URL('..', import.meta.url));
const quick = process.argv.includes('--quick');
const SIZES = [
  ['1 KiB', 1024, quick ? 10 : 150],
  ['64 KiB', 64 * 1024, quick ? 10 : 150],
  ['4 MiB', 4 * 1024 * 1024, quick ? 4 : 15],
];

async function firstLine(proc) {
  return new Promise((resolve, reject) => {
    let out = '';
    let err = '';
    proc.stderr.on('data', (d) => (err += d));
    proc.stdout.on('data', (d) => {
      out += d;
      if (out.includes('\n')) resolve(out.split('\n')[0]);
    });
    proc.once('exit', (code) => reject(new Error(`exited ${code}: ${err}`)));
  });
}

let nextId = 1;
async function call(url, bytes) {
  const t0 = process.hrtime.bigint();
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    body: JSON.stringify({ jsonrpc: '2.0', id: nextId++, method: 'tools/call', params: { name: 'blob', arguments: { bytes } } }),
  });
  const text = await res.text();
  const t = Number(process.hrtime.bigint() - t0) / 1e6;
  if (!res.ok) throw new Error(`${url}: HTTP ${res.status}: ${text.slice(0, 200)}`);
  return { t, text };
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

const upstreamProc = spawn(process.execPath, [`${repo}/pkg-tests/mcp/json-server.mjs`], { stdio: ['ignore', 'pipe', 'pipe'] });
const upstream = await firstLine(upstreamProc);
process.env.MCP_UPSTREAM = upstream;
process.env.TOOLSLICE_MCP_CONFIG = '{}';
delete process.env.TOOLSLICE_SPAN_SINK;
const wdPass = await startWorkerd('../mcp/passthrough-config.capnp');
const wdPack = await startWorkerd('../mcp/proxy-config.capnp');
const nodePassProc = spawn(process.execPath, [`${repo}/pkg-tests/mcp/passthrough-node.mjs`, upstream], { stdio: ['ignore', 'pipe', 'pipe'] });
const nodePass = { url: await firstLine(nodePassProc), stop: () => nodePassProc.kill() };
const cliProc = spawn(process.execPath, [`${repo}/pkg/cli.cjs`, 'mcp-proxy', '--upstream', upstream], { stdio: ['ignore', 'pipe', 'pipe'] });
const nodePack = await firstLine(cliProc);

const routes = [
  ['direct', upstream],
  ['workerd pass-through', `${wdPass.base}/mcp`],
  ['workerd packing', `${wdPack.base}/mcp`],
  ['Node pass-through', nodePass.url],
  ['Node packing', nodePack],
];
const rows = [];
try {
  for (const [label, bytes, runs] of SIZES) {
    // Sanity: the packing routes really pack (the large results are cut to 4096 bytes).
    const packed = JSON.parse((await call(routes[2][1], bytes)).text);
    const span = packed.result._meta['toolslice/span'];
    if (span.observed_bytes !== bytes) throw new Error(`observed ${span.observed_bytes}, expected ${bytes}`);
    const times = Object.fromEntries(routes.map(([name]) => [name, []]));
    for (let i = 0; i < 3; i++) for (const [, url] of routes) await call(url, bytes);
    // Interleaved, so that a slow moment of the machine hits every route alike.
    for (let i = 0; i < runs; i++) for (const [name, url] of routes) times[name].push((await call(url, bytes)).t);
    const m = Object.fromEntries(Object.entries(times).map(([k, v]) => [k, median(v)]));
    // The packer's own work on the same upstream message, in this process: what the proxy
    // adds in CPU, apart from the network hops whose timing the machine's load blurs.
    const message = (await call(upstream, bytes)).text;
    const packer = new McpPacker('{}');
    const cpu = [];
    for (let i = 0; i < Math.max(5, runs / 5); i++) {
      const t0 = process.hrtime.bigint();
      packer.packMessage(message, { [JSON.stringify(nextId - 1)]: { method: 'tools/call', tool: 'blob', callId: `b${i}` } }, true);
      cpu.push(Number(process.hrtime.bigint() - t0) / 1e6);
    }
    packer.free();
    m.cpu = median(cpu);
    rows.push({ label, runs, m, clip: span.clip_reason, injected: span.injected_bytes });
    console.error(`bench-mcp: ${label}: ${JSON.stringify(m)}`);
  }
} finally {
  wdPass.stop();
  wdPack.stop();
  nodePass.stop();
  cliProc.kill();
  upstreamProc.kill();
}

const ms = (x) => `${x.toFixed(2)} ms`;
const load = loadavg().map((x) => x.toFixed(1)).join(', ');
const body = [
  'Added latency of the MCP packing proxy per `tools/call`, against a proxy doing nothing, in the same run. Upstream: an SDK `McpServer` (JSON responses, `pkg-tests/mcp/json-server.mjs`) whose `blob` tool returns the size below; a raw JSON-RPC POST timed to the last byte of the response, all on 127.0.0.1, routes interleaved, median of the runs shown. The packing proxy runs with the default budget (4096 bytes): it parses the response, redacts, cuts, stores the full text for `get_more` (in memory) and writes the span.',
  '',
  '| result | runs | direct | workerd pass-through | workerd packing | **added (workerd)** | Node pass-through | `toolslice mcp-proxy` | **added (Node)** | packer alone (in process) | injected |',
  '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|',
  ...rows.map(
    (r) =>
      `| ${r.label} | ${r.runs} | ${ms(r.m.direct)} | ${ms(r.m['workerd pass-through'])} | ${ms(r.m['workerd packing'])} | **${ms(r.m['workerd packing'] - r.m['workerd pass-through'])}** | ${ms(r.m['Node pass-through'])} | ${ms(r.m['Node packing'])} | **${ms(r.m['Node packing'] - r.m['Node pass-through'])}** | ${ms(r.m.cpu)} | ${r.injected} B, ${r.clip} |`,
  ),
  '',
  `${cpus().length} × ${cpus()[0]?.model ?? 'cpu'}, Node ${process.version}; load average at the end of the run: ${load}. The "added" columns are differences of medians of whole HTTP round trips and carry the machine's noise (on a loaded machine a small difference can even come out negative); "packer alone" is the proxy's own work on the same message (\`McpPacker.packMessage\`: parse, redact, cut, keep the page, span) timed in one process. On large results that work is mostly redaction and SHA-256 of the observed text: see "Packing" above.`,
  '',
  'Command: `./scripts/bench` (this part alone: `./scripts/build && node scripts/bench-mcp.mjs`).',
].join('\n');

const START = '<!-- mcp-proxy:start -->';
const END = '<!-- mcp-proxy:end -->';
const section = `${START}\n## MCP packing proxy\n\n${body}\n${END}`;
if (quick) {
  console.log(section);
} else {
  const target = `${repo}/BENCHMARKS.md`;
  let doc = existsSync(target) ? readFileSync(target, 'utf8') : '# Benchmarks\n';
  if (doc.includes(START) && doc.includes(END)) {
    doc = doc.slice(0, doc.indexOf(START)) + section + doc.slice(doc.indexOf(END) + END.length);
  } else if (doc.includes('<!-- profiles:start -->')) {
    const at = doc.indexOf('<!-- profiles:start -->');
    doc = `${doc.slice(0, at)}${section}\n\n${doc.slice(at)}`;
  } else {
    doc = `${doc.trimEnd()}\n\n${section}\n`;
  }
  writeFileSync(target, doc);
  console.log(section);
}
process.exit(0);
