// The proof path as installed: canonical JSON, SHA-256, the gate and the hop classifier,
// through the JS API and the `toolslice hash|record|gate|diff|hop` commands. Golden digests
// were computed with the seeds' own scripts (trace_gate.py, three_boundary.py) and the PyPI
// rfc8785 package.
import test from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, readdirSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as toolslice from 'toolslice';

const bin = fileURLToPath(new URL('../node_modules/.bin/toolslice', import.meta.url));
const cli = (args, input) => spawnSync(bin, args, { input, encoding: 'utf8' });

// {"path": "src/a.rs", "n": 12345678901234567890, "f": 1.0} and its python-form digest
// (hashlib.sha256(json.dumps(json.load(f), sort_keys=True, separators=(",", ":"),
// ensure_ascii=False).encode()).hexdigest()).
const ARGS = '{"path": "src/a.rs", "n": 12345678901234567890, "f": 1.0}';
const ARGS_SHA = '668b8c7150ca9ec72174db34778f54a22aa2462cce138c21e75d404597ea4d66';
const RESULT = '{"ok": true, "rows": 2, "note": "caf\\u00e9"}';
const RESULT_SHA = '523d449f610dfb498a488cad05ca58a3ec85890216e9b584c6f213c25227d958';
// three_boundary.fixture_wrap()
const WRAP = ['{"ok":true,"rows":2}', '{"ok":true,"rows":2}', '{"type":"tool_result","body":{"ok":true,"rows":2}}'];
const WRAP_ROW = {
  process_sha256: 'a664346cdb56490a4ac5fbf42d058ef7b03bfa4dea12e8611b4c455c785959ed',
  adapter_sha256: 'a664346cdb56490a4ac5fbf42d058ef7b03bfa4dea12e8611b4c455c785959ed',
  model_sha256: '1f3f257b104c7330e9f5f4ff864eb7ac025b51bd365dd227513b71e92a8fe204',
  process_len: 20,
  adapter_len: 20,
  model_len: 50,
  mutation_hop: 'prompt_builder_wrap',
};

function scratch() {
  const dir = mkdtempSync(join(tmpdir(), 'toolslice-gate-'));
  const file = (name, text) => {
    const path = join(dir, name);
    if (text !== undefined) writeFileSync(path, text);
    return path;
  };
  return { dir, file, done: () => rmSync(dir, { recursive: true, force: true }) };
}

test('API: canonical forms, digests and the seed span', () => {
  assert.equal(toolslice.canonicalize(ARGS), '{"f":1.0,"n":12345678901234567890,"path":"src/a.rs"}');
  assert.equal(toolslice.sha256Hex(toolslice.canonicalize(ARGS)), ARGS_SHA);
  assert.equal(toolslice.canonicalize('[1.0,1e-7,1E21]', 'jcs'), '[1,1e-7,1e+21]');
  assert.throws(() => toolslice.canonicalize(ARGS, 'jcs'), { code: 'unsafe_integer' });
  const span = toolslice.toolSpan('read_file', ARGS, RESULT, 'ok', { json: true });
  assert.deepEqual(span, {
    name: 'read_file', status: 'ok', args_sha256: ARGS_SHA, args_len: 52, result_sha256: RESULT_SHA, result_len: 35,
  });
  // Node's crypto agrees on bytes and on strings (UTF-8).
  for (const input of ['', 'abc', 'café ☕', Buffer.alloc(200_000, 7)]) {
    assert.equal(toolslice.sha256Hex(input), createHash('sha256').update(input).digest('hex'));
  }
  const data = Buffer.from('abcxyz');
  const hex = toolslice.sha256HexBatch(data, new Uint32Array([3, 0, 3]));
  assert.equal(hex.slice(0, 64), createHash('sha256').update('abc').digest('hex'));
  assert.equal(hex.slice(64, 128), createHash('sha256').update('').digest('hex'));
});

test('API: gate with a Map, unstable bodies, read-back', () => {
  const store = new Map();
  const span = toolslice.toolSpan('read_file', ARGS, RESULT, 'ok', { json: true });
  toolslice.writeBodies(store, span, ARGS, RESULT, { json: true });
  assert.deepEqual(toolslice.exportReady([span], store), []);
  store.set(RESULT_SHA, '{}');
  assert.throws(() => toolslice.writeBodies(store, span, ARGS, RESULT, { json: true }), {
    code: 'unstable_canonical_form',
    message: `unstable canonical form: ${RESULT_SHA}`,
  });
  const rb = toolslice.readBack([span], [{ ...span, result_sha256: RESULT_SHA.slice(0, 20) }]);
  assert.equal(rb.ok, false);
  assert.equal(rb.issues[0].truncated, true);
});

test('API: seed fixtures through classifyHop and HopStream', () => {
  const row = toolslice.classifyHop(...WRAP);
  for (const [k, v] of Object.entries(WRAP_ROW)) assert.equal(row[k], v, k);
  const stream = new toolslice.HopStream();
  for (const ch of WRAP[0]) stream.push(ch);
  assert.deepEqual(stream.close(WRAP[1], WRAP[2]), row);
  assert.throws(() => stream.push('x'), { code: 'stream_closed' });
});

