// Compares built packages on the hot paths, in one process, runs interleaved:
//   node scripts/compare_builds.mjs DIR...     (DIR: a package, e.g. pkg, pkg/check, or a copy)
// checker (20 MB of span JSONL as scripts/bench.mjs generates it, 1 MiB chunks, flaggedOnly),
// SHA-256 of 64 MiB, terminal truncation of an 8 MB build log, pack of 64 KiB (x100).
// Figures are process CPU time, which other builds on a shared machine disturb less than wall
// time: the median of RUNS (default 7), or the minimum with MIN=1; WALL=1 for wall time.
// A package without a function (pkg/check has no sha256) shows NaN for it.
import { readFileSync, writeFileSync, existsSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { resolve } from 'node:path';
const data = `${tmpdir()}/toolslice-compare`;
mkdirSync(data, { recursive: true });
const dirs = process.argv.slice(2).map((d) => resolve(d));
const mods = [];
for (const d of dirs) mods.push(await import(`${d}/node.mjs`));
function rng(seed) { let x = BigInt(seed) | 1n; return () => { x ^= x << 13n; x &= 0xffffffffffffffffn; x ^= x >> 7n; x ^= x << 17n; x &= 0xffffffffffffffffn; return Number(x % 1000000n) / 1000000; }; }
function spanFile(targetBytes) {
  const path = `${data}/spans-${targetBytes}.jsonl`;
  if (existsSync(path)) return path;
  const r = rng(7); const tools = ['read_file', 'grep', 'shell', 'search', 'fetch_url', 'list_dir'];
  const declared = ['prompt_token_cap', 'tool_result_char_limit', 'provider_context_window'];
  const parts = []; let size = 0;
  for (let i = 0; size < targetBytes; i++) {
    const obs = Math.floor(r() * 200000); const roll = r(); const clipped = roll < 0.15;
    const inj = clipped ? Math.floor(obs * r()) : obs;
    const reason = roll < 0.04 ? 'none' : clipped ? declared[i % 3] : roll < 0.17 ? 'redaction' : 'none';
    const rewritten = roll > 0.99;
    const rec = { span_id: `tool-${i}`, parent_id: `turn-${Math.floor(i / 8)}`, name: tools[i % tools.length],
      status: roll > 0.985 && roll <= 0.99 ? 'running' : 'ok', observed_bytes: obs, injected_bytes: inj,
      injected_tokens: Math.floor(inj / 4), clip_reason: reason,
      sha256_observed: (i * 2654435761 >>> 0).toString(16).padStart(16, '0'),
      sha256_injected: (clipped || rewritten ? i : i * 2654435761 >>> 0).toString(16).padStart(16, '0'),
      injected_preview: 'app:\n  name: billing\n  port: 8443\n  env: "production"\n', prompt_builder_version: `cap-v${i % 3}` };
    const line = JSON.stringify(rec) + '\n'; parts.push(line); size += line.length;
  }
  writeFileSync(path, parts.join('')); return path;
}
function buildLog(targetBytes) {
  const path = `${data}/build-${targetBytes}.log`;
  if (existsSync(path)) return path;
  const r = rng(11); const parts = ['$ npm run build\n', '> app@1.0.0 build\n', '> tsc && vite build\n']; let size = 0;
  for (let i = 0; size < targetBytes; i++) {
    let line;
    if (i === 40000) line = 'src/config.ts(42,13): error TS2304: Cannot find name \'port\'.';
    else if (r() < 0.001) line = `warning: deprecated option ${i} (see docs)`;
    else line = `  transforming (${i}) src/components/module-${i % 997}/index.tsx`;
    parts.push(line + '\n'); size += line.length + 1;
  }
  parts.push('npm ERR! code ELIFECYCLE\nnpm ERR! errno 2\n');
  writeFileSync(path, parts.join('')); return path;
}
const spans = readFileSync(spanFile(20e6));
const log = readFileSync(buildLog(8e6), 'utf8');
const big = new Uint8Array(64 << 20).map((_, i) => (i * 31) & 255);
const R = Number(process.env.RUNS || 7);
const times = mods.map(() => ({ check: [], sha: [], trunc: [], pack: [] }));
let plog = ''; for (let i = 0; plog.length < 65536; i++) plog += i === 400 ? 'error[E0425]: cannot find value `port` in this scope\n' : `   Compiling crate-${i} v0.${i}.1 (/work/src/crate-${i})\n`;
// CPU time of the process (ms), less disturbed than wall time by other builds on the machine.
const t = process.env.WALL ? (f) => { const s = performance.now(); f(); return performance.now() - s; } : (f) => { const s = process.cpuUsage(); f(); const d = process.cpuUsage(s); return (d.user + d.system) / 1000; };
for (let r = 0; r < R; r++) {
  mods.forEach((m, k) => {
    times[k].check.push(t(() => { const c = new m.Checker({ flaggedOnly: true }); for (let i = 0; i < spans.length; i += 1 << 20) c.push(spans.subarray(i, i + (1 << 20))); c.finish().free(); }));
    if (m.sha256) times[k].sha.push(t(() => m.sha256(big)));
    if (m.pack) times[k].pack.push(t(() => { for (let i = 0; i < 100; i++) m.pack({ tool: 'shell', callId: `c${i}`, text: plog, exitCode: 1 }, { limit: 8192 }); }));
    if (m.truncate) times[k].trunc.push(t(() => m.truncate(log, { pattern: 'terminal', budget: { chars: 6000 } })));
  });
}
const med = (xs) => { if (!xs.length) return NaN; xs = [...xs].sort((a, b) => a - b); return process.env.MIN ? xs[0] : xs[xs.length >> 1]; };
mods.forEach((m, k) => {
  const c = med(times[k].check), s = med(times[k].sha), tr = med(times[k].trunc), pk = med(times[k].pack) * 10;
  console.log(`${dirs[k]}: check ${c.toFixed(1)} ms (${(spans.length / 1e3 / c).toFixed(1)} MB/s) | sha256 64MiB ${s.toFixed(1)} ms (${((64 << 20) / 1e3 / s).toFixed(1)} MB/s) | truncate 8MB ${tr.toFixed(1)} ms (${(log.length / 1e3 / tr).toFixed(1)} MB/s) | pack 64KiB ${pk.toFixed(0)} us`);
});
