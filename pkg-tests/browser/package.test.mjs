// The package's browser entry (`index.js`), imported as an ES module by a page in real
// Chromium, served from a static origin.
import test from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { serve } from '../../scripts/static-server.mjs';
import { launch } from './chromium.mjs';

const repo = fileURLToPath(new URL('../..', import.meta.url));

test('the package in Chromium', async (t) => {
  const server = await serve({ root: repo });
  const browser = await launch();
  t.after(async () => {
    await browser.close();
    await server.close();
  });
  const page = await browser.newPage();
  const errors = [];
  page.on('pageerror', (e) => errors.push(e.message));
  await page.goto(server.url + 'pkg-tests/browser/page.html');

  await t.test('imports and checks a run (CSP allows only same-origin script and wasm)', async () => {
    const clipped = readFileSync(new URL('../fixtures/clipped.jsonl', import.meta.url), 'utf8');
    const result = await page.evaluate(async (text) => {
      const toolslice = await import('/pkg/index.js');
      const bytes = new TextEncoder().encode(text);
      const checker = new toolslice.Checker();
      for (let i = 0; i < bytes.length; i += 5) checker.push(bytes.subarray(i, i + 5));
      const streamed = checker.finish().toJSON();
      let code;
      try { toolslice.checkSpans(null); } catch (e) { code = e instanceof Error && e.code; }
      return { statuses: streamed.rows.map((r) => r.status), exit: streamed.exit_code, code };
    }, clipped);
    assert.deepEqual(result.statuses, ['silent_clip', 'incomplete', 'hash_mismatch', 'ok']);
    assert.equal(result.exit, 1);
    assert.equal(result.code, 'invalid_argument');
  });
  assert.deepEqual(errors, []);
});
