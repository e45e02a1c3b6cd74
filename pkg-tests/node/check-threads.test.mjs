// `toolslice check` on large trace files read by several threads (pieces of whole lines
// claimed by each thread, a worker's handed back as parts, all taken in in order): the same output, byte for byte, as reading in
// one thread, for every line-layout trace format with odd lines, and for the files that
// cannot be split (a single JSON document, span JSONL), which the main thread then reads
// alone.
import test from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const bin = fileURLToPath(new URL('../node_modules/.bin/toolslice', import.meta.url));
const formats = new URL('../../crate/core/tests/fixtures/formats/', import.meta.url);
const dir = mkdtempSync(join(tmpdir(), 'toolslice-threads-'));
// Above the size from which the CLI splits a file when --threads is given (4 MB), below
// the default's (64 MB).
const SIZE = 18e6;

const run = (args) => spawnSync(bin, args, { encoding: 'utf8', maxBuffer: 1 << 30 });

/** A fixture's lines repeated to `size`, with blank, invalid, CRLF and too-long lines among them. */
function bigLines(name, target = SIZE, as = name) {
  const lines = readFileSync(new URL(name, formats), 'utf8').split('\n').filter((l) => l.trim());
  const odd = ['', '{not json', '[1,2]', '   ', `{"pad":"${'x'.repeat(200)}"}`];
  const out = [];
  let size = 0;
  for (let i = 0; size < target; i++) {
    const line = i % 97 === 5 ? odd[i % odd.length] : lines[i % lines.length];
    const end = i % 7 === 3 ? '\r\n' : '\n';
    out.push(line + end);
    size += line.length + end.length;
  }
  // The last line without its newline.
  out.push(lines[0]);
  const path = join(dir, as);
  writeFileSync(path, out.join(''));
  return path;
}

function same(args, threads = ['2', '3']) {
  const one = run(['check', '--threads', '1', ...args]);
  assert.ok(one.stdout.length > 1000, one.stderr);
  for (const n of threads) {
    const several = run(['check', '--threads', n, ...args]);
    assert.equal(several.status, one.status, `${n} threads: ${several.stderr}`);
    assert.equal(several.stderr, one.stderr, `${n} threads`);
    assert.ok(several.stdout === one.stdout, `${n} threads: ${args.join(' ')}: the output differs`);
  }
  return one;
}

/** `check` run in this process (as the CLI runs it), with `prepare` to start its workers. */
async function inProcess() {
  const { Writable } = await import('node:stream');
  const { prepare, run: runCheck } = await import(new URL('../node_modules/toolslice/cli/check.mjs', import.meta.url));
  const toolslice = await import('toolslice');
  const stream = (into) => new Writable({ write(chunk, _e, done) { into.push(Buffer.from(chunk)); done(); } });
  const check = async (args, prepared) => {
    const kept = [];
    const code = await runCheck(args, { toolslice, stdout: stream(kept), stderr: stream([]), prepared });
    return { code, text: Buffer.concat(kept).toString() };
  };
  return { prepare, check };
}

