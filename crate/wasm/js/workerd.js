// Entry for Cloudflare's workerd and other edge runtimes that import a `.wasm` file as a
// compiled WebAssembly.Module (wrangler's default rule; a `wasm` module in workerd config).
import wasmModule from './toolslice_bg.wasm';
import { initSync } from './toolslice.js';

initSync({ module: wasmModule });

export * from './toolslice.js';
