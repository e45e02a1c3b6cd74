// `toolslice/check`: the small check-only module (the checker and trace-format conversion),
// for the page's check worker and edge workers that only check. Same core, so the same
// reports as the full module; only the API is smaller, and so is the download.
import test from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import * as full from 'toolslice';
import * as check from 'toolslice/check';

const fixtures = new URL('../fixtures/', import.meta.url);
const formats = new URL('../../crate/core/tests/fixtures/formats/', import.meta.url);
const read = (name, dir = fixtures) => readFileSync(new URL(name, dir));

test('toolslice/check resolves to its own node entry and module', () => {
  assert.match(import.meta.resolve('toolslice/check'), /\/check\/node\.mjs$/);
  assert.match(import.meta.resolve('toolslice/check/toolslice_bg.wasm'), /\/check\/toolslice_bg\.wasm$/);
});

test('it exports the checker and conversion, and nothing of pack, truncate or hashing', () => {
  for (const name of ['checkSpans', 'Checker', 'CheckReport', 'compareSpanRuns', 'convertToSpans']) {
    assert.equal(typeof check[name], 'function', name);
  }
  for (const name of ['pack', 'truncate', 'redact', 'sha256', 'Sha256', 'canonicalize', 'classifyHop', 'manifest']) {
    assert.equal(check[name], undefined, name);
  }
});

test('its reports are the full module\'s, span JSONL and trace formats alike', () => {
  for (const name of readdirSync(fixtures).filter((n) => n.endsWith('.jsonl'))) {
    const input = read(name);
    assert.equal(check.checkSpans(input).json(), full.checkSpans(input).json(), name);
    assert.equal(check.checkSpans(input).table(), full.checkSpans(input).table(), name);
  }
  for (const name of readdirSync(formats).filter((n) => /\.jsonl?$/.test(n) && !n.includes('.spans.'))) {
    const input = read(name, formats);
    assert.deepEqual(check.checkSpans(input).toJSON(), full.checkSpans(input).toJSON(), name);
    assert.deepEqual(check.convertToSpans(input), full.convertToSpans(input), name);
  }
});

test('streaming, errors with codes, and span-run comparison work as in the full module', () => {
  const input = read('clipped.jsonl');
  const checker = new check.Checker({ flaggedOnly: true });
  for (let i = 0; i < input.length; i += 5) checker.push(input.subarray(i, i + 5));
  const report = checker.finish();
  assert.equal(report.json(), full.checkSpans(input, { flaggedOnly: true }).json());
  assert.throws(() => checker.finish(), (err) => err instanceof Error && err.code === 'checker_finished');
  assert.throws(() => check.checkSpans(42), (err) => err instanceof Error && err.code === 'invalid_argument');
  assert.deepEqual(check.compareSpanRuns(input, read('good.jsonl')), full.compareSpanRuns(input, read('good.jsonl')));
});

test('finishForExit reports what finish reports, in both modules, and the instance checks on afterwards', () => {
  // The command line ends its last check with `finishForExit`, leaving the join's working
  // state unfreed; the report must be `finish`'s, and the instance (which the command line
  // does not use again) must still check correctly after it.
  const inputs = [
    ...readdirSync(fixtures).filter((n) => n.endsWith('.jsonl')).map((n) => read(n)),
    ...readdirSync(formats).filter((n) => /\.jsonl?$/.test(n)).map((n) => read(n, formats)),
  ];
  for (const mod of [check, full]) {
    for (const input of inputs) {
      const report = (end) => {
        const checker = new mod.Checker({ flaggedOnly: false });
        for (let at = 0; at < input.length; at += 1000) checker.push(input.subarray(at, at + 1000));
        const r = checker[end]();
        const out = { json: r.json(), table: r.table() };
        r.free();
        return out;
      };
      const finished = report('finish');
      assert.deepEqual(report('finishForExit'), finished);
      assert.deepEqual(report('finish'), finished);
    }
    const used = new mod.Checker();
    used.push(read('good.jsonl'));
    used.finishForExit().free();
    assert.throws(() => used.finishForExit(), /finished/);
  }
});
