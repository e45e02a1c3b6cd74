#!/usr/bin/env node
// Complexity check of every path that scans a tool result (issue 13): the redactor, pack
// (redact, shape, truncate), the streaming packer and the truncator, on hostile inputs
// (one pattern repeated on one line: `Cookie: Cookie: ...`, nested secret keys, `[0,0,...`
// ...). Each input is timed at n, 2n and 4n bytes in one run; a path whose time grows by
// more than 2.5x per doubling is quadratic (or worse) somewhere, and the check fails
// loudly, naming it. A linear path grows by about 2x.
//
// Timing on a shared machine is noisy, so each size takes the fastest of several runs (in
// CPU time, after a forced collection when node runs with --expose-gc), and a pattern that
// fails is measured again at shifted sizes (up to 3 rounds) before it counts as failed; a
// real quadratic fails every round (at these sizes it is 10-100x, not 2.5x). The verdict is
// on the two doublings together (t(4n) / t(n) within 2.5 * 2.5), so that one noisy size
// does not decide; each doubling is printed.
//
// Runs against the built package: ./scripts/build first. Bounded to well under a minute.
//   node scripts/stress-pack.mjs [--base BYTES] [--only SUBSTRING]
import { fileURLToPath } from 'node:url';
import path from 'node:path';

const root = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
const ts = await import(path.join(root, 'pkg', 'node.mjs'));

const args = process.argv.slice(2);
const opt = (name, dflt) => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : dflt;
};
const BASE = Number(opt('--base', 256 * 1024));
const ONLY = opt('--only', '');
const LIMIT = 2.5;
const FLOOR_MS = 6; // below this, timer noise dominates: the base size is doubled

// One pattern repeated (on one line unless it holds a newline) to `bytes` bytes.
const rep = (p) => (bytes) => p.repeat(Math.ceil(bytes / p.length)).slice(0, bytes);
const nested = (open, close) => (bytes) => {
  const d = Math.floor(bytes / (open.length + close.length));
  return open.repeat(d) + close.repeat(d);
};

const PATTERNS = {
  'Cookie: x N': rep('Cookie: '),
  'Authorization: x N': rep('Authorization: '),
  'Set-Cookie: a=b; x N': rep('Set-Cookie: a=b; '),
  'password= x N': rep('password='),
  'PGPASSWORD= x N': rep('PGPASSWORD='),
  ':password => x N': rep(':password => '),
  '"password": { x N': rep('"password": {'),
  '"password": [ x N': rep('"password": ['),
  'password: [ x N': rep('password: ['),
  '\\"password\\":\\" x N': rep('\\"password\\":\\"'),
  '--password x N': rep('--password '),
  'mysql -p x N': rep('mysql -p'),
  'data:;base64, x N': rep('data:;base64,'),
  'BEGIN PRIVATE KEY x N': rep('-----BEGIN RSA PRIVATE KEY-----\n'),
  'Bearer x N': rep('Bearer '),
  'https://a:b@ x N': rep('https://a:b@'),
  'eyJ x N': rep('eyJhbGciOi.'),
  'T3BlbkFJ x N': rep('T3BlbkFJ'),
  'ghp_ x N': rep('ghp_'),
  'a@b. x N': rep('a@b.'),
  '4111 x N': rep('4111 '),
  'backslashes': rep('\\'),
  '%3D x N': rep('token%3D'),
  'long key = x N': rep('a'.repeat(300) + '_password='),
  'password=[REDACTED x N': rep('password=[REDACTED'),
  'password=[REDACTED:x]a x N': rep('password=[REDACTED:x]a'),
  'a://user:[REDACTED:x]@ x N': rep('a://user:[REDACTED:x]@'),
  '[0,0,...': (bytes) => '[' + '0,'.repeat(Math.floor(bytes / 2) - 1) + '0]',
  'nested {"a": ...': nested('{"a":', '}'),
  'nested [[[...': nested('[', ']'),
  'one long line': rep('a'),
  'error lines': rep('error: failed at step\n'),
  'tabs and spaces': rep(' \t'),
};

