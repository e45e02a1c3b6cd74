// The trace formats through the built package and its CLI: the hand-written fixtures of
// crate/core/tests/fixtures/formats (OTLP GenAI and OpenInference, the Collector file layout,
// Langfuse JSON and JSONL, OpenAI Agents SDK JSONL) give the verdicts of their seed-000
// equivalents; streaming and conversion agree.
import test from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { createReadStream, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import * as toolslice from 'toolslice';

const dir = new URL('../../crate/core/tests/fixtures/formats/', import.meta.url);
const path = (name) => fileURLToPath(new URL(name, dir));
const fixture = (name) => readFileSync(path(name));
const bin = fileURLToPath(new URL('../node_modules/.bin/toolslice', import.meta.url));
const cli = (args, input) => spawnSync(bin, args, { input, encoding: 'utf8' });

const FIXTURES = [
  ['otlp-genai.json', 'otlp-genai.spans.jsonl', 'otlp', 'document'],
  ['otlp-collector-events.jsonl', 'otlp-collector-events.spans.jsonl', 'otlp', 'lines'],
  ['otlp-openinference.json', 'otlp-openinference.spans.jsonl', 'otlp', 'document'],
  ['langfuse.json', 'langfuse.spans.jsonl', 'langfuse', 'document'],
  ['langfuse.jsonl', 'langfuse.spans.jsonl', 'langfuse', 'lines'],
  ['openai-agents.jsonl', 'openai-agents.spans.jsonl', 'openai_agents', 'lines'],
];

/** span_id -> [status, detail] */
const verdicts = (data) => Object.fromEntries(data.rows.map((r) => [r.span_id, [r.status, r.detail.join(',')]]));
const report = (input, options) => {
  const r = toolslice.checkSpans(input, options);
  const data = r.toJSON();
  r.free();
  return data;
};

for (const [name, equivalent, format, layout] of FIXTURES) {
  test(`${name}: read as ${format} (${layout}) with the verdicts of its seed-000 equivalent`, () => {
    const data = report(fixture(name));
    assert.equal(data.format, format);
    assert.equal(data.read_as.layout, layout);
    assert.deepEqual(data.invalid, []);
    const seed = report(fixture(equivalent));
    assert.equal(seed.format, 'spans');
    assert.equal(seed.read_as, undefined);
    assert.deepEqual(verdicts(data), verdicts(seed));
    assert.equal(data.exit_code, seed.exit_code);
    assert.ok(data.rows.every((r) => ['tool_call_id', 'order', 'unmatched'].includes(r.join)));
  });
}

test('the Checker streams a Collector file in small chunks like a one-shot check', async () => {
  const whole = toolslice.checkSpans(fixture('otlp-collector-events.jsonl')).json();
  const checker = new toolslice.Checker();
  for await (const chunk of createReadStream(path('otlp-collector-events.jsonl'), { highWaterMark: 13 })) {
    checker.push(chunk);
  }
  assert.equal(checker.finish().json(), whole);
});

test('format can be forced, and an unknown name is an Error with a code', () => {
  const data = report(fixture('langfuse.json'), { format: 'otlp' });
  assert.equal(data.format, 'otlp');
  assert.match(data.invalid[0].error, /^expected an OTLP export request/);
  assert.throws(() => toolslice.checkSpans('', { format: 'jaeger' }), (err) => err instanceof Error && err.code === 'unknown_format');
  assert.throws(() => new toolslice.Checker({ format: 'jaeger' }), (err) => err.code === 'unknown_format');
});

test('an input in no format gets one clear error', () => {
  const data = report('{\n  "hello": "world"\n}\n');
  assert.equal(data.format, 'unknown');
  assert.equal(data.invalid.length, 1);
  assert.match(data.invalid[0].error, /^not a recognised trace format: expected seed-000 span JSONL/);
});

test('convertToSpans writes seed records that check the same', () => {
  for (const [name] of FIXTURES) {
    const out = toolslice.convertToSpans(fixture(name));
    assert.equal(typeof out.jsonl, 'string');
    assert.deepEqual(out.invalid, []);
    const records = out.jsonl.trimEnd().split('\n').map((l) => JSON.parse(l));
    assert.equal(records.length, out.records);
    assert.ok(records.every((r) => typeof r.toolslice.join === 'string' && 'observed_bytes' in r));
    assert.deepEqual(verdicts(report(out.jsonl)), verdicts(report(fixture(name))), name);
  }
});

test('CLI: check reads every format and --format forces one', () => {
  const r = cli(['check', '--json', path('otlp-openinference.json')]);
  assert.equal(r.status, 1);
  const data = JSON.parse(r.stdout);
  assert.equal(data.format, 'otlp');
  assert.deepEqual(data.read_as.conventions, ['openinference']);
  const table = cli(['check', path('openai-agents.jsonl')]);
  assert.equal(table.status, 1);
  assert.match(table.stdout, /^# read as: openai_agents \(lines\)$/m);
  assert.match(table.stdout, /^silent_clip +span_fn_read +read_file +113 +69 ratio=0\.39$/m);
  const forced = cli(['check', '--format', 'langfuse', path('otlp-genai.json')]);
  assert.equal(forced.status, 1);
  assert.match(forced.stdout, /# invalid entry 1: expected a Langfuse observation/);
  const bad = cli(['check', '--format', 'jaeger', path('otlp-genai.json')]);
  assert.equal(bad.status, 2);
  assert.match(bad.stderr, /^toolslice: unknown format "jaeger"/);
});

test('CLI: convert --to spans writes span JSONL that check reads back', () => {
  for (const [name] of FIXTURES) {
    const r = cli(['convert', '--to', 'spans', path(name)]);
    assert.equal(r.status, 0, r.stderr);
    const back = cli(['check', '--json', '-'], r.stdout);
    const again = JSON.parse(back.stdout);
    assert.equal(again.format, 'spans');
    assert.deepEqual(verdicts(again), verdicts(report(fixture(name))), name);
  }
  // stdin works too.
  const piped = cli(['convert', '--to', 'spans'], fixture('langfuse.jsonl'));
  assert.equal(piped.status, 0);
  assert.equal(piped.stdout.trimEnd().split('\n').length, 7);
});

test('CLI: convert usage and unreadable input', () => {
  for (const args of [['convert', path('langfuse.json')], ['convert', '--to', 'csv', path('langfuse.json')], ['convert', '--to', 'spans', '/no/such/file']]) {
    const r = cli(args);
    assert.equal(r.status, 2, args.join(' '));
    assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
  }
  const r = cli(['convert', '--to', 'spans'], 'not json at all\n{"resourceSpans": 3}\n');
  assert.equal(r.status, 1);
  assert.match(r.stderr, /^toolslice: line 1: /m);
});
