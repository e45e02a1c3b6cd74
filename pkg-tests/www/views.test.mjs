// Each of the four views, as a person first sees it, saved as a screenshot in
// pkg-tests/artifacts/ (with UPDATE_SCREENSHOTS=1, also into www/screenshots/ for the README).
import test from 'node:test';
import assert from 'node:assert/strict';
import { copyFileSync, mkdirSync, readFileSync } from 'node:fs';
import { openPage, dropFiles, reportFor, artifact, FIXTURES, WWW } from './helpers.mjs';

function keep(name) {
  if (process.env.UPDATE_SCREENSHOTS !== '1') return;
  mkdirSync(`${WWW}/screenshots`, { recursive: true });
  copyFileSync(artifact(name), `${WWW}/screenshots/${name}`);
}

test('check view: a report with its verdict, figures, histogram and an open row', async (t) => {
  const { page, errors } = await openPage(t, { viewport: { width: 1000, height: 1150 } });
  await dropFiles(page, [{ name: 'run-0412.jsonl', text: readFileSync(`${FIXTURES}clipped.jsonl`, 'utf8') }]);
  const section = reportFor(page, 'run-0412.jsonl');
  await section.waitFor();
  await section.locator('button.toggle').first().click();
  await page.evaluate(() => window.scrollTo(0, 0));
  await page.screenshot({ path: artifact('view-check.png') });
  keep('view-check.png');
  assert.deepEqual(errors, []);
});

test('check view at phone width in the dark scheme', async (t) => {
  const { page } = await openPage(t, { viewport: { width: 390, height: 1100 }, colorScheme: 'dark' });
  await dropFiles(page, [{ name: 'run-0412.jsonl', text: readFileSync(`${FIXTURES}clipped.jsonl`, 'utf8') }]);
  await reportFor(page, 'run-0412.jsonl').waitFor();
  await page.screenshot({ path: artifact('view-check-phone-dark.png') });
  keep('view-check-phone-dark.png');
});

const EXAMPLE = { diff: 'two runs of span records', hop: 'wrap', packer: 'get_logs' };
const RESULT = { diff: 'table.manifest.only-left', hop: '.hop-label', packer: '.packer-envelope' };

for (const view of ['diff', 'hop', 'packer']) {
  test(`${view} view`, async (t) => {
    const { page, errors } = await openPage(t, { viewport: { width: 1000, height: view === 'packer' ? 1500 : 1000 }, hash: `#${view}` });
    const panel = page.locator(`#view-${view}`);
    assert.ok(await panel.isVisible());
    if (EXAMPLE[view]) {
      await panel.getByRole('button', { name: EXAMPLE[view], exact: true }).click();
      await panel.locator(RESULT[view]).waitFor();
    }
    if (view === 'packer') assert.equal(await panel.locator('.pending').count(), 0, 'the packer is built: no pending notice');
    await page.screenshot({ path: artifact(`view-${view}.png`) });
    keep(`view-${view}.png`);
    assert.deepEqual(errors, []);
  });
}
