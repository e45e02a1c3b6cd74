// Issue 13 through the package: a chunk far larger than a line may be, a surrogate pair split
// across the binding's string windows, terminal escapes in the table, and a run that checked
// nothing. The Checker copies a chunk into the module a window at a time, so a huge chunk
// costs a window of memory (before: a 1 GiB line trapped the module and leaked it).
import test from 'node:test';
import assert from 'node:assert/strict';
import * as toolslice from 'toolslice';

const ok = '{"name":"ls","observed_bytes":1,"injected_bytes":1,"injected_tokens":1}\n';

test('a line past 128 MiB is too_large, and the same Checker class keeps working', () => {
  const big = new Uint8Array(200 << 20).fill(97);
  for (let round = 0; round < 2; round++) {
    const checker = new toolslice.Checker();
    checker.push('{"name":"x","injected_preview":"');
    checker.push(big);
    checker.push('"}\n' + ok);
    const report = checker.finish().toJSON();
    assert.equal(report.counts.total, 1);
    assert.equal(report.invalid.length, 1);
    assert.equal(report.invalid[0].kind, 'too_large');
    assert.equal(report.invalid[0].line, 1);
    assert.match(report.invalid[0].error, /line is 209715234 bytes, more than the 134217728 bytes/);
    assert.equal(report.exit_code, 1);
  }
});

test('a string chunk longer than a window keeps its surrogate pairs', () => {
  // 😀 is a surrogate pair in a JS string; with an odd prefix some pair straddles a window.
  const preview = 'a' + '😀'.repeat(300_000);
  const line = JSON.stringify({ name: 'read', injected_preview: preview, observed_bytes: 1, injected_bytes: 1, injected_tokens: 1 });
  const checker = new toolslice.Checker();
  checker.push(line + '\n');
  const row = checker.finish().toJSON().rows[0];
  assert.equal(row.injected_preview, preview);
});

test('control characters never reach the terminal raw', () => {
  const line = JSON.stringify({ span_id: 't1\u001b[2J', name: 'read\rok', observed_bytes: 100, injected_bytes: 1, injected_tokens: 1 });
  const table = toolslice.checkSpans(line + '\n').table();
  assert.doesNotMatch(table, /[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/);
  assert.match(table, /t1\\x1b\[2J/);
});

test('an input whose every line was skipped is not a pass', () => {
  const report = toolslice.checkSpans('{"span_id":"a"}\n{"span_id":"b"}\n');
  assert.equal(report.exitCode, 1);
  assert.match(report.toJSON().nothing_checked, /^nothing checked/);
});
