#!/usr/bin/env node
// Copies a wasm module with `multivalue` taken out of its `target_features` section, so that
// wasm-bindgen leaves its exports on the return-pointer ABI:
//     node scripts/plain-exports.mjs IN.wasm OUT.wasm
//
// Why: wasm-bindgen turns every export that returns a pair or a triple (a string, a result)
// into a "multivalue shim" when the module says it was built with multivalue, which rustc's
// wasm32 target does by default. V8 11 (Node 20) calls an export through its generic wrapper
// only when it returns at most one value (and takes no externref); for every other signature
// it compiles a wrapper with TurboFan: when a fresh module is compiled, or when one read from
// `toolslice check`'s code cache is instantiated. The full module had 43 such signatures, the
// check module 11. Measured 2026-12-07, Node 20, this machine:
// - `require('toolslice')` in a fresh process: 58.0 -> 50.7 ms wall, 69.4 -> 57.0 ms CPU;
//   a first `pack` of 64 KiB there: 138 -> 119 ms wall, 167 -> 144 ms CPU (21 interleaved
//   runs each, medians);
// - the check module instantiated from the code cache (every `toolslice check`, and each of
//   its worker threads): 3.4 -> 1.8 ms (timers around `new WebAssembly.Instance`);
// - per call, medians of 6 processes: `sha256` of 32 bytes 636 -> 424 ns, `sha256Hex` of an
//   ArrayBuffer (the generated path) 1308 -> 1069 ns, a streaming `Sha256` of 32 bytes 7.7 ->
//   6.9 us, a small `truncate` 15.3 -> 14.4 us: no slower anywhere.
// Nothing else changes: rustc's code never returns multiple values across an export
// (wasm-bindgen's shims were the only ones), wasm-opt keeps the feature enabled for the
// functions inside, and wasm-bindgen's glue reads the results from the stack as it does for
// any build without multivalue.
import { readFileSync, writeFileSync } from 'node:fs';

const DROPPED = 'multivalue';

/** An unsigned LEB128 at `at`: [value, the offset after it]. */
function leb(bytes, at) {
  let value = 0;
  let shift = 0;
  for (;;) {
    const b = bytes[at++];
    value += (b & 0x7f) * 2 ** shift;
    if (!(b & 0x80)) return [value, at];
    shift += 7;
  }
}

function encodeLeb(value) {
  const out = [];
  do {
    let b = value % 128;
    value = Math.floor(value / 128);
    if (value) b |= 0x80;
    out.push(b);
  } while (value);
  return Buffer.from(out);
}

/**
 * `bytes` (a wasm module) with `feature` dropped from its `target_features` custom section:
 * `{ bytes, dropped }`, `dropped` whether the section listed it. Every other section is copied
 * byte for byte. Throws when the module has no such section (wasm-bindgen would then guess).
 */
export function withoutFeature(bytes, feature = DROPPED) {
  const parts = [bytes.subarray(0, 8)];
  let at = 8;
  let found = false;
  let dropped = false;
  while (at < bytes.length) {
    const [size, body] = leb(bytes, at + 1);
    const end = body + size;
    if (end > bytes.length) throw new Error('plain-exports: a section runs past the end of the module');
    if (bytes[at] === 0) {
      const [nameLength, nameAt] = leb(bytes, body);
      const name = bytes.subarray(nameAt, nameAt + nameLength).toString();
      if (name === 'target_features') {
        found = true;
        let [count, p] = leb(bytes, nameAt + nameLength);
        const kept = [];
        for (; count > 0; count--) {
          const [length, textAt] = leb(bytes, p + 1);
          const entry = bytes.subarray(p, textAt + length);
          if (bytes.subarray(textAt, textAt + length).toString() === feature) dropped = true;
          else kept.push(entry);
          p = textAt + length;
        }
        const content = Buffer.concat([encodeLeb(nameLength), Buffer.from(name), encodeLeb(kept.length), ...kept]);
        parts.push(Buffer.from([0]), encodeLeb(content.length), content);
        at = end;
        continue;
      }
    }
    parts.push(bytes.subarray(at, end));
    at = end;
  }
  if (!found) throw new Error('plain-exports: the module has no target_features section');
  return { bytes: Buffer.concat(parts), dropped };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const [input, output] = process.argv.slice(2);
  if (!input || !output) {
    console.error('usage: node scripts/plain-exports.mjs IN.wasm OUT.wasm');
    process.exit(2);
  }
  writeFileSync(output, withoutFeature(readFileSync(input)).bytes);
}
