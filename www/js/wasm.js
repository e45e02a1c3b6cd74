// The package on the main thread, for the small views (hop, diff): loaded once, on first
// use, from the page's own origin. The check view runs its own copy in a worker.
import init, * as toolslice from '../pkg/toolslice.js';

let loading = null;

/** Resolves to the package's exports once the module is instantiated. */
export function loadToolslice() {
  loading ??= init({ module_or_path: new URL('../pkg/toolslice_bg.wasm', import.meta.url) }).then(() => toolslice);
  return loading;
}
