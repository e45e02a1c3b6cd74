// Shared by the endpoint tests: running the Python exporter, starting workerd with this
// folder's config, waiting for spans, and the check's verdict on what arrived.
import { execFile, spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { checkSpans } from 'toolslice';
import { receivedSpans } from './receiver.mjs';

const here = (p) => fileURLToPath(new URL(p, import.meta.url));
export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** Runs py_exporter.py against `url`; resolves with its JSON line. */
export async function runPython(url, ...args) {
  const { stdout } = await promisify(execFile)('python3', [here('./py_exporter.py'), url, ...args], { timeout: 60_000 });
  return JSON.parse(stdout.trim().split('\n').pop());
}

export async function freePort() {
  return new Promise((resolve) => {
    const srv = createServer().listen(0, '127.0.0.1', () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });
}

/** Starts real workerd with config.capnp, the upstream bound to `upstreamPort`. */
export async function startWorkerd(upstreamPort, config = './config.capnp') {
  const port = await freePort();
  const storage = mkdtempSync(join(tmpdir(), 'otlp-do-'));
  const proc = spawn(here('../node_modules/.bin/workerd'), [
    'serve', here(config),
    `--socket-addr=http=127.0.0.1:${port}`,
    `--external-addr=upstream=127.0.0.1:${upstreamPort}`,
    `--directory-path=do-storage=${storage}`,
    '--verbose',
  ], { stdio: ['ignore', 'pipe', 'pipe'] });
  let log = '';
  proc.stdout.on('data', (d) => (log += d));
  proc.stderr.on('data', (d) => (log += d));
  const base = `http://127.0.0.1:${port}`;
  for (let i = 0; i < 150; i++) {
    if (proc.exitCode !== null) throw new Error(`workerd exited: ${log}`);
    try {
      await fetch(`${base}/v1/toolslice/stats`);
      return { base, url: `${base}/v1/traces`, stop: () => proc.kill(), log: () => log };
    } catch {
      await sleep(100);
    }
  }
  proc.kill();
  throw new Error(`workerd did not start: ${log}`);
}

/** Waits until the receiver has every span id in `ids` (or throws, naming the missing). */
export async function waitForSpans(receiver, ids, ms = 20_000) {
  const until = Date.now() + ms;
  for (;;) {
    const { spans, docs } = receivedSpans(receiver.requests);
    const have = new Set(spans.map((s) => s.spanId));
    const missing = ids.filter((id) => !have.has(id));
    if (missing.length === 0) return { spans, docs };
    if (Date.now() > until) throw new Error(`spans never arrived upstream: ${missing.join(', ')}`);
    await sleep(200);
  }
}

/** `toolslice check` on the forwarded requests (one OTLP JSON request per line): rows by span id. */
export function checkRows(docs) {
  const report = checkSpans(docs.map((d) => JSON.stringify(d)).join('\n') + '\n');
  const json = report.toJSON();
  report.free();
  return new Map(json.rows.map((r) => [r.span_id, r]));
}
