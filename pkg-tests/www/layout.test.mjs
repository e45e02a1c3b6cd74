// The page as a person sees it. Every view (check with a real-looking run, diff, hop, the
// classroom packer), at phone, laptop and wide widths and in the dark scheme, is measured in
// Chromium for what a person would notice (layout.mjs): the rows table's cells under their
// headers, nothing off the side of the screen, no text over text, every control visible
// and large enough to hit. A screenshot of each is kept in pkg-tests/artifacts/ to look at
// when one fails. The stylesheet itself is read too: a rule that lays something out must
// name its element, so a generic class can never again turn table rows into flex boxes.
import test from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { openPage, artifact, WWW, reportFor } from './helpers.mjs';
import { layoutProblems } from './layout.mjs';
import { SCREENS, VIEWS, showView, CHECK_FILE } from './scenes.mjs';

for (const screen of SCREENS) {
  for (const view of VIEWS) {
    test(`${view} view at ${screen.name}: cells under headers, no overflow, no overlap, controls usable`, async (t) => {
      const { page, errors, outside } = await openPage(t, { viewport: screen.viewport, colorScheme: screen.colorScheme });
      await showView(page, view);
      await page.screenshot({ path: artifact(`layout-${view}-${screen.name}.png`), fullPage: true });
      assert.deepEqual(await layoutProblems(page), []);
      assert.deepEqual(errors, []);
      assert.deepEqual(outside, []);
    });
  }
}

test('the checks see the bug they were written for: table rows laid out as flex boxes', async (t) => {
  const { page } = await openPage(t, { viewport: { width: 1280, height: 800 } });
  await showView(page, 'check');
  assert.deepEqual(await layoutProblems(page), [], 'sound before the bad rule');
  // The old stylesheet's `.row { display: flex }` on the rows, added through the CSSOM (the
  // page's CSP forbids inline style elements).
  await page.evaluate(() => document.styleSheets[0].insertRule('.rows-table tr.span-row { display: flex; flex-wrap: wrap; }', document.styleSheets[0].cssRules.length));
  const problems = await layoutProblems(page);
  assert.ok(problems.some((p) => /rows are laid out as "flex"/.test(p)), problems.join('\n'));
  assert.ok(problems.some((p) => /body cells are not under their header cell/.test(p)), problems.join('\n'));
});

test('the checks see a control too small to hit and text drawn over text', async (t) => {
  const { page } = await openPage(t, { viewport: { width: 1280, height: 800 } });
  await showView(page, 'check');
  await page.evaluate(() => {
    const sheet = document.styleSheets[0];
    sheet.insertRule('#check-paste { min-height: 0; min-width: 0; height: 12px; padding: 0; font-size: 8px; }', sheet.cssRules.length);
    sheet.insertRule('dl.figures { grid-template-columns: repeat(auto-fill, 2rem); }', sheet.cssRules.length);
  });
  const problems = await layoutProblems(page);
  assert.ok(problems.some((p) => /button#check-paste.* smaller than 24 x 24/.test(p)), problems.join('\n'));
  assert.ok(problems.some((p) => /^text overlaps/.test(p)), problems.join('\n'));
});

test('a wide report table scrolls in its own box at phone width; the page does not', async (t) => {
  const { page } = await openPage(t, { viewport: { width: 390, height: 844 } });
  await showView(page, 'check');
  const wrap = reportFor(page, CHECK_FILE).locator('.table-wrap');
  const [scroll, client] = await wrap.evaluate((e) => [e.scrollWidth, e.clientWidth]);
  assert.ok(scroll > client, 'the table is wider than a phone and scrolls sideways in its box');
  assert.equal(await page.evaluate(() => document.scrollingElement.scrollWidth), 390);
});

test('the stylesheet: every rule that lays something out names its element', () => {
  const css = readFileSync(`${WWW}/style.css`, 'utf8').replace(/\/\*[\s\S]*?\*\//g, '');
  const bad = [];
  // Innermost blocks: selector { declarations } (at-rule wrappers are skipped by the regex).
  for (const [, selectors, body] of css.matchAll(/([^{}]+)\{([^{}]*)\}/g)) {
    const display = body.match(/(?:^|;)\s*display\s*:\s*([^;]+)/)?.[1].trim();
    if (!display || display.startsWith('none')) continue;
    for (const selector of selectors.split(',').map((s) => s.trim())) {
      const last = selector.split(/\s*[\s>+~]\s*/).pop();
      if (!/^[a-z*]/i.test(last)) bad.push(`${selector} { display: ${display} }`);
    }
  }
  assert.deepEqual(bad, [], 'a bare class or attribute selector that sets display can match table rows by accident');
});
