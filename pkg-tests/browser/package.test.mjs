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

  await t.test('SHA-256 agrees with WebCrypto on both paths of the glue (fast under 64 KiB)', async () => {
    const result = await page.evaluate(async () => {
      const toolslice = await import('/pkg/index.js');
      const hex = (buf) => Array.from(new Uint8Array(buf), (b) => b.toString(16).padStart(2, '0')).join('');
      const wrong = [];
      for (const n of [0, 32, 65535, 65536, 65537, 200000]) {
        const bytes = Uint8Array.from({ length: n }, (_, i) => (i * 31) & 255);
        const want = hex(await crypto.subtle.digest('SHA-256', bytes));
        if (toolslice.sha256Hex(bytes) !== want) wrong.push(`bytes ${n}`);
        if (hex(toolslice.sha256(bytes)) !== want) wrong.push(`raw ${n}`);
        if (toolslice.sha256Hex(bytes.buffer) !== want) wrong.push(`ArrayBuffer ${n}`);
      }
      for (const s of ['', 'café ☕', 'a\ud800b', 'é'.repeat(21845), 'é'.repeat(21846), '😀'.repeat(40000)]) {
        const want = hex(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(s)));
        if (toolslice.sha256Hex(s) !== want || toolslice.sha256Short(s) !== want.slice(0, 16)) wrong.push(`string of ${s.length}`);
      }
      let code;
      try { toolslice.sha256(42); } catch (e) { code = e.code; }
      return { wrong, code };
    });
    assert.deepEqual(result.wrong, []);
    assert.equal(result.code, 'invalid_argument');
  });
  assert.deepEqual(errors, []);
});
