// Seed 002 to the letter, through the installed package and the `toolslice` command: the
// gate's order is redact, canonicalise, hash, store; volatile values leave the hash; a diff
// runs only after both gates are empty; a tool function is gated by one wrapper.
import test from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as toolslice from 'toolslice';

const bin = fileURLToPath(new URL('../node_modules/.bin/toolslice', import.meta.url));
const cli = (args, input) => spawnSync(bin, args, { input, encoding: 'utf8' });
// A live-looking GitHub token (the redaction corpus's shape; not a real credential).
const GH = 'ghp_aB3dE5fG7hI9jK1lM3nO5pQ7rS9tU1vW3xY5';

function scratch() {
  const dir = mkdtempSync(join(tmpdir(), 'toolslice-seeds-'));
  const file = (name, text) => {
    const path = join(dir, name);
    if (text !== undefined) writeFileSync(path, text);
    return path;
  };
  return { dir, file, done: () => rmSync(dir, { recursive: true, force: true }) };
}

const storeText = (dir) => readdirSync(dir).map((f) => readFileSync(join(dir, f), 'utf8')).join('\n');

test('record: no secret reaches the body store; receipts ride in the span; off is explicit', () => {
  const s = scratch();
  try {
    const args = s.file('a.json', JSON.stringify({ remote: 'origin', auth: `token ${GH}` }));
    const result = s.file('r.json', JSON.stringify({ log: `pushed with ${GH}` }));
    const store = join(s.dir, 'bodies');
    const r = cli(['record', '--name', 'git_push', '--status', 'ok', '--args', args, '--result', result, '--store', store]);
    assert.equal(r.status, 0, r.stderr);
    assert.doesNotMatch(storeText(store), /ghp_/);
    assert.doesNotMatch(r.stdout, /ghp_/);
    const span = JSON.parse(r.stdout);
    assert.deepEqual(span.receipts.map((x) => [x.field_path, x.rule_id.length > 0]), [
      ['$.args.auth', true],
      ['$.result.log', true],
    ]);
    assert.match(readFileSync(join(store, span.result_sha256), 'utf8'), /^\{"log":"pushed with \[REDACTED:github_token\]"\}$/);
    assert.equal(cli(['gate', '--spans', s.file('spans.jsonl', r.stdout), '--store', store]).status, 0);

    const raw = join(s.dir, 'raw');
    const off = cli(['record', '--no-redact', '--name', 'git_push', '--status', 'ok', '--args', args, '--result', result, '--store', raw]);
    assert.equal(off.status, 0, off.stderr);
    assert.match(storeText(raw), /ghp_/);
    assert.equal(JSON.parse(off.stdout).receipts, undefined);
  } finally {
    s.done();
  }
});

test('toolSpan/writeBodies redact and strip by default; the seed hash with both off', () => {
  const args = { path: '/tmp/tmp.Xy12/repo/a.rs', request_id: 'req-91f', token: GH };
  const later = { path: '/tmp/tmp.Qq77/repo/a.rs', request_id: 'req-03a', token: GH };
  const a = toolslice.toolSpan('read_file', args, { ok: true, timestamp: '2026-11-30T01:00:00Z' }, 'ok');
  const b = toolslice.toolSpan('read_file', later, { ok: true, timestamp: '2026-12-01T09:00:00Z' }, 'ok');
  assert.equal(a.args_sha256, b.args_sha256, 'temp dir and request id are not in the hash');
  assert.equal(a.result_sha256, b.result_sha256, 'the timestamp is not in the hash');
  assert.deepEqual(a.volatile.map((v) => [v.field_path, v.kind, v.value]), [
    ['$.args.path', 'temp_path', '/tmp/tmp.Xy12/repo/a.rs'],
    ['$.args.request_id', 'request_id', 'req-91f'],
    ['$.result.timestamp', 'timestamp', '2026-11-30T01:00:00Z'],
  ]);
  const store = new Map();
  toolslice.writeBodies(store, a, args, { ok: true, timestamp: '2026-11-30T01:00:00Z' });
  const body = store.get(a.args_sha256);
  assert.doesNotMatch(body, /ghp_|tmp\.Xy12|req-91f/);
  assert.deepEqual(toolslice.exportReady([a], store), []);
  // The manifest ignores the attributes: two runs with different noise do not differ.
  assert.deepEqual(toolslice.diffManifests(toolslice.manifest([a]), toolslice.manifest([b])), { only_left: [], only_right: [] });

  // Configurable: a key kept as data, a path made volatile; off is explicit.
  const tuned = toolslice.toolSpan('t', { time: '09:15', meta: { run: 7 } }, null, 'ok', { volatile: { keep: ['time'], paths: ['$.meta.run'] } });
  assert.deepEqual(tuned.volatile.map((v) => v.field_path), ['$.args.meta.run']);
  assert.throws(() => toolslice.toolSpan('t', {}, null, 'ok', { volatile: { paths: ['meta.run'] } }), { code: 'invalid_policy' });
  const seedArgs = { q: 'x', ts: 1 };
  const bare = toolslice.toolSpan('t', seedArgs, 'r', 'ok', { redact: false, volatile: false });
  assert.equal(bare.args_sha256, toolslice.sha256Hex(toolslice.canonicalize(JSON.stringify(seedArgs))));
});

