// Entry for browsers and Deno: fetch and instantiate the module once, at import time.
// (Top-level await: importing this module resolves when the functions are ready.)
import init from './toolslice.js';

await init({ module_or_path: new URL('./toolslice_bg.wasm', import.meta.url) });

export * from './toolslice.js';
