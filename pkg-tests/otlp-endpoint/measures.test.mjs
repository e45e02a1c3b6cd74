// The measures a split hands to a trace (`OtlpTraceBatch.measures`): bytes a worker sends to
// the trace's Durable Object (copied out of the split's buffer), taken by `OtlpTrace.ingest`;
// the JSON string an earlier version's split gave is still taken; anything else is refused
// and changes nothing.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as api from 'toolslice';
import { ownBytes } from 'toolslice/otlp/endpoint.js';

const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
const attr = (key, v) => ({ key, value: { stringValue: v } });
const body = (spans) => new TextEncoder().encode(JSON.stringify({ resourceSpans: [{ scopeSpans: [{ spans }] }] }));
const result = 'build ok\nerror: disk full\nexit 1';
const tool = { traceId, spanId: '00000000000000a1', name: 'execute_tool read', startTimeUnixNano: '1000', endTimeUnixNano: '2000',
  attributes: [attr('gen_ai.operation.name', 'execute_tool'), attr('gen_ai.tool.call.id', 'c1'), attr('gen_ai.tool.call.result', result)] };
// The model saw the first line only, and nothing says it was cut.
const chat = { traceId, spanId: '00000000000000a2', name: 'chat', startTimeUnixNano: '3000', endTimeUnixNano: '4000',
  attributes: [attr('gen_ai.operation.name', 'chat'), attr('gen_ai.input.messages', JSON.stringify([{ role: 'tool', parts: [{ type: 'tool_call_response', id: 'c1', response: 'build ok' }] }]))] };

// What the split of toolslice at e7ddc30 (measures as JSON) gave for the two requests above.
const EARLIER = [
  '{"trace_id":"4bf92f3577b34da6a3ce929d0e0e4736","tools":[["00000000000000a1",{"at":{"entry":1,"seq":1,"trace_id":"4bf92f3577b34da6a3ce929d0e0e4736","span_id":"00000000000000a1","parent_id":null,"times":{"start":1000,"end":2000}},"name":"read","call_id":"c1","status":null,"result":{"Text":{"bytes":32,"chars":32,"sha256":"ed16848917c703f699f55b19fee57635eda4295684ab330383d01b1b83ed1742","value_sha256":null,"syntax":null,"preview":"build ok\\nerror: disk full\\nexit 1","cut_markers":0,"first_cut_marker":null,"redactions":0,"first_redaction":null}}}]],"models":[]}',
  '{"trace_id":"4bf92f3577b34da6a3ce929d0e0e4736","tools":[],"models":[["00000000000000a2",{"at":{"entry":1,"seq":1,"trace_id":"4bf92f3577b34da6a3ce929d0e0e4736","span_id":"00000000000000a2","parent_id":null,"times":{"start":3000,"end":4000}},"input":{"Ok":[{"call_id":"c1","name":null,"content":{"Text":{"bytes":8,"chars":8,"sha256":"125f72c90b0bc64e4e537ef2494a27f1da1f839710b532af94ecdbd71c6354dd","value_sha256":null,"syntax":null,"preview":"build ok","cut_markers":0,"first_cut_marker":null,"redactions":0,"first_redaction":null}},"trailing":true}]}}]]}',
];

const measuresOf = (span) => {
  const [t] = api.otlpSplit(body([span]), 'json').traces;
  assert.equal(t.traceId, traceId);
  return t.measures;
};

/** The decisions of a trace fed `parts` in turn: accepted keys and verdicts, in order. */
function run(parts) {
  const trace = new api.OtlpTrace(traceId);
  try {
    return parts.map((m) => trace.ingest(m, 0, 60_000));
  } finally {
    trace.free();
  }
}

test('a split gives its measures as bytes, structured-cloneable, and the trace judges from them', () => {
  const parts = [measuresOf(tool), measuresOf(chat)];
  for (const m of parts) assert.ok(m instanceof Uint8Array && m.length > 40, String(m));
  // As the worker sends them to a Durable Object: copied out of the split's buffer, then a
  // structured clone.
  const [held, joined] = run(parts.map((m) => structuredClone(ownBytes(m, []).measures)));
  assert.deepEqual(held.accepted, ['00000000000000a1']);
  assert.deepEqual(held.decisions, []);
  assert.equal(joined.decisions.length, 1);
  const { key, annotation } = joined.decisions[0];
  assert.equal(key, '00000000000000a1');
  assert.equal(annotation.status, 'silent_clip');
  assert.equal(annotation.observed_bytes, result.length);
  assert.equal(annotation.injected_bytes, 'build ok'.length);
  assert.equal(annotation.join, 'tool_call_id');
});

test("an earlier version's JSON measures give the same verdicts as the bytes", () => {
  const now = run([measuresOf(tool), measuresOf(chat)]);
  assert.deepEqual(run(EARLIER), now);
  // And the two forms mix: a rolling deploy sends some of each to one trace.
  assert.deepEqual(run([EARLIER[0], measuresOf(chat)]), now);
  assert.deepEqual(run([measuresOf(tool), EARLIER[1]]), now);
});

test('damaged measures are refused with the byte named, and the trace is unchanged', () => {
  const good = measuresOf(tool);
  const trace = new api.OtlpTrace(traceId);
  try {
    const refused = (m, pattern) => {
      assert.throws(() => trace.ingest(m, 0, 60_000), (err) => {
        assert.equal(err.code, 'malformed_export', err.message);
        assert.match(err.message, pattern);
        return true;
      });
    };
    for (const cut of [0, 3, 4, 10, good.length - 1]) {
      refused(good.subarray(0, cut), cut < 4 ? /not encoded measures/ : /trace batch measures: its .* at byte \d+/);
    }
    refused(new Uint8Array([...good, 0]), /its end at byte/);
    refused('{"trace_id":', /trace batch measures/);
    refused(42, /expected the Uint8Array of a split's measures/);
    assert.equal(trace.waiting(), 0);
    // The trace still takes the real measures, as if nothing had come before.
    const got = trace.ingest(good, 0, 60_000);
    assert.deepEqual(got.accepted, ['00000000000000a1']);
    assert.equal(trace.waiting(), 1);
  } finally {
    trace.free();
  }
});
