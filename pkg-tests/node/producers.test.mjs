// The installed `toolslice` command on traces written by the real libraries
// (pkg-tests/producers/corpus: LangChain with OpenInference and OpenLLMetry, pydantic-ai, the
// OpenAI Agents SDK, openai-v2, OpenInference's openai instrumentor, the Vercel AI SDK, Arize
// Phoenix's exports), each against its truth file: what each tool returned and what the model
// server received. Every row's status and join, and the exit status, must match.
import test from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const bin = fileURLToPath(new URL('../node_modules/.bin/toolslice', import.meta.url));
const corpus = fileURLToPath(new URL('../producers/corpus/', import.meta.url));
const cli = (args) => spawnSync(bin, args, { encoding: 'utf8', maxBuffer: 64 << 20 });
const truths = readdirSync(corpus)
  .filter((f) => f.endsWith('.truth.json'))
  .sort()
  .map((f) => JSON.parse(readFileSync(corpus + f, 'utf8')));

test('the corpus holds a run of every producer', () => {
  assert.ok(truths.length >= 20, `${truths.length} runs`);
  const traces = truths.map((t) => t.trace).join(' ');
  for (const p of ['langchain-openinference', 'langchain-openllmetry', 'pydantic-ai', 'openai-agents',
    'openai-agents-openinference', 'openai-v2-util-genai', 'openinference-openai', 'ai-sdk-generate',
    'ai-sdk-stream', 'phoenix-langchain']) {
    assert.ok(traces.includes(p), p);
  }
});

for (const truth of truths) {
  test(`check ${truth.trace}: every row and the exit status as the truth says`, () => {
    const r = cli(['check', '--json', corpus + truth.trace]);
    assert.equal(r.status, truth.exit_code, r.stderr);
    const report = JSON.parse(r.stdout);
    assert.equal(report.format, truth.format);
    assert.equal(report.rows.length, truth.rows.length);
    for (const want of truth.rows) {
      const [row, ...more] = report.rows.filter((x) => x.name === want.tool);
      assert.equal(more.length, 0, want.tool);
      assert.deepEqual({ tool: want.tool, status: row.status, join: row.join },
        { tool: want.tool, status: want.status, join: want.join }, JSON.stringify(row.notes));
      if (want.observed_bytes !== null && want.status !== 'incomplete') {
        assert.equal(row.observed_bytes, want.observed_bytes, `${want.tool}: the tool's own text is measured, not a wrapper`);
      }
    }
  });
}

test('a trace with no tool call fails with one line saying what it held, unless --allow-empty', () => {
  const empty = truths.filter((t) => t.rows.length === 0);
  assert.ok(empty.length >= 2);
  for (const t of empty) {
    const strict = cli(['check', corpus + t.trace]);
    assert.equal(strict.status, 1, t.trace);
    const lines = strict.stderr.trim().split('\n');
    assert.equal(lines.length, 1, strict.stderr);
    assert.match(lines[0], /^toolslice: .*: nothing checked: no tool call in \d+ entries read as otlp: .*model call/);
    assert.match(strict.stdout, /^# nothing checked: /m);
    const allowed = cli(['check', '--allow-empty', corpus + t.trace]);
    assert.equal(allowed.status, 0, t.trace);
    assert.equal(allowed.stderr, '');
  }
});

test('nothing recognised is not a green run: {"foo":1} and an empty input exit 1', () => {
  for (const input of ['{"foo":1}\n', '']) {
    const r = spawnSync(bin, ['check'], { input, encoding: 'utf8' });
    assert.equal(r.status, 1, JSON.stringify(input));
    assert.match(r.stderr, /^toolslice: stdin: nothing checked: /);
    assert.equal(spawnSync(bin, ['check', '--allow-empty'], { input, encoding: 'utf8' }).status, 0);
  }
});

test('the JS API: exitCode and nothingChecked for a run with no tool call, allowEmpty', async () => {
  const { checkSpans, Checker } = await import('toolslice');
  const text = readFileSync(corpus + 'ai-sdk-no-tools.otlp.jsonl');
  const strict = checkSpans(text);
  assert.equal(strict.exitCode, 1);
  assert.match(strict.nothingChecked, /^nothing checked: no tool call in 2 entries read as otlp: /);
  assert.equal(strict.toJSON().nothing_checked, strict.nothingChecked);
  assert.equal(checkSpans(text, { allowEmpty: true }).exitCode, 0);
  const streamed = new Checker({ allowEmpty: true });
  streamed.push(text);
  const report = streamed.finish();
  assert.equal(report.exitCode, 0);
  assert.equal(report.nothingChecked, strict.nothingChecked);
  // A run with tool calls has no such line.
  assert.equal(checkSpans(readFileSync(corpus + 'pydantic-ai.otlp.jsonl')).nothingChecked, undefined);
});
