// The full package on the main thread, for the diff, hop and packer views: its glue and its
// wasm are both loaded once, on first use, from the page's own origin (a dynamic import, so
// a visit that only checks a file never fetches either). The check view runs the check-only
// module (pkg/check/) in its worker instead.

let loading = null;

/** Resolves to the package's exports once the module is instantiated. */
export function loadToolslice() {
  loading ??= import('../pkg/toolslice.js').then(async (toolslice) => {
    await toolslice.default({ module_or_path: new URL('../pkg/toolslice_bg.wasm', import.meta.url) });
    return toolslice;
  });
  return loading;
}
