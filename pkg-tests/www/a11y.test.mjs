// Usable by everyone: the views and the check are keyboard operable, every control has a
// name, status is told by text and icon as well as colour, text keeps a readable contrast
// in the light and the dark scheme, and the page fits a 390 px phone screen.
import test from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { openPage, dropFiles, reportFor, artifact, FIXTURES, rowsSettled } from './helpers.mjs';

const FIXTURE = { name: 'clipped.jsonl', text: readFileSync(`${FIXTURES}clipped.jsonl`, 'utf8') };

test('the tabs, the file chooser and the row details work from the keyboard', async (t) => {
  const { page, errors } = await openPage(t);
  // Listen for the file chooser from the start: Playwright turns on chooser interception when
  // the first listener appears, asynchronously, and a key pressed in the same moment (as with
  // a waitForEvent right before it) can reach a page that is not yet intercepted (seen once
  // in CI: the chooser opened unseen and the wait timed out).
  const chooser = new Promise((resolve) => page.once('filechooser', resolve));
  // Tab from the top reaches the selected tab; the arrow keys move between views.
  await page.keyboard.press('Tab'); // skip link
  await page.keyboard.press('Tab');
  assert.equal(await page.evaluate(() => document.activeElement.id), 'tab-check');
  await page.keyboard.press('ArrowRight');
  assert.equal(await page.evaluate(() => document.activeElement.id), 'tab-diff');
  assert.equal(await page.evaluate(() => location.hash), '#diff');
  assert.ok(await page.locator('#view-diff').isVisible());
  assert.ok(await page.locator('#view-check').isHidden());
  await page.keyboard.press('End');
  assert.equal(await page.evaluate(() => document.activeElement.id), 'tab-packer');
  await page.keyboard.press('ArrowRight'); // wraps round
  assert.equal(await page.evaluate(() => document.activeElement.id), 'tab-check');
  assert.ok(await page.locator('#view-check').isVisible());

  // The next stop is the file chooser; Enter opens it.
  await page.keyboard.press('Tab');
  assert.equal(await page.evaluate(() => document.activeElement.id), 'choose');
  await page.keyboard.press('Enter');
  const timeout = new Promise((_, reject) => {
    setTimeout(() => reject(new Error('Enter on "choose a file" did not open the file chooser in 30 s')), 30_000).unref();
  });
  await (await Promise.race([chooser, timeout])).setFiles({ name: FIXTURE.name, mimeType: 'text/plain', buffer: Buffer.from(FIXTURE.text) });
  const section = reportFor(page, FIXTURE.name);
  await section.waitFor();

  // A row's details open and close with the keyboard.
  const toggle = section.locator('button.toggle').first();
  await toggle.focus();
  await page.keyboard.press('Enter');
  assert.equal(await toggle.getAttribute('aria-expanded'), 'true');
  // A filter works from the keyboard too.
  const status = section.getByLabel('status', { exact: true });
  await status.focus();
  await page.keyboard.press('ArrowDown');
  assert.equal(await status.inputValue(), 'silent_clip');
  await rowsSettled(section);
  assert.equal(await section.locator('tbody tr.span-row').count(), 1);
  // A direct link to a view opens it.
  await page.goto(`${page.url().split('#')[0]}#packer`);
  assert.ok(await page.locator('#view-packer').isVisible());
  assert.equal(await page.getByRole('tab', { name: 'Classroom packer' }).getAttribute('aria-selected'), 'true');
  assert.deepEqual(errors, []);
});

test('every control has a name, and status is shown by word and icon, not colour alone', async (t) => {
  const { page } = await openPage(t);
  await dropFiles(page, [FIXTURE]);
  const section = reportFor(page, FIXTURE.name);
  await section.waitFor();
  await section.locator('button.toggle').first().click();
  const unnamedControls = () => page.evaluate(() => [...document.querySelectorAll('button, input, select, textarea, [tabindex="0"]')]
    .filter((n) => !n.closest('[hidden]') && !(n.type === 'file'))
    .filter((n) => !((n.labels && n.labels.length) || n.getAttribute('aria-label') || n.getAttribute('aria-labelledby') || (n.tagName === 'BUTTON' && n.textContent.trim())))
    .map((n) => n.outerHTML.slice(0, 120)));
  assert.deepEqual(await unnamedControls(), [], 'controls without an accessible name');
  for (const tab of ['Diff two runs', 'Mutation hop', 'Classroom packer']) {
    await page.getByRole('tab', { name: tab }).click();
    await page.waitForTimeout(200);
    assert.deepEqual(await unnamedControls(), [], `controls without an accessible name in ${tab}`);
  }
  await page.getByRole('tab', { name: 'Check a run' }).click();
  const badges = await section.locator('.badge').evaluateAll((nodes) => nodes.map((n) => [n.querySelector('.icon')?.textContent, n.textContent.trim().split(' ').at(-1)]));
  assert.ok(badges.length >= 4);
  for (const [icon, word] of badges) {
    assert.ok(icon && icon.trim(), 'icon');
    assert.ok(['silent_clip', 'incomplete', 'hash_mismatch', 'clipped', 'ok'].includes(word), word);
  }
  assert.ok((await section.locator('.verdict').textContent()).startsWith('✖Not trustworthy'));
  // The histogram has a text alternative and a table of its numbers.
  assert.match(await section.locator('svg.histogram').getAttribute('aria-label'), /^Clip ratio histogram\. not cut: 3, 80–90%: 1\.$/);
  assert.equal(await section.locator('.histogram-figure table tbody tr').count(), 11);
});

