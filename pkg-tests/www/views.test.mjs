// Each of the four views, as a person first sees it, saved as a screenshot in
// pkg-tests/artifacts/ (with UPDATE_SCREENSHOTS=1, also into www/screenshots/ for the README).
// The diff, hop and packer views wait for package functions: until then they must say so
// plainly rather than show an empty panel.
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

for (const [view, needs] of [['diff', /diffManifests/], ['hop', /classifyHop/], ['packer', /\bpack\b/]]) {
  test(`${view} view`, async (t) => {
    const { page, errors } = await openPage(t, { viewport: { width: 1000, height: 600 }, hash: `#${view}` });
    const panel = page.locator(`#view-${view}`);
    assert.ok(await panel.isVisible());
    const pending = panel.locator('.pending');
    const isPending = (await pending.count()) > 0;
    if (isPending) {
      assert.match(await pending.textContent(), /not in this build yet/);
      assert.match(await pending.textContent(), needs);
    }
    await page.screenshot({ path: artifact(`view-${view}.png`) });
    if (!isPending) keep(`view-${view}.png`); // a placeholder is no picture for the README
    assert.deepEqual(errors, []);
  });
}
