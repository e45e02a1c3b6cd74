// The page's entry point: the view switcher and the four views. Each view lives in its own
// module under js/; the check view runs the package in a Web Worker, the small views run it
// on the main thread once, lazily, when first shown.
import { initTabs } from './js/tabs.js';
import { initCheckView } from './js/check-view.js';
import { initPendingView } from './js/pending-view.js';

initCheckView();
initPendingView();
initTabs();
document.documentElement.dataset.ready = 'true';
