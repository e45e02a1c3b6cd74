// V8's optimized code for the check module, kept on disk between runs of `toolslice check`.
//
// A check in a fresh process runs the module's functions in V8's baseline tier until its
// optimizing compiler (TurboFan) has compiled the hot ones on another thread: on 50 MB of
// OTLP that is 142 functions, whose compile times add up to about 0.5 s
// (--trace-wasm-compilation-times), every run, on a machine whose second CPU the check wants
// too, and the first megabytes are read at baseline speed (see "First pass in a fresh
// process" in BENCHMARKS.md). With this cache the run's CPU time (user + sys) is 0.46 s
// instead of 0.77 (medians of 7 runs each, 2026-12-05). V8 can write a compiled module out and
// read it back with its optimized functions (Chrome's code cache for wasm does); Node 20 has
// no API for that (Node 22's `module.enableCompileCache()` is for JavaScript), so this reaches
// V8's own serializer through its intrinsics, `%SerializeWasmModule` and
// `%DeserializeWasmModule`, behind `--allow-natives-syntax`. Like ./tiering.mjs it is the
// command line's alone (a process flag: a library must not change its host's), and only on
// the V8 it was measured on (Node 20's 11.x): the intrinsics are V8's testing surface.
//
// The file is native code that V8 runs, so:
// - it is named by the SHA-256 of the module's bytes, V8's and Node's versions, the
//   architecture and the compiler flags the check set (./tiering.mjs: a check read in one
//   thread sets some, one read by several none), so V8 is only ever given code compiled from
//   these very bytes by this very V8;
// - its payload carries its own SHA-256, checked before V8 sees a byte of it: a torn, short
//   or corrupt file is never deserialized (V8 checks only its header: version, flags, CPU);
// - a file or directory another user could write is ignored, as ssh ignores such keys, and
//   nothing is written into such a directory;
// - a file is written whole under another name and renamed over, so concurrent runs never
//   read each other's half-written file.
// Any failure (no cache directory, a read-only disk, V8 declining the code) compiles the
// module as usual: the cache changes how soon a check is fast, never what it reports.
//
// TOOLSLICE_CODE_CACHE: the directory (default $XDG_CACHE_HOME/toolslice, else
// ~/.cache/toolslice), or `off` for none.
import { createHash } from 'node:crypto';
import {
  closeSync, fstatSync, mkdirSync, openSync, readdirSync, readFileSync, readSync, renameSync, statSync, unlinkSync,
  writeFileSync,
} from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { setFlagsFromString } from 'node:v8';
import { tieredFlags } from './tiering.mjs';

const MEASURED_ON_V8 = 11;
// The file: this line, the payload's SHA-256 (32 bytes), the payload (V8's serialization).
const MAGIC = Buffer.from('toolslice wasm code cache 1\n');
const DIGEST = 32;
// Cache files kept in the directory (a file per module build, V8 and flags): the newest.
const KEEP_FILES = 4;
// Larger than any module's code (about 0.7 MB for the check module): not this cache's file.
const MAX_FILE_BYTES = 64 << 20;
// A later run rewrites the file only when its code is larger by more than 1/GROWTH: each run
// optimizes a few more functions than the cache held (670 -> 677 KB over three checks of 50 MB
// of OTLP), and writing the whole file again for them cost each run 3-4 ms. Those few are
// compiled again in the background by the runs that need them.
const GROWTH = 32;
// Whether a run optimized more is only known by serializing the module (about 2 ms, every
// run: 2.0-2.2 ms of a check of the 8.5 KB OTLP fixture, whose whole run is some 90 ms). A
// run that read less than this, with the code from the cache, is not looked at: V8 optimizes
// a function once it has run for a while, and such a run is over before more than a few of
// them have (a run without the cache's code still saves, so a first check of any size leaves
// its code for the next).
const SAVE_MIN_BYTES = 1 << 20;

/** The cache directory `env` names, or null when the cache is off. */
function codeCacheDir(env) {
  const asked = env.TOOLSLICE_CODE_CACHE;
  if (asked === 'off' || asked === '0') return null;
  if (asked) return asked;
  try {
    return join(env.XDG_CACHE_HOME || join(homedir(), '.cache'), 'toolslice');
  } catch {
    return null;
  }
}

let loaded = null;

/**
 * The check module compiled, from the cache when it holds this build's code: `{ module,
 * cached }` (`cached`: whether V8 took the cached code). Compiled once per process: the
 * workers of a check get this module, and with it the same code.
 */
export function compiledCheckModule() {
  if (loaded) return loaded;
  const bytes = moduleBytes();
  const dir = cacheDirHere();
  let file = null;
  if (dir) {
    try {
      file = join(dir, `check-${keyOf(tieredFlags())}.bin`);
    } catch {
      file = null;
    }
  }
  let module = null;
  let cachedBytes = 0;
  const payload = file ? readVerified(dir, file) : null;
  if (payload) {
    try {
      // V8 wants the payload as an ArrayBuffer of its own, and the wire bytes it came from;
      // it answers undefined when its header does not match this process.
      const copy = payload.buffer.slice(payload.byteOffset, payload.byteOffset + payload.length);
      const got = natives('b, w', 'return %DeserializeWasmModule(b, w)', copy, bytes);
      if (got instanceof WebAssembly.Module) {
        module = got;
        cachedBytes = payload.length;
      }
    } catch {
      module = null;
    }
  }
  loaded = { module: module ?? new WebAssembly.Module(bytes), cached: module !== null, dir, file, cachedBytes, exports: null };
  return loaded;
}

// The check module's bytes, read once per process.
let bytesRead = null;
const moduleBytes = () => (bytesRead ??= readFileSync(new URL('../check/toolslice_bg.wasm', import.meta.url)));

