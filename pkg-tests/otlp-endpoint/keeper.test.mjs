// The trace keeper (crate/wasm/js/otlp/keeper.js) over the Node endpoint's storage, with
// the package's real core: what a Durable Object's storage failing mid-run must not cost.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as api from 'toolslice';
import { MemoryStorage, STATE_PIECE_CHARS, TraceKeeper } from 'toolslice/otlp/keeper.js';

const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
const attr = (key, v) => ({ key, value: { stringValue: v } });
let n = 0;
const request = (name, attrs) => {
  n += 1;
  const span = { traceId, spanId: n.toString(16).padStart(16, '0'), name, startTimeUnixNano: String(1000 * n), endTimeUnixNano: String(1000 * n + 1), attributes: attrs };
  return { span, body: new TextEncoder().encode(JSON.stringify({ resourceSpans: [{ scopeSpans: [{ spans: [span] }] }] })) };
};
const tool = (id, result) => request('execute_tool ls', [attr('gen_ai.operation.name', 'execute_tool'), attr('gen_ai.tool.call.id', id), attr('gen_ai.tool.call.result', result)]);
const chat = (pairs) => request('chat', [attr('gen_ai.operation.name', 'chat'), attr('gen_ai.input.messages', JSON.stringify(pairs.map(([id, r]) => ({ role: 'tool', parts: [{ type: 'tool_call_response', id, response: r }] }))))]);

/** A keeper whose upstream records what it is sent; `storage` as given. */
function keeper(storage) {
  const forwarded = [];
  const k = new TraceKeeper({
    api,
    traceId,
    storage,
    setAlarm: async () => {},
    forward: async (encoding, body) => {
      forwarded.push(new TextDecoder().decode(body));
      return new Response('{}', { status: 200 });
    },
    deadlineMs: 60_000,
  });
  return { k, forwarded };
}

/** Splits a request as the endpoint does and hands its part to the keeper. */
async function ingest(k, req) {
  const split = api.otlpSplit(req.body, 'json');
  for (const t of split.traces) await k.ingest(t.measures, t.held, split.encoding);
}

class FailingOnce extends MemoryStorage {
  async put(key, value) {
    if (this.fail) {
      this.fail = false;
      throw new Error('storage unavailable');
    }
    return super.put(key, value);
  }
}

