#!/usr/bin/env node
// Rewrites a wasm module's `memory.copy` instructions that copy a few bytes into plain loads
// and stores, in place:   node scripts/inline-copies.mjs FILE.wasm...
//
// LLVM lowers every `memcpy` and `memmove` of more than 64 bytes of known size, and every one
// of unknown size, to `memory.copy` (rustc enables bulk memory for wasm32): moving a struct
// (a line's kept fields, a span's measures, a row), cloning an id. V8 11 (Node 20) compiles
// `memory.copy` as a call into C (`memory_copy_wrapper`, then libc's `memmove`), whatever the
// size: 4 ns a copy of 80 bytes where five 16-byte loads and stores take 2.3 (a loop of them),
// and 10% of a warm check of Langfuse lines of two fields, 5% of the bench's 50 MB Langfuse
// export (`perf` over V8's code map, 2026-12-07). A build without bulk memory was slower (its
// copies became compiler_builtins' byte loops). So, after wasm-bindgen and before wasm-opt:
// - a copy of a constant 17..MAX_INLINE bytes becomes 16-byte loads of all of it into locals,
//   then the stores (every load before any store: overlapping copies stay `memmove`s);
// - a copy of unknown size calls COPY_SMALL, which copies up to 64 bytes with two or four
//   overlapping loads and stores (all loads first, again) and hands anything longer to
//   `memory.copy`.
// Measured on the check module, warm passes of the two builds alternated in one process (11
// each, medians, push + finish): Langfuse 50 MB 150.7 -> 146.8 ms, Agents SDK 151.9 -> 145.9,
// OTLP 133.2 -> 128.2, OTLP with a trace per copy 137.0 -> 132.0, span JSONL 60 MB 54.2 ->
// 53.3; `toolslice check --threads 1 --flagged-only` (15 interleaved runs): Langfuse 266 ->
// 253 ms, Agents SDK 273 -> 264. Both modules grow by 3% (gzipped too).
// One difference, for a program that is already wrong: a copy whose destination runs past the
// end of memory may store its first bytes before it traps, where `memory.copy` traps first.
// pkg-tests/node/inline-copies.test.mjs holds the rewrite to `memory.copy` on every size and
// overlap, and the built modules to having no small copy left.
import { readFileSync, writeFileSync } from 'node:fs';

const binaryen = (await import(new URL('../pkg-tests/node_modules/binaryen/index.js', import.meta.url))).default;

/** Constant-size copies up to this many bytes are inlined (at most 16 loads). */
export const MAX_INLINE = 256;
/** The helper for copies of unknown size. */
export const COPY_SMALL = '$__toolslice_copy_small';
const LOCAL = '$__toolslice_copy';

// The features scripts/build gives wasm-opt: the module's own.
const FEATURES = ['MVP', 'MutableGlobals', 'NontrappingFPToInt', 'SIMD128', 'BulkMemory', 'BulkMemoryOpt', 'SignExt', 'ReferenceTypes', 'Multivalue'];

/** The end (one past its `)`) of the s-expression that starts at `text[at]` (a `(`). */
function sexprEnd(text, at) {
  let depth = 0;
  for (let k = at; k < text.length; k++) {
    const c = text[k];
    if (c === '"') {
      // A quoted name or string: its parentheses do not count.
      for (k++; text[k] !== '"'; k++) if (text[k] === '\\') k++;
    } else if (c === '(') {
      depth++;
    } else if (c === ')' && --depth === 0) {
      return k + 1;
    }
  }
  throw new Error('inline-copies: unbalanced module text');
}

/** The parenthesized operands of an s-expression's inside. */
function operands(inside) {
  const found = [];
  for (let k = inside.indexOf('('); k >= 0; k = inside.indexOf('(', k)) {
    const e = sexprEnd(inside, k);
    found.push(inside.slice(k, e));
    k = e;
  }
  return found;
}

