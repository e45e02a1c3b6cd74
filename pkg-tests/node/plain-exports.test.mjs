// The modules' exports on the return-pointer ABI (scripts/plain-exports.mjs): V8 calls an
// export returning one value or none through its generic wrapper, where one returning several
// needs a wrapper compiled with the module (or when a module from `toolslice check`'s code
// cache is instantiated): 43 signatures in the full module, 11 in the check module.
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

test('no export of any built module returns more than one value', () => {
  for (const [file, a, b] of [
    ['toolslice_bg.wasm', 'pack', 'sha256'],
    ['cjs/toolslice_bg.wasm', 'pack', 'sha256'],
    ['check/toolslice_bg.wasm', 'checker_push', 'checkreport_json'],
  ]) {
    const results = exportResults(built(file));
    assert.ok(results.has(a) && results.has(b), `${file}: ${a} and ${b} are exported`);
    const multi = [...results].filter(([, n]) => n > 1).map(([name]) => name);
    assert.deepEqual(multi, [], file);
  }
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
