// Privacy is the product: the page says so, sends a strict Content-Security-Policy, loads
// nothing from another origin, and after loading asks only for its own files while a whole
// check (drop, details, filters, exports, every view) runs. Trace content is text only:
// hostile strings in every field, in the file name and in the exports stay inert.
import test from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync, writeFileSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CSP } from '../../scripts/static-server.mjs';
import { openPage, dropFiles, reportFor, cli, FIXTURES, OWN_FILE, WWW } from './helpers.mjs';

test('the page states its privacy promise and its policy forbids every other origin', async (t) => {
  const { page, url } = await openPage(t);
  const promise = await page.locator('#privacy').textContent();
  assert.match(promise, /Nothing is sent to a server\./);
  assert.match(promise, /makes no network request except for its own files/);
  const response = await page.request.get(url);
  assert.equal(response.headers()['content-security-policy'], CSP);
  for (const directive of ["default-src 'self'", "script-src 'self' 'wasm-unsafe-eval'", "connect-src 'self'", "font-src 'none'", "object-src 'none'"]) {
    assert.ok(CSP.includes(directive), directive);
  }
  // The same policy travels in the page itself, for static hosts that send no headers.
  const meta = await page.locator('meta[http-equiv="Content-Security-Policy"]').getAttribute('content');
  assert.ok(meta.startsWith("default-src 'self'; script-src 'self' 'wasm-unsafe-eval'"), meta);
  assert.ok(!/https?:|\*/.test(meta), meta);
  // No file of the page names another origin to load from.
  const html = readFileSync(`${WWW}/index.html`, 'utf8');
  assert.ok(!/(src|href)="(https?:)?\/\//.test(html), 'index.html loads from another origin');
  const css = readFileSync(`${WWW}/style.css`, 'utf8');
  assert.ok(!/url\(|@import|@font-face/.test(css), 'style.css loads something');
  for (const f of readdirSync(`${WWW}/js`)) {
    const js = readFileSync(`${WWW}/js/${f}`, 'utf8');
    assert.ok(!/\bfetch\(|XMLHttpRequest|sendBeacon|WebSocket|EventSource|importScripts/.test(js), `${f} talks to the network`);
    assert.ok(!/\.(innerHTML|outerHTML)\s*=|insertAdjacentHTML\(|document\.write\(/.test(js), `${f} writes HTML`);
  }
});

test('a whole session requests nothing but the page\'s own files', async (t) => {
  const { page, requests, outside, blobs, errors } = await openPage(t);
  const loaded = requests.length;
  await dropFiles(page, [{ name: 'clipped.jsonl', text: readFileSync(`${FIXTURES}clipped.jsonl`, 'utf8') }]);
  const section = reportFor(page, 'clipped.jsonl');
  await section.waitFor();
  await section.locator('button.toggle').first().click();
  await section.getByLabel('status', { exact: true }).selectOption('silent_clip');
  await section.getByLabel('search').fill('tool');
  for (const kind of ['JSON', 'JSONL', 'CSV']) {
    const download = page.waitForEvent('download');
    await section.getByRole('button', { name: kind, exact: true }).click();
    await download;
  }
  for (const tab of ['Diff two runs', 'Mutation hop', 'Classroom packer', 'Check a run']) {
    await page.getByRole('tab', { name: tab }).click();
  }
  await page.waitForTimeout(300);
  assert.deepEqual(outside, [], 'the browser asked for something off the page origin');
  assert.ok(requests.every((p) => OWN_FILE.test(p)), requests.join(' '));
  // After load, the only fetches are the check worker and the modules it imports (its row
  // store and CSV), its check-only module, and the full package (for the diff, hop and
  // packer views): own files.
  const later = new Set(requests.slice(loaded));
  assert.ok(later.has('/js/check-worker.js') && later.has('/pkg/check/toolslice_bg.wasm') && later.has('/pkg/toolslice_bg.wasm'), [...later].join(' '));
  const expected = ['/js/check-worker.js', '/js/rows.js', '/js/csv.js', '/pkg/check/toolslice.js', '/pkg/check/toolslice_bg.wasm', '/pkg/toolslice.js', '/pkg/toolslice_bg.wasm'];
  assert.deepEqual([...later].filter((p) => !expected.includes(p)), []);
  assert.ok(blobs.length <= 3, 'downloads are blob: URLs made in the page');
  assert.deepEqual(errors, []);
});

const HOSTILE = [
  '<img src=x onerror="window.__pwned=1;alert(1)">',
  '</script><script>window.__pwned=2;alert(2)</script>',
  '<a href="javascript:alert(3)">click</a>',
  '"><svg onload=alert(4)>',
].join(' ');

test('hostile strings in every field, the file name and the exports stay inert text', async (t) => {
  const { page, errors } = await openPage(t);
  let dialogs = 0;
  page.on('dialog', (d) => { dialogs++; d.dismiss(); });
  const rec = (extra) => JSON.stringify({
    span_id: HOSTILE, parent_id: HOSTILE, name: HOSTILE, status: HOSTILE, observed_bytes: 10,
    injected_bytes: 1, injected_tokens: 1, clip_reason: HOSTILE, sha256_observed: HOSTILE,
    sha256_injected: HOSTILE, injected_preview: HOSTILE, prompt_builder_version: HOSTILE, ...extra,
  });
  const formula = rec({ span_id: '=HYPERLINK("http://example.invalid","x")', name: '@SUM(1)' });
  const text = [rec({}), rec({ injected_bytes: 10, clip_reason: 'none' }), formula, HOSTILE, JSON.stringify({ span_id: HOSTILE })].join('\n') + '\n';
  const name = '<img src=x onerror=alert(5)>.jsonl';
  await dropFiles(page, [{ name, text }]);
  const section = reportFor(page, name);
  await section.waitFor();
  await section.getByLabel('search').fill('<img');
  await page.waitForTimeout(400); // the search is debounced; every row matches, the table is redrawn
  for (const toggle of await section.locator('button.toggle').all()) await toggle.click();

  assert.equal(await page.locator('#jobs img, #jobs script, #jobs a, #jobs iframe, #jobs object, #jobs svg:not(.histogram)').count(), 0);
  assert.equal(await page.locator('#jobs [onerror], #jobs [onload], #jobs [href^="javascript"]').count(), 0);
  const shown = await page.locator('#jobs').textContent();
  for (const piece of ['<img src=x onerror="window.__pwned=1;alert(1)">', '</script><script>', '<a href="javascript:alert(3)">', name]) {
    assert.ok(shown.includes(piece), `shown verbatim: ${piece}`);
  }
  assert.ok((await section.locator('pre.preview').first().textContent()) === HOSTILE);
  assert.equal(await page.evaluate(() => window.__pwned), undefined);
  assert.equal(dialogs, 0);

  await section.getByLabel('search').fill('');
  const download = page.waitForEvent('download');
  await section.getByRole('button', { name: 'CSV', exact: true }).click();
  const csv = readFileSync(await (await download).path(), 'utf8');
  const cells = csv.split(/,|\r\n/).map((c) => c.replace(/^"/, ''));
  assert.ok(!cells.some((c) => /^[=+@]/.test(c)), 'no CSV cell starts a formula');
  assert.ok(csv.includes(`'=HYPERLINK`) && csv.includes(`'@SUM(1)`), 'formula text is kept, defused by an apostrophe');

  // The JSON export is the package's rendering of the same hostile bytes, as the CLI gives it.
  const json = page.waitForEvent('download');
  await section.getByRole('button', { name: 'JSON', exact: true }).click();
  const dir = mkdtempSync(join(tmpdir(), 'toolslice-xss-'));
  writeFileSync(join(dir, 'hostile.jsonl'), text);
  assert.equal(readFileSync(await (await json).path(), 'utf8').trimEnd(), cli(['--json', join(dir, 'hostile.jsonl')]).trimEnd());
  assert.deepEqual(errors, []);
});