for (const name of ['otlp-collector-events.jsonl', 'langfuse.jsonl', 'openai-agents.jsonl']) {
  test(`check of a large ${name} gives the same report in several threads as in one`, () => {
    const path = bigLines(name);
    const table = same([path]);
    assert.match(table.stdout, /# invalid line \d+: not valid JSON/);
    same(['--jsonl', path]);
    same(['--json', '--flagged-only', path], ['2']);
  });
}

test('check of files that cannot be split (one JSON document, span JSONL) reads them in one thread', () => {
  // A pretty-printed OTLP document: newlines everywhere, but one value.
  const doc = JSON.parse(readFileSync(new URL('otlp-genai.json', formats), 'utf8'));
  const spans = doc.resourceSpans[0].scopeSpans[0].spans;
  const copies = [];
  for (let size = 0; size < SIZE; size += JSON.stringify(spans).length) copies.push(...spans);
  doc.resourceSpans[0].scopeSpans[0].spans = copies;
  const document = join(dir, 'document.json');
  writeFileSync(document, JSON.stringify(doc, null, 2));
  const r = same(['--flagged-only', document], ['2']);
  assert.match(r.stdout, /# read as: otlp \(document/);
  const line = readFileSync(fileURLToPath(new URL('../fixtures/clipped.jsonl', import.meta.url)), 'utf8');
  const spansPath = join(dir, 'spans.jsonl');
  writeFileSync(spansPath, line.repeat(Math.ceil(SIZE / line.length)));
  same(['--jsonl', spansPath], ['2']);
});

test('check of several large files splits each, and --threads is checked', () => {
  const a = bigLines('langfuse.jsonl');
  const b = bigLines('openai-agents.jsonl');
  same(['--flagged-only', a, b], ['2']);
  const bad = run(['check', '--threads', '0', a]);
  assert.equal(bad.status, 2);
  assert.match(bad.stderr, /--threads must be an integer >= 1/);
});

test('check: a usage error after the workers started ends the process at once', () => {
  // `prepare` starts the workers before `run` finds that --json and --jsonl clash; they
  // waited for a format that never came, and the process never ended.
  const path = bigLines('openai-agents.jsonl');
  const r = spawnSync(bin, ['check', '--json', '--jsonl', '--threads', '2', path], { encoding: 'utf8', timeout: 30e3 });
  assert.equal(r.error, undefined, 'the process was killed after 30 s');
  assert.equal(r.status, 2);
  assert.match(r.stderr, /--json and --jsonl cannot be combined/);
});

test('check: workers prepare() started never keep the process alive on their own', () => {
  // As when loading the module fails after `prepare`: `run` never comes to end them.
  const path = bigLines('openai-agents.jsonl');
  const check = new URL('../node_modules/toolslice/cli/check.mjs', import.meta.url).href;
  // A script file: a process run with `-e` ends when its script does, workers or not.
  const script = join(dir, 'prepare-only.mjs');
  writeFileSync(script, `
    const { prepare } = await import(${JSON.stringify(check)});
    const prepared = await prepare(['--threads', '2', ${JSON.stringify(path)}]);
    process.stdout.write(String(prepared.cuts.length > 2));`);
  const r = spawnSync(process.execPath, [script], { encoding: 'utf8', timeout: 30e3 });
  assert.equal(r.error, undefined, 'the process was killed after 30 s');
  assert.equal(r.stdout, 'true');
  assert.equal(r.status, 0, r.stderr);
});

test('check run() in two threads takes in the worker parts (not the one-thread fallback)', async () => {
  const { prepare, check } = await inProcess();
  const path = bigLines('otlp-collector-events.jsonl');
  // Without --threads, a file below 64 MB is read in one thread.
  assert.equal(await prepare(['--jsonl', path]), null);
  const args = ['--threads', '2', '--jsonl', path];
  const prepared = await prepare(args);
  // The workers loaded (a check does not wait for them: on a loaded machine this thread could
  // read every piece before they start, and the parts would go untested).
  await prepared.hub.ready();
  // Pieces of 1 to 8 MB, give or take a line (each starts and ends at a line's end).
  const pieces = prepared.cuts.length - 1;
  for (let j = 0; j + 1 < pieces; j++) {
    const size = prepared.cuts[j + 1] - prepared.cuts[j];
    assert.ok(size > (1 << 20) - 8192 && size < (8 << 20) + 8192, `piece ${j}: ${size} bytes`);
  }
  const two = await check(args, prepared);
  // Every piece taken in once: read here, or absorbed as a worker's part.
  assert.equal(prepared.pushed + prepared.absorbed, pieces);
  assert.ok(prepared.absorbed >= 1 && prepared.pushed >= 1, `${prepared.pushed} read here, ${prepared.absorbed} absorbed`);
  assert.equal(prepared.refused, 0);
  // Started without `prepare`, the workers start in run() itself.
  const late = await check(args, undefined);
  const one = await check(['--threads', '1', '--jsonl', path], undefined);
  assert.equal(two.code, one.code);
  assert.ok(two.text === one.text && late.text === one.text, 'the reports differ');
});

test('check starts no workers for files whose first lines show they cannot be split', async () => {
  const { prepare } = await inProcess();
  const line = readFileSync(fileURLToPath(new URL('../fixtures/clipped.jsonl', import.meta.url)), 'utf8');
  const spans = join(dir, 'spans-in-process.jsonl');
  writeFileSync(spans, line.repeat(Math.ceil(6e6 / line.length)));
  const doc = join(dir, 'document-in-process.json');
  writeFileSync(doc, JSON.stringify(JSON.parse(readFileSync(new URL('otlp-genai.json', formats), 'utf8')), null, 2) + ' '.repeat(6e6));
  for (const path of [spans, doc]) assert.equal(await prepare(['--threads', '2', '--jsonl', path]), null, path);
  // Nor for a trace format named as span JSONL.
  assert.equal(await prepare(['--threads', '2', '--format', 'spans', bigLines('langfuse.jsonl')]), null);
});

test('check run() in two threads of span JSONL whose first line is long: the workers end, every piece read here', async () => {
  // The first lines decide the format only past the bytes `prepare` looks at (a first span of
  // 1.5 MB): the workers start, and end when the main thread finds span JSONL.
  const { prepare, check } = await inProcess();
  const first = JSON.parse(readFileSync(fileURLToPath(new URL('../fixtures/clipped.jsonl', import.meta.url)), 'utf8').split('\n')[0]);
  first.injected_preview = 'x'.repeat(1.5e6);
  const line = readFileSync(fileURLToPath(new URL('../fixtures/clipped.jsonl', import.meta.url)), 'utf8');
  const path = join(dir, 'spans-long-first.jsonl');
  writeFileSync(path, JSON.stringify(first) + '\n' + line.repeat(Math.ceil(6e6 / line.length)));
  const args = ['--threads', '2', '--jsonl', path];
  const prepared = await prepare(args);
  assert.ok(prepared, 'workers started');
  const two = await check(args, prepared);
  assert.equal(prepared.pushed, prepared.cuts.length - 1);
  assert.equal(prepared.absorbed, 0);
  const one = await check(['--threads', '1', '--jsonl', path], undefined);
  assert.ok(two.text === one.text, 'the reports differ');
});

test('PartReader and Checker.absorb: the API the CLI uses, and its refusals', async () => {
  const { Checker, PartReader } = await import('toolslice');
  const text = readFileSync(new URL('langfuse.jsonl', formats));
  const cut = text.indexOf(10, text.length >> 1) + 1;
  const whole = new Checker({ flaggedOnly: true });
  whole.push(text);
  const expected = whole.finish().toJSON();

  const checker = new Checker({ flaggedOnly: true });
  assert.equal(checker.lineFormat, undefined);
  checker.push(text.subarray(0, cut));
  assert.equal(checker.lineFormat, 'langfuse');
  const reader = new PartReader(checker.lineFormat, { flaggedOnly: true });
  reader.push(text.subarray(cut));
  const part = reader.finish();
  assert.ok(part instanceof Uint8Array && part.length > 0);
  assert.throws(() => reader.finish(), { code: 'checker_finished' });
  // Damaged: refused with a code, and nothing taken.
  assert.throws(() => checker.absorb(part.subarray(0, part.length - 1)), { code: 'part_refused' });
  checker.absorb(part);
  assert.equal(checker.bytesRead, text.length);
  assert.deepEqual(checker.finish().toJSON(), expected);

  assert.throws(() => new PartReader('spans'), { code: 'invalid_argument' });
  assert.throws(() => new PartReader('jaeger'), { code: 'unknown_format' });
  // Inside a line: refused.
  const mid = new Checker();
  mid.push(text.subarray(0, cut - 2));
  assert.throws(() => mid.absorb(part), { code: 'part_refused' });
});

test('check in two threads: a refused part and workers that stop are read by this thread, the same report', async () => {
  const { prepare, check } = await inProcess();
  const path = bigLines('langfuse.jsonl');
  const one = await check(['--threads', '1', '--flagged-only', path], undefined);
  const args = ['--threads', '2', '--flagged-only', path];
  for (const how of ['refused', 'stopped']) {
    const prepared = await prepare(args);
    await prepared.hub.ready();
    const pieces = prepared.cuts.length - 1;
    // The second part a worker hands over damaged (absorb refuses it), or the workers stopped
    // once one part was taken, and nothing of theirs taken after (as when they die).
    const { hub } = prepared;
    const take = hub.take;
    let handed = 0;
    hub.take = (j) => {
      if (how === 'stopped' && handed > 0) return undefined;
      const part = take(j);
      if (part === undefined) return part;
      handed += 1;
      if (how === 'stopped') hub.end();
      return how === 'refused' && handed === 2 ? part.subarray(0, part.length - 3) : part;
    };
    const two = await check(args, prepared);
    assert.equal(two.code, one.code, how);
    assert.equal(prepared.pushed + prepared.absorbed, pieces, how);
    assert.equal(prepared.refused, how === 'refused' ? 1 : 0, how);
    assert.ok(handed >= (how === 'refused' ? 2 : 1), `${how}: ${handed} parts handed over`);
    assert.ok(two.text === one.text, `${how}: the reports differ`);
  }
});

test('check in two threads: a line longer than a piece, in the worker range, is read whole once', () => {
  // bigLines' OTLP file with a 3 MB line (an object nobody reads) at 85%, where the worker's
  // range is cut into 1 MB pieces: the cuts inside it move to its end.
  const path = bigLines('otlp-collector-events.jsonl');
  const text = readFileSync(path, 'utf8');
  const at = text.indexOf('\n', Math.floor(text.length * 0.85)) + 1;
  const long = `{"pad":"${'y'.repeat(3 << 20)}"}\n`;
  const withLong = join(dir, 'long-line.jsonl');
  writeFileSync(withLong, text.slice(0, at) + long + text.slice(at));
  const r = same(['--flagged-only', withLong], ['2']);
  assert.match(r.stdout, /# read as: otlp \(lines/);
});

test('check in two threads of real producers\' traces, repeated: every piece absorbed, the one-thread report', async () => {
  // Traces the frameworks themselves exported (pkg-tests/producers/corpus, versions in
  // VERSIONS.md): the Agents SDK's own exporter, and OTLP from LangChain with OpenLLMetry,
  // pydantic-ai and the AI SDK. Each repeated to SIZE, so the worker's range is read in
  // pieces of real lines.
  const { prepare, check } = await inProcess();
  const corpus = new URL('../producers/corpus/', import.meta.url);
  for (const name of ['openai-agents.jsonl', 'langchain-openllmetry.otlp.jsonl', 'pydantic-ai.otlp.jsonl', 'ai-sdk-generate.otlp.jsonl']) {
    const text = readFileSync(new URL(name, corpus), 'utf8').replace(/\n?$/, '\n');
    const path = join(dir, `real-${name}`);
    writeFileSync(path, text.repeat(Math.ceil(SIZE / text.length)));
    const args = ['--threads', '2', '--flagged-only', path];
    const prepared = await prepare(args);
    await prepared.hub.ready();
    const two = await check(args, prepared);
    const one = await check(['--threads', '1', '--flagged-only', path], undefined);
    assert.equal(prepared.pushed + prepared.absorbed, prepared.cuts.length - 1, `${name}: every piece taken in once`);
    assert.ok(prepared.absorbed >= 1 && prepared.refused === 0, `${name}: ${prepared.absorbed} absorbed, ${prepared.refused} refused`);
    assert.equal(two.code, one.code, name);
    assert.ok(two.text === one.text, `${name}: the reports differ`);
    assert.match(one.text, /# read as: (otlp|openai_agents) \(lines/, name);
  }
});

test('check without --threads below 128 MB starts its workers only once this thread\'s pace says they pay', { skip: availableParallelism() < 2 && 'one CPU' }, async () => {
  const { prepare, check } = await inProcess();
  // Past the default size (64 MB).
  const path = bigLines('langfuse.jsonl', 68e6, 'langfuse-68mb.jsonl');
  const args = ['--flagged-only', path];
  const prepared = await prepare(args);
  assert.ok(prepared, 'the file is read in parts');
  // Cut and claimed, but no worker made yet: none may be needed.
  assert.equal(prepared.hub.waiting, true);
  const two = await check(args, prepared);
  assert.equal(prepared.hub.waiting, false, 'decided while reading');
  const pieces = prepared.cuts.length - 1;
  assert.equal(prepared.pushed + prepared.absorbed, pieces);
  assert.equal(prepared.refused, 0);
  const one = await check(['--threads', '1', ...args], undefined);
  assert.equal(two.code, one.code);
  assert.ok(two.text === one.text, 'the reports differ');
  // Given --threads, the workers start at once, whatever the size.
  const asked = await prepare(['--threads', '2', ...args]);
  assert.equal(asked.hub.waiting, false);
  asked.hub.end();
});
