// Files that are not what the checker reads get plain words next to the file, never a
// blank page: a binary file, a text file that is not span JSONL, an empty file, a file whose
// last line stops mid-record. Other files dropped with them are still checked.
import test from 'node:test';
import assert from 'node:assert/strict';
import { openPage, dropFiles, reportFor, jobFor, artifact } from './helpers.mjs';

const SPAN = '{"span_id":"t1","name":"ls","observed_bytes":5,"injected_bytes":5,"injected_tokens":2}';

test('a binary file is refused in plain words, and the files beside it are checked', async (t) => {
  const { page, errors } = await openPage(t);
  await page.evaluate((span) => {
    const dt = new DataTransfer();
    const png = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13, 0x49, 0x48, 0x44, 0x52]);
    dt.items.add(new File([png], 'screenshot.png', { type: 'image/png' }));
    dt.items.add(new File([`${span}\n`], 'fine.jsonl'));
    document.getElementById('drop').dispatchEvent(new DragEvent('drop', { dataTransfer: dt, bubbles: true, cancelable: true }));
  }, SPAN);
  const bad = jobFor(page, 'screenshot.png');
  await page.waitForSelector('article.job[aria-label="screenshot.png"][data-state="error"]');
  assert.equal(await bad.getAttribute('data-error-code'), 'binary_file');
  const message = await bad.locator('.file-error').textContent();
  assert.match(message, /This is not a text file: it contains NUL bytes/);
  assert.equal(await bad.locator('.file-error').getAttribute('role'), 'alert');
  assert.equal(await reportFor(page, 'screenshot.png').count(), 0);
  await reportFor(page, 'fine.jsonl').waitFor();
  await bad.screenshot({ path: artifact('check-binary-error.png') });
  assert.deepEqual(errors, []);
});

test('a text file that is not span JSONL, an empty file and a cut-off last line are named as such', async (t) => {
  const { page, errors } = await openPage(t);
  await dropFiles(page, [
    { name: 'notes.csv', text: 'span,tool,bytes\ntool-1,ls,10\ntool-2,cat,20\n' },
    { name: 'empty.jsonl', text: '' },
    { name: 'cut.jsonl', text: `${SPAN}\n${SPAN.slice(0, 40)}` },
    { name: 'turns.jsonl', text: '{"span_id":"turn-1","status":"ok"}\n' },
  ]);
  for (const name of ['notes.csv', 'empty.jsonl', 'cut.jsonl', 'turns.jsonl']) await reportFor(page, name).waitFor();

  const csv = reportFor(page, 'notes.csv');
  assert.match(await csv.locator('.note.error').textContent(), /This does not look like a span file: none of its 3 lines could be read as a span record/);
  assert.equal(await csv.locator('ol.lines li.invalid').count(), 3, 'each line is listed with its line number');
  assert.match(await csv.locator('ol.lines li.invalid').first().textContent(), /^✖ line 1: invalid: /);

  assert.match(await reportFor(page, 'empty.jsonl').locator('.note.error').textContent(), /This file is empty/);
  assert.match(await reportFor(page, 'turns.jsonl').locator('.note.error').textContent(), /No tool spans here: 1 record was read but none is a tool span, so nothing can be checked/);
  // The verdict carries the checker's own line: what the file held instead of tool spans.
  assert.match(await reportFor(page, 'turns.jsonl').locator('.verdict').textContent(),
    /Nothing was checked \(exit code 1\)\..*The checker: nothing checked: no tool span in 1 entry read as spans: 1 × record has no name\./);

  // No tool span at all: the verdict says nothing was checked, never "trustworthy".
  for (const name of ['notes.csv', 'empty.jsonl', 'turns.jsonl']) {
    const verdict = reportFor(page, name).locator('.verdict');
    assert.match(await verdict.textContent(), /^∅Nothing was checked/, name);
    assert.equal(await verdict.getAttribute('class'), 'verdict none', name);
    assert.doesNotMatch(await verdict.textContent(), /whole or declared|trustworthy \(exit code 0\)/, name);
    assert.match(await jobFor(page, name).locator('.state-text').textContent(), /0 tool spans, nothing was checked\.$/, name);
    assert.equal(await reportFor(page, name).locator('svg.histogram, table.rows-table').count(), 0, `${name}: no empty chart or table`);
  }

  const cut = reportFor(page, 'cut.jsonl');
  assert.match(await cut.locator('.note.warn').textContent(), /The last line \(2\) stops in the middle of a record: the export or upload may have been cut off/);
  assert.equal(await cut.locator('.note.error').count(), 0, 'one good span: it is a span file');
  // A file that ends with a newline after a bad line is not called cut off.
  await dropFiles(page, [{ name: 'badline.jsonl', text: `${SPAN}\nnot json\n` }]);
  await reportFor(page, 'badline.jsonl').waitFor();
  assert.equal(await reportFor(page, 'badline.jsonl').locator('.note.warn').count(), 0);
  assert.deepEqual(errors, []);
});
