// A large file (80 MB, generated on disk and picked with the file chooser, so the browser
// reads it from disk in chunks): the progress bar appears, moves and finishes, the page stays
// responsive, the file is checked in flagged-only mode and matches the CLI's --flagged-only
// report; cancel stops a check; a file changed on disk while it is read is reported in plain
// words next to the file.
import test from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, truncateSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openPage, pickFiles, reportFor, jobFor, cli, figures, writeSpanFile, artifact, dropFiles } from './helpers.mjs';

const dir = mkdtempSync(join(tmpdir(), 'toolslice-large-'));
const big = join(dir, 'big-run.jsonl');
const made = await writeSpanFile(big, { size: 80e6 });

/** Records, in the page, every value the progress bars take and the longest main-thread stall. */
async function watch(page) {
  await page.evaluate(() => {
    window.__seen = [];
    new MutationObserver((records) => {
      for (const r of records) {
        if (r.target instanceof HTMLProgressElement) window.__seen.push([r.target.value, r.target.max]);
      }
    }).observe(document.getElementById('jobs'), { subtree: true, attributes: true, attributeFilter: ['value', 'max'] });
    window.__maxGap = 0;
    let last = performance.now();
    window.__ticker = setInterval(() => {
      const now = performance.now();
      window.__maxGap = Math.max(window.__maxGap, now - last);
      last = now;
    }, 20);
  });
}

test('a large file shows progress, stays responsive and matches the CLI in flagged-only mode', async (t) => {
  const { page, errors } = await openPage(t);
  await watch(page);
  await pickFiles(page, [big]);
  const job = jobFor(page, 'big-run.jsonl');
  await job.locator('.progress').waitFor();
  assert.equal(await job.locator('.pill').textContent(), 'flagged rows only', 'a large file is checked flagged-only');
  const section = reportFor(page, 'big-run.jsonl');
  await section.waitFor({ timeout: 120_000 });
  const maxGap = await page.evaluate(() => {
    clearInterval(window.__ticker);
    return window.__maxGap;
  });

  // The bar moved through intermediate values and finished full.
  const seen = await page.evaluate(() => window.__seen);
  const [value, max] = [await job.locator('progress').evaluate((p) => p.value), await job.locator('progress').evaluate((p) => p.max)];
  assert.equal(max, made.bytes);
  assert.equal(value, made.bytes, 'the bar ends full');
  const between = seen.filter(([v, m]) => m === made.bytes && v > 0 && v < m);
  assert.ok(between.length >= 2, `the bar showed progress on the way (${JSON.stringify(seen.slice(0, 10))})`);
  assert.match(await job.locator('.progress-text').textContent(), /80 MB of 80 MB \(100%\) · [\d,]+ spans · [\d,]+ spans\/s/);
  // Checking happens in the worker: the main thread never stalled for long. (Drawing the
  // finished report is one main-thread task, so the bound is generous.)
  assert.ok(maxGap < 1500, `main thread stalled for ${maxGap} ms`);

  const expected = JSON.parse(cli(['--json', '--flagged-only', big]));
  const fig = await figures(section);
  assert.equal(Number(fig['tool spans'].replaceAll(',', '')), made.spans);
  assert.equal(Number(fig['tool spans'].replaceAll(',', '')), expected.counts.total);
  assert.equal(Number(fig.silent_clip.replaceAll(',', '')), expected.counts.silent_clip);
  assert.equal(Number(fig.ok.replaceAll(',', '')), expected.counts.ok);
  assert.match(await section.locator('.note.info').textContent(), /flagged-only mode/);
  assert.match(await section.locator('.rows .shown').textContent(), new RegExp(`of ${expected.rows.length.toLocaleString('en')} rows`));
  // The page caps the rows it draws: the table lists the first page, not every row.
  assert.equal(await section.locator('tbody tr.span-row').count(), Math.min(200, expected.rows.length));
  assert.equal(expected.rows.length, expected.counts.silent_clip);
  await job.screenshot({ path: artifact('check-large.png') });
  assert.deepEqual(errors, []);
});

test('cancel stops a check, and the worker goes on with the next file', async (t) => {
  const { page, errors } = await openPage(t);
  // The whole 80 MB check takes about a second now, about as long as a round trip from this
  // process to a click on a loaded machine. So the page itself presses Cancel the moment the
  // bar first moves, as a person watching it would; the check is then certainly under way
  // and certainly not finished.
  await page.evaluate(() => {
    new MutationObserver((records, observer) => {
      const bar = document.querySelector('article.job progress');
      if (!bar || !(bar.value > 0)) return;
      observer.disconnect();
      document.querySelector('article.job button.cancel').click();
    }).observe(document.getElementById('jobs'), { subtree: true, childList: true, attributes: true, attributeFilter: ['value'] });
  });
  await pickFiles(page, [big]);
  const job = jobFor(page, 'big-run.jsonl');
  await page.waitForSelector('article.job[data-state="cancelled"]');
  const text = await job.locator('.state-text').textContent();
  const read = /Cancelled after (.+) of 80 MB/.exec(text);
  assert.ok(read, text);
  assert.notEqual(read[1], '80 MB', 'cancelled before the end');
  assert.equal(await reportFor(page, 'big-run.jsonl').count(), 0, 'no report for a cancelled check');
  assert.ok(await job.locator('.progress').isHidden());

  await dropFiles(page, [{ name: 'after.jsonl', text: '{"span_id":"a","name":"ls","observed_bytes":5,"injected_bytes":5,"injected_tokens":1}\n' }]);
  await reportFor(page, 'after.jsonl').waitFor();
  assert.deepEqual(errors, []);
});

test('a file cut short on disk while it is read is reported in plain words next to it', async (t) => {
  const cut = join(dir, 'cut-run.jsonl');
  await writeSpanFile(cut, { size: 80e6 });
  const { page, errors } = await openPage(t);
  await pickFiles(page, [cut]);
  const job = jobFor(page, 'cut-run.jsonl');
  await job.locator('.progress').waitFor();
  truncateSync(cut, 1000);
  await page.waitForSelector('article.job[data-state="error"]', { timeout: 60_000 });
  const message = await job.locator('.file-error').textContent();
  assert.match(message, /could not be read|could be read/, message);
  assert.match(message, /Check it again once it is complete/);
  assert.equal(await reportFor(page, 'cut-run.jsonl').count(), 0);
  assert.deepEqual(errors, []);
});