/** WCAG contrast of each element's text against the first opaque background behind it. */
async function contrasts(page, selectors) {
  return page.evaluate((selectors) => {
    const parse = (c) => c.match(/[\d.]+/g).map(Number);
    const lum = ([r, g, b]) => {
      const f = (v) => { v /= 255; return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; };
      return 0.2126 * f(r) + 0.7152 * f(g) + 0.0722 * f(b);
    };
    const bgOf = (node) => {
      // Blend translucent backgrounds over the opaque one beneath them.
      const layers = [];
      for (let n = node; n; n = n.parentElement) {
        const c = parse(getComputedStyle(n).backgroundColor);
        if ((c[3] ?? 1) > 0) layers.push(c);
        if ((c[3] ?? 1) === 1) break;
      }
      let base = layers.length && (layers.at(-1)[3] ?? 1) === 1 ? layers.pop() : parse(getComputedStyle(document.documentElement).backgroundColor);
      for (const c of layers.reverse()) {
        const a = c[3] ?? 1;
        base = [0, 1, 2].map((i) => c[i] * a + base[i] * (1 - a));
      }
      return base;
    };
    return selectors.map((sel) => {
      const node = document.querySelector(sel);
      if (!node) return [sel, null];
      const fg = lum(parse(getComputedStyle(node).color));
      const bg = lum(bgOf(node));
      return [sel, (Math.max(fg, bg) + 0.05) / (Math.min(fg, bg) + 0.05)];
    });
  }, selectors);
}

for (const scheme of ['light', 'dark']) {
  test(`readable text in the ${scheme} scheme`, async (t) => {
    const { page } = await openPage(t, { colorScheme: scheme });
    await dropFiles(page, [FIXTURE]);
    await reportFor(page, FIXTURE.name).waitFor();
    await page.getByLabel('List flagged rows only').check(); // for the "flagged rows only" pill
    await dropFiles(page, [{ name: 'good.jsonl', text: readFileSync(`${FIXTURES}good.jsonl`, 'utf8') }]);
    await reportFor(page, 'good.jsonl').waitFor();
    await page.locator('button.toggle').first().click();
    const bg = await page.evaluate(() => getComputedStyle(document.documentElement).backgroundColor);
    assert.equal(bg, scheme === 'dark' ? 'rgb(13, 17, 23)' : 'rgb(255, 255, 255)');
    const results = await contrasts(page, [
      'body', '.hint', '.privacy', '.verdict.fail p', '.verdict.pass p', '.badge.s-silent_clip', '.badge.s-incomplete',
      '.badge.s-hash_mismatch', '.badge.s-clipped', '.badge.s-ok', '.figure.s-silent_clip dd', '.figure dt', '.shown',
      '.tabs [aria-selected="false"]', '.rows-table thead th', '.detail dt', 'pre.preview', '.pill',
    ]);
    const low = results.filter(([, ratio]) => ratio === null || ratio < 4.5);
    assert.deepEqual(low, [], `contrast below 4.5:1 in the ${scheme} scheme`);
    await page.screenshot({ path: artifact(`check-${scheme}.png`) });
  });
}

test('usable at phone width (390 px): nothing wider than the screen, table scrolls in its box', async (t) => {
  const { page, errors } = await openPage(t, { viewport: { width: 390, height: 844 } });
  await dropFiles(page, [FIXTURE]);
  const section = reportFor(page, FIXTURE.name);
  await section.waitFor();
  await section.locator('button.toggle').first().click();
  const width = await page.evaluate(() => document.documentElement.scrollWidth);
  assert.ok(width <= 390, `the page is ${width}px wide`);
  const box = await section.locator('.table-wrap').boundingBox();
  assert.ok(box.x >= 0 && box.x + box.width <= 390, JSON.stringify(box));
  // The controls stay large enough to hit and the text large enough to read.
  const small = await page.evaluate(() => [...document.querySelectorAll('#view-check button:not(.toggle), #view-check select, #view-check input:not([type=file])')]
    .filter((n) => n.offsetParent && n.getBoundingClientRect().height < 24).map((n) => n.outerHTML.slice(0, 80)));
  assert.deepEqual(small, []);
  await page.screenshot({ path: artifact('check-phone.png'), fullPage: true });
  for (const [hash, example, result] of [['#hop', 'wrap', '.hop-label'], ['#diff', 'two runs of hop rows', 'table.hop-compare'], ['#packer', 'get_logs', '.packer-envelope']]) {
    await page.evaluate((h) => { location.hash = h; }, hash);
    await page.getByRole('button', { name: example, exact: true }).click();
    await page.locator(result).waitFor();
    const w = await page.evaluate(() => document.documentElement.scrollWidth);
    assert.ok(w <= 390, `${hash} is ${w}px wide`);
    await page.screenshot({ path: artifact(`${hash.slice(1)}-phone.png`), fullPage: true });
  }
  assert.deepEqual(errors, []);
});
