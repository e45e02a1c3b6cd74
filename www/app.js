// The page's entry point: the view switcher and the four views. Each view lives in its own
// module under js/. The check view runs the package's check-only module in a Web Worker;
// the diff, hop and packer views run the full module on the main thread, loaded the first
// time one of them needs it.
import { initTabs } from './js/tabs.js';
import { initCheckView } from './js/check-view.js';
import { initDiffView } from './js/diff-view.js';
import { initHopView } from './js/hop-view.js';
import { initPackerView } from './js/packer-view.js';

const lazy = {
  diff: () => initDiffView(document.getElementById('diff-root')),
  hop: () => initHopView(document.getElementById('hop-root')),
  packer: () => initPackerView(document.getElementById('packer-root')),
};
const started = new Set();

initCheckView();
initTabs({
  onShow(view) {
    if (started.has(view) || !lazy[view]) return;
    started.add(view);
    lazy[view]();
  },
});
document.documentElement.dataset.ready = 'true';