test('gateTool: one wrapper invokes the tool and records args, result and status', async () => {
  const store = new Map();
  const spans = [];
  const readFile = toolslice.gateTool('read_file', async ({ path }) => {
    if (path === 'missing.txt') {
      const err = new Error(`ENOENT: no such file, open '${path}'`);
      err.code = 'ENOENT';
      throw err;
    }
    return { path, text: `contents of ${path}, key ${GH}` };
  }, { store, onSpan: (span) => spans.push(span) });

  const out = await readFile({ path: 'a.txt' });
  assert.equal(out.text, `contents of a.txt, key ${GH}`, 'the caller gets the tool result unchanged');
  await assert.rejects(readFile({ path: 'missing.txt' }), { code: 'ENOENT' });
  assert.deepEqual(spans.map((s) => [s.name, s.status]), [['read_file', 'ok'], ['read_file', 'error']]);
  assert.equal(spans[0].args_sha256, toolslice.toolSpan('read_file', { path: 'a.txt' }, out, 'ok').args_sha256);
  assert.doesNotMatch([...store.values()].join('\n'), /ghp_/);
  assert.equal(JSON.parse(store.get(spans[1].result_sha256)).error.code, 'ENOENT');
  assert.deepEqual(toolslice.exportReady(spans, store), []);

  // A plain synchronous function too; arguments are hashed before the tool can change them.
  const spans2 = [];
  const mutate = toolslice.gateTool('mutate', (args) => { args.n += 1; return args.n; }, { onSpan: (s) => spans2.push(s) });
  assert.equal(await mutate({ n: 1 }), 2);
  assert.equal(spans2[0].args_sha256, toolslice.toolSpan('mutate', { n: 1 }, 2, 'ok').args_sha256);
  assert.throws(() => toolslice.gateTool('x', 'not a function'), { code: 'invalid_argument' });
});

test('diff: span records are compared only after both gates are empty', () => {
  const s = scratch();
  try {
    const store = join(s.dir, 'bodies');
    const rec = (name, status, out) => {
      const a = s.file(`${name}.a.json`, JSON.stringify({ q: name }));
      const r = s.file(`${name}.r.json`, JSON.stringify({ hits: [name] }));
      const res = cli(['record', '--name', name, '--status', status, '--args', a, '--result', r, '--store', store, '--out', out]);
      assert.equal(res.status, 0, res.stderr);
    };
    const left = join(s.dir, 'left.jsonl');
    const right = join(s.dir, 'right.jsonl');
    rec('grep', 'ok', left);
    rec('grep', 'ok', right);
    let d = cli(['diff', '--store', store, left, right]);
    assert.equal(d.status, 0, d.stderr);

    // No store: the bodies cannot be checked, so the runs are not gated.
    d = cli(['diff', left, right]);
    assert.equal(d.status, 1);
    assert.match(d.stderr, /left\.jsonl is not gated: bodies not checked/);

    // An open span on the right: refused, and named; --ungated diffs anyway (and says so).
    rec('edit', 'running', right);
    d = cli(['diff', '--store', store, left, right]);
    assert.equal(d.status, 1);
    assert.match(d.stderr, /right\.jsonl is not gated: open:edit/);
    assert.match(d.stderr, /diff refused/);
    d = cli(['diff', '--json', '--ungated', '--store', store, left, right]);
    assert.equal(d.status, 1, 'the runs differ');
    assert.deepEqual(JSON.parse(d.stdout).only_right.map((e) => e[0]), ['edit']);
    assert.match(d.stderr, /right\.jsonl is not gated: open:edit/);
    assert.doesNotMatch(d.stderr, /diff refused/);
    d = cli(['diff', '--json', '--store', store, left, left]);
    assert.equal(d.status, 0, d.stderr);
    assert.equal(d.stderr, '');

    const api = toolslice.diffRuns(readFileSync(left), readFileSync(right), { store: new Map() });
    assert.equal(api.gate.gated, false);
    assert.equal(api.fails, true);
    assert.equal(api.gate.left[0].kind, 'missing');
  } finally {
    s.done();
  }
});

