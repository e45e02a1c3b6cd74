// The package through `import`, as an ES module user loads it; streaming from a file.
import test from 'node:test';
import assert from 'node:assert/strict';
import { createReadStream, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import * as toolslice from 'toolslice';

const fixture = (name) => new URL(`../fixtures/${name}`, import.meta.url);

test('import resolves to the node entry', () => {
  assert.match(import.meta.resolve('toolslice'), /node\.mjs$/);
});

test('a file streamed in tiny chunks gives the one-shot report', async () => {
  const whole = toolslice.checkSpans(readFileSync(fixture('clipped.jsonl'))).json();
  const checker = new toolslice.Checker();
  for await (const chunk of createReadStream(fixture('clipped.jsonl'), { highWaterMark: 7 })) {
    checker.push(chunk);
  }
  assert.equal(checker.finish().json(), whole);
});

test('the renderings written piece by piece are the one-shot ones (what the CLI writes)', () => {
  for (const name of ['clipped.jsonl', 'malformed.jsonl', 'good.jsonl']) {
    for (const input of [readFileSync(fixture(name)), '']) {
      const report = toolslice.checkSpans(input);
      const n = report.rowCount;
      const ranges = (render) => {
        let out = '';
        for (let from = 0; from <= n; from += 2) out += render(from, from + 2);
        return out;
      };
      assert.equal(report.jsonHead() + ranges((a, b) => report.jsonRows(a, b)) + report.jsonTail(), report.json(), name);
      assert.equal(ranges((a, b) => report.jsonlRows(a, b)), report.jsonl(), name);
      let rollup = '';
      for (let from = 0; from <= report.rollupCount; from += 1) rollup += report.jsonRollup(from, from + 1);
      assert.equal(report.jsonMiddle() + rollup + report.jsonEnd(), report.jsonTail(), name);
      assert.equal(report.tableHead() + ranges((a, b) => report.tableRows(a, b)) + report.tableTail(), report.table(), name);
      // The tail as the CLI writes it: its head, warnings and notes in row ranges, the
      // middle, the rollup in ranges (bytes, decoded here).
      const decoder = new TextDecoder();
      const inBytes = (count, render) => {
        let out = '';
        for (let from = 0; from <= count; from += 2) out += decoder.decode(render(from, from + 2));
        return out;
      };
      const tail = report.tableTailHead()
        + inBytes(n, (a, b) => report.tableWarningsBytes(a, b))
        + inBytes(n, (a, b) => report.tableNotesBytes(a, b, new Uint8Array(1 << 16)))
        + report.tableTailMiddle()
        + inBytes(report.rollupCount, (a, b) => report.tableRollupBytes(a, b));
      assert.equal(tail, report.tableTail(), name);
      assert.equal(JSON.parse(report.json()).rows.length, n);
      report.free();
    }
  }
});

test('the byte renderings are the string ones as UTF-8, non-ASCII text included', () => {
  // Tool names, ids, previews and builders outside ASCII (2-, 3- and 4-byte UTF-8), on a
  // silent clip, a declared clip and an ok span, so every rendering lists them.
  const span = (id, name, observed, injected, reason, preview) => JSON.stringify({
    span_id: id, parent_id: 'türn-1', name, status: 'ok', observed_bytes: observed, injected_bytes: injected,
    injected_tokens: 7, clip_reason: reason, sha256_observed: 'ab', sha256_injected: 'cd',
    injected_preview: preview, prompt_builder_version: 'capé-v1',
  });
  const input = [
    span('tool-é1', 'read_ファイル', 9000, 1000, 'none', 'naïve café 😀 — “quoted”\n'),
    span('tool-é2', 'grep_ü', 800, 400, 'tool_result_char_limit', 'Ω≈ç√ 𝄞'),
    span('tool-é3', 'ls', 10, 10, 'none', 'plain'),
  ].join('\n') + '\n';
  const encoder = new TextEncoder();
  const report = toolslice.checkSpans(input);
  assert.equal(report.rowCount, 3);
  assert.ok(report.rollupCount >= 1);
  for (const [strings, bytes, n] of [
    [(a, b) => report.tableRows(a, b), (a, b, c) => report.tableRowsBytes(a, b, c), report.rowCount],
    [(a, b) => report.jsonRows(a, b), (a, b, c) => report.jsonRowsBytes(a, b, c), report.rowCount],
    [(a, b) => report.jsonlRows(a, b), (a, b, c) => report.jsonlRowsBytes(a, b, c), report.rowCount],
    [(a, b) => report.jsonRollup(a, b), (a, b, c) => report.jsonRollupBytes(a, b, c), report.rollupCount],
  ]) {
    for (const [from, to] of [[0, n], [0, 1], [1, n + 5], [n, n + 1]]) {
      const want = encoder.encode(strings(from, to));
      const got = bytes(from, to);
      assert.ok(got instanceof Uint8Array);
      assert.deepEqual(got, want, `${from}..${to}`);
      // Into a caller's buffer (here a view at an offset): the bytes land at its start.
      const whole = new Uint8Array(want.length + 16).fill(1);
      const into = whole.subarray(5);
      const placed = bytes(from, to, into);
      assert.equal(placed.buffer, whole.buffer);
      assert.equal(placed.byteOffset, 5);
      assert.deepEqual(placed, want);
      assert.deepEqual(whole.subarray(5 + want.length), new Uint8Array(16 - 5).fill(1));
      // Too small: a new array, and the buffer is left as it was.
      if (want.length > 0) {
        const small = new Uint8Array(want.length - 1).fill(9);
        const fresh = bytes(from, to, small);
        assert.notEqual(fresh.buffer, small.buffer);
        assert.deepEqual(fresh, want);
        assert.deepEqual(small, new Uint8Array(want.length - 1).fill(9));
      }
    }
    assert.throws(() => bytes(0, n, 'not bytes'), (err) => err instanceof Error && err.code === 'invalid_argument');
    assert.throws(() => bytes(0, n, new ArrayBuffer(4096)), (err) => err.code === 'invalid_argument');
    assert.deepEqual(bytes(0, n, null), bytes(0, n));
  }
  // The table's tail (a line per parent with flagged children), whole.
  const tail = encoder.encode(report.tableTail());
  assert.match(report.tableTail(), /türn-1/);
  assert.deepEqual(report.tableTailBytes(), tail);
  const room = new Uint8Array(tail.length + 3);
  const placed = report.tableTailBytes(room.subarray(2));
  assert.equal(placed.buffer, room.buffer);
  assert.equal(placed.byteOffset, 2);
  assert.deepEqual(placed, tail);
  assert.deepEqual(report.tableTailBytes(new Uint8Array(tail.length - 1)), tail);
  assert.throws(() => report.tableTailBytes(42), (err) => err.code === 'invalid_argument');
  const text = new TextDecoder().decode(report.jsonlRowsBytes(0, 3));
  assert.match(text, /read_ファイル/);
  assert.match(text, /😀/);
  report.free();
});

test('reserve makes room up front and changes nothing in the report', () => {
  const input = readFileSync(fixture('clipped.jsonl'));
  const plain = toolslice.checkSpans(input).json();
  const checker = new toolslice.Checker();
  assert.equal(checker.reserve(8 << 20), true);
  // Nonsense sizes reserve nothing, without an error.
  for (const bytes of [0, -1, Number.NaN]) assert.equal(checker.reserve(bytes), true);
  checker.push(input);
  assert.equal(checker.finish().json(), plain);
});

test('the table is the seed table', () => {
  const table = toolslice.checkSpans(readFileSync(fixture('clipped.jsonl'))).table();
  const lines = table.split('\n');
  assert.equal(lines[0], 'status           span         tool                  obs      inj detail');
  assert.equal(lines[1], 'silent_clip      tool-14      read_file           96412    12040 ratio=0.88');
  assert.ok(lines.includes('# silent_clip=1 incomplete=1 total=4'));
});

test('errors are Error objects with a stable code', () => {
  const checker = new toolslice.Checker();
  checker.finish();
  assert.throws(() => checker.finish(), (err) => err instanceof Error && err.code === 'checker_finished');
  assert.throws(() => toolslice.checkSpans(42), (err) => err instanceof Error && err.code === 'invalid_argument');
});

test('ESM and CJS builds agree', () => {
  const cjs = createRequire(import.meta.url)('toolslice');
  const input = readFileSync(fixture('malformed.jsonl'));
  assert.equal(cjs.checkSpans(input).json(), toolslice.checkSpans(input).json());
});