/** The load-then-store sequence for a copy of `n` bytes (16 < n <= MAX_INLINE). */
function inlined(dest, src, n) {
  const offsets = Array.from({ length: Math.ceil(n / 16) }, (_, i) => Math.min(16 * i, n - 16));
  let out = `(block (local.set ${LOCAL}_d ${dest}) (local.set ${LOCAL}_s ${src})`;
  offsets.forEach((o, i) => (out += ` (local.set ${LOCAL}_v${i} (v128.load offset=${o} align=1 (local.get ${LOCAL}_s)))`));
  offsets.forEach((o, i) => (out += ` (v128.store offset=${o} align=1 (local.get ${LOCAL}_d) (local.get ${LOCAL}_v${i}))`));
  return [`${out})`, offsets.length];
}

/** COPY_SMALL: `memory.copy`'s meaning for any size, without its call into C up to 64 bytes. */
function copySmall() {
  const end = (x, k) => `(i32.sub (i32.add (local.get ${x}) (local.get $n)) (i32.const ${k}))`;
  const pair = (type, load, store, k) => `
    (local.set $${type}0 (${load} align=1 (local.get $s)))
    (local.set $${type}1 (${load} align=1 ${end('$s', k)}))
    (${store} align=1 (local.get $d) (local.get $${type}0))
    (${store} align=1 ${end('$d', k)} (local.get $${type}1))`;
  return `
 (func ${COPY_SMALL} (param $d i32) (param $s i32) (param $n i32)
  (local $v0 v128) (local $v1 v128) (local $v2 v128) (local $v3 v128) (local $x0 i64) (local $x1 i64)
  (local $w0 i32) (local $w1 i32) (local $b0 i32) (local $b1 i32) (local $b2 i32)
  (if (i32.gt_u (local.get $n) (i32.const 64)) (then (memory.copy (local.get $d) (local.get $s) (local.get $n)) (return)))
  (if (i32.gt_u (local.get $n) (i32.const 32)) (then
    (local.set $v0 (v128.load align=1 (local.get $s)))
    (local.set $v1 (v128.load offset=16 align=1 (local.get $s)))
    (local.set $v2 (v128.load align=1 ${end('$s', 32)}))
    (local.set $v3 (v128.load align=1 ${end('$s', 16)}))
    (v128.store align=1 (local.get $d) (local.get $v0))
    (v128.store offset=16 align=1 (local.get $d) (local.get $v1))
    (v128.store align=1 ${end('$d', 32)} (local.get $v2))
    (v128.store align=1 ${end('$d', 16)} (local.get $v3))
    (return)))
  (if (i32.ge_u (local.get $n) (i32.const 16)) (then${pair('v', 'v128.load', 'v128.store', 16)}
    (return)))
  (if (i32.ge_u (local.get $n) (i32.const 8)) (then${pair('x', 'i64.load', 'i64.store', 8)}
    (return)))
  (if (i32.ge_u (local.get $n) (i32.const 4)) (then${pair('w', 'i32.load', 'i32.store', 4)}
    (return)))
  ;; 1 to 3 bytes: the first, the middle and the last cover them.
  (if (local.get $n) (then
    (local.set $b0 (i32.load8_u (local.get $s)))
    (local.set $b1 (i32.load8_u (i32.add (local.get $s) (i32.shr_u (local.get $n) (i32.const 1)))))
    (local.set $b2 (i32.load8_u ${end('$s', 1)}))
    (i32.store8 (local.get $d) (local.get $b0))
    (i32.store8 (i32.add (local.get $d) (i32.shr_u (local.get $n) (i32.const 1))) (local.get $b1))
    (i32.store8 ${end('$d', 1)} (local.get $b2))))
 )`;
}

/** The module's text, as binaryen prints it. */
function moduleText(bytes) {
  const mod = binaryen.readBinary(bytes);
  try {
    return mod.emitText();
  } finally {
    mod.dispose();
  }
}

