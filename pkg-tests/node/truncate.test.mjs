// The truncators as installed: the JS API with a real tokenizer (js-tiktoken, o200k_base) as
// the token counter, UTF-16 offsets that slice JS strings, and `toolslice truncate`.
import test from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { getEncoding } from 'js-tiktoken';
import * as toolslice from 'toolslice';

const bin = fileURLToPath(new URL('../node_modules/.bin/toolslice', import.meta.url));
const cli = (args, input) => spawnSync(bin, args, { input, encoding: 'utf8' });

const FAILURE = 'Build failed because of a type error in src/components/Header.tsx:42';
const EXIT = 'error Command failed with exit code 1';

/** Seed 001's failing `npm run build`: 12,000 lines, the failure in the last two. */
function npmBuild() {
  const lines = ['$ npm run build', '> web@2.3.0 build', '> vite build'];
  for (let i = 3; i < 11998; i++) lines.push(`transforming (module ${i}) src/components/Widget${i}.tsx`);
  lines.push(FAILURE, EXIT);
  return lines.join('\n') + '\n';
}

test('a real tokenizer as the token counter: the budget holds in its tokens', () => {
  const enc = getEncoding('o200k_base');
  const count = (text) => enc.encode(text).length;
  const log = npmBuild();
  for (const limit of [120, 400, 1500]) {
    const r = toolslice.truncate(
      log,
      { pattern: 'terminal', budget: { tokens: limit }, exitCode: 1, command: 'npm run build', header: true },
      count,
    );
    assert.ok(count(r.text) <= limit, `${count(r.text)} > ${limit}`);
    assert.equal(r.size, count(r.text));
    assert.equal(r.unit, 'tokens');
    assert.ok(r.text.startsWith('Tool: terminal\nCommand: npm run build\nExit code: 1\nOutput:\n'));
    assert.ok(r.text.endsWith(`${FAILURE}\n${EXIT}\n`), r.text);
    assert.equal(r.error_lines.dropped, 0);
  }
});

test('head-only loses the failure and says so; terminal keeps it', () => {
  const log = npmBuild();
  const head = toolslice.truncate(log, { pattern: 'head', budget: { chars: 2000 } });
  assert.ok(!head.text.includes(FAILURE));
  assert.equal(head.audit.errors_in_dropped_region, true);
  const term = toolslice.truncate(log, { budget: { chars: 2000 }, exitCode: 1 });
  assert.equal(term.pattern, 'terminal');
  assert.ok(term.text.includes(FAILURE) && term.text.includes(EXIT));
  const summary = toolslice.auditSummary([head.audit, term.audit]);
  assert.equal(summary.lost_error_line, 1);
  assert.equal(summary.calls, 2);
});

test('kept segments slice JavaScript strings (UTF-16 offsets)', () => {
  const log = Array.from({ length: 400 }, (_, i) => `step ${i} 😀 e\u0301 🇩🇪 日本`).join('\n') + '\nerror: boom\n';
  const r = toolslice.truncate(log, { pattern: 'terminal', budget: { utf16: 700 } });
  assert.ok(r.text.length <= 700);
  let kept = 0;
  for (const s of r.segments) {
    if (s.kind !== 'kept') continue;
    assert.equal(r.text.slice(...s.output), log.slice(...s.source));
    kept++;
  }
  assert.ok(kept >= 2);
  for (const [a, b] of r.kept) assert.ok(a < b && b <= log.length);
});

test('errors are Error objects with codes', () => {
  assert.throws(() => toolslice.truncate('x\n'.repeat(100), { pattern: 'terminal', budget: { bytes: 5 } }), { code: 'budget_too_small' });
  assert.throws(() => toolslice.truncate('x', { budgte: { bytes: 5 } }), { code: 'invalid_options' });
  assert.throws(() => toolslice.truncate('x\n'.repeat(100), { budget: { tokens: 5 } }, () => { throw new Error('no model'); }), { code: 'token_counter_failed', message: /no model/ });
});

test('toolslice truncate prints what the model sees, and --json the accounting', () => {
  const log = npmBuild();
  const r = cli(['truncate', '--chars', '1500', '--exit-code', '1', '--command', 'npm run build', '--fetch-id', 'call_7'], log);
  assert.equal(r.status, 0, r.stderr);
  assert.ok([...r.stdout].length <= 1500);
  assert.match(r.stdout, /^Tool: terminal\nCommand: npm run build\nExit code: 1\nOutput:\n\$ npm run build\n/);
  assert.match(r.stdout, /get_more\(id="call_7", offset=\d+\)/);
  assert.ok(r.stdout.endsWith(`${FAILURE}\n${EXIT}\n`));

  const j = cli(['truncate', '--json', '--bytes', '800', '--pattern', 'head'], log);
  assert.equal(j.status, 0, j.stderr);
  const doc = JSON.parse(j.stdout);
  assert.equal(doc.pattern, 'head');
  assert.ok(doc.output_bytes <= 800);
  assert.equal(doc.audit.errors_in_dropped_region, true);

  const small = cli(['truncate', '--bytes', '5'], log);
  assert.equal(small.status, 2);
  assert.match(small.stderr, /^toolslice: budget of 5 bytes is too small/);
  assert.equal(cli(['truncate', '--bytes', '5', '--tokens', '3'], log).status, 2);
  assert.equal(cli(['truncate', '--pattern', 'nope'], log).status, 2);
});
