// The build's rewrite of small `memory.copy`s into loads and stores (scripts/inline-copies.mjs):
// the rewritten copies do what `memory.copy` does (a `memmove`) at every size and overlap, and
// the built modules have no small constant-size copy left.
import test from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';

const binaryen = (await import('binaryen')).default;
const { copySizes, inlineCopies, MAX_INLINE } = await import(new URL('../../scripts/inline-copies.mjs', import.meta.url));

// Constant sizes around each boundary of the rewrite: 16-byte steps, the 64 and 256 limits.
const SIZES = [1, 16, 17, 31, 32, 33, 48, 63, 64, 65, 66, 80, 100, 127, 128, 129, 255, 256, 257, 300];

function original() {
  let funcs = '';
  for (const n of SIZES) {
    funcs += `(func (export "c${n}") (param $d i32) (param $s i32) (memory.copy (local.get $d) (local.get $s) (i32.const ${n})))\n`;
  }
  // Operands with effects and their order kept: the destination, then the source.
  funcs += `(global $g (mut i32) (i32.const 0))
(func $next (result i32) (global.set $g (i32.add (global.get $g) (i32.const 1))) (global.get $g))
(func (export "ordered") (param $d i32) (param $s i32)
  (memory.copy (i32.add (local.get $d) (i32.mul (call $next) (i32.const 0))) (i32.sub (local.get $s) (i32.mul (call $next) (i32.const 0))) (i32.const 40))
  (i32.store (i32.const 0) (global.get $g)))\n`;
  funcs += '(func (export "v") (param $d i32) (param $s i32) (param $n i32) (memory.copy (local.get $d) (local.get $s) (local.get $n)))\n';
  const mod = binaryen.parseText(`(module (memory (export "memory") 1)\n${funcs})`);
  try {
    mod.setFeatures(binaryen.Features.MVP | binaryen.Features.BulkMemory | binaryen.Features.BulkMemoryOpt | binaryen.Features.SIMD128 | binaryen.Features.MutableGlobals);
    assert.ok(mod.validate());
    return mod.emitBinary();
  } finally {
    mod.dispose();
  }
}

const instance = (bytes) => new WebAssembly.Instance(new WebAssembly.Module(bytes)).exports;

// Runs `call` on both instances from the same memory contents and compares all of it.
function same(a, b, call, what) {
  const pattern = new Uint8Array(2048).map((_, i) => (i * 131 + 7) & 0xff);
  for (const x of [a, b]) new Uint8Array(x.memory.buffer).set(pattern);
  call(a);
  call(b);
  assert.deepEqual(new Uint8Array(b.memory.buffer, 0, 2048), new Uint8Array(a.memory.buffer, 0, 2048), what);
}

const SOURCE = 700;
// Destinations before, inside and after the source (overlap either way), aligned and not.
const DESTS = [0, 1, 390, 450, 600, 690, 699, 700, 701, 710, 716, 730, 800, 955, 1000, 1300];

test('constant-size copies: inlined from 17 to MAX_INLINE bytes, each the same as memory.copy at every overlap', () => {
  const bytes = original();
  const rewritten = inlineCopies(bytes);
  const inlined = SIZES.filter((n) => n > 16 && n <= MAX_INLINE).length;
  assert.equal(rewritten.inlined, inlined + 1, 'every constant size in range, and the ordered one');
  assert.equal(rewritten.small, 1, 'the copy of unknown size');
  assert.equal(rewritten.kept, SIZES.length - inlined, 'at most 16 bytes and past MAX_INLINE stay');
  const a = instance(bytes);
  const b = instance(rewritten.bytes);
  for (const n of SIZES) {
    for (const d of DESTS) same(a, b, (x) => x[`c${n}`](d, SOURCE), `${n} bytes from ${SOURCE} to ${d}`);
  }
  // Operands are evaluated once each, destination first.
  same(a, b, (x) => x.ordered(704, 700), 'the operands, in order');
  assert.equal(new Int32Array(b.memory.buffer)[0], 2);
});

test('copies of unknown size: the same as memory.copy at every size up to 300 and every overlap', () => {
  const bytes = original();
  const a = instance(bytes);
  const b = instance(inlineCopies(bytes).bytes);
  for (let n = 0; n <= 300; n++) {
    for (const d of DESTS) same(a, b, (x) => x.v(d, SOURCE, n), `${n} bytes from ${SOURCE} to ${d}`);
  }
  // Out of bounds traps, in either.
  for (const x of [a, b]) assert.throws(() => x.v(65536 - 8, 0, 100), WebAssembly.RuntimeError);
});

test('the built modules have no constant-size memory.copy the rewrite inlines', () => {
  for (const file of ['toolslice_bg.wasm', 'check/toolslice_bg.wasm']) {
    const sizes = copySizes(readFileSync(new URL(`../node_modules/toolslice/${file}`, import.meta.url)));
    const small = sizes.filter((n) => n !== null && n > 16 && n <= MAX_INLINE);
    assert.deepEqual(small, [], `${file}: small constant-size copies left`);
    // Copies of unknown size go through the helper, whose own copy past 64 bytes is the one left.
    assert.equal(sizes.filter((n) => n === null).length, 1, `${file}: copies of unknown size left`);
  }
});
