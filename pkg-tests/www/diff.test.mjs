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

test('two runs of generation fingerprints: the changed turns equal the CLI\'s', async (t) => {
  const { page, errors, outside } = await openPage(t, { hash: '#diff', viewport: { width: 1100, height: 1000 } });
  const fp = (text, turn) => toolslice.generationFingerprint(text, { turn });
  const left = jsonl([fp('Hello', 1), fp('Plan A: rename run() to start()', 2), fp('done', 4)]);
  const right = jsonl([fp('Hello', 1), fp('Plan B: keep run()', 2), fp('extra turn', 3)]);
  await dropOn(page, 'diff-left', 'left.jsonl', left);
  await dropOn(page, 'diff-right', 'right.jsonl', right);
  await page.waitForSelector('table.generations');
  const want = cliDiff(left, right);
  assert.deepEqual([want.same, want.changed.length, want.only_left, want.only_right], [1, 1, ['turn:4'], ['turn:3']]);
  const rows = await page.locator('table.generations tbody tr').evaluateAll((trs) => trs.map((tr) => [...tr.children].map((td) => td.textContent)));
  assert.deepEqual(rows, want.changed.map((c) => [c.key, `${c.left_len} B ${c.left_sha256}`, `${c.right_len} B ${c.right_sha256}`]));
  assert.deepEqual(await page.locator('.generation-only.only-left li').allTextContents(), want.only_left);
  assert.deepEqual(await page.locator('.generation-only.only-right li').allTextContents(), want.only_right);
  const verdict = page.locator('.diff-results .verdict');
  assert.equal(await verdict.getAttribute('data-differs'), 'true');
  assert.match(await verdict.textContent(), /Some generations changed\. 3 turns left, 3 right: 1 same, 1 changed, 1 only left, 1 only right/);
  // The same fingerprints on both sides: a pass, and no manifest table (these are not spans).
  await dropOn(page, 'diff-right', 'right.jsonl', left);
  await page.waitForFunction(() => document.querySelector('.diff-results .verdict')?.textContent.includes('The generations are the same'));
  assert.equal(await page.locator('table.manifest').count(), 0);
  assert.deepEqual(errors, []);
  assert.deepEqual(outside, []);
});

test('a manifest diff says which run is not gated: open spans by name, bodies not checked', async (t) => {
  const { page, errors } = await openPage(t, { hash: '#diff', viewport: { width: 1100, height: 1000 } });
  const ls = toolslice.toolSpan('ls', {}, ['a.py'], 'ok');
  const open = { ...toolslice.toolSpan('run_tests', { k: 'x' }, null, 'ok'), status: 'open' };
  await page.getByLabel('Left run (the one you kept)').fill(jsonl([ls, open]));
  await page.getByLabel('Right run (the new one)').fill(jsonl([ls]));
  await page.waitForSelector('.gate-notice');
  const want = toolslice.diffRuns(jsonl([ls, open]), jsonl([ls]));
  assert.deepEqual(want.gate.left.map((p) => p.message), ['open:run_tests']);
  const notice = page.locator('.gate-notice');
  assert.equal(await notice.getAttribute('class'), 'gate-notice closed');
  assert.match(await notice.textContent(), /Neither run is gated here\..*toolslice diff --store DIR.*left run: 1 problem block its export/);
  assert.deepEqual(await notice.locator('li').allTextContents(), ['open:run_tests (record 2)']);
  // No open span on either side: the notice stays, as a note that bodies were not checked.
  await page.getByLabel('Left run (the one you kept)').fill(jsonl([ls]));
  await page.waitForFunction(() => document.querySelector('.gate-notice')?.classList.contains('unchecked'));
  assert.equal(await page.locator('.gate-notice li').count(), 0);
  // Hop rows have no gate: no notice.
  const hop = jsonl([toolslice.classifyHop('a', 'a', 'a')]);
  await page.getByLabel('Left run (the one you kept)').fill(hop);
  await page.getByLabel('Right run (the new one)').fill(hop);
  await page.waitForSelector('table.hop-compare');
  assert.equal(await page.locator('.gate-notice').count(), 0);
  assert.deepEqual(errors, []);
});
