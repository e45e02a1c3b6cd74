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

test('a state longer than a piece is stored in pieces of one generation and read back whole', async () => {
  const storage = new MemoryStorage();
  const { k, forwarded } = keeper(storage);
  const pairs = [];
  for (let i = 0; i < 120; i++) {
    const result = `result ${i} ${'x'.repeat(200)}`;
    await ingest(k, tool(`c${i}`, result));
    pairs.push([`c${i}`, result]);
    await ingest(k, chat(pairs));
  }
  const state = await storage.get('state');
  assert.equal(typeof state, 'object');
  const keys = [...(await storage.list({ prefix: 'state:' })).keys()];
  // Only the last generation's pieces are kept, each at most a piece long.
  assert.equal(keys.length, state.pieces);
  assert.ok(keys.every((key) => key.startsWith(`state:${state.gen}:`)));
  for (const key of keys) assert.ok((await storage.get(key)).length <= STATE_PIECE_CHARS);
  // A keeper started afresh on the same storage (a Durable Object evicted and recreated)
  // reads the state back and goes on with it.
  const again = keeper(storage);
  await ingest(again.k, tool('c120', 'late'));
  await ingest(again.k, chat([...pairs, ['c120', 'la']]));
  assert.equal(forwarded.length, 120);
  assert.equal(again.forwarded.length, 1);
  assert.match(again.forwarded[0], /silent_clip/);
  const summary = await again.k.summary();
  assert.equal(summary.decided, 121);
  assert.equal(summary.model_calls, 121);
});
