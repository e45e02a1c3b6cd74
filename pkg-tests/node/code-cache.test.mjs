// `toolslice check` keeps V8's optimized code for its module between runs (cli/code-cache.mjs):
// a run with the cache reports what a run without it reports, a cache file that is corrupt,
// short, foreign or writable by others is never given to V8, and `off` writes nothing.
import test from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { createHash, randomBytes } from 'node:crypto';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const bin = fileURLToPath(new URL('../node_modules/.bin/toolslice', import.meta.url));
const pkg = fileURLToPath(new URL('../node_modules/toolslice/', import.meta.url));
const fixture = (name) => fileURLToPath(new URL(`../fixtures/${name}`, import.meta.url));
const onMeasuredV8 = Number.parseInt(process.versions.v8, 10) === 11;

// The environment with the cache in `dir` (or `off`), and nothing else of the caller's.
const envWith = (cache, extra = {}) => {
  const env = { ...process.env, ...extra };
  delete env.TOOLSLICE_CODE_CACHE;
  if (cache !== undefined) env.TOOLSLICE_CODE_CACHE = cache;
  return env;
};
const check = (args, cache, extra) =>
  spawnSync(bin, ['check', ...args], { encoding: 'utf8', env: envWith(cache, extra), maxBuffer: 1 << 28 });

// Whether a fresh process takes the check module from the cache in `dir`, as `check` loads it
// for a file read in one thread (`oneThread`, with its compiler flags) or in several.
const loadsCached = (dir, oneThread = true) => {
  const src = `
    import { tierForOneCheck } from ${JSON.stringify(join(pkg, 'cli/tiering.mjs'))};
    import { compiledCheckModule } from ${JSON.stringify(join(pkg, 'cli/code-cache.mjs'))};
    if (${oneThread}) tierForOneCheck();
    process.stdout.write(String(compiledCheckModule().cached));`;
  const r = spawnSync(process.execPath, ['--input-type=module', '-e', src], { encoding: 'utf8', env: envWith(dir) });
  assert.equal(r.status, 0, r.stderr);
  return r.stdout === 'true';
};

const cacheFiles = (dir) => readdirSync(dir).filter((n) => /^check-[0-9a-f]{32}\.bin$/.test(n));

// Enough lines that the check optimizes more than the one function a save optimizes itself.
const trace = () => {
  const dir = mkdtempSync(join(tmpdir(), 'toolslice-cc-'));
  const path = join(dir, 'trace.jsonl');
  writeFileSync(path, readFileSync(fixture('clipped.jsonl'), 'utf8').repeat(3000));
  return path;
};

test('a check writes its code to the cache, and the next one reads it and reports the same', { skip: !onMeasuredV8 && 'the cache is used on V8 11 only' }, () => {
  const dir = join(mkdtempSync(join(tmpdir(), 'toolslice-cc-')), 'cache');
  const input = trace();
  const plain = check(['--json', input], 'off');
  assert.equal(plain.status, 1, plain.stderr);

  assert.equal(loadsCached(dir), false);
  const first = check(['--json', input], dir);
  assert.equal(first.stderr, '');
  assert.equal(first.stdout, plain.stdout);
  const [file] = cacheFiles(dir);
  assert.ok(file, 'a cache file was written');
  // This user's alone: a private directory and file.
  assert.equal(statSync(dir).mode & 0o777, 0o700);
  assert.equal(statSync(join(dir, file)).mode & 0o777, 0o600);
  assert.equal(loadsCached(dir), true);

  const second = check(['--json', input], dir);
  assert.equal(second.stdout, plain.stdout);
  assert.equal(second.status, 1);
  assert.deepEqual(cacheFiles(dir), [file]);
  // Several threads share the cached module: the same report.
  const threads = check(['--json', '--threads', '2', input], dir);
  assert.equal(threads.stdout, plain.stdout, threads.stderr);
});

