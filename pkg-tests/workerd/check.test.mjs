// Runs the check worker in real workerd and posts traces to it.
import test from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { startWorkerd } from './harness.mjs';

const here = (p) => fileURLToPath(new URL(p, import.meta.url));

test('the check worker in workerd', async (t) => {
  const server = await startWorkerd('./config.capnp');
  t.after(() => server.stop());

  await t.test('a clipped trace comes back flagged, status 422', async () => {
    const res = await fetch(server.base, { method: 'POST', body: readFileSync(here('../fixtures/clipped.jsonl')) });
    assert.equal(res.status, 422);
    const report = await res.json();
    assert.deepEqual(report.rows.map((r) => r.status), ['silent_clip', 'incomplete', 'hash_mismatch', 'ok']);
  });

  await t.test('a clean trace is 200', async () => {
    const res = await fetch(server.base, { method: 'POST', body: readFileSync(here('../fixtures/good.jsonl')) });
    assert.equal(res.status, 200);
    assert.equal((await res.json()).counts.total, 3);
  });

  await t.test('a multi-megabyte trace streamed in pieces gives the one-shot counts', async () => {
    const line = readFileSync(here('../fixtures/clipped.jsonl'), 'utf8');
    const copies = 4000; // ~3 MB
    const body = new ReadableStream({
      start(controller) {
        const enc = new TextEncoder();
        for (let i = 0; i < copies; i++) controller.enqueue(enc.encode(line));
        controller.close();
      },
    });
    const res = await fetch(`${server.base}/?flagged`, { method: 'POST', body, duplex: 'half' });
    const report = await res.json();
    assert.equal(report.counts.lines, 4 * copies);
    assert.equal(report.counts.silent_clip, copies);
    assert.equal(report.rows.length, 3 * copies);
  });
});
