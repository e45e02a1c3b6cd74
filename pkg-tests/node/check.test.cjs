// The package through `require`, as a CommonJS user loads it.
const test = require('node:test');
const assert = require('node:assert/strict');
const { readFileSync } = require('node:fs');
const path = require('node:path');
const toolslice = require('toolslice');

const fixture = (name) => readFileSync(path.join(__dirname, '..', 'fixtures', name));

test('require() resolves to the CommonJS build', () => {
  assert.match(require.resolve('toolslice'), /cjs[\\/]toolslice\.js$/);
  assert.equal(typeof toolslice.checkSpans, 'function');
});

test('a clean run exits 0 and declares its clip', () => {
  const report = toolslice.checkSpans(fixture('good.jsonl'));
  assert.equal(report.exitCode, 0);
  const data = report.toJSON();
  assert.deepEqual([data.counts.clipped, data.counts.ok, data.counts.total], [1, 2, 3]);
  assert.deepEqual(data.rows[0].detail, ['prompt_token_cap', 'ratio=0.88']);
});

test('a silent clip, a partial span and a hash mismatch are flagged in priority order', () => {
  const data = toolslice.checkSpans(fixture('clipped.jsonl').toString('utf8')).toJSON();
  assert.deepEqual(data.rows.map((r) => r.status), ['silent_clip', 'incomplete', 'hash_mismatch', 'ok']);
  assert.deepEqual(data.rows[1].detail, ['status=running']);
  assert.equal(data.exit_code, 1);
  assert.deepEqual(data.rollup.map((r) => [r.span_id, r.own_status, r.silent_clip, r.incomplete]), [['turn-3', null, 1, 1]]);
});

test('bad lines are reported with their line numbers and nothing else is lost', () => {
  const data = toolslice.checkSpans(fixture('malformed.jsonl')).toJSON();
  assert.deepEqual(data.invalid.map((e) => e.line), [2, 3]);
  assert.match(data.invalid[1].error, /observed_bytes must be a non-negative integer/);
  assert.deepEqual(data.skipped, [{ line: 5, span_id: 'tool-3', reason: 'record has no name' }]);
  assert.equal(data.counts.blank, 1);
  assert.equal(data.counts.lines, 5);
});
