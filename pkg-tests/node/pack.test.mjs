// The packer through the installed package in Node: the API (pack, getMore, a Map store,
// StreamPacker, redact, redactJson, error codes), the example edge worker run in Node, and
// the `toolslice pack` CLI, whose span lines `toolslice check` accepts.
import test from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import * as toolslice from 'toolslice';
import worker from '../workerd/pack-worker.js';

const GH = 'ghp_aB3dE5fG7hI9jK1lM3nO5pQ7rS9tU1vW3xY5';
const cli = fileURLToPath(new URL('../node_modules/.bin/toolslice', import.meta.url));

test('pack: small round-trip, huge flagged, token redacted, receipt id kept', () => {
  const small = toolslice.pack({ tool: 'get_job', callId: 'c1', json: { id: 1, state: 'done' } }, { limit: 80 });
  assert.equal(small.envelope.truncated, false);
  assert.deepEqual(JSON.parse(small.envelope.content), { id: 1, state: 'done' });

  const log = 'x'.repeat(50) + '\n';
  const huge = toolslice.pack({ tool: 'get_logs', callId: 'c2', text: log.repeat(40) }, { limit: 200 });
  assert.equal(huge.envelope.truncated, true);
  assert.ok(Buffer.byteLength(huge.envelope.content) <= 200);
  assert.match(huge.envelope.hint, /get_more\(id="c2"/);
  assert.equal(typeof huge.envelope.next_offset, 'number');

  const secret = toolslice.pack({ tool: 't', callId: 'c3', json: { note: `used ${GH}`, ok: true } });
  assert.equal(secret.envelope.redacted, true);
  assert.ok(!secret.envelope.content.includes('aB3dE5'));
  assert.equal(secret.receipts[0].rule_id, 'github_token');
  assert.equal(secret.receipts[0].original_len, GH.length);

  const receipt = { ok: true, receipt_id: 'rcpt_42', items: Array.from({ length: 500 }, (_, i) => ({ i })) };
  const packed = toolslice.pack({ tool: 'charge', callId: 'c4', json: receipt }, { limit: 300 });
  assert.ok(packed.envelope.content.includes('rcpt_42'));
  assert.equal(packed.envelope.outcome.receipt_id, 'rcpt_42');
});

test('pack: many receipts come back as the same objects as a few, in the same places', () => {
  // From eight receipts on the binding hands them over as one JSON text; the result must
  // not tell: same keys in the same order, same values, receipts between span and shape.
  const line = (i) => `step ${i}: export GITHUB_TOKEN=${GH}\nfrom mail bob${i}@example.com with password=hunter${i}22\n`;
  const many = Array.from({ length: 40 }, (_, i) => line(i)).join('');
  const few = line(0);
  const opts = { limit: 400, redact: { emails: true } };
  const a = toolslice.pack({ tool: 'sh', callId: 'm', text: many, exitCode: 0 }, opts);
  const b = toolslice.pack({ tool: 'sh', callId: 'm', text: few, exitCode: 0 }, opts);
  assert.ok(a.receipts.length >= 8 * 3, `${a.receipts.length} receipts`);
  assert.ok(b.receipts.length < 8, `${b.receipts.length} receipts`);
  assert.deepEqual(Object.keys(a), Object.keys(b));
  assert.deepEqual(Object.keys(a).slice(0, 4), ['envelope', 'span', 'receipts', 'shape']);
  // The first line's receipts are the same in both, key for key, value for value.
  assert.deepEqual(a.receipts.slice(0, b.receipts.length), b.receipts);
  for (const r of a.receipts) {
    assert.deepEqual(Object.keys(r), Object.keys(b.receipts[0]));
    assert.equal(typeof r.offset, 'number');
    assert.equal(Object.getPrototypeOf(r), Object.prototype);
  }
  assert.deepEqual(
    [...new Set(a.receipts.map((r) => r.rule_id))].sort(),
    [...new Set(b.receipts.map((r) => r.rule_id))].sort(),
  );
  // The stored page record still rides along (set after the receipts).
  const stored = toolslice.pack({ tool: 'sh', callId: 's', text: many }, { ...opts, returnStored: true });
  assert.ok(stored.receipts.length >= 8);
  assert.equal(stored.stored.id, 's');
});

test('getMore pages from the module store and from a Map', () => {
  const text = Array.from({ length: 200 }, (_, i) => `row ${i}`).join('\n');
  const first = toolslice.pack({ tool: 'rows', callId: 'p1', text }, { limit: 300, pageBytes: 400 });
  const page = toolslice.getMore('p1', first.envelope.next_offset, 'p1b', { pageBytes: 400 });
  assert.ok(Buffer.byteLength(page.envelope.content) <= 400);
  assert.equal(page.envelope.tool_call_id, 'p1b');
  assert.equal(page.envelope.name, 'get_more');

  const store = new Map();
  const viaMap = toolslice.pack({ tool: 'rows', callId: 'p2', text }, { limit: 300, store });
  // The Map holds the page record: the page size, then the text unchanged.
  assert.ok(store.get('p2').endsWith('\n' + text));
  const again = toolslice.getMore('p2', viaMap.envelope.next_offset, undefined, { store, pageBytes: 500 });
  assert.ok(again.envelope.content.startsWith('row'));
  assert.equal(viaMap.stored, undefined);
  const ret = toolslice.pack({ tool: 'rows', callId: 'p3', text }, { limit: 300, returnStored: true });
  assert.equal(ret.stored.record, store.get('p2'));
  assert.equal(ret.stored.id, 'p3');
  const fromRecord = toolslice.getMoreFrom(ret.stored.record, 'p2', viaMap.envelope.next_offset, undefined, { pageBytes: 500 });
  assert.equal(fromRecord.envelope.content, again.envelope.content);
  assert.throws(() => toolslice.getMoreFrom(text, 'p2', 0), (e) => e.code === 'invalid_page_record' && /"p2"/.test(e.message));
  assert.throws(() => toolslice.getMore('nope', 0), (e) => e.code === 'not_found');
  assert.ok(toolslice.pageStoreStats().entries >= 1);
});

test('paging is the same in every store: the page size is kept with the text', () => {
  // A tool registered with its own page size; getMore is called WITHOUT pageBytes, so the
  // size must come from what was stored (before, a Map store paged at the default size).
  toolslice.registerTool('paged_rows', { maxBytes: 300, pageBytes: 700 });
  const text = Array.from({ length: 400 }, (_, i) => `line ${i} ${'x'.repeat(i % 13)}`).join('\n');
  const walk = (first, next) => {
    const pages = [];
    let offset = first.envelope.next_offset;
    while (offset !== undefined) {
      const p = next(offset);
      pages.push(p.envelope.content);
      offset = p.envelope.next_offset;
    }
    return pages;
  };
  const viaModule = walk(
    toolslice.pack({ tool: 'paged_rows', callId: 'same-1', text }),
    (o) => toolslice.getMore('same-1', o, 'x'),
  );
  const store = new Map();
  const viaMap = walk(
    toolslice.pack({ tool: 'paged_rows', callId: 'same-1', text }, { store }),
    (o) => toolslice.getMore('same-1', o, 'x', { store }),
  );
  const kept = toolslice.pack({ tool: 'paged_rows', callId: 'same-1', text }, { returnStored: true });
  const viaRecord = walk(kept, (o) => toolslice.getMoreFrom(kept.stored.record, 'same-1', o, 'x'));
  assert.equal(kept.stored.page_bytes, 700);
  assert.ok(viaModule.length > 3, `${viaModule.length} pages`);
  assert.ok(viaModule.every((c) => Buffer.byteLength(c) <= 700));
  assert.ok(Buffer.byteLength(viaModule[0]) > 500, 'pages are cut at the tool\'s 700, not the default');
  assert.deepEqual(viaMap, viaModule);
  assert.deepEqual(viaRecord, viaModule);
  // A value that is not a page record is refused by name, not paged as if it were text.
  assert.throws(() => toolslice.getMore('bare', 0, 'x', { store: new Map([['bare', text]]) }), (e) => e.code === 'invalid_page_record');
});

test('text reaches the packer whole: non-ASCII at both ends, surrogate pairs, and null as absent', () => {
  const text = 'é' + 'build ok\n'.repeat(2000) + 'error: 💥 failed\n' + '末';
  const packed = toolslice.pack({ tool: 'shell', callId: 'u1', text, exitCode: 1 }, { limit: 100000 });
  assert.equal(packed.envelope.content.includes('💥'), true);
  // The observed side counts the text's UTF-8 bytes: dropping the leading 'é' (2 bytes) and
  // the trailing '末' (3 bytes) must change it by exactly 5.
  const plain = toolslice.pack({ tool: 'shell', callId: 'u2', text: text.slice(1, -1), exitCode: 1 }, { limit: 100000 });
  assert.equal(packed.span.observed_bytes - plain.span.observed_bytes, 5);
  assert.ok(packed.envelope.content.includes('末'));
  assert.throws(() => toolslice.pack({ tool: 't', callId: 'c', text: null }), (e) => e.code === 'invalid_argument');
});

test('segments: true returns the cut text and segments in UTF-16 offsets JavaScript can slice with', () => {
  // Non-ASCII before, inside and after the cut (é: 2 UTF-8 bytes, 末: 3, 💥: 4 and 2 UTF-16 units).
  const text = `é ${GH} 💥\n${'末 line of the log ünïcödé\n'.repeat(40)}done 💥\n`;
  const packed = toolslice.pack({ tool: 'get_logs', callId: 'c9', text }, { limit: 120, unit: 'chars', kind: 'text', segments: true });
  assert.equal(packed.envelope.truncated, true);
  const { cut, envelope } = packed;
  assert.equal(cut.offsets, 'utf16');
  assert.ok(!cut.source.includes(GH.slice(4, 12)), 'the cut text is the redacted text');
  let at = 0;
  for (const s of cut.segments) {
    assert.equal(s.output[0], at, 'the segments tile the content');
    at = s.output[1];
    if (s.kind === 'kept') assert.equal(envelope.content.slice(...s.output), cut.source.slice(...s.source));
  }
  assert.equal(at, envelope.content.length);
  assert.ok(cut.segments.some((s) => s.kind === 'kept' && /💥|末|é/.test(envelope.content.slice(...s.output))));
  assert.deepEqual(cut.redacted.map((r) => cut.source.slice(...r)), packed.receipts.map((r) => r.replacement));
  // Without the option nothing extra crosses the boundary.
  assert.equal(toolslice.pack({ tool: 'get_logs', callId: 'c9', text }, { limit: 120, unit: 'chars' }).cut, undefined);
});

test('errors carry stable codes', () => {
  assert.throws(() => toolslice.pack({ tool: 't', callId: 'c' }), (e) => e.code === 'invalid_argument');
  assert.throws(() => toolslice.pack({ tool: 't', callId: 'c', text: 42 }), (e) => e.code === 'invalid_argument' && /text must be a string/.test(e.message));
  assert.throws(() => toolslice.pack({ tool: 't', callId: 'c', text: 'x', json: {} }), (e) => e.code === 'invalid_argument');
  assert.throws(() => toolslice.pack({ tool: 't', callId: 'c', text: 'x' }, { limit: 0 }), (e) => e.code === 'invalid_options');
  assert.throws(() => toolslice.redact('x', { disable: ['nope'] }), (e) => e.code === 'invalid_policy');
  assert.throws(() => toolslice.pack({ tool: 't', callId: 'c', text: 'y\n'.repeat(100) }, { limit: 3, pageable: false }), (e) => e.code === 'budget_too_small');
});

test('redact and redactJson', () => {
  const r = toolslice.redact(`Authorization: Bearer abc.DEF-123_xyz\npostgres://u:pw12345@db/x`);
  assert.equal(r.text, 'Authorization: Bearer [REDACTED:bearer_token]\npostgres://u:[REDACTED:url_password]@db/x');
  assert.deepEqual(r.receipts.map((x) => x.rule_id), ['bearer_token', 'url_password']);
  const j = toolslice.redactJson({ headers: { 'x-api-key': 'k3y-99-abc' }, n: 1 });
  assert.equal(j.value.headers['x-api-key'], '[REDACTED:secret_field]');
  assert.equal(j.receipts[0].field_path, '$.headers["x-api-key"]');
  assert.equal(toolslice.redact('mail bob@example.com', { emails: true }).text, 'mail [REDACTED:email]');
});

test('a real tokenizer as the counter', async () => {
  const { getEncoding } = await import('js-tiktoken');
  const enc = getEncoding('cl100k_base');
  const countTokens = (t) => enc.encode(t).length;
  const text = 'The quick brown fox jumps over the lazy dog.\n'.repeat(200);
  const p = toolslice.pack({ tool: 'read', callId: 't1', text }, { unit: 'tokens', limit: 120, countTokens });
  assert.ok(countTokens(p.envelope.content) <= 120);
  assert.equal(p.span.injected_tokens, countTokens(p.envelope.content));
  assert.equal(p.span.clip_reason, 'prompt_token_cap');
});

test('StreamPacker: megabytes in, budget out', () => {
  const s = new toolslice.StreamPacker('build', 's1', 'make', { limit: 2048 });
  const enc = new TextEncoder();
  let held = 0;
  for (let i = 0; i < 100_000; i++) {
    s.push(enc.encode(i === 50_000 ? `FAILED: test_port (token=${GH})\n` : `ok step ${i}\n`));
    held = Math.max(held, s.heldBytes);
  }
  const cap = s.cap;
  const p = s.finish(2);
  // Within the cap (the page store's 16 MiB) the output is kept for paging; memory is
  // bounded by the cap, not the stream.
  assert.equal(cap, 16 * 1024 * 1024);
  assert.ok(held > 0 && held <= cap);
  assert.ok(p.envelope.next_offset > 0);
  const page = toolslice.getMore('s1', p.envelope.next_offset);
  assert.match(page.envelope.content, /^ok step/);
  assert.ok(Buffer.byteLength(p.envelope.content) <= 2048);
  assert.match(p.envelope.content, /50001: FAILED: test_port/);
  assert.ok(!p.envelope.content.includes('aB3dE5'));
  assert.throws(() => s.finish(0), (e) => e.code === 'packer_finished');
});

test('the example worker, run in Node', async () => {
  const res = await worker.fetch(new Request('http://x/pack?tool=t&call_id=w1&limit=100', { method: 'POST', body: 'a\n'.repeat(500) }));
  const { envelope, span } = await res.json();
  assert.equal(envelope.truncated, true);
  assert.equal(span.name, 't');
  const more = await (await worker.fetch(new Request(`http://x/more?id=w1&offset=${envelope.next_offset}`))).json();
  assert.equal(more.envelope.name, 'get_more');
});

test('toolslice pack (CLI): envelope and span; spans pass toolslice check', () => {
  const run = (args, input) => spawnSync(cli, args, { input, encoding: 'utf8' });
  const out = run(['pack', '--tool', 'bash', '--limit', '300', '--exit-code', '1', '--call-id', 'k1'], 'error: boom\n'.repeat(100));
  assert.equal(out.status, 0, out.stderr);
  const doc = JSON.parse(out.stdout);
  assert.equal(doc.envelope.tool_call_id, 'k1');
  assert.match(doc.envelope.content, /Exit code: 1/);
  assert.ok(Buffer.byteLength(doc.envelope.content) <= 300);

  const spans = [
    run(['pack', '--span-only', '--limit', '100'], JSON.stringify({ ok: true, rows: Array(100).fill('r') })).stdout,
    run(['pack', '--span-only', '--tool', 'read_file', '--kind', 'file'], `api_key=${GH}\n`).stdout,
    run(['pack', '--span-only'], 'hello\n').stdout,
  ].join('');
  const check = run(['check'], spans);
  assert.equal(check.status, 0, check.stdout + check.stderr);
  assert.match(check.stdout, /silent_clip=0 incomplete=0 total=3/);

  const content = run(['pack', '--content', '--text'], `{"password": "hunter2x"}`);
  assert.equal(content.stdout, '{"password": "[REDACTED:secret_field]"}\n');
  const bad = run(['pack', '--kind', 'nope'], '');
  assert.equal(bad.status, 2);

  // JSON or text is the core's decision: a 64-bit id survives (JSON.parse would round it).
  const big = run(['pack', '--content'], '{"id": 9007199254740993, "ok": true}\n');
  assert.equal(big.status, 0, big.stderr);
  assert.match(big.stdout, /9007199254740993/);
  // The API too: `raw` is read by the core, and the result still crosses into JS.
  const api = toolslice.pack({ tool: 't', callId: 'b1', raw: '{"id": 9007199254740993}' });
  assert.equal(api.envelope.content, '{"id":9007199254740993}');
  assert.equal(JSON.parse(run(['pack'], 'not json {').stdout).envelope.content, 'not json {');
});
