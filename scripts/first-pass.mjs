// A trace file checked in fresh processes, built packages side by side: the first pass (what a
// CLI run pays: the module's functions start in V8's baseline tier) and the warm ones after it.
//   node scripts/first-pass.mjs FILE FORMAT PROCESSES DIR...   (DIR: a package, e.g. pkg)
// Each process checks FILE 6 times with DIR/check's Checker (`flaggedOnly`, 1 MiB chunks, as the
// CLI feeds it) and reports each pass's push and finish; the processes of the DIRs take turns.
// Printed per DIR: the median over processes of the first pass and of the median of the 5 warm
// passes (push + finish, ms), then each process's figures.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const PASSES = 6;

if (process.argv[2] === '--child') {
  const [, , , dir, file, format] = process.argv;
  const ts = await import(`${dir}/check/node.mjs`);
  const data = readFileSync(file);
  const passes = [];
  for (let p = 0; p < PASSES; p++) {
    const start = performance.now();
    const checker = new ts.Checker({ format, flaggedOnly: true });
    checker.reserve(data.length);
    for (let i = 0; i < data.length; i += 1 << 20) checker.push(data.subarray(i, Math.min(data.length, i + (1 << 20))));
    const pushed = performance.now();
    checker.finish();
    passes.push([pushed - start, performance.now() - pushed]);
  }
  console.log(JSON.stringify(passes));
} else {
  const [file, format, processes, ...dirs] = process.argv.slice(2);
  if (!file || !format || !(+processes > 0) || dirs.length === 0) {
    console.error('usage: node scripts/first-pass.mjs FILE FORMAT PROCESSES DIR...');
    process.exit(2);
  }
  const self = fileURLToPath(import.meta.url);
  const median = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1];
  const runs = new Map(dirs.map((d) => [d, []]));
  for (let i = 0; i < +processes; i++) {
    for (const d of dirs) {
      const out = execFileSync(process.execPath, [self, '--child', resolve(d), resolve(file), format]);
      const passes = JSON.parse(out).map(([push, finish]) => push + finish);
      runs.get(d).push({ first: passes[0], warm: median(passes.slice(1)) });
    }
  }
  for (const [d, rs] of runs) {
    const first = median(rs.map((r) => r.first));
    const warm = median(rs.map((r) => r.warm));
    const each = rs.map((r) => `${r.first.toFixed(0)}/${r.warm.toFixed(0)}`).join(' ');
    console.log(`${d}: first pass ${first.toFixed(0)} ms, warm ${warm.toFixed(0)} ms (${(first / warm).toFixed(2)}x); per process first/warm: ${each}`);
  }
}
