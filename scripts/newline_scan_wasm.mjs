// Times examples/newline_scan_wasm.rs (see its header for the build): toolslice's word-at-a-
// time newline search against memchr's, in wasm, MB/s per line length (best of 41).
import { readFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';

const dir = process.env.CARGO_TARGET_DIR ?? 'target';
const bytes = readFileSync(`${dir}/wasm32-unknown-unknown/release/examples/newline_scan_wasm.wasm`);
const { instance } = await WebAssembly.instantiate(bytes, {});
const { prepare, count } = instance.exports;
const total = 4 << 20;
for (const lineLen of [16, 80, 512, 4096, 65536]) {
  prepare(lineLen, total);
  const best = [Infinity, Infinity, Infinity];
  for (let r = 0; r < 41; r++) {
    for (const which of [0, 1, 2]) {
      const t = performance.now();
      const n = count(which);
      const s = (performance.now() - t) / 1000;
      if (n !== Math.floor(total / lineLen)) throw new Error(`count ${n}`);
      best[which] = Math.min(best[which], s);
    }
  }
  const mbs = (s) => (total / s / 1e6).toFixed(0).padStart(8);
  console.log(`wasm   line ${String(lineLen).padStart(6)} B: word ${mbs(best[0])}  memchr ${mbs(best[1])}  find_newline ${mbs(best[2])} MB/s; find_newline vs word ${(best[0] / best[2]).toFixed(2)}x`);
}
