// The check view against the CLI: files dropped (several at once through a real
// DataTransfer), picked with the file chooser, or pasted give the same counts, rows,
// invalid and skipped lines and parent rollup as `toolslice check --json` on the same bytes.
import test from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openPage, dropFiles, pickFiles, reportFor, cli, allRows, figures, artifact, FIXTURES, OWN_FILE } from './helpers.mjs';

const plain = (text) => Number(text.replaceAll(',', ''));

/** Asserts that the report section shows exactly what the CLI's JSON report says. */
export async function assertMatchesCli(section, expected, label) {
  const fig = await figures(section);
  for (const key of ['silent_clip', 'incomplete', 'hash_mismatch', 'clipped', 'ok']) {
    assert.equal(plain(fig[key]), expected.counts[key], `${label}: ${key}`);
  }
  assert.equal(plain(fig['tool spans']), expected.counts.total, `${label}: total`);
  assert.equal(plain(fig['invalid lines']), expected.counts.invalid, `${label}: invalid`);
  assert.equal(plain(fig['skipped lines']), expected.counts.skipped, `${label}: skipped`);
  assert.equal(plain(fig['lines read']), expected.counts.lines, `${label}: lines`);
  assert.equal(fig['silent clips per 100 tool spans'], expected.silent_clips_per_100.toFixed(1), `${label}: rate`);

  const verdict = await section.locator('.verdict').textContent();
  assert.ok(verdict.includes(`exit code ${expected.exit_code}`), `${label}: verdict "${verdict}"`);

  const shown = await allRows(section);
  const want = expected.rows.map((r) => [
    r.status, String(r.line), r.span_id ?? '-', r.name, r.prompt_builder_version ?? '—',
    r.observed_bytes, r.injected_bytes, r.injected_tokens, [...r.detail, ...(r.warnings ?? [])].join(', '),
  ]);
  const got = shown.map((c) => [
    c[0].split(' ').at(-1), c[1], c[2], c[3], c[4],
    c[5] === '—' ? null : plain(c[5]), c[6] === '—' ? null : plain(c[6]), c[7] === '—' ? null : plain(c[7]), c[9],
  ]);
  assert.deepEqual(got, want, `${label}: rows in priority order`);

  const invalid = await section.locator('ol.lines li.invalid').allTextContents();
  assert.deepEqual(invalid.map((t) => t.replace(/^✖ /, '')), expected.invalid.map((e) => `line ${e.line}: invalid: ${e.error}`), `${label}: invalid lines`);
  const skipped = await section.locator('ol.lines li.skipped').allTextContents();
  assert.deepEqual(skipped.map((t) => Number(/line (\d+)/.exec(t)[1])), expected.skipped.map((s) => s.line), `${label}: skipped lines`);
  const rollup = await section.locator('li.rollup').allTextContents();
  assert.equal(rollup.length, expected.rollup.length, `${label}: rollup`);
  expected.rollup.forEach((r, i) => {
    assert.ok(rollup[i].startsWith(`parent ${r.span_id}`), rollup[i]);
    assert.ok(rollup[i].endsWith(r.flagged.join(', ')), rollup[i]);
  });
}

test('several files dropped at once each get the report the CLI gives', async (t) => {
  const { page, requests, outside, errors } = await openPage(t);
  const names = ['clipped.jsonl', 'good.jsonl', 'malformed.jsonl'];
  await dropFiles(page, names.map((name) => ({ name, text: readFileSync(`${FIXTURES}${name}`, 'utf8') })));
  for (const name of names) {
    const section = reportFor(page, name);
    await section.waitFor();
    await assertMatchesCli(section, JSON.parse(cli(['--json', `${FIXTURES}${name}`])), name);
  }
  assert.equal(await page.locator('article.job').count(), 3);
  await page.screenshot({ path: artifact('check-view.png'), fullPage: true });
  assert.deepEqual(errors, []);
  assert.deepEqual(outside, [], 'a request left the page origin');
  assert.ok(requests.every((p) => OWN_FILE.test(p)), requests.join(' '));
});

test('picked files and pasted text are checked like dropped ones', async (t) => {
  const { page, errors } = await openPage(t);
  const dir = mkdtempSync(join(tmpdir(), 'toolslice-pick-'));
  const picked = join(dir, 'picked run.jsonl');
  // A skipped record, a blank line and CRLF line ends, to see them through the chooser path.
  writeFileSync(picked, readFileSync(`${FIXTURES}good.jsonl`, 'utf8').replaceAll('\n', '\r\n') + '\r\n{"span_id":"turn-4","status":"ok"}\r\n');
  await pickFiles(page, [picked]);
  await reportFor(page, 'picked run.jsonl').waitFor();
  await assertMatchesCli(reportFor(page, 'picked run.jsonl'), JSON.parse(cli(['--json', picked])), 'picked');

  const text = readFileSync(`${FIXTURES}clipped.jsonl`, 'utf8');
  await page.getByLabel(/^…or paste a run: span JSONL, OTLP JSON, Langfuse, OpenAI Agents SDK or Vercel AI SDK$/).fill(text);
  await page.getByRole('button', { name: 'Check pasted text' }).click();
  await reportFor(page, 'pasted text 1').waitFor();
  await assertMatchesCli(reportFor(page, 'pasted text 1'), JSON.parse(cli(['--json', `${FIXTURES}clipped.jsonl`])), 'pasted');
  assert.deepEqual(errors, []);
});