const enc = new TextEncoder();
// Each path, and the patterns it is checked on (`null`: all of them). The redactor gets
// every pattern; the packers and the truncator the ones that reach their own code (the
// cut, the header, the stream's rounds) beside a few that go through redaction first.
const PATHS = {
  redact: [(t) => ts.redact(t), null],
  pack: [
    (t) => ts.pack({ tool: 'bash', callId: 'c', text: t, exitCode: 1 }, { limit: 4096, returnStored: true }),
    ['Cookie: x N', 'password= x N', '"password": { x N', 'mysql -p x N', 'BEGIN PRIVATE KEY x N', '[0,0,...', 'nested {"a": ...', 'nested [[[...', 'one long line', 'error lines', 'tabs and spaces', 'backslashes'],
  ],
  stream: [
    (t) => {
      const s = new ts.StreamPacker('bash', 'c', 'make', { limit: 4096, returnStored: true });
      const b = enc.encode(t);
      for (let i = 0; i < b.length; i += 16384) s.push(b.subarray(i, i + 16384));
      return s.finish(1);
    },
    ['Cookie: x N', 'Authorization: x N', 'password= x N', '"password": [ x N', 'BEGIN PRIVATE KEY x N', 'eyJ x N', 'one long line', 'error lines', '[0,0,...', 'backslashes'],
  ],
  truncate: [
    (t) => ts.truncate(t, { budget: { bytes: 4096 } }),
    ['[0,0,...', 'nested {"a": ...', 'nested [[[...', 'one long line', 'error lines', 'tabs and spaces', 'Cookie: x N', 'backslashes'],
  ],
};

// CPU time of this process, not wall time: on a shared machine a path waiting for a core is
// not a slower path.
function once(fn, text) {
  // A collection left over from the previous run (the last one's strings are large) would be
  // charged to this one: collect first, outside the timed span, when node allows it.
  if (globalThis.gc) globalThis.gc();
  const t0 = process.cpuUsage();
  fn(text);
  const d = process.cpuUsage(t0);
  return (d.user + d.system) / 1000;
}

// The fastest of ROUNDS runs at n, 2n and 4n, interleaved so that a slow spell of the
// machine slows every size alike.
const ROUNDS = 3;
function measure(fn, make, base) {
  let n = base;
  for (;;) {
    const texts = [make(n), make(2 * n), make(4 * n)];
    fn(texts[2]); // warm up: JIT, and the instance's memory grown to the largest size
    const probe = Math.min(once(fn, texts[0]), once(fn, texts[0]), once(fn, texts[0]));
    if (probe < FLOOR_MS && n < 1 << 22) {
      n *= 2;
      continue;
    }
    const best = [Infinity, Infinity, Infinity];
    for (let r = 0; r < ROUNDS; r++) {
      for (let k = 0; k < 3; k++) best[k] = Math.min(best[k], once(fn, texts[k]));
    }
    const [t1, t2, t4] = best;
    return { n, t1, t2, t4, r1: t2 / t1, r2: t4 / t2, r: t4 / t1 };
  }
}

const started = Date.now();
const failures = [];
let checked = 0;
for (const [pname, [fn, only]] of Object.entries(PATHS)) {
  for (const [name, make] of Object.entries(PATTERNS)) {
    if (only && !only.includes(name)) continue;
    const label = `${pname}: ${name}`;
    if (ONLY && !label.includes(ONLY)) continue;
    let m;
    let ok = false;
    for (let round = 0; round < 3 && !ok; round++) {
      // A retry starts from a shifted size (1.25x, 1.5x): some single sizes are slow for
      // reasons that are not growth (at exactly 1 MiB the redactor's allocations fault in
      // fresh pages on every call, about 1.5x the time of 1000 KiB or 1100 KiB), and a
      // shifted triple steps over them, while a quadratic path fails at every size.
      m = measure(fn, make, Math.round(BASE * (1 + round / 4)));
      // Over both doublings together: a noisy middle size does not decide alone.
      ok = m.r <= LIMIT * LIMIT;
    }
    checked++;
    const line = `${label.padEnd(44)} n=${String(m.n).padStart(8)}  ${m.t1.toFixed(1)} / ${m.t2.toFixed(1)} / ${m.t4.toFixed(1)} ms  x${m.r1.toFixed(2)} x${m.r2.toFixed(2)}`;
    if (ok) {
      console.log(`ok    ${line}`);
    } else {
      console.log(`FAIL  ${line}`);
      failures.push(line);
    }
  }
}
const secs = ((Date.now() - started) / 1000).toFixed(1);
if (failures.length) {
  console.error(`\nstress-pack: ${failures.length} of ${checked} paths grow faster than ${LIMIT}x per doubling (superlinear):`);
  for (const f of failures) console.error(`  ${f}`);
  process.exit(1);
}
console.log(`\nstress-pack: ${checked} paths linear (each doubling within ${LIMIT}x), ${secs} s`);
