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

// `limits` lowers the module's memory budgets (an edge isolate with a small cap): past them
// every span is still counted and classified, and `not_kept` says what was not listed.
test('limits: past rowBytes and factBytes the counts stay exact and not_kept names the first line', () => {
  let text = '';
  for (let i = 1; i <= 3000; i++) {
    text += JSON.stringify({ span_id: `s${i}`, name: 'read', observed_bytes: 100, injected_bytes: i % 3 ? 100 : 10, injected_tokens: 3 }) + '\n';
  }
  const whole = toolslice.checkSpans(text).toJSON();
  const r = toolslice.checkSpans(text, { limits: { rowBytes: 32 << 10, factBytes: 16 << 10 } });
  const small = r.toJSON();
  const table = r.table();
  r.free();
  assert.deepEqual(small.counts, whole.counts);
  assert.equal(small.exit_code, whole.exit_code);
  assert.equal(whole.not_kept.rows, 0);
  assert.ok(small.rows.length > 0 && small.rows.length < 3000, `${small.rows.length} rows listed`);
  assert.equal(small.rows.length + small.not_kept.rows, 3000);
  assert.equal(small.not_kept.rows_from_line, small.rows.length + 1);
  assert.ok(small.not_kept.spans > 0 && small.not_kept.facts_from_line > 1);
  assert.match(table, new RegExp(`# not kept \\(memory limit\\): ${small.not_kept.rows} rows from line ${small.not_kept.rows_from_line} on`));
  // The same rows as the unlimited check, up to the line where the budget stopped listing.
  const byLine = (rows) => [...rows].sort((a, b) => a.line - b.line);
  assert.deepEqual(byLine(small.rows), byLine(whole.rows).filter((row) => row.line < small.not_kept.rows_from_line));
});

test('limits: lineBytes makes a longer line too_large; an unknown key is an error naming it', () => {
  const long = JSON.stringify({ name: 'read', observed_bytes: 1, injected_bytes: 1, injected_tokens: 1, injected_preview: 'x'.repeat(5000) });
  const report = toolslice.checkSpans(`${ok}${long}\n${ok}`, { limits: { lineBytes: 1024 } }).toJSON();
  assert.equal(report.counts.total, 2);
  assert.equal(report.invalid.length, 1);
  assert.equal(report.invalid[0].line, 2);
  assert.equal(report.invalid[0].kind, 'too_large');
  assert.throws(() => toolslice.checkSpans(ok, { limits: { rowBytez: 1 } }), /limits: unknown field `rowBytez`, expected one of `factBytes`, `rowBytes`, `lineBytes`, `documentBytes`/);
  assert.throws(() => toolslice.checkSpans(ok, { limits: { rowBytes: -1 } }), /rowBytes/);
});
