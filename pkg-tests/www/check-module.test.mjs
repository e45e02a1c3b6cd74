// What a person who only checks downloads: the check worker loads the package's check-only
// module (pkg/check/, about 290 KB of wasm gzipped), never the full one (about 710 KB), which
// only the diff, hop and packer views fetch (glue and wasm), on first use. The reports are
// the same.
import test from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { openPage, dropFiles, reportFor, cli, allRows, FIXTURES } from './helpers.mjs';

const CHECK_WASM = '/pkg/check/toolslice_bg.wasm';
const FULL_WASM = '/pkg/toolslice_bg.wasm';
const FULL_GLUE = '/pkg/toolslice.js';

test('dropping a trace fetches the check-only wasm module, not the full one', async (t) => {
  // `requests` is the server's log from the first request on: the worker's fetches included.
  const { page, requests, errors } = await openPage(t);
  const spans = `${FIXTURES}clipped.jsonl`;
  const trace = new URL('../../crate/core/tests/fixtures/formats/langfuse.jsonl', import.meta.url).pathname;
  await dropFiles(page, [
    { name: 'clipped.jsonl', text: readFileSync(spans, 'utf8') },
    { name: 'langfuse.jsonl', text: readFileSync(trace, 'utf8') },
  ]);
  for (const [name, path] of [['clipped.jsonl', spans], ['langfuse.jsonl', trace]]) {
    const section = reportFor(page, name);
    await section.waitFor();
    // The report is the CLI's (full module, in Node): same rows, same JSON export.
    const json = cli(['--json', path]);
    const want = JSON.parse(json);
    assert.ok((await section.locator('.verdict').textContent()).includes(`exit code ${want.exit_code}`), name);
    assert.deepEqual((await allRows(section)).map((c) => [c[1], c[2]]), want.rows.map((r) => [String(r.line), String(r.span_id ?? '-')]), name);
    const download = page.waitForEvent('download');
    await section.getByRole('button', { name: 'JSON', exact: true }).click();
    assert.equal(readFileSync(await (await download).path(), 'utf8').trimEnd(), json.trimEnd(), name);
  }
  assert.ok(Number(await page.locator('article.job').first().getAttribute('data-wasm-memory')) > 0);
  assert.ok(requests.includes(CHECK_WASM), requests.join(' '));
  assert.ok(!requests.includes(FULL_WASM), `the check view fetched the full module: ${requests.join(' ')}`);
  assert.ok(!requests.includes(FULL_GLUE), `the check view fetched the full module's glue: ${requests.join(' ')}`);

  // The views that need the rest of the package still get the full module.
  await page.getByRole('tab', { name: 'Classroom packer' }).click();
  await page.locator('pre.packer-envelope').waitFor();
  assert.ok(requests.includes(FULL_WASM), requests.join(' '));
  assert.ok(requests.includes(FULL_GLUE), requests.join(' '));
  assert.equal(requests.filter((p) => p === CHECK_WASM).length, 1, 'the check module is fetched once');
  assert.deepEqual(errors, []);
});
