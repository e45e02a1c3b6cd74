// Entry for Node's `import`: read the module from disk and instantiate it synchronously.
import { readFileSync } from 'node:fs';
import { initSync } from './toolslice.js';

initSync({ module: readFileSync(new URL('./toolslice_bg.wasm', import.meta.url)) });

export * from './toolslice.js';
