// The check module's exports on the return-pointer ABI (scripts/plain-exports.mjs): V8 calls
// an export returning one value or none through its generic wrapper, where one returning
// several needs a wrapper compiled when the module is instantiated, which every
// `toolslice check` and each of its threads does. The full module keeps wasm-bindgen's
// multivalue shims (its per-call hashing would pay the stack round trip).
import test from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';

const binaryen = (await import('binaryen')).default;
const { withoutFeature } = await import(new URL('../../scripts/plain-exports.mjs', import.meta.url));

/** Results per exported function of a wasm module. */
function exportResults(bytes) {
  const mod = binaryen.readBinary(bytes);
  try {
    mod.setFeatures(binaryen.Features.All);
    const out = new Map();
    for (let i = 0; i < mod.getNumExports(); i++) {
      const e = binaryen.getExportInfo(mod.getExportByIndex(i));
      if (e.kind !== binaryen.ExternalFunction) continue;
      out.set(e.name, binaryen.expandType(binaryen.getFunctionInfo(mod.getFunction(e.value)).results).length);
    }
    return out;
  } finally {
    mod.dispose();
  }
}

const built = (file) => readFileSync(new URL(`../node_modules/toolslice/${file}`, import.meta.url));

test('no export of the check module returns more than one value', () => {
  const results = exportResults(built('check/toolslice_bg.wasm'));
  assert.ok(results.has('checker_push') && results.has('checkreport_json'), 'the checker is exported');
  const multi = [...results].filter(([, n]) => n > 1).map(([name]) => name);
  assert.deepEqual(multi, []);
});

test('the full module keeps its multivalue exports', () => {
  const results = exportResults(built('toolslice_bg.wasm'));
  assert.ok([...results.values()].some((n) => n > 1));
});

/** A module of one exported function and a target_features section listing `features`. */
function moduleWith(features) {
  const text = `(module (func (export "f") (result i32) (i32.const 7)))`;
  const mod = binaryen.parseText(text);
  const bytes = Buffer.from(mod.emitBinary());
  mod.dispose();
  const leb = (n) => Buffer.from([n]); // every length here is below 128
  const entries = features.map((f) => Buffer.concat([Buffer.from('+'), leb(f.length), Buffer.from(f)]));
  const name = Buffer.from('target_features');
  const content = Buffer.concat([leb(name.length), name, leb(entries.length), ...entries]);
  return Buffer.concat([bytes, Buffer.from([0]), leb(content.length), content]);
}

/** The features a module's target_features section lists. */
function listed(bytes) {
  const name = Buffer.from('target_features');
  const at = bytes.indexOf(name);
  let p = at + name.length;
  const count = bytes[p++];
  const out = [];
  for (let i = 0; i < count; i++) {
    const length = bytes[p + 1];
    out.push(bytes.subarray(p + 2, p + 2 + length).toString());
    p += 2 + length;
  }
  return out;
}

test('withoutFeature drops only multivalue, and the module still runs', () => {
  const input = moduleWith(['bulk-memory', 'multivalue', 'reference-types']);
  const { bytes, dropped } = withoutFeature(input);
  assert.equal(dropped, true);
  assert.deepEqual(listed(bytes), ['bulk-memory', 'reference-types']);
  assert.equal(bytes.length, input.length - 'multivalue'.length - 2);
  assert.equal(new WebAssembly.Instance(new WebAssembly.Module(bytes)).exports.f(), 7);
  // Nothing to drop: the same bytes.
  const plain = moduleWith(['simd128']);
  assert.deepEqual(withoutFeature(plain), { bytes: plain, dropped: false });
});

test('withoutFeature refuses a module without the section', () => {
  const mod = binaryen.parseText('(module)');
  const bytes = Buffer.from(mod.emitBinary());
  mod.dispose();
  assert.throws(() => withoutFeature(bytes), /no target_features section/);
});