test('a run of less than 1 MiB with the cache\'s code leaves the cache alone; a larger one saves what it optimized', { skip: !onMeasuredV8 && 'the cache is used on V8 11 only' }, () => {
  // A small check first: its cache holds little optimized code. Then, in one process with
  // that cache, a larger check optimizes more; asked to save after reading 1 MiB less a
  // byte it writes nothing, after reading 1 MiB it writes, and the next process loads it.
  const dir = join(mkdtempSync(join(tmpdir(), 'toolslice-cc-')), 'cache');
  assert.equal(check([fixture('clipped.jsonl')], dir).stderr, '');
  const [file] = cacheFiles(dir);
  const before = readFileSync(join(dir, file));
  const input = trace();
  const src = `
    import { readFileSync } from 'node:fs';
    import { tierForOneCheck } from ${JSON.stringify(join(pkg, 'cli/tiering.mjs'))};
    const cache = await import(${JSON.stringify(join(pkg, 'cli/code-cache.mjs'))});
    tierForOneCheck();
    const ts = cache.initCheckGlue(await import(${JSON.stringify(join(pkg, 'check/toolslice.js'))}));
    if (!cache.compiledCheckModule().cached) throw new Error('the small check left no cache');
    const data = readFileSync(${JSON.stringify(input)});
    // V8 optimizes on other threads, when it gets to it: on a busy machine three passes
    // could end before it had, and there was nothing more to save. So: passes until there
    // is (the small save, asked each time, never writes), at most twenty rounds.
    let small = false;
    let large = false;
    for (let round = 0; round < 20 && !large; round++) {
      for (let pass = 0; pass < 3; pass++) {
        const checker = new ts.Checker({ flaggedOnly: true });
        checker.push(data);
        checker.finish().free();
      }
      await new Promise((resolve) => setTimeout(resolve, 20 * round));
      small ||= cache.saveCompiledCheckModule((1 << 20) - 1);
      large = cache.saveCompiledCheckModule(1 << 20);
    }
    process.stdout.write(JSON.stringify({ small, large }));`;
  const r = spawnSync(process.execPath, ['--input-type=module', '-e', src], { encoding: 'utf8', env: envWith(dir) });
  assert.equal(r.status, 0, r.stderr);
  assert.deepEqual(JSON.parse(r.stdout), { small: false, large: true });
  const after = readFileSync(join(dir, file));
  assert.ok(after.length > before.length, `the larger run's code is kept (${before.length} -> ${after.length} bytes)`);
  assert.equal(loadsCached(dir), true);
});

