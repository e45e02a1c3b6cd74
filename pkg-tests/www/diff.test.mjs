// The diff view gives what `toolslice diff --json` gives for the same two runs: the
// manifest diff of span records (only_left, only_right, as multisets) and the comparison of
// hop rows (same, changed, policy drift); unreadable or mixed inputs are named in plain words.
import test from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as toolslice from 'toolslice';
import { openPage, toolsliceCli, artifact } from './helpers.mjs';

const dir = mkdtempSync(join(tmpdir(), 'toolslice-diff-'));
const jsonl = (records) => records.map((r) => JSON.stringify(r)).join('\n') + '\n';

function cliDiff(left, right) {
  writeFileSync(join(dir, 'left'), left);
  writeFileSync(join(dir, 'right'), right);
  return JSON.parse(toolsliceCli(['diff', '--json', join(dir, 'left'), join(dir, 'right')]));
}

async function dropOn(page, field, name, text) {
  await page.evaluate(({ field, name, text }) => {
    const dt = new DataTransfer();
    dt.items.add(new File([text], name));
    const node = document.getElementById(field).closest('.byte-field');
    for (const type of ['dragenter', 'dragover', 'drop']) node.dispatchEvent(new DragEvent(type, { dataTransfer: dt, bubbles: true, cancelable: true }));
  }, { field, name, text });
}

const manifestShown = (page, cls) => page.locator(`table.manifest.${cls} tbody tr`).evaluateAll((trs) =>
  trs.filter((tr) => tr.children.length === 5).map((tr) => [...tr.children].slice(1).map((td) => (td.textContent === '—' ? null : td.textContent))));

test('two dropped runs of span records: the manifest diff equals the CLI\'s', async (t) => {
  const { page, errors, outside } = await openPage(t, { hash: '#diff', viewport: { width: 1100, height: 1000 } });
  const span = (name, args, result, status = 'ok') => toolslice.toolSpan(name, args, result, status);
  const same = span('read_file', { path: 'a.py' }, { text: 'x = 1\n' });
  const left = [same, same, span('grep', { q: 'x' }, { hits: 1 }), span('apply_patch', { f: 'a.py' }, { diff: '-1\n+2\n' })];
  const right = [same, span('grep', { q: 'x' }, { hits: 1 }), span('apply_patch', { f: 'a.py' }, { diff: '-1\n+3\n' }), span('fetch', { u: 'x' }, { e: 'timeout' }, 'error')];
  await dropOn(page, 'diff-left', 'left.jsonl', jsonl(left));
  await dropOn(page, 'diff-right', 'right.json', JSON.stringify(right, null, 2)); // a JSON array works too
  await page.waitForSelector('table.manifest.only-right');
  const want = cliDiff(jsonl(left), JSON.stringify(right, null, 2));
  assert.equal(want.only_left.length, 2, 'one duplicate read and the old patch');
  assert.deepEqual(await manifestShown(page, 'only-left'), want.only_left);
  assert.deepEqual(await manifestShown(page, 'only-right'), want.only_right);
  assert.match(await page.locator('.diff-results .verdict').textContent(), /The tool boundary changed\. 4 spans left, 4 right; 2 only left, 2 only right/);
  await page.screenshot({ path: artifact('view-diff.png') });

  // Equal runs, in another order: the same multiset, so no difference.
  await dropOn(page, 'diff-right', 'right.jsonl', jsonl([...left].reverse()));
  await page.waitForFunction(() => document.querySelector('.diff-results .verdict')?.textContent.includes('Same tool boundary'));
  assert.deepEqual(cliDiff(jsonl(left), jsonl([...left].reverse())), { only_left: [], only_right: [] });
  assert.deepEqual(errors, []);
  assert.deepEqual(outside, []);
});

