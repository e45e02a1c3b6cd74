// Writes www/screenshots/<view>-<screen>.png: every view (check with a real-looking run,
// diff, hop, packer) at 390, 1280 and 1920 px and in the dark scheme, full page, in Debian's
// Chromium, from the same scenes the layout tests measure (scenes.mjs). Run by
// scripts/screenshots; the README shows some of them.
import { mkdirSync } from 'node:fs';
import { openPage, WWW } from './helpers.mjs';
import { SCREENS, VIEWS, showView } from './scenes.mjs';
import { layoutProblems } from './layout.mjs';

const out = `${WWW}/screenshots`;
mkdirSync(out, { recursive: true });
// openPage registers its cleanup with a test context; here each page is closed by hand.
const context = { after() {} };
let failed = 0;
for (const screen of SCREENS) {
  for (const view of VIEWS) {
    const { page, errors, close } = await openPage(context, { viewport: screen.viewport, colorScheme: screen.colorScheme });
    try {
      await showView(page, view);
      const path = `${out}/${view}-${screen.name}.png`;
      await page.screenshot({ path, fullPage: true });
      const problems = [...await layoutProblems(page), ...errors];
      if (problems.length) failed++;
      console.log(`${path}${problems.length ? `\n  ${problems.join('\n  ')}` : ''}`);
    } finally {
      await close();
    }
  }
}
if (failed) {
  console.error(`screenshots: ${failed} view(s) have layout problems (listed above)`);
  process.exit(1);
}