test('a check in several threads writes the cache a later run reads', { skip: !onMeasuredV8 && 'the cache is used on V8 11 only' }, () => {
  // The workers run the module this thread compiled, and optimize some of its functions
  // themselves: the save after them writes code a later run takes, and the same report.
  const dir = join(mkdtempSync(join(tmpdir(), 'toolslice-cc-')), 'cache');
  const lines = readFileSync(new URL('../../crate/core/tests/fixtures/formats/otlp-collector-events.jsonl', import.meta.url), 'utf8');
  const input = join(mkdtempSync(join(tmpdir(), 'toolslice-cc-')), 'otlp.jsonl');
  writeFileSync(input, lines.repeat(Math.ceil(6e6 / lines.length)));
  const plain = check(['--threads', '1', '--flagged-only', input], 'off');
  const threads = check(['--threads', '2', '--flagged-only', input], dir);
  assert.equal(threads.stderr, '');
  assert.equal(threads.stdout, plain.stdout);
  assert.match(threads.stdout, /# read as: otlp \(lines/);
  assert.equal(cacheFiles(dir).length, 1, 'a cache file was written');
  assert.equal(loadsCached(dir, false), true);
  assert.equal(check(['--threads', '2', '--flagged-only', input], dir).stdout, plain.stdout);
});

test('below 64 MB a trace file is read in one thread, whether the cache holds the checker\'s code or not', { skip: (!onMeasuredV8 && 'the cache is used on V8 11 only') || (availableParallelism() < 2 && 'one CPU: one thread') }, () => {
  // Two threads once gained on 37-50 MB with the module's code from the cache; one thread
  // now reads these formats about twice as fast, and they lose there (cli/check.mjs).
  const dir = join(mkdtempSync(join(tmpdir(), 'toolslice-cc-')), 'cache');
  const lines = readFileSync(new URL('../../crate/core/tests/fixtures/formats/otlp-collector-events.jsonl', import.meta.url), 'utf8');
  const input = join(mkdtempSync(join(tmpdir(), 'toolslice-cc-')), 'otlp-34mb.jsonl');
  writeFileSync(input, lines.repeat(Math.ceil(34e6 / lines.length)));
  const prepared = (cache) => {
    const src = `
      import { prepare } from ${JSON.stringify(join(pkg, 'cli/check.mjs'))};
      const parts = await prepare(['--flagged-only', ${JSON.stringify(input)}]);
      parts?.hub.end();
      process.stdout.write(parts ? 'threads' : 'one thread');`;
    const r = spawnSync(process.execPath, ['--input-type=module', '-e', src], { encoding: 'utf8', env: envWith(cache) });
    assert.equal(r.status, 0, r.stderr);
    return r.stdout;
  };
  assert.equal(prepared(dir), 'one thread');
  assert.equal(prepared('off'), 'one thread');
  // A check (of any file) leaves the module's code in the cache.
  assert.equal(check(['--json', trace()], dir).stderr, '');
  assert.equal(cacheFiles(dir).length, 1);
  assert.equal(prepared(dir), 'one thread');
  assert.equal(prepared('off'), 'one thread');
});

test('a corrupt, short, foreign or shared cache file is never given to V8, and is replaced', { skip: !onMeasuredV8 && 'the cache is used on V8 11 only' }, () => {
  const dir = join(mkdtempSync(join(tmpdir(), 'toolslice-cc-')), 'cache');
  const input = fixture('clipped.jsonl');
  const plain = check([input], 'off');
  assert.equal(check([input], dir).stdout, plain.stdout);
  const path = join(dir, cacheFiles(dir)[0]);
  const good = readFileSync(path);
  const magic = good.subarray(0, good.indexOf(10) + 1);

  const spoil = {
    // A flipped bit deep in V8's code: the file's digest no longer matches.
    'a flipped bit': () => {
      const bad = Buffer.from(good);
      bad[bad.length - 100] ^= 1;
      return bad;
    },
    'a torn write': () => good.subarray(0, good.length >> 1),
    'an empty file': () => Buffer.alloc(0),
    // Intact by its digest, but not V8's: V8's own header check declines it.
    'bytes V8 did not write': () => {
      const payload = randomBytes(4096);
      return Buffer.concat([magic, createHash('sha256').update(payload).digest(), payload]);
    },
  };
  for (const [what, bytes] of Object.entries(spoil)) {
    writeFileSync(path, bytes());
    assert.equal(loadsCached(dir), false, what);
    const r = check([input], dir);
    assert.equal(r.stdout, plain.stdout, what);
    assert.equal(r.stderr, '', what);
    assert.equal(loadsCached(dir), true, `${what}: rewritten by the run`);
  }

  // Writable by the group: ignored (and left alone), as is the file in a shared directory.
  chmodSync(path, 0o660);
  assert.equal(loadsCached(dir), false, 'a group-writable file');
  chmodSync(path, 0o600);
  chmodSync(dir, 0o777);
  assert.equal(loadsCached(dir), false, 'a world-writable directory');
  chmodSync(dir, 0o700);
  assert.equal(loadsCached(dir), true);
});

test('nothing is written into a cache directory others can write', { skip: !onMeasuredV8 && 'the cache is used on V8 11 only' }, () => {
  const dir = join(mkdtempSync(join(tmpdir(), 'toolslice-cc-')), 'shared');
  mkdirSync(dir);
  chmodSync(dir, 0o777);
  const input = fixture('clipped.jsonl');
  const r = check([input], dir);
  assert.equal(r.stdout, check([input], 'off').stdout);
  assert.deepEqual(readdirSync(dir), []);
});

test('TOOLSLICE_CODE_CACHE=off writes nothing; the default is under XDG_CACHE_HOME', { skip: !onMeasuredV8 && 'the cache is used on V8 11 only' }, () => {
  const home = mkdtempSync(join(tmpdir(), 'toolslice-cc-'));
  const input = fixture('good.jsonl');
  assert.equal(check([input], 'off', { XDG_CACHE_HOME: home }).status, 0);
  assert.deepEqual(readdirSync(home), []);
  assert.equal(check([input], undefined, { XDG_CACHE_HOME: home }).status, 0);
  assert.equal(cacheFiles(join(home, 'toolslice')).length, 1);
});

test('the cache keeps the newest few files and clears what a killed run left', { skip: !onMeasuredV8 && 'the cache is used on V8 11 only' }, () => {
  const dir = join(mkdtempSync(join(tmpdir(), 'toolslice-cc-')), 'cache');
  mkdirSync(dir, { mode: 0o700 });
  const old = (name, daysAgo) => {
    const path = join(dir, name);
    writeFileSync(path, 'x', { mode: 0o600 });
    const t = Date.now() / 1000 - daysAgo * 86400;
    utimesSync(path, t, t);
  };
  for (let i = 0; i < 6; i++) old(`check-${String(i).repeat(32)}.bin`, i + 1);
  old(`check-${'a'.repeat(32)}.bin.123.tmp`, 1);
  old('unrelated.txt', 30);
  assert.equal(check([fixture('good.jsonl')], dir).status, 0);
  const left = readdirSync(dir).sort();
  // The new file and the three newest old ones; the stale temporary file is gone; what the
  // cache did not write is left alone.
  assert.equal(left.length, 5, left.join(' '));
  for (const kept of ['0', '1', '2']) assert.ok(left.includes(`check-${kept.repeat(32)}.bin`), left.join(' '));
  assert.ok(left.includes('unrelated.txt'));
  assert.ok(!left.some((n) => n.endsWith('.tmp')));
});
