// Hostile use of the packer through the installed package (issue 13 items 1, 6, 7, 11, 12;
// issue 15): secrets in the command header, an instance that traps and is replaced,
// re-entrant calls from a countTokens callback, numbers that used to be coerced silently,
// JSON deeper than the parser's limit, an 80 MB result, and streamed results that page.
// (The recovery of a trapped instance is in pack-trap.test.mjs, a process of its own.)
import test from 'node:test';
import assert from 'node:assert/strict';
import * as toolslice from 'toolslice';

const GH = 'ghp_aB3dE5fG7hI9jK1lM3nO5pQ7rS9tU1vW3xY5';
const BEARER = 'ya29.a0AfB_byC9xQ2Lm7PzKd81mNq';

test('the command header, tool name and call id are redacted in content and span', () => {
  const command = `curl -H "Authorization: Bearer ${BEARER}" https://deploy:${GH}@github.com/acme/app.git`;
  const p = toolslice.pack({ tool: 'bash', callId: `call ${GH}`, text: 'fatal: denied\n', exitCode: 128, command });
  const all = JSON.stringify(p);
  for (const s of [BEARER.slice(5, 20), GH.slice(4, 20)]) assert.ok(!all.includes(s), all);
  assert.match(p.envelope.content, /Command: curl -H "Authorization: Bearer \[REDACTED:bearer_token\]"/);
  assert.match(p.span.injected_preview, /\[REDACTED:bearer_token\]/);
  assert.ok(p.receipts.some((r) => r.field_path === 'command'));

  // Error text is output too: a value the decoder quotes is redacted.
  assert.throws(
    () => toolslice.pack({ tool: 't', callId: 'c', text: 'x', exitCode: GH }),
    (e) => e.code === 'invalid_argument' && e.message.includes('[REDACTED:github_token]') && !e.message.includes(GH.slice(4, 20)),
  );
  assert.throws(() => toolslice.getMore(`id ${GH}`, 0), (e) => e.code === 'not_found' && !e.message.includes(GH.slice(4, 20)));

  const s = new toolslice.StreamPacker('bash', 'c2', command, { limit: 4096 });
  s.push('fatal: denied\n');
  const q = s.finish(128);
  assert.ok(!JSON.stringify(q).includes(BEARER.slice(5, 20)));
  assert.match(q.envelope.content, /Bearer \[REDACTED:bearer_token\]/);
});

test('a countTokens callback may call back into the module while pack runs', () => {
  let inner = 0;
  const countTokens = (t) => {
    // Every entry point, from inside pack: none may find the packer borrowed.
    toolslice.pageStoreStats();
    toolslice.registerTool(`nested_${inner}`, { maxBytes: 100 });
    const p = toolslice.pack({ tool: 'inner', callId: `i${inner++}`, text: 'x\n'.repeat(2000) }, { limit: 300 });
    assert.equal(typeof p.envelope.next_offset, 'number');
    toolslice.getMore(p.envelope.tool_call_id, p.envelope.next_offset);
    return Math.ceil(t.length / 4);
  };
  const text = 'The quick brown fox.\n'.repeat(300);
  const p = toolslice.pack({ tool: 'read', callId: 'outer', text }, { unit: 'tokens', limit: 200, countTokens });
  assert.equal(p.envelope.truncated, true);
  assert.ok(inner > 0);
  // And a store whose `set` calls back in.
  const store = new Map();
  const hooked = { get: (k) => store.get(k), set: (k, v) => { toolslice.pageStoreStats(); store.set(k, v); } };
  const q = toolslice.pack({ tool: 'read', callId: 'viaStore', text }, { limit: 300, store: hooked });
  assert.ok(store.has(q.envelope.tool_call_id));
});

