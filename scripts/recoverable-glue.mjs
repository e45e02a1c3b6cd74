#!/usr/bin/env node
// Makes wasm-bindgen's JS glue survive a trap (issue 13: "if a trap happens anyway the JS
// entry points replace the dead instance with a fresh one on the next call").
//
// A WebAssembly trap (an abort on an allocation the instance cannot satisfy, a bug) leaves
// the instance unusable: its stack pointer is not restored, a RefCell may stay borrowed,
// the allocator may be mid-update. Every later call would fail or, worse, misbehave. So
// every exported function, constructor, method and getter is wrapped:
//
// - a call that traps throws an Error with code `instance_trapped` that says what is lost;
// - the next call (outside any call still running) replaces the instance with a fresh one
//   from the same compiled module: the module's page store (getMore ids), registered tools
//   and every object made by the old instance (StreamPacker, Checker, Sha256, HopStream,
//   CheckReport) are gone; such an object then throws instead of touching the new memory.
//
// Run by scripts/build on each generated glue file (ES module or CommonJS), in place:
//   node scripts/recoverable-glue.mjs FILE...
// It fails loudly when the glue does not have the shape it expects (a new wasm-bindgen).
import { readFileSync, writeFileSync } from 'node:fs';

function die(file, what) {
  console.error(`recoverable-glue: ${file}: ${what} (has wasm-bindgen's output changed?)`);
  process.exit(1);
}

for (const file of process.argv.slice(2)) {
  let src = readFileSync(file, 'utf8');
  if (src.includes('__ts_call')) continue; // already patched
  const esm = /^export \{ initSync/m.test(src);

  // Objects are tracked, so that a reset can detach them from the old instance.
  const register = /(\w+Finalization)\.register\((\w+), \2\.__wbg_ptr, \2\);/g;
  if (!register.test(src)) die(file, 'no FinalizationRegistry.register calls');
  src = src.replace(register, '__ts_track($2, $1);');

  const caches = [...src.matchAll(/^let (cached\w*Memory0) = null;$/gm)].map((m) => m[1]);
  if (caches.length === 0) die(file, 'no cached memory views');
  const decoded = /^let numBytesDecoded = 0;$/m.test(src);

  let names;
  let instantiate;
  if (esm) {
    names = [...src.matchAll(/^export (function|class) (\w+)/gm)].map((m) => [m[1], m[2]]);
    if (!/^let wasmModule, wasmInstance, wasm;$/m.test(src)) die(file, 'no module-level wasm');
    instantiate = `wasm = undefined;\n    initSync({ module: wasmModule });`;
  } else {
    names = [...src.matchAll(/^exports\.(\w+) = (\w+);$/gm)]
      .filter((m) => m[1] === m[2])
      .map((m) => [new RegExp(`^class ${m[1]} `, 'm').test(src) ? 'class' : 'function', m[1]]);
    if (!/^let wasmInstance = new WebAssembly\.Instance\(wasmModule, __wbg_get_imports\(\)\);$/m.test(src)) {
      die(file, 'no CommonJS instantiation');
    }
    src = src.replace(/^let wasm = wasmInstance\.exports;$/m, 'let wasm = wasmInstance.exports;');
    instantiate = `wasmInstance = new WebAssembly.Instance(wasmModule, __wbg_get_imports());\n    wasm = wasmInstance.exports;\n    wasm.__wbindgen_start();`;
  }
  if (names.length === 0) die(file, 'no exports');

  const assign = names
    .map(([kind, n]) =>
      esm
        ? `${n} = __ts_${kind === 'class' ? 'wrapClass' : 'wrapFn'}(${n});`
        : `exports.${n} = __ts_${kind === 'class' ? 'wrapClass' : 'wrapFn'}(${n});`,
    )
    .join('\n');

  src += `
// --- Added by scripts/recoverable-glue.mjs: replace a trapped instance (see that file). ---
const __ts_live = new Set();
const __ts_gone = typeof FinalizationRegistry === 'undefined' ? null : new FinalizationRegistry((ref) => __ts_live.delete(ref));
function __ts_track(obj, registry) {
    registry.register(obj, obj.__wbg_ptr, obj);
    if (typeof WeakRef === 'undefined') return;
    const ref = new WeakRef(obj);
    __ts_live.add({ ref, registry });
    if (__ts_gone) __ts_gone.register(obj, ref);
}
let __ts_dead = null;
let __ts_depth = 0;
const __ts_LOST = 'the module\\'s page store (getMore ids), the tools registered with registerTool, and every StreamPacker, Checker, HopStream, Sha256 and CheckReport made before';
function __ts_revive() {
    for (const { ref, registry } of __ts_live) {
        const obj = ref.deref();
        if (obj) {
            registry.unregister(obj);
            obj.__wbg_ptr = 0;
            obj.__ts_stale = true;
        }
    }
    __ts_live.clear();
    ${caches.map((c) => `${c} = null;`).join(' ')}
    ${decoded ? 'numBytesDecoded = 0;' : ''}
    ${instantiate}
    __ts_dead = null;
}
function __ts_call(fn) {
    if (__ts_dead !== null) {
        if (__ts_depth > 0) throw __ts_error(__ts_dead, 'a call made while the trapped call was still running');
        __ts_revive();
    }
    __ts_depth++;
    try {
        return fn();
    } catch (e) {
        if (e instanceof WebAssembly.RuntimeError) {
            __ts_dead = e;
            throw __ts_error(e, 'the call');
        }
        throw e;
    } finally {
        __ts_depth--;
    }
}
function __ts_error(trap, what) {
    const err = new Error(\`toolslice: the WebAssembly instance trapped during \${what} (\${trap.message}); the next call replaces it with a fresh one, losing \${__ts_LOST}\`);
    err.code = 'instance_trapped';
    err.cause = trap;
    return err;
}
function __ts_wrapFn(fn) {
    const wrapped = function (...args) {
        if (this != null && this.__ts_stale === true) {
            const err = new Error(\`toolslice: this \${this.constructor.name} was made by a WebAssembly instance that trapped and was replaced; make a new one\`);
            err.code = 'instance_reset';
            throw err;
        }
        return __ts_call(() => fn.apply(this, args));
    };
    Object.defineProperty(wrapped, 'name', { value: fn.name });
    return wrapped;
}
function __ts_wrapClass(cls) {
    for (const target of [cls.prototype, cls]) {
        for (const key of Reflect.ownKeys(target)) {
            if (key === 'constructor' || key === 'prototype' || key === '__wrap' || key === '__destroy_into_raw') continue;
            const d = Object.getOwnPropertyDescriptor(target, key);
            if (!d || !d.configurable) continue;
            if (typeof d.value === 'function') d.value = __ts_wrapFn(d.value);
            if (d.get) d.get = __ts_wrapFn(d.get);
            if (d.set) d.set = __ts_wrapFn(d.set);
            Object.defineProperty(target, key, d);
        }
    }
    return new Proxy(cls, {
        construct(target, args, newTarget) {
            return __ts_call(() => Reflect.construct(target, args, newTarget));
        },
    });
}
${assign}
`;
  writeFileSync(file, src);
  console.error(`recoverable-glue: ${file}: ${names.length} exports guarded`);
}
