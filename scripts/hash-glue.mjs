#!/usr/bin/env node
// Gives wasm-bindgen's JS glue a fast path for the one-shot SHA-256 calls (`sha256`,
// `sha256Hex`, `sha256Short`; issue 17: "at least level with hash-wasm at every size").
//
// Through wasm-bindgen, hashing 32 bytes cost three calls from the module into JS (is it a
// Uint8Array, its length, copy it in), a heap Vec for the digest, a copy out and a free: more
// than the hashing. The fast path does what hash-wasm does: a string or Uint8Array that fits
// the module's hash area (crate/wasm/src/hash.rs) is written there from JS (TextEncoder's
// encodeInto for a string, one `set` for bytes), one plain wasm call hashes it in place and
// leaves the digest there, and JS reads it back. Anything else (an ArrayBuffer, a longer
// input, a wrong argument) takes the generated path unchanged, with its errors.
//
// Run by scripts/build on the full module's glue files (ES module and CommonJS), in place,
// before scripts/recoverable-glue.mjs (whose guard then wraps the patched functions too):
//   node scripts/hash-glue.mjs FILE...
// It fails loudly when the glue does not have the shape it expects (a new wasm-bindgen).
import { readFileSync, writeFileSync } from 'node:fs';

// The hash area's size, read from the Rust source that declares it (one place: a glue that
// believed in a larger area than the module has would write past it).
const AREA = (() => {
  const src = readFileSync(new URL('../crate/wasm/src/hash.rs', import.meta.url), 'utf8');
  const m = /^const AREA_LEN: usize = (\d+) \* 1024;$/m.exec(src);
  if (!m) {
    console.error('hash-glue: crate/wasm/src/hash.rs: no `const AREA_LEN: usize = N * 1024;`');
    process.exit(1);
  }
  return Number(m[1]) * 1024;
})();
// The digest form each function asks for: 0 raw bytes, 1 hex; the short form reads the
// first 16 of the 64 hex characters.
const FORMS = { sha256: 0, sha256Hex: 1, sha256Short: 2 };

function die(file, what) {
  console.error(`hash-glue: ${file}: ${what} (has wasm-bindgen's output changed?)`);
  process.exit(1);
}

for (const file of process.argv.slice(2)) {
  let src = readFileSync(file, 'utf8');
  if (src.includes('__ts_sha256_fast')) continue; // already patched
  for (const needed of ['function getUint8ArrayMemory0()', 'const cachedTextEncoder = ', 'wasm.memory']) {
    if (!src.includes(needed)) die(file, `no \`${needed}\``);
  }
  for (const [name, form] of Object.entries(FORMS)) {
    const head = new RegExp(`^((?:export )?function ${name}\\(data\\) \\{\\n)`, 'm');
    if (!head.test(src)) die(file, `no function ${name}(data)`);
    src = src.replace(head, `$1    const fast = __ts_sha256_fast(data, ${form});\n    if (fast !== undefined) return fast;\n`);
  }
  src += `
// --- Added by scripts/hash-glue.mjs: the one-shot SHA-256 fast path (see that file). ---
const __ts_SHA256_AREA = ${AREA};
// TypedArray.prototype's own \`length\` getter: how many bytes \`set\` copies, whatever a
// subclass's \`length\` claims (a lying one must not let a long input overrun the area).
const __ts_typedLength = Object.getOwnPropertyDescriptor(Object.getPrototypeOf(Uint8Array.prototype), 'length').get;
// Hex digests are ASCII; a TextDecoder over a kept view was 3-4x faster than
// String.fromCharCode.apply over a fresh subarray.
const __ts_hexDecoder = new TextDecoder();
// Views of the hash area and of its first 64 and 16 bytes, kept while the memory's buffer is
// the same one (a grown memory or a replaced instance has a new buffer, hence new views).
let __ts_area = null;
let __ts_areaHex = null;
let __ts_areaShort = null;
function __ts_sha256_area() {
    const mem = getUint8ArrayMemory0();
    if (__ts_area === null || __ts_area.buffer !== mem.buffer) {
        const at = wasm.toolslice_sha256_area() >>> 0;
        __ts_area = mem.subarray(at, at + __ts_SHA256_AREA);
        __ts_areaHex = __ts_area.subarray(0, 64);
        __ts_areaShort = __ts_area.subarray(0, 16);
    }
    return __ts_area;
}
function __ts_sha256_fast(data, form) {
    let area;
    let len;
    if (typeof data === 'string') {
        // encodeInto writes at most 3 bytes per UTF-16 unit: a string this short fits whole.
        if (data.length > __ts_SHA256_AREA / 3) return undefined;
        area = __ts_sha256_area();
        len = cachedTextEncoder.encodeInto(data, area).written;
    } else if (data instanceof Uint8Array) {
        len = __ts_typedLength.call(data);
        if (len > __ts_SHA256_AREA) return undefined;
        area = __ts_sha256_area();
        area.set(data);
    } else {
        return undefined;
    }
    // Hashing allocates nothing, so the memory cannot grow under the views.
    wasm.toolslice_sha256_area_digest(len, form === 0 ? 0 : 1);
    if (form === 0) return area.slice(0, 32);
    return __ts_hexDecoder.decode(form === 1 ? __ts_areaHex : __ts_areaShort);
}
`;
  writeFileSync(file, src);
  console.error(`hash-glue: ${file}: sha256, sha256Hex and sha256Short take the fast path`);
}
