// The full package on the main thread, for the diff, hop and packer views: its wasm is
// loaded once, on first use, from the page's own origin. The check view runs the check-only
// module (pkg/check/) in its worker instead.
import init, * as toolslice from '../pkg/toolslice.js';

let loading = null;

/** Resolves to the package's exports once the module is instantiated. */
export function loadToolslice() {
  loading ??= init({ module_or_path: new URL('../pkg/toolslice_bg.wasm', import.meta.url) }).then(() => toolslice);
  return loading;
}