/** The size of each `memory.copy` of the module `bytes`: a number when constant, else null. */
export function copySizes(bytes) {
  const text = moduleText(bytes);
  const sizes = [];
  for (let j = text.indexOf('(memory.copy'); j >= 0; j = text.indexOf('(memory.copy', j + 1)) {
    const ops = operands(text.slice(j + '(memory.copy'.length, sexprEnd(text, j) - 1));
    const size = /^\(i32\.const (\d+)\)$/.exec(ops[ops.length - 1] ?? '');
    sizes.push(size ? Number(size[1]) : null);
  }
  return sizes;
}

/**
 * The module `bytes` with its small copies rewritten: `{ bytes, inlined, small, kept }` (the
 * constant-size copies inlined, the copies of unknown size sent to COPY_SMALL, the copies
 * left as they were).
 */
export function inlineCopies(bytes) {
  const text = moduleText(bytes);
  if (text.includes(COPY_SMALL)) throw new Error('inline-copies: the module is rewritten already');
  const counts = { inlined: 0, small: 0, kept: 0 };
  // Rewrites the copies in `body` (a function's text); `need` gets the 16-byte locals used.
  const rewrite = (body, need) => {
    let out = '';
    let k = 0;
    for (let j = body.indexOf('(memory.copy', k); j >= 0; j = body.indexOf('(memory.copy', k)) {
      out += body.slice(k, j);
      const e = sexprEnd(body, j);
      const ops = operands(body.slice(j + '(memory.copy'.length, e - 1));
      const size = ops.length === 3 ? /^\(i32\.const (\d+)\)$/.exec(ops[2]) : null;
      const n = size ? Number(size[1]) : -1;
      if (ops.length === 3 && n > 16 && n <= MAX_INLINE) {
        const [code, vectors] = inlined(rewrite(ops[0], need), rewrite(ops[1], need), n);
        need.vectors = Math.max(need.vectors, vectors);
        out += code;
        counts.inlined++;
      } else if (ops.length === 3 && !size) {
        out += `(call ${COPY_SMALL} ${ops.map((o) => rewrite(o, need)).join(' ')})`;
        counts.small++;
      } else {
        out += body.slice(j, e);
        counts.kept++;
      }
      k = e;
    }
    return out + body.slice(k);
  };
  const parts = [];
  let at = 0;
  for (let f = text.indexOf('\n (func ', at); f >= 0; f = text.indexOf('\n (func ', at)) {
    parts.push(text.slice(at, f + 1));
    const e = sexprEnd(text, f + 2);
    let fn = text.slice(f + 1, e);
    if (fn.includes('(memory.copy')) {
      const need = { vectors: 0 };
      fn = rewrite(fn, need);
      if (need.vectors) {
        // The locals, after the function's first line (its name, params and result).
        let locals = `\n  (local ${LOCAL}_d i32)\n  (local ${LOCAL}_s i32)`;
        for (let i = 0; i < need.vectors; i++) locals += `\n  (local ${LOCAL}_v${i} v128)`;
        const nl = fn.indexOf('\n');
        fn = fn.slice(0, nl) + locals + fn.slice(nl);
      }
    }
    parts.push(fn);
    at = e;
  }
  let rest = text.slice(at);
  if (counts.small) {
    const close = rest.lastIndexOf(')');
    rest = rest.slice(0, close) + copySmall() + '\n' + rest.slice(close);
  }
  const out = binaryen.parseText(parts.join('') + rest);
  try {
    out.setFeatures(FEATURES.reduce((all, f) => all | binaryen.Features[f], 0));
    if (!out.validate()) throw new Error('inline-copies: the rewritten module does not validate');
    // Names stay (wasm-opt --strip-debug drops them from a release build).
    binaryen.setDebugInfo(true);
    return { bytes: out.emitBinary(), ...counts };
  } finally {
    out.dispose();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  for (const file of process.argv.slice(2)) {
    const { bytes, inlined: n, small, kept } = inlineCopies(readFileSync(file));
    writeFileSync(file, bytes);
    console.error(`inline-copies: ${file}: ${n} copies inlined, ${small} to ${COPY_SMALL.slice(1)}, ${kept} left`);
  }
}
