// The page served by scripts/serve, in real Chromium: drop a span file through a real
// DataTransfer and compare what the page shows with the CLI's --json report.
import test from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { serve } from '../../scripts/static-server.mjs';
import { launch } from '../browser/chromium.mjs';

const here = (p) => fileURLToPath(new URL(p, import.meta.url));
const artifacts = here('../artifacts/');

async function dropFile(page, name, text) {
  await page.evaluate(({ name, text }) => {
    const dt = new DataTransfer();
    dt.items.add(new File([text], name, { type: 'application/jsonl' }));
    const target = document.getElementById('drop');
    for (const type of ['dragenter', 'dragover', 'drop']) {
      target.dispatchEvent(new DragEvent(type, { dataTransfer: dt, bubbles: true, cancelable: true }));
    }
  }, { name, text });
}

test('the page checks a dropped file like the CLI does', async (t) => {
  const requests = [];
  const server = await serve({ root: here('../../www'), onRequest: (p) => requests.push(p) });
  const browser = await launch();
  t.after(async () => {
    await browser.close();
    await server.close();
  });
  const page = await browser.newPage();
  const errors = [];
  page.on('pageerror', (e) => errors.push(e.message));
  const outside = [];
  page.on('request', (r) => { if (!r.url().startsWith(server.url)) outside.push(r.url()); });
  await page.goto(server.url);

  for (const fixture of ['clipped.jsonl', 'malformed.jsonl']) {
    const text = readFileSync(here(`../fixtures/${fixture}`), 'utf8');
    await dropFile(page, fixture, text);
    const section = page.locator(`section[aria-label="Report for ${fixture}"]`);
    await section.waitFor();
    const shown = await section.locator('tbody tr').evaluateAll((rows) =>
      rows.map((tr) => [...tr.children].map((td) => td.textContent)));
    const cli = JSON.parse(spawnSync(here('../node_modules/.bin/toolslice'), ['check', '--json', here(`../fixtures/${fixture}`)], { encoding: 'utf8' }).stdout);
    assert.deepEqual(shown.map((r) => r[0].split(' ')[1]), cli.rows.map((r) => r.status), fixture);
    assert.deepEqual(shown.map((r) => Number(r[1])), cli.rows.map((r) => r.line), fixture);
    const problems = await section.locator('ul.problems li').allTextContents();
    assert.equal(problems.filter((p) => p.includes(': invalid: ')).length, cli.invalid.length, fixture);
  }
  mkdirSync(artifacts, { recursive: true });
  await page.screenshot({ path: `${artifacts}/check-view.png`, fullPage: true });
  assert.deepEqual(errors, []);
  assert.deepEqual(outside, [], 'the page made a request outside its own origin');
  assert.ok(requests.every((p) => /^\/(|index\.html|app\.js|style\.css|pkg\/toolslice(\.js|_bg\.wasm)|favicon\.ico)$/.test(p)), requests.join(' '));
});

test('hostile strings in a trace stay inert text', async (t) => {
  const server = await serve({ root: here('../../www') });
  const browser = await launch();
  t.after(async () => {
    await browser.close();
    await server.close();
  });
  const page = await browser.newPage();
  let dialogs = 0;
  page.on('dialog', (d) => { dialogs++; d.dismiss(); });
  await page.goto(server.url);
  const hostile = '<img src=x onerror="alert(1)"></script><script>alert(2)</script><a href="javascript:alert(3)">x</a>';
  const line = JSON.stringify({ span_id: hostile, name: hostile, observed_bytes: 10, injected_bytes: 1, injected_tokens: 1, clip_reason: hostile });
  await dropFile(page, 'hostile.jsonl', line + '\n');
  await page.locator('section[aria-label="Report for hostile.jsonl"]').waitFor();
  assert.equal(await page.locator('#reports img, #reports script, #reports a').count(), 0);
  assert.ok((await page.locator('#reports tbody').textContent()).includes('<img src=x onerror="alert(1)">'));
  assert.equal(dialogs, 0);
});
