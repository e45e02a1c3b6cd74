// The one-shot SHA-256 calls in real workerd (the package's `workerd` entry), on both paths
// of the glue: inputs under the 64 KiB hash area take the fast path, longer ones the
// generated one. Node's crypto gives the expected digests.
import test from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { startWorkerd } from './harness.mjs';

const hex = (x) => createHash('sha256').update(x).digest('hex');

test('SHA-256 in workerd agrees with Node on both paths of the glue', async (t) => {
  const server = await startWorkerd('./hash-config.capnp');
  t.after(() => server.stop());
  const post = async (body, text) => {
    const res = await fetch(`${server.base}/hash${text ? '?text' : ''}`, { method: 'POST', body });
    assert.equal(res.status, 200);
    return res.json();
  };
  for (const n of [0, 32, 65536, 65537, 300000]) {
    const bytes = Uint8Array.from({ length: n }, (_, i) => (i * 31) & 255);
    const want = hex(bytes);
    assert.deepEqual(await post(bytes, false), { hex: want, short: want.slice(0, 16), raw: want }, `${n} bytes`);
  }
  for (const s of ['', 'café ☕', 'é'.repeat(21845), '€'.repeat(21846), '😀'.repeat(50000)]) {
    const want = hex(Buffer.from(s, 'utf8'));
    assert.deepEqual(await post(s, true), { hex: want, short: want.slice(0, 16), raw: want }, `string of ${s.length}`);
  }
});