// The cache directory, on the V8 the cache was measured on; else null.
const cacheDirHere = () => (Number.parseInt(process.versions.v8, 10) === MEASURED_ON_V8 ? codeCacheDir(process.env) : null);

/** Instantiates the check package's glue (../check/toolslice.js) with that module. */
export function initCheckGlue(glue) {
  const c = compiledCheckModule();
  c.exports = glue.initSync({ module: c.module });
  return glue;
}

/**
 * Writes the module's optimized code to the cache when this run optimized more of it than
 * the cache held, by more than 1/GROWTH of it: true when it wrote. `bytesChecked`: the input
 * the run read; below SAVE_MIN_BYTES with the code taken from the cache, nothing is looked
 * at. Never throws.
 */
export function saveCompiledCheckModule(bytesChecked = Infinity) {
  const c = loaded;
  const probe = c?.exports?.checker_bytesRead;
  if (!c?.file || typeof probe !== 'function') return false;
  if (c.cached && bytesChecked < SAVE_MIN_BYTES) return false;
  try {
    // One function optimized for sure (a getter, a fraction of a millisecond): V8's
    // serializer aborts the process when no function is.
    const serialized = natives('f, m', '%WasmTierUpFunction(f); return %SerializeWasmModule(m)', probe, c.module);
    const payload = new Uint8Array(serialized);
    if (payload.length <= c.cachedBytes + Math.floor(c.cachedBytes / GROWTH)) return false;
    mkdirSync(c.dir, { recursive: true, mode: 0o700 });
    // Never into a directory others can write (a file is only read from a private one, and
    // there another user could have put a link where the temporary file goes); the
    // temporary file is created, never opened if something is already there.
    if (!privateTo(statSync(c.dir))) return false;
    const tmp = `${c.file}.${process.pid}.tmp`;
    writeFileSync(tmp, Buffer.concat([MAGIC, createHash('sha256').update(payload).digest(), payload]), { mode: 0o600, flag: 'wx' });
    renameSync(tmp, c.file);
    c.cachedBytes = payload.length;
    prune(c.dir, c.file);
    return true;
  } catch {
    return false;
  }
}

// Runs `body` (V8's intrinsics, `%Name(...)`) as a function of `params` on `args`, with
// --allow-natives-syntax set only while it is compiled and runs. The flag goes back to its
// default at once: V8 hashes its flags, and with the hash off its default a worker thread's
// Node environment compiles Node's own JavaScript from source, about twice as slow to start
// (see ./tiering.mjs). V8 marks the code it serializes with the flags of that moment and
// takes it back only under the same, which is why both calls set exactly this flag.
function natives(params, body, ...args) {
  setFlagsFromString('--allow-natives-syntax');
  try {
    return new Function(params, body)(...args);
  } finally {
    setFlagsFromString('--no-allow-natives-syntax');
  }
}

// What the code depends on: the module's bytes, V8 and the Node built around it, the CPU
// architecture and the compiler flags this check set (a file per set of flags: a check in one
// thread and one in several keep a file each). V8 itself declines code compiled under other flags
// (its header holds a hash of them, its version and the CPU's features); a run under other
// Node or V8 options then compiles, and its save replaces the file.
let bytesHash = null;
function keyOf(flags) {
  // The module's bytes hashed once per process (two or three keys are asked for).
  bytesHash ??= createHash('sha256').update(moduleBytes());
  const h = bytesHash.copy();
  for (const part of [process.versions.v8, process.version, process.arch, flags]) h.update('\0').update(part);
  return h.digest('hex').slice(0, 32);
}

// The payload of `file` when it is there, this user's alone, and intact; else null.
function readVerified(dir, file) {
  let fd;
  try {
    if (!privateTo(statSync(dir))) return null;
    fd = openSync(file, 'r');
  } catch {
    return null;
  }
  try {
    const stat = fstatSync(fd);
    if (!privateTo(stat) || stat.size < MAGIC.length + DIGEST || stat.size > MAX_FILE_BYTES) return null;
    const data = Buffer.allocUnsafe(stat.size);
    let got = 0;
    while (got < data.length) {
      const n = readSync(fd, data, got, data.length - got, got);
      if (n === 0) return null;
      got += n;
    }
    if (!data.subarray(0, MAGIC.length).equals(MAGIC)) return null;
    const digest = data.subarray(MAGIC.length, MAGIC.length + DIGEST);
    const payload = data.subarray(MAGIC.length + DIGEST);
    return createHash('sha256').update(payload).digest().equals(digest) ? payload : null;
  } catch {
    return null;
  } finally {
    closeSync(fd);
  }
}

// Owned by this user and writable by no one else (where the platform has users).
function privateTo(stat) {
  if (typeof process.getuid !== 'function') return true;
  return stat.uid === process.getuid() && (stat.mode & 0o022) === 0;
}

// The newest KEEP_FILES cache files stay; older ones, and temporary files a killed run left
// more than an hour ago, go.
function prune(dir, kept) {
  const now = Date.now();
  const files = [];
  for (const name of readdirSync(dir)) {
    if (!name.startsWith('check-')) continue;
    const path = join(dir, name);
    try {
      const { mtimeMs } = statSync(path);
      if (name.endsWith('.tmp')) {
        if (now - mtimeMs > 3600e3) unlinkSync(path);
      } else if (name.endsWith('.bin') && path !== kept) files.push({ path, mtimeMs });
    } catch {
      // Gone already (another run pruned it).
    }
  }
  files.sort((a, b) => b.mtimeMs - a.mtimeMs);
  for (const { path } of files.slice(KEEP_FILES - 1)) {
    try {
      unlinkSync(path);
    } catch {
      // As above.
    }
  }
}
