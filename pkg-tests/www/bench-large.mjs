// Bench (not part of the test suite): check a large span file in the page, picked from disk
// the way a person picks it, and measure time and peak memory of the browser.
//   node www/bench-large.mjs [SIZE_MB=1000] [PATH]
// Prints one JSON line: bytes, spans, seconds, MB/s, peak RSS of the largest Chromium
// process (the renderer that runs the page and its worker), peak RSS summed over all of
// them, and the worker's WebAssembly memory when the check finished.
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openPage, pickFiles, reportFor, jobFor, writeSpanFile } from './helpers.mjs';

const sizeMb = Number(process.argv[2] ?? 1000);
const path = process.argv[3] ?? join(tmpdir(), `toolslice-bench-${sizeMb}mb.jsonl`);
if (!existsSync(path) || statSync(path).size < sizeMb * 1e6) {
  process.stderr.write(`writing ${sizeMb} MB to ${path}…\n`);
  await writeSpanFile(path, { size: sizeMb * 1e6 });
}
const size = statSync(path).size;

/** PIDs of every process descended from a Chromium whose command line names our profile. */
function chromiumPids() {
  const procs = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      const cmd = readFileSync(`/proc/${name}/cmdline`, 'utf8');
      procs.push({ pid: Number(name), ppid, cmd });
    } catch { /* gone */ }
  }
  const roots = procs.filter((p) => p.cmd.includes('toolslice-chromium-') && !p.cmd.includes('--type=')).map((p) => p.pid);
  const all = new Set(roots);
  let grew = true;
  while (grew) {
    grew = false;
    for (const p of procs) if (all.has(p.ppid) && !all.has(p.pid)) { all.add(p.pid); grew = true; }
  }
  return [...all];
}

function rssKb(pid) {
  try {
    return Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0);
  } catch {
    return 0;
  }
}

const fakeT = { after: (fn) => process.once('beforeExit', fn) };
const { page, close } = await openPage(fakeT);
let peakMax = 0;
let peakSum = 0;
const sample = () => {
  const rss = chromiumPids().map(rssKb);
  peakMax = Math.max(peakMax, ...rss);
  peakSum = Math.max(peakSum, rss.reduce((a, b) => a + b, 0));
};
sample();
const idle = { max: peakMax, sum: peakSum };
const timer = setInterval(sample, 200);
const started = Date.now();
await pickFiles(page, [path]);
const name = path.split('/').at(-1);
await reportFor(page, name).waitFor({ timeout: 30 * 60_000 });
const seconds = (Date.now() - started) / 1000;
clearInterval(timer);
sample();
const job = jobFor(page, name);
const spans = Number((await job.locator('dl.figures .figure').first().locator('dd').textContent()).replaceAll(',', ''));
const wasmMemory = Number(await job.getAttribute('data-wasm-memory'));
const mb = (kb) => Math.round(kb / 1024);
console.log(JSON.stringify({
  bytes: size, spans, seconds: Number(seconds.toFixed(1)), mb_per_s: Math.round(size / 1e6 / seconds),
  flagged_only: (await job.locator('.pill').count()) > 0,
  idle_rss_mb: { largest: mb(idle.max), all: mb(idle.sum) },
  peak_rss_mb: { largest: mb(peakMax), all: mb(peakSum) },
  worker_wasm_memory_mb: Math.round(wasmMemory / 2 ** 20),
}));
await close();