test('a write that fails loses nothing: the retried request is taken from the stored state', async () => {
  const storage = new FailingOnce();
  const { k, forwarded } = keeper(storage);
  const a = tool('c1', 'hello world');
  storage.fail = true;
  await assert.rejects(ingest(k, a), /storage unavailable/);
  // The exporter sends the request again, then the model call that received the result.
  await ingest(k, a);
  await ingest(k, chat([['c1', 'hello']]));
  assert.equal(forwarded.length, 1);
  assert.ok(forwarded[0].includes(a.span.spanId));
  assert.match(forwarded[0], /"toolslice.status","value":\{"stringValue":"silent_clip"/);
});

/** The state as stored: `state` whole, or joined from the pieces it names. */
async function storedState(storage) {
  const state = await storage.get('state');
  if (typeof state === 'string') return state;
  const keys = state.parts.map((n) => `part:${n}`);
  const got = await storage.get(keys);
  return keys.map((k) => got.get(k)).join('');
}

/** Storage that counts the characters written under `part:` keys. */
class Counting extends MemoryStorage {
  partChars = 0;
  async put(key, value) {
    const entries = typeof key === 'object' ? Object.entries(key) : [[key, value]];
    for (const [k, v] of entries) if (k.startsWith('part:')) this.partChars += v.length;
    if (key === 'state' && this.failState) {
      this.failState = false;
      throw new Error('storage unavailable');
    }
    return super.put(key, value);
  }
}

/** A run of `calls` tool calls, each followed by a model call re-listing every result. */
async function run(k, calls, pairs = [], each = () => {}) {
  for (let i = pairs.length; i < calls; i++) {
    // Non-Latin-1 text too: the pieces are cut between characters, never inside one.
    const result = `result ${i} ${'é😀x'.repeat(60)}`;
    await ingest(k, tool(`c${i}`, result));
    pairs.push([`c${i}`, result]);
    await ingest(k, chat(pairs));
    await each(i);
  }
  return pairs;
}

test('a long state is stored in pieces, and a save writes only the pieces not stored before', async () => {
  const storage = new Counting();
  const { k, forwarded } = keeper(storage);
  // What storing the state whole after each request would write, and what was written.
  let whole = 0;
  const pairs = await run(k, 300, [], async () => {
    // After every request, what is stored is the state, whole.
    const json = k.trace.toJson();
    assert.equal(await storedState(storage), json);
    whole += 2 * json.length;
  });
  const written = storage.partChars;
  const json = k.trace.toJson();
  const state = await storage.get('state');
  assert.ok(Array.isArray(state.parts) && state.parts.length > 10, `${state.parts?.length} parts`);
  // Nothing stored but the pieces the state names, each at most a piece long.
  const keys = [...(await storage.list({ prefix: 'part:' })).keys()];
  assert.deepEqual(keys.sort(), [...new Set(state.parts)].map((n) => `part:${n}`).sort());
  for (const key of keys) assert.ok((await storage.get(key)).length <= STATE_PIECE_CHARS);
  // Each request (a tool call or a model call appended, a span decided, a counter) wrote a
  // few pieces of the state, not all of it.
  assert.ok(written < whole / 3, `${written} characters written, ${whole} whole`);
  // A keeper started afresh on the same storage (a Durable Object evicted and recreated)
  // reads the state back, goes on with it, and writes its pieces again only as they change.
  const again = keeper(storage);
  for (const req of [tool('c300', 'late'), chat([...pairs, ['c300', 'la']])]) {
    storage.partChars = 0;
    await ingest(again.k, req);
    assert.ok(storage.partChars < json.length / 3, `${storage.partChars} of ${json.length} characters written`);
  }
  assert.equal(await storedState(storage), again.k.trace.toJson());
  assert.equal(forwarded.length, 300);
  assert.equal(again.forwarded.length, 1);
  assert.match(again.forwarded[0], /silent_clip/);
  const summary = await again.k.summary();
  assert.equal(summary.decided, 301);
  assert.equal(summary.model_calls, 301);
});

test('a save cut short before the state names its new pieces leaves the stored state whole', async () => {
  const storage = new Counting();
  const { k, forwarded } = keeper(storage);
  const pairs = await run(k, 60);
  const before = await storedState(storage);
  const t = tool('c60', 'next result');
  storage.failState = true;
  await assert.rejects(ingest(k, t), /storage unavailable/);
  // The new pieces were written, the state naming them was not: the state stored before is
  // read whole, and the retried request is taken from it.
  assert.equal(await storedState(storage), before);
  await ingest(k, t);
  await ingest(k, chat([...pairs, ['c60', 'next']]));
  assert.equal(forwarded.length, 61);
  assert.match(forwarded[60], /silent_clip/);
  assert.equal(await storedState(storage), k.trace.toJson());
});

test('a state stored by the version before (one generation of fixed pieces) is read, and replaced at the next save', async () => {
  const first = new MemoryStorage();
  const { k } = keeper(first);
  const pairs = await run(k, 60);
  const json = k.trace.toJson();
  // As that version stored it: `state` = { gen, pieces }, the JSON cut every 60,000 characters.
  const storage = new MemoryStorage();
  const pieces = Math.ceil(json.length / 20_000);
  for (let i = 0; i < pieces; i++) await storage.put(`state:3:${i}`, json.slice(i * 20_000, (i + 1) * 20_000));
  await storage.put('state', { gen: 3, pieces });
  const again = keeper(storage);
  await ingest(again.k, tool('c60', 'next result'));
  await ingest(again.k, chat([...pairs, ['c60', 'next']]));
  assert.equal(again.forwarded.length, 1);
  assert.match(again.forwarded[0], /silent_clip/);
  assert.equal((await again.k.summary()).decided, 61);
  assert.equal((await storage.list({ prefix: 'state:' })).size, 0);
  assert.equal(await storedState(storage), again.k.trace.toJson());
});
