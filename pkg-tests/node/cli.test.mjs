// The `toolslice` command as installed by npm (bin), on good, clipped and malformed files.
import test from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const bin = fileURLToPath(new URL('../node_modules/.bin/toolslice', import.meta.url));
const fixture = (name) => fileURLToPath(new URL(`../fixtures/${name}`, import.meta.url));
const cli = (args, input) => spawnSync(bin, args, { input, encoding: 'utf8' });

test('check: exit 0 on a clean run, 1 on a silent clip, 1 on malformed lines', () => {
  assert.equal(cli(['check', fixture('good.jsonl')]).status, 0);
  assert.equal(cli(['check', fixture('clipped.jsonl')]).status, 1);
  const bad = cli(['check', fixture('malformed.jsonl')]);
  assert.equal(bad.status, 1);
  assert.match(bad.stdout, /# invalid line 2: not valid JSON/);
});

test('check reads stdin when no file is given', () => {
  const r = cli(['check'], readFileSync(fixture('clipped.jsonl')));
  assert.equal(r.status, 1);
  assert.match(r.stdout, /^silent_clip {6}tool-14/m);
});

test('check --json prints the report', () => {
  const r = cli(['check', '--json', fixture('clipped.jsonl')]);
  const report = JSON.parse(r.stdout);
  assert.equal(report.exit_code, 1);
  assert.equal(report.counts.silent_clip, 1);
  assert.equal(report.rows[0].span_id, 'tool-14');
});

test('check over several files exits with the worst code', () => {
  const r = cli(['check', '--json', fixture('good.jsonl'), fixture('clipped.jsonl')]);
  assert.equal(r.status, 1);
  const doc = JSON.parse(r.stdout);
  assert.deepEqual(doc.files.map((f) => f.report.exit_code), [0, 1]);
});

test('usage and I/O errors exit 2 with one line', () => {
  for (const args of [['check', '/no/such/file.jsonl'], ['check', '--nope'], ['frobnicate']]) {
    const r = cli(args);
    assert.equal(r.status, 2, args.join(' '));
    assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
    assert.match(r.stderr, /^toolslice: /);
  }
});