test('generation text gets its own fingerprint, in a file beside the manifest', () => {
  const s = scratch();
  try {
    const fp = (file, turn, text) => {
      const r = cli(['record', '--generation', s.file(`${file}.${turn}.txt`, text), '--turn', String(turn), '--out', join(s.dir, `${file}.jsonl`)]);
      assert.equal(r.status, 0, r.stderr);
    };
    fp('a', 1, 'I will read the config.');
    fp('a', 2, `The port is 8080. Token ${GH}.`);
    fp('b', 1, 'I will read the config.');
    fp('b', 2, 'The port is 5432.');
    const lines = readFileSync(join(s.dir, 'a.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l));
    assert.equal(lines[1].turn, 2);
    assert.equal(lines[1].generation_sha256, toolslice.sha256Hex('The port is 8080. Token [REDACTED:github_token].'));
    assert.equal(lines[1].receipts.length, 1);
    assert.doesNotMatch(readFileSync(join(s.dir, 'a.jsonl'), 'utf8'), /ghp_/);
    const d = cli(['diff', join(s.dir, 'a.jsonl'), join(s.dir, 'b.jsonl')]);
    assert.equal(d.status, 1, d.stderr);
    assert.match(d.stdout, /^~ turn:2 /m);
    assert.match(d.stdout, /# generations same=1 changed=1/);
    assert.equal(cli(['diff', join(s.dir, 'a.jsonl'), join(s.dir, 'a.jsonl')]).status, 0);
    // The tool hash is untouched by it: the API keeps the two apart.
    assert.equal(toolslice.generationFingerprint('x', { redact: false }).generation_sha256, toolslice.sha256Hex('x'));
  } finally {
    s.done();
  }
});

test('emitToolSpan: the seed emitter\'s record and line from the two strings of a tool boundary', () => {
  const observed = 'app:\n  name: billing\n  port: 8443\n';
  const injected = 'app:\n  name: billing\n';
  const { record, line } = toolslice.emitToolSpan({
    spanId: 'tool-14', parentId: 'turn-3', name: 'read_file', observed, injected,
    reason: 'prompt_token_cap', tokenCount: 7, builderVersion: 'cap-v3',
  });
  assert.equal(record.observed_bytes, Buffer.byteLength(observed));
  assert.equal(record.injected_bytes, Buffer.byteLength(injected));
  assert.equal(record.sha256_injected, toolslice.sha256Hex(injected).slice(0, 16));
  assert.equal(line, `${JSON.stringify(record).replaceAll('":', '": ').replaceAll(',"', ', "')}\n`);
  const report = toolslice.checkSpans(line);
  assert.equal(report.exitCode, 0);
  assert.equal(report.toJSON().rows[0].status, 'clipped');
  assert.throws(() => toolslice.emitToolSpan({ spanId: 's', name: 't', observed: 'a', injected: '', reason: 'too_big', tokenCount: 0 }),
    (err) => err.code === 'unknown_clip_reason' && /"too_big"/.test(err.message));
});

test('check: clip_reason is a closed enum; --lenient-clip-reason keeps the seed\'s leniency', () => {
  const run = `${JSON.stringify({ span_id: 't1', name: 'read_file', observed_bytes: 1000, injected_bytes: 120, injected_tokens: 80, clip_reason: 'too_big' })}\n`;
  const strict = cli(['check'], run);
  assert.equal(strict.status, 1);
  assert.match(strict.stdout, /^silent_clip\s+t1/m);
  assert.match(strict.stdout, /unknown clip_reason "too_big": not a declaration/);
  const lenient = cli(['check', '--lenient-clip-reason'], run);
  assert.equal(lenient.status, 0, lenient.stdout);
  assert.match(lenient.stdout, /^clipped\s+t1 .* too_big,ratio=0\.88/m);
  assert.equal(toolslice.checkSpans(run).toJSON().counts.unknown_clip_reason, 1);
});

test('runTerminal: labelled streams, success beside the exit code, timeout, re-verify', () => {
  const ok = toolslice.runTerminal({ command: 'npm test', stdout: 'all 12 passed\n', stderr: 'warn: slow\n', exitCode: 0 });
  assert.equal(ok.output, 'Tool: terminal\nCommand: npm test\nExit code: 0\nSuccess: yes\nOutput:\n--- stdout ---\nall 12 passed\n--- stderr ---\nwarn: slow\n');
  assert.equal(ok.success, true);
  assert.equal(ok.reverify, false);
  const log = Array.from({ length: 300 }, (_, i) => `step ${i}`).join('\n');
  const hung = toolslice.runTerminal({ command: 'deploy', stdout: log, timedOut: true, timeoutSecs: 120 }, { budget: { bytes: 500 } });
  assert.ok(Buffer.byteLength(hung.output) <= 500);
  assert.match(hung.output, /Exit code: not reported\nTimed out: yes \(after 120 s\)\nSuccess: unknown: re-verify/);
  assert.equal(hung.success, null);
  assert.equal(hung.reverify, true);
  assert.equal(hung.truncation.truncated, true);
});

test('pack --tenant drops other tenants\' rows; pack --store + get-more page the cut result', () => {
  const s = scratch();
  try {
    const rows = JSON.stringify({ rows: [{ tenant_id: 'acme', n: 1 }, { tenant_id: 'globex', n: 2 }] });
    const r = cli(['pack', '--tool', 'list_rows', '--tenant', 'acme'], rows);
    assert.equal(r.status, 0, r.stderr);
    const packed = JSON.parse(r.stdout);
    assert.doesNotMatch(packed.envelope.content, /globex/);
    assert.deepEqual(packed.receipts.map((x) => [x.field_path, x.rule_id]), [['$.rows[1]', 'foreign_tenant']]);

    const log = Array.from({ length: 200 }, (_, i) => `line ${i} of the build log`).join('\n') + '\n';
    const store = join(s.dir, 'pages');
    const first = JSON.parse(cli(['pack', '--tool', 'get_logs', '--call-id', 'call_91', '--limit', '600', '--store', store], log).stdout);
    assert.equal(first.envelope.truncated, true);
    assert.match(first.envelope.content, /get_more\(id="call_91", offset=\d+\)/);
    let offset = first.envelope.next_offset;
    const pages = [];
    while (offset !== undefined && offset !== null) {
      const g = cli(['get-more', '--store', store, '--id', 'call_91', '--offset', String(offset)]);
      assert.equal(g.status, 0, g.stderr);
      const page = JSON.parse(g.stdout).envelope;
      pages.push(page);
      offset = page.next_offset;
      assert.ok(pages.length < 100);
    }
    assert.ok(pages.length >= 1);
    assert.match(pages.at(-1).content, /line 199 of the build log/);
    const missing = cli(['get-more', '--store', store, '--id', 'nope', '--offset', '0']);
    assert.equal(missing.status, 2);
  } finally {
    s.done();
  }
});

test('truncate: the decision tree names CSV and YAML', () => {
  let csv = 'id,customer,total\n';
  for (let i = 1; i <= 400; i++) csv += `${i},"Customer ${i}, Ltd",${i * 3}\n`;
  const t = toolslice.truncate(csv, { budget: { bytes: 500 } });
  assert.equal(t.pattern, 'csv');
  assert.ok(Buffer.byteLength(t.text) <= 500);
  assert.match(t.text, /^id,customer,total\n\[CSV: 400 rows; header, first and last rows kept\]\n1,/);
  assert.match(t.text, /400,"Customer 400, Ltd",1200\n$/);

  let yaml = 'app:\n  name: billing\nlimits:\n';
  for (let i = 0; i < 200; i++) yaml += `  rule_${i}: ${i}\n`;
  yaml += 'deploy:\n  status: failed\n  receipt_id: r-7731\nserver:\n  port: 8443\n';
  const y = toolslice.truncate(yaml, { budget: { bytes: 500 } });
  assert.equal(y.pattern, 'yaml');
  for (const want of ['app:', 'deploy:', 'status: failed', 'receipt_id: r-7731', 'server:', 'port: 8443']) {
    assert.ok(y.text.includes(want), `${want} in\n${y.text}`);
  }
});