test('hash: python (default), jcs, raw, short, stdin, errors', () => {
  const s = scratch();
  try {
    const args = s.file('args.json', ARGS);
    assert.equal(cli(['hash', args]).stdout, ARGS_SHA + '\n');
    assert.equal(cli(['hash', '--canonical', 'jcs', s.file('r.json', RESULT)]).stdout, RESULT_SHA + '\n');
    assert.equal(cli(['hash', '--canonical', 'raw', args]).stdout, createHash('sha256').update(ARGS).digest('hex') + '\n');
    assert.equal(cli(['hash', '--short'], ARGS).stdout, ARGS_SHA.slice(0, 16) + '\n');
    const dup = cli(['hash'], '{"a":1,"a":2}');
    assert.equal(dup.status, 0);
    assert.match(dup.stderr, /duplicate key at \$\.a/);
    for (const [argv, input, pattern] of [
      [['hash', '/no/such.json'], undefined, /cannot read \/no\/such\.json/],
      [['hash'], '{"a":', /stdin: invalid JSON: expected a JSON value at \$\.a \(line 1/],
      [['hash', '--canonical', 'jcs', args], undefined, /unsafe_integer|cannot be held exactly/],
      [['hash', '--canonical', 'xml'], '1', /--canonical must be/],
    ]) {
      const r = cli(argv, input);
      assert.equal(r.status, 2, argv.join(' '));
      assert.match(r.stderr, pattern);
      assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
    }
  } finally {
    s.done();
  }
});

test('record + gate + diff: the seed loop on disk', () => {
  const s = scratch();
  try {
    const [args, result, store, spans] = [s.file('a.json', ARGS), s.file('r.json', RESULT), join(s.dir, 'bodies'), s.file('spans.jsonl')];
    assert.equal(cli(['record', '--name', 'read_file', '--status', 'ok', '--args', args, '--result', result, '--store', store, '--out', spans]).status, 0);
    assert.deepEqual(readdirSync(store).sort(), [RESULT_SHA, ARGS_SHA].sort());
    assert.equal(readFileSync(join(store, ARGS_SHA), 'utf8'), '{"f":1.0,"n":12345678901234567890,"path":"src/a.rs"}');
    let gate = cli(['gate', '--spans', spans, '--store', store]);
    assert.equal(gate.status, 0, gate.stderr);

    assert.equal(cli(['record', '--name', 'edit', '--status', 'running', '--args', result, '--result', args, '--store', store, '--out', spans]).status, 0);
    unlinkSync(join(store, RESULT_SHA));
    gate = cli(['gate', '--spans', spans, '--store', store]);
    assert.equal(gate.status, 1);
    assert.equal(gate.stdout, `missing:${RESULT_SHA}\nopen:edit\nmissing:${RESULT_SHA}\n`);

    const one = s.file('one.jsonl', readFileSync(spans, 'utf8').split('\n')[0] + '\n');
    // Neither run is gated (an open span, a missing body): --ungated diffs them anyway.
    const diff = cli(['diff', '--json', '--ungated', '--store', store, spans, one]);
    assert.equal(diff.status, 1);
    assert.deepEqual(JSON.parse(diff.stdout), {
      only_left: [['edit', 'running', RESULT_SHA, ARGS_SHA]],
      only_right: [],
    });
    assert.match(diff.stderr, new RegExp(`spans\\.jsonl is not gated: missing:${RESULT_SHA}, open:edit, missing:${RESULT_SHA}`));
    assert.equal(cli(['diff', '--ungated', one, one]).status, 0);
    const rb = cli(['gate', '--spans', spans, '--fetched', one]);
    assert.equal(rb.status, 1);
    assert.match(rb.stdout, /^readback:missing_span:edit$/m);
  } finally {
    s.done();
  }
});

test('hop: a row per call, --log, --mutations-only, policy drift in diff', () => {
  const s = scratch();
  try {
    const [p, a, m] = WRAP.map((text, i) => s.file(`b${i}`, text));
    const out = cli(['hop', '--process', p, '--adapter', a, '--model', m, '--call-id', 'call_91']);
    assert.equal(out.status, 0, out.stderr);
    const row = JSON.parse(out.stdout);
    for (const [k, v] of Object.entries(WRAP_ROW)) assert.equal(row[k], v, k);
    assert.equal(row.tool_call_id, 'call_91');

    const log = s.file('hops.jsonl');
    assert.equal(cli(['hop', '--process', p, '--adapter', a, '--model', m, '--log', log, '--call-id', 'c1']).status, 0);
    assert.equal(cli(['hop', '--process', p, '--adapter', p, '--model', p, '--log', log, '--call-id', 'c2']).status, 0);
    assert.equal(cli(['hop', '--process', p, '--adapter', p, '--model', p, '--log', log, '--mutations-only']).status, 0);
    const rows = readFileSync(log, 'utf8').trim().split('\n').map((l) => JSON.parse(l));
    assert.deepEqual(rows.map((r) => r.mutation_hop), ['prompt_builder_wrap', 'no_payload_mutation']);
    const filtered = cli(['hop', '--mutations-only', log]);
    assert.deepEqual(filtered.stdout.trim().split('\n').map((l) => JSON.parse(l).tool_call_id), ['c1']);
    // Lines that are not hop rows are named (exit 1); a row whose label its hashes contradict
    // is noted and still filtered by its label.
    const lied = { ...rows[1], tool_call_id: 'c3', mutation_hop: 'adapter_shrink' };
    const mixed = s.file('mixed.jsonl', readFileSync(log, 'utf8') + 'not json\n' + JSON.stringify(lied) + '\n');
    const noisy = cli(['hop', '--mutations-only', mixed]);
    assert.equal(noisy.status, 1);
    assert.deepEqual(noisy.stdout.trim().split('\n').map((l) => JSON.parse(l).tool_call_id), ['c1', 'c3']);
    assert.match(noisy.stderr, /mixed\.jsonl:3: not JSON/);
    assert.match(noisy.stderr, /mixed\.jsonl:4: mutation_hop is adapter_shrink but its hashes say no_payload_mutation/);

    const receipts = s.file('receipts.json', '[{"field_path":"$.token","rule_id":"secret-v2","original_len":40,"replacement":"[REDACTED]"}]');
    const right = s.file('right.jsonl');
    assert.equal(cli(['hop', '--process', p, '--adapter', a, '--model', m, '--log', right, '--call-id', 'c1', '--receipts', receipts]).status, 0);
    assert.equal(cli(['hop', '--process', p, '--adapter', p, '--model', p, '--log', right, '--call-id', 'c2']).status, 0);
    const drift = cli(['diff', log, right]);
    assert.equal(drift.status, 0, 'policy drift alone is not a regression');
    assert.match(drift.stdout, /^policy_drift c1 \$\.token \(none\) -> secret-v2$/m);

    const usage = cli(['hop', '--process', p]);
    assert.equal(usage.status, 2);
    assert.match(usage.stderr, /missing --adapter, --model/);
  } finally {
    s.done();
  }
});

test('diffRuns reads both files and picks the comparison the CLI and the page share', () => {
  const rec = (status) => JSON.stringify(toolslice.toolSpan('grep', { q: 'x' }, 'hit', status));
  const manifest = toolslice.diffRuns(`${rec('ok')}\n\n${rec('ok')}\n`, new TextEncoder().encode(`${rec('ok')}\n${rec('error')}\n`));
  assert.equal(manifest.kind, 'manifest');
  assert.equal(manifest.left_records, 2);
  assert.equal(manifest.differs, true);
  assert.equal(manifest.diff.only_right.length, 1);
  assert.equal(manifest.diff.only_right[0][1], 'error');

  const span = (injected, hash) => JSON.stringify({ name: 'read_file', observed_bytes: 100, injected_bytes: injected, injected_tokens: 25, clip_reason: injected < 100 ? 'prompt_token_cap' : 'none', sha256_observed: 'aa', sha256_injected: hash });
  const slices = toolslice.diffRuns(span(100, 'aa'), span(40, 'bb'));
  assert.equal(slices.kind, 'slices');
  assert.equal(slices.diff.injected_changed.length, 1);
  assert.equal(slices.differs, true);
  assert.equal(toolslice.diffRuns(span(100, 'aa'), span(100, 'aa')).differs, false);

  const hop = toolslice.classifyHop('abc', 'abc', 'abc', { toolCallId: 'c1' });
  const hops = toolslice.diffRuns(JSON.stringify([hop]), JSON.stringify(hop));
  assert.equal(hops.kind, 'hops');
  assert.equal(hops.differs, false);
  assert.equal(hops.diff.same, 1);

  assert.throws(() => toolslice.diffRuns(JSON.stringify(hop), rec('ok')), { code: 'mixed_runs' });
  assert.throws(() => toolslice.diffRuns(`${rec('ok')}\n{oops\n`, '', { leftName: 'a.jsonl' }),
    (err) => err.code === 'invalid_json' && /^a\.jsonl, line 2: not JSON: /.test(err.message));
  assert.throws(() => toolslice.diffRuns(new Uint8Array([0x7b, 0xff]), ''), { code: 'invalid_json' });
});

test('readRecords takes an array, one pretty-printed object or JSON lines', () => {
  assert.deepEqual(toolslice.readRecords('[{"a":1},{"a":2}]'), [{ a: 1 }, { a: 2 }]);
  assert.deepEqual(toolslice.readRecords('{\n  "a": 1\n}\n'), [{ a: 1 }]);
  assert.deepEqual(toolslice.readRecords('{"a":1}\r\n\n{"a":2}\n'), [{ a: 1 }, { a: 2 }]);
  assert.deepEqual(toolslice.readRecords('  \n'), []);
  assert.throws(() => toolslice.readRecords('{"a":1}\nnope\n', 'x.jsonl'),
    (err) => err.code === 'invalid_json' && err.message.startsWith('x.jsonl, line 2: not JSON: '));
});
