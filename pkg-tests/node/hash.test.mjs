// The one-shot SHA-256 calls have two paths (scripts/hash-glue.mjs): a fast one in the glue
// for a string or Uint8Array that fits the module's 64 KiB hash area, and the generated one
// for the rest. Both must give Node's digest for every input, on either side of each limit,
// in the ES module and the CommonJS build, and leave nothing behind for the next call.
import test from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { createRequire } from 'node:module';
import * as esm from 'toolslice';

const cjs = createRequire(import.meta.url)('toolslice');
const AREA = 64 * 1024;
const hex = (x) => createHash('sha256').update(x).digest('hex');
const bytes = (n, seed) => Uint8Array.from({ length: n }, (_, i) => (i * 31 + seed) & 255);

for (const [name, t] of [['ESM', esm], ['CommonJS', cjs]]) {
  test(`${name}: bytes on either side of the hash area's size`, () => {
    for (const n of [0, 1, 32, 55, 56, 63, 64, 65, 1000, AREA - 1, AREA, AREA + 1, 3 * AREA + 7]) {
      const b = bytes(n, n);
      const want = hex(b);
      assert.equal(t.sha256Hex(b), want, `${n} B hex`);
      assert.equal(t.sha256Short(b), want.slice(0, 16), `${n} B short`);
      const raw = t.sha256(b);
      assert.ok(raw instanceof Uint8Array && raw.length === 32, `${n} B raw shape`);
      assert.equal(Buffer.from(raw).toString('hex'), want, `${n} B raw`);
      // An ArrayBuffer takes the generated path; it must agree.
      assert.equal(t.sha256Hex(b.slice().buffer), want, `${n} B ArrayBuffer`);
    }
  });

  test(`${name}: views with an offset, Node Buffers, and a digest that is a copy`, () => {
    const big = bytes(5000, 3);
    const view = big.subarray(17, 4017);
    assert.equal(t.sha256Hex(view), hex(view));
    const buf = Buffer.from(big.subarray(100, 300));
    assert.equal(t.sha256Hex(buf), hex(buf));
    // The returned digest does not alias module memory: the next call must not change it.
    const first = t.sha256(bytes(10, 1));
    const copy = Uint8Array.from(first);
    t.sha256(bytes(10, 2));
    t.sha256Hex('something else');
    assert.deepEqual(first, copy);
    // A short input after a long one hashes only its own bytes.
    t.sha256(bytes(AREA, 9));
    assert.equal(t.sha256Hex(bytes(3, 0)), hex(bytes(3, 0)));
    assert.equal(t.sha256Hex(new Uint8Array(0)), hex(''));
  });

  test(`${name}: a subclass whose length lies hashes its real bytes and overruns nothing`, () => {
    class Short extends Uint8Array {
      get length() { return 3; }
    }
    const real = bytes(1000, 4);
    const liar = new Short(real);
    assert.equal(t.sha256Hex(liar), hex(real));
    // Longer than the area but claiming 3 bytes: it must not be written over module memory
    // (the generated path may refuse it); the module stays sound either way.
    try {
      t.sha256(new Short(bytes(AREA + 4096, 6)));
    } catch (e) {
      assert.ok(e instanceof Error, String(e));
    }
    assert.equal(t.sha256Hex('after'), hex('after'));
    assert.equal(t.redact('k ghp_aB3dE5fG7hI9jK1lM3nO5pQ7rS9tU1vW3xY5').text, 'k [REDACTED:github_token]');
  });

  test(`${name}: strings as UTF-8 on either side of the fast path's limit`, () => {
    // The fast path takes strings up to AREA / 3 UTF-16 units (3 bytes each at most).
    const limit = Math.floor(AREA / 3);
    const cases = ['', 'abc', 'café ☕', '😀'.repeat(5), 'a\ud800b', '\udc00', 'x\ud83d'];
    for (const n of [limit - 1, limit, limit + 1, 20000, 100000]) {
      cases.push('a'.repeat(n), 'é'.repeat(n), '€'.repeat(n));
      // A surrogate pair across the fast path's limit and across the generated path's steps.
      cases.push('a'.repeat(n - 1) + '😀' + 'b'.repeat(5));
    }
    for (const n of [16383, 16384, 16385]) cases.push('a'.repeat(n - 1) + '😀' + '€'.repeat(n));
    for (const s of cases) {
      const want = hex(Buffer.from(s, 'utf8'));
      assert.equal(t.sha256Hex(s), want, `${s.length} units`);
      assert.equal(t.sha256Short(s), want.slice(0, 16), `${s.length} units short`);
      assert.equal(Buffer.from(t.sha256(s)).toString('hex'), want, `${s.length} units raw`);
    }
  });

  test(`${name}: wrong arguments keep their error and code`, () => {
    for (const bad of [42, null, undefined, {}, [1, 2], new Uint16Array(4), new String('abc'), new DataView(new ArrayBuffer(4))]) {
      for (const fn of [t.sha256, t.sha256Hex, t.sha256Short]) {
        assert.throws(() => fn(bad), (e) => e.code === 'invalid_argument' && /data must be a string, a Uint8Array or an ArrayBuffer/.test(e.message), `${fn.name}(${String(bad)})`);
      }
    }
  });
}

test('the incremental hasher and the one-shot calls do not disturb each other', () => {
  const h = new esm.Sha256();
  h.update('ab');
  assert.equal(esm.sha256Hex('zz'), hex('zz'));
  h.update(new Uint8Array([99]));
  esm.sha256(bytes(AREA, 5));
  assert.equal(h.digestHex(), hex('abc'));
  assert.equal(h.length, 0);
});

// The fast path keeps views of the hash area; a grown memory or a replaced instance has a
// new buffer, and a stale view would hash bytes nobody wrote. Last in this file: the trap
// exhausts the instance's memory on purpose (node --test runs each file in its own process).
test('the fast path follows a grown memory and a replaced instance', () => {
  const probe = bytes(100, 8);
  assert.equal(esm.sha256Hex(probe), hex(probe));
  const raw = esm.initSync();
  const pages = raw.memory.buffer.byteLength / 65536;
  raw.memory.grow(16);
  assert.equal(esm.sha256Hex(bytes(101, 8)), hex(bytes(101, 8)), 'after the memory grew');
  raw.memory.grow(65536 - pages - 16);
  assert.throws(
    () => esm.pack({ tool: 't', callId: 'c', text: 'x'.repeat(64 << 20) }),
    (e) => e.code === 'instance_trapped',
  );
  assert.equal(esm.sha256Hex(bytes(102, 8)), hex(bytes(102, 8)), 'after the instance was replaced');
  assert.equal(esm.sha256Short('abc'), 'ba7816bf8f01cfea');
  assert.equal(Buffer.from(esm.sha256(probe)).toString('hex'), hex(probe));
});
