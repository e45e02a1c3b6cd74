// A trace file checked in fresh processes, built packages side by side: the first pass (what a
// CLI run pays: the module's functions start in V8's baseline tier) and the warm ones after it.
//   node scripts/first-pass.mjs [--json] [--v8 FLAGS] [--code-cache DIR] FILE FORMAT PROCESSES DIR...   (DIR: a package)
// Each process checks FILE 6 times with DIR/check's Checker (`flaggedOnly`, room reserved for the
// file, 1 MiB chunks, as the CLI feeds it) and times each chunk's push and the finish; the
// processes of the DIRs take turns. Printed per DIR: the median over processes of the first pass
// and of the median of the 5 warm passes (push + finish, ms), then each process's figures. With
// --json, one object per DIR instead (scripts/bench reads it): those medians, the push and the
// finish apart, and `settledMB`: the MB the first pass had read when three quarters of its push's
// extra time over the warm passes was spent (chunk by chunk), that is, how far into the file the
// baseline tier held the reading back. With --v8 FLAGS (e.g. '--no-liftoff'), each process sets
// those V8 flags (v8.setFlagsFromString) before it compiles the module: how tiering flags were
// measured (the note on issue 17 lists them). With --code-cache DIR, each process loads the module
// as `toolslice check` does, through the package's cli/code-cache.mjs with its cache in DIR, and
// saves to it after its passes; one unmeasured process per package fills the cache first, so the
// first pass is a later CLI run's.
import { execFileSync } from 'node:child_process';
import { readFileSync, statSync } from 'node:fs';
import { setFlagsFromString } from 'node:v8';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const PASSES = 6;
const CHUNK = 1 << 20;
// The share of the first pass's extra push time by which it is said to have settled: three
// quarters (the rest is spread thin over the file, chunk times a little above the warm ones).
const SETTLED = 0.75;

const median = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1];
const sum = (xs) => xs.reduce((a, b) => a + b, 0);

if (process.argv[2] === '--child') {
  const [, , , dir, file, format, flags, cacheDir] = process.argv;
  if (flags) setFlagsFromString(flags);
  let ts;
  let save = () => {};
  if (cacheDir) {
    process.env.TOOLSLICE_CODE_CACHE = cacheDir;
    const cache = await import(`${dir}/cli/code-cache.mjs`);
    ts = cache.initCheckGlue(await import(`${dir}/check/toolslice.js`));
    save = cache.saveCompiledCheckModule;
  } else {
    ts = await import(`${dir}/check/node.mjs`);
  }
  const data = readFileSync(file);
  const passes = [];
  for (let p = 0; p < PASSES; p++) {
    const chunks = [];
    const checker = new ts.Checker({ format, flaggedOnly: true });
    checker.reserve(data.length);
    for (let i = 0; i < data.length; i += CHUNK) {
      const start = performance.now();
      checker.push(data.subarray(i, Math.min(data.length, i + CHUNK)));
      chunks.push(performance.now() - start);
    }
    const start = performance.now();
    checker.finish().free();
    passes.push({ chunks, finish: performance.now() - start });
  }
  save();
  console.log(JSON.stringify(passes));
} else {
  const args = process.argv.slice(2);
  const json = args[0] === '--json';
  if (json) args.shift();
  let flags = '';
  if (args[0] === '--v8') {
    flags = args[1] ?? '';
    args.splice(0, 2);
  }
  let cacheDir = '';
  if (args[0] === '--code-cache') {
    cacheDir = resolve(args[1] ?? '');
    args.splice(0, 2);
  }
  const [file, format, processes, ...dirs] = args;
  if (!file || !format || !(+processes > 0) || dirs.length === 0) {
    console.error('usage: node scripts/first-pass.mjs [--json] [--v8 FLAGS] [--code-cache DIR] FILE FORMAT PROCESSES DIR...');
    process.exit(2);
  }
  const self = fileURLToPath(import.meta.url);
  const size = statSync(file).size;
  const runs = new Map(dirs.map((d) => [d, []]));
  const child = (d) => execFileSync(process.execPath, [self, '--child', resolve(d), resolve(file), format, flags, cacheDir], { maxBuffer: 1 << 26 });
  if (cacheDir) for (const d of dirs) child(d);
  for (let i = 0; i < +processes; i++) {
    for (const d of dirs) {
      const out = child(d);
      const [first, ...warm] = JSON.parse(out);
      // Per chunk, the warm passes' median: what the first pass's chunk is set against.
      const warmChunks = first.chunks.map((_, c) => median(warm.map((w) => w.chunks[c])));
      const extra = first.chunks.map((t, c) => Math.max(0, t - warmChunks[c]));
      const total = sum(extra);
      let spent = 0;
      let settled = first.chunks.length;
      for (let c = 0; c < extra.length; c++) {
        spent += extra[c];
        if (spent >= SETTLED * total) {
          settled = c + 1;
          break;
        }
      }
      runs.get(d).push({
        first: sum(first.chunks) + first.finish,
        warm: median(warm.map((w) => sum(w.chunks) + w.finish)),
        push: [sum(first.chunks), median(warm.map((w) => sum(w.chunks)))],
        finish: [first.finish, median(warm.map((w) => w.finish))],
        settledMB: Math.min(settled * CHUNK, size) / 1e6,
      });
    }
  }
  const summary = [...runs].map(([d, rs]) => ({
    dir: d,
    processes: rs.length,
    first: median(rs.map((r) => r.first)),
    warm: median(rs.map((r) => r.warm)),
    push: [median(rs.map((r) => r.push[0])), median(rs.map((r) => r.push[1]))],
    finish: [median(rs.map((r) => r.finish[0])), median(rs.map((r) => r.finish[1]))],
    settledMB: median(rs.map((r) => r.settledMB)),
    each: rs.map((r) => [r.first, r.warm]),
  }));
  if (json) {
    console.log(JSON.stringify(summary));
  } else {
    for (const s of summary) {
      const each = s.each.map(([f, w]) => `${f.toFixed(0)}/${w.toFixed(0)}`).join(' ');
      console.log(`${s.dir}: first pass ${s.first.toFixed(0)} ms, warm ${s.warm.toFixed(0)} ms (${(s.first / s.warm).toFixed(2)}x; push ${s.push[0].toFixed(0)}/${s.push[1].toFixed(0)}, finish ${s.finish[0].toFixed(0)}/${s.finish[1].toFixed(0)}, 3/4 of the push's extra time spent by ${s.settledMB.toFixed(0)} MB); per process first/warm: ${each}`);
    }
  }
}