test('out-of-range numbers are invalid_argument, not coerced', () => {
  const s = () => {
    const p = new toolslice.StreamPacker('bash', 's', undefined, { limit: 1000 });
    p.push('ok\n');
    return p;
  };
  for (const bad of [NaN, 2 ** 32, 2 ** 40, 1.5, -(2 ** 31) - 1, Infinity]) {
    assert.throws(() => s().finish(bad), (e) => e.code === 'invalid_argument', String(bad));
    assert.throws(
      () => toolslice.pack({ tool: 't', callId: 'c', text: 'x', exitCode: bad }),
      (e) => e.code === 'invalid_argument' || e.code === 'invalid_options',
      String(bad),
    );
  }
  assert.equal(s().finish(2 ** 32 - 1).envelope.outcome.exit_code, 2 ** 32 - 1);
  assert.equal(s().finish(-1).envelope.outcome.exit_code, -1);
  // getMoreFrom reads the page size from the page record; options.pageBytes overrides it
  // and is held to the same contract.
  const kept = toolslice.pack({ tool: 't', callId: 'pr', text: 'abc\n'.repeat(3000) }, { limit: 200, returnStored: true });
  for (const bad of [-1, 0, NaN, 2 ** 32, 0.5]) {
    assert.throws(
      () => toolslice.getMoreFrom(kept.stored.record, 'pr', 0, undefined, { pageBytes: bad }),
      (e) => e.code === 'invalid_argument' || e.code === 'invalid_options',
      String(bad),
    );
  }
  assert.throws(() => toolslice.getMoreFrom(kept.stored.record, 'pr', -1), (e) => e.code === 'invalid_argument');
  const data = new TextEncoder().encode('abcdef');
  assert.equal(toolslice.sha256HexBatch(data, [3, 3]).length, 128);
  for (const lengths of [[2 ** 32 + 6], [-1, 7], [6.5], [NaN, 6]]) {
    assert.throws(() => toolslice.sha256HexBatch(data, lengths), (e) => e.code === 'invalid_argument', JSON.stringify(lengths));
  }
  assert.throws(() => toolslice.sha256Batch([1, 256], [2]), (e) => e.code === 'invalid_argument');
  assert.throws(() => toolslice.sha256HexBatch(data, new Uint32Array([5])), (e) => e.code === 'invalid_batch');
});

test('JSON nested 130 deep is packed, deep nesting summarised', () => {
  let v = { status: 'ok', items: [1, 2, 3], note: 'x'.repeat(3000) };
  for (let i = 0; i < 130; i++) v = { a: v };
  const p = toolslice.pack({ tool: 'query', callId: 'deep', json: v }, { limit: 400 });
  assert.equal(p.envelope.truncated, true);
  assert.equal(p.pattern, 'json');
  assert.ok(Buffer.byteLength(p.envelope.content) <= 400);
});

test('an 80 MB result of 40 million zeros is packed; a larger text is too_large', () => {
  const text = '[' + '0,'.repeat(40_000_000 - 1) + '0]';
  const p = toolslice.pack({ tool: 'query', callId: 'zeros', text }, { limit: 2048 });
  assert.equal(p.envelope.truncated, true);
  assert.ok(Buffer.byteLength(p.envelope.content) <= 2048);
  assert.equal(p.span.observed_bytes, text.length);
  assert.throws(
    () => toolslice.pack({ tool: 'q', callId: 'big', text: 'a'.repeat(129 * 1024 * 1024) }),
    (e) => e.code === 'too_large' && /134217728/.test(e.message),
  );
  // The instance still serves.
  assert.equal(toolslice.pack({ tool: 'q', callId: 'after', text: 'ok' }).envelope.content, 'ok');
});

test('a streamed result within the cap pages like pack; beyond it the short error', () => {
  const line = 'compiling step ok\n';
  const s = new toolslice.StreamPacker('cargo', 'st1', undefined, { limit: 2048 });
  for (let i = 0; i < 20_000; i++) s.push(line);
  const p = s.finish(0);
  assert.equal(typeof p.envelope.next_offset, 'number');
  assert.match(p.envelope.hint, /get_more\(id="st1"/);
  const page = toolslice.getMore('st1', p.envelope.next_offset, 'st1b');
  assert.match(page.envelope.content, /^compiling step ok/);

  const m = new Map();
  const viaStore = new toolslice.StreamPacker('cargo', 'st2', undefined, { limit: 2048, store: m });
  for (let i = 0; i < 1000; i++) viaStore.push(line);
  viaStore.finish(0);
  // The Map holds the page record: the page size (the unregistered tool's default, 4096),
  // then the text.
  assert.equal(m.get('st2'), 'toolslice-page page_bytes=4096\n' + line.repeat(1000));

  const capped = new toolslice.StreamPacker('cargo', 'st3', 'make', { limit: 2048, streamCap: 64 * 1024 });
  for (let i = 0; i < 10_000; i++) capped.push(line);
  const q = capped.finish(2);
  assert.equal(q.envelope.error, 'result_too_large');
  assert.match(q.envelope.content, /^result too large, narrow the query \(180000 bytes, limit 2048\)\. Outcome: \{"exit_code":2\}$/);
  assert.match(q.envelope.hint, /65536 bytes/);
  assert.equal(q.envelope.next_offset, undefined);
});
