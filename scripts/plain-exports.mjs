#!/usr/bin/env node
// Copies a wasm module with `multivalue` taken out of its `target_features` section, so that
// wasm-bindgen leaves its exports on the return-pointer ABI:
//     node scripts/plain-exports.mjs IN.wasm OUT.wasm
//
// Why: wasm-bindgen turns every export that returns a pair or a triple (a string, a result)
// into a "multivalue shim" when the module says it was built with multivalue, which rustc's
// wasm32 target does by default. V8 11 (Node 20) calls an export through its generic wrapper
// only when it returns at most one value (and takes no externref); for every other signature
// it compiles a wrapper with TurboFan when the module is instantiated. The check module had 11
// such signatures, and instantiating it from the code cache (every `toolslice check`, and each
// of its worker threads) spent 3.4 ms in those compilations; 1.8 ms without them (`node
// --cpu-prof` and timers around `new WebAssembly.Instance`, 2026-12-07). Nothing else changes:
// rustc's code never returns multiple values across an export (wasm-bindgen's own shims were
// the only ones), wasm-opt keeps the feature enabled for the functions inside, and the glue
// wasm-bindgen writes reads the results from the stack as it does for any target without
// multivalue. Only for the check module: its exports are called per chunk or per report, while
// the full module's SHA-256 calls (per call on 32 bytes, benchmarked) would pay the stack
// round trip on every call.
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
