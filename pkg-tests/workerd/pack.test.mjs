// Runs the example pack worker (pack-worker.js) in real workerd: pack a result, page through
// a cut one, and stream a multi-megabyte build log through it.
import test from 'node:test';
import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import { startWorkerd } from './harness.mjs';
import { checkSpans } from 'toolslice';

const here = (p) => fileURLToPath(new URL(p, import.meta.url));

const GH = 'ghp_aB3dE5fG7hI9jK1lM3nO5pQ7rS9tU1vW3xY5';

test('the pack worker in workerd', async (t) => {
  const server = await startWorkerd('./pack-config.capnp');
  t.after(() => server.stop());
  const spans = [];

  await t.test('a small JSON result comes back unchanged', async () => {
    const res = await fetch(`${server.base}/pack?tool=get_job&call_id=c1&limit=200`, {
      method: 'POST',
      body: JSON.stringify({ job: 7, ok: true }),
    });
    assert.equal(res.status, 200);
    const { envelope, span } = await res.json();
    assert.equal(envelope.role, 'tool');
    assert.equal(envelope.tool_call_id, 'c1');
    assert.equal(envelope.truncated, false);
    assert.deepEqual(JSON.parse(envelope.content), { job: 7, ok: true });
    assert.equal(span.clip_reason, 'none');
    spans.push(span);
  });

  await t.test('a cut result pages through get_more, redacted', async () => {
    const body = Array.from({ length: 300 }, (_, i) => `line ${i} token=${GH}`).join('\n');
    const res = await fetch(`${server.base}/pack?tool=get_logs&call_id=c2&limit=500`, { method: 'POST', body });
    const { envelope, span } = await res.json();
    assert.ok(envelope.truncated && envelope.redacted);
    assert.ok(Buffer.byteLength(envelope.content) <= 500);
    assert.match(envelope.hint, /get_more\(id="c2", offset=\d+\)/);
    spans.push(span);
    let offset = envelope.next_offset;
    let pages = 0;
    while (offset !== undefined) {
      const more = await (await fetch(`${server.base}/more?id=c2&offset=${offset}&call_id=m${pages}`)).json();
      assert.ok(Buffer.byteLength(more.envelope.content) <= 4096);
      assert.ok(!more.envelope.content.includes('aB3dE5'));
      spans.push(more.span);
      offset = more.envelope.next_offset;
      pages++;
    }
    assert.ok(pages >= 3, `${pages} pages`);
  });

  await t.test('a multi-megabyte streamed result is packed within the budget', async () => {
    const enc = new TextEncoder();
    const lines = 200_000;
    const body = new ReadableStream({
      start(controller) {
        for (let i = 0; i < lines; i += 1000) {
          let chunk = '';
          for (let j = i; j < i + 1000; j++) {
            chunk += j === 123_456 ? `error[E0599]: no method named \`port\` (password=${GH})\n` : `compiling step ${j} ok\n`;
          }
          controller.enqueue(enc.encode(chunk));
        }
        controller.close();
      },
    });
    const res = await fetch(`${server.base}/pack?tool=cargo&call_id=c3&limit=4096&exit_code=101&stream`, { method: 'POST', body, duplex: 'half' });
    const { envelope, span } = await res.json();
    assert.ok(span.observed_bytes > 4_000_000, `${span.observed_bytes}`);
    assert.ok(Buffer.byteLength(envelope.content) <= 4096);
    assert.match(envelope.content, /Exit code: 101/);
    assert.match(envelope.content, /123457: error\[E0599\]/);
    assert.ok(!envelope.content.includes('aB3dE5'));
    assert.equal(span.clip_reason, 'tool_result_char_limit');
    spans.push(span);
  });

  await t.test('every span the worker wrote passes toolslice check', () => {
    const report = checkSpans(spans.map((s) => JSON.stringify(s)).join('\n') + '\n');
    assert.equal(report.exitCode, 0);
    const counts = report.counts;
    assert.equal(counts.silent_clip + counts.incomplete + counts.hash_mismatch, 0);
    assert.equal(counts.total, spans.length);
  });
});