test('the examples: span records and hop rows with policy drift, as the CLI compares them', async (t) => {
  const { page, errors } = await openPage(t, { hash: '#diff' });
  const values = () => page.evaluate(() => [document.getElementById('diff-left').value, document.getElementById('diff-right').value]);

  await page.getByRole('button', { name: 'two runs of span records' }).click();
  await page.waitForSelector('table.manifest.only-left');
  const [l1, r1] = await values();
  const spans = cliDiff(l1, r1);
  assert.deepEqual(await manifestShown(page, 'only-left'), spans.only_left);
  assert.deepEqual(await manifestShown(page, 'only-right'), spans.only_right);
  assert.equal(spans.only_left.length, 1);
  // Pass or fail is the package's `differs` (what makes `toolslice diff` exit 1), not the page's.
  const differs = async () => page.locator('.diff-results .verdict').getAttribute('data-differs');
  assert.equal(await differs(), String(toolslice.diffRuns(l1, r1).differs));
  assert.equal(await differs(), 'true');

  await page.getByRole('button', { name: 'two runs of hop rows' }).click();
  await page.waitForSelector('table.hop-compare');
  const [l2, r2] = await values();
  const cmp = cliDiff(l2, r2);
  const rows = await page.locator('table.hop-compare tbody tr').evaluateAll((trs) => trs.map((tr) => [...tr.children].map((td, i) => (i === 0 ? td.textContent.replace(/^[^a-z]+/, '') : td.textContent))));
  assert.deepEqual(rows.map((r) => [r[0], r[1]]), cmp.rows.map((r) => [r.verdict, r.tool_call_id]));
  assert.deepEqual(cmp.rows.map((r) => r.verdict).sort(), ['changed', 'policy_drift']);
  assert.equal(await differs(), String(toolslice.diffRuns(l2, r2).differs));
  const drift = rows.find((r) => r[0] === 'policy_drift');
  assert.equal(drift[5], '$.token: bearer-v1 → bearer-v2');
  assert.match(await page.locator('.diff-results .verdict').textContent(),
    new RegExp(`${cmp.same} same, ${cmp.changed} changed, ${cmp.policy_drift} policy drift, ${cmp.only_left} only left, ${cmp.only_right} only right`));
  // Policy drift alone is not a difference (a redaction rule changed, not the model): pass.
  const [dl, dr] = [`${l2.split('\n')[0]}\n`, `${r2.split('\n')[0]}\n`];
  assert.equal(toolslice.diffRuns(dl, dr).differs, false);
  await page.getByLabel('Left run (the one you kept)').fill(dl);
  await page.getByLabel('Right run (the new one)').fill(dr);
  await page.waitForFunction(() => document.querySelector('.diff-results .verdict')?.textContent.includes('1 policy drift'));
  assert.equal(await differs(), 'false');
  assert.equal(await page.locator('.diff-results .verdict').getAttribute('class'), 'verdict pass');
  assert.deepEqual(errors, []);
});

test('unreadable or mixed runs are named in plain words', async (t) => {
  const { page, errors } = await openPage(t, { hash: '#diff' });
  await page.getByLabel('Left run (the one you kept)').fill('{"name":"ls","status":"ok"}\nnot json\n');
  await page.getByLabel('Right run (the new one)').fill('[]');
  await page.waitForSelector('.diff-results .file-error');
  assert.match(await page.locator('.diff-results .file-error').textContent(), /left run, line 2: not JSON/);
  const hop = toolslice.classifyHop('a', 'a', 'a');
  await page.getByLabel('Left run (the one you kept)').fill(jsonl([hop]));
  await page.getByLabel('Right run (the new one)').fill(jsonl([toolslice.toolSpan('ls', {}, [], 'ok')]));
  await page.waitForFunction(() => /hop rows and the other does not/.test(document.querySelector('.diff-results')?.textContent));
  assert.deepEqual(errors, []);
});

test('two clip-aware span runs: the injected-slice comparison equals the CLI\'s', async (t) => {
  const { page, errors, outside } = await openPage(t, { hash: '#diff', viewport: { width: 1100, height: 1000 } });
  const span = (id, inj, hash, builder) => ({ span_id: id, name: 'read_file', observed_bytes: 96412, injected_bytes: inj, injected_tokens: 100, clip_reason: 'prompt_token_cap', sha256_observed: 'ab12', sha256_injected: hash, prompt_builder_version: builder });
  const left = jsonl([span('t1', 40000, 'cd34', 'cap-v3')]);
  const right = jsonl([span('u1', 12040, 'ee99', 'cap-v4')]);
  await dropOn(page, 'diff-left', 'left.jsonl', left);
  await dropOn(page, 'diff-right', 'right.jsonl', right);
  await page.waitForFunction(() => document.querySelector('.diff-results .verdict')?.textContent.includes('injected a different slice'));
  const want = cliDiff(left, right);
  assert.equal(want.injected_changed.length, 1);
  const rows = await page.locator('.diff-results tbody tr').evaluateAll((trs) => trs.map((tr) => [...tr.children].map((td) => td.textContent)));
  assert.deepEqual(rows.map((r) => [r[0], r[1], r[4], r[5]]), [['read_file', 'ab12', 'cap-v3', 'cap-v4']]);
  assert.match(rows[0][2], /^40000 B cd34 \(t1\)$/);
  assert.match(rows[0][3], /^12040 B ee99 \(u1\)$/);
  assert.match(await page.locator('.diff-results').textContent(), /cap-v3 → cap-v4 \(changed/);
  assert.deepEqual(errors, []);
  assert.deepEqual(outside, []);
});
