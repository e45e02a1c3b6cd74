// The hop view gives the package's classifyHop for the bytes a person pastes or picks: the
// seed's two fixtures, typed text, and the exact bytes of a binary file; the matching row of
// the seed's hop table is the one marked.
import test from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as toolslice from 'toolslice';
import { openPage, artifact } from './helpers.mjs';

async function shown(page) {
  const rows = await page.locator('.boundaries tbody tr').evaluateAll((trs) =>
    trs.map((tr) => [...tr.children].map((c) => c.textContent)));
  return {
    label: await page.locator('.hop-label').textContent(),
    digests: rows.map((r) => r[1]),
    lengths: rows.map((r) => Number(r[2].replaceAll(',', ''))),
    marked: await page.locator('.hop-table tr[aria-current="true"] td').allTextContents(),
    row: JSON.parse(await page.locator('pre.json-row').textContent()),
  };
}

async function waitForLabel(page, label) {
  await page.waitForFunction((l) => document.querySelector('.hop-label')?.textContent === l, label);
}

function expectRow(got, want) {
  assert.equal(got.label, want.mutation_hop);
  assert.deepEqual(got.digests, [want.process_sha256, want.adapter_sha256, want.model_sha256]);
  assert.deepEqual(got.lengths, [want.process_len, want.adapter_len, want.model_len]);
  assert.equal(got.marked.at(-1), want.mutation_hop, 'the matching row of the seed table is marked');
  assert.deepEqual(got.row, JSON.parse(JSON.stringify(want)));
}

test('the seed fixtures give prompt_builder_wrap and adapter_shrink, as the package does', async (t) => {
  const { page, errors, outside } = await openPage(t, { hash: '#hop', viewport: { width: 1100, height: 1000 } });
  await page.getByRole('button', { name: 'wrap', exact: true }).click();
  await waitForLabel(page, 'prompt_builder_wrap');
  const wrap = await shown(page);
  expectRow(wrap, toolslice.classifyHop('{"ok":true,"rows":2}', '{"ok":true,"rows":2}', '{"type":"tool_result","body":{"ok":true,"rows":2}}'));
  assert.match(wrap.marked.join(' '), /Process equals adapter, model longer Growth Prompt builder added a wrapper/);
  await page.screenshot({ path: artifact('view-hop.png') });

  await page.getByRole('button', { name: 'shrink', exact: true }).click();
  await waitForLabel(page, 'adapter_shrink');
  const shrink = await shown(page);
  expectRow(shrink, toolslice.classifyHop('{"ok":true,"rows":2,"note":"abcdef"}', '{"ok":true,"rows":2}', '{"ok":true,"rows":2}'));
  assert.deepEqual(shrink.lengths, [36, 20, 20]);
  assert.deepEqual(errors, []);
  assert.deepEqual(outside, []);
});

test('typed text and a picked binary file are hashed as the package hashes them', async (t) => {
  const { page, errors } = await openPage(t, { hash: '#hop' });
  const process = '{"b": 2, "a": "naïve ✓"}';
  const adapter = '{"a":"naïve ✓","b":2}';
  await page.getByLabel('1. Process output').fill(process);
  await page.getByLabel('2. Adapter output').fill(adapter);
  await page.getByLabel('3. Model slice').fill(adapter);
  await page.getByLabel('tool name').fill('read_file');
  await page.getByLabel('tool call id').fill('call_7');
  const want = toolslice.classifyHop(process, adapter, adapter, { toolName: 'read_file', toolCallId: 'call_7' });
  await page.waitForFunction((id) => document.querySelector('pre.json-row')?.textContent.includes(id), 'call_7');
  await waitForLabel(page, want.mutation_hop);
  expectRow(await shown(page), want);
  assert.equal(want.adapter_change, 'format_only');
  assert.match(await page.locator('.hop-results').textContent(), /key order, whitespace or escapes only/);

  const dir = mkdtempSync(join(tmpdir(), 'toolslice-hop-'));
  const bytes = Buffer.from([0, 1, 2, 0xff, 0xfe, 10, 13, 10, 0x80]);
  writeFileSync(join(dir, 'call_7.process.bin'), bytes);
  const chooser = page.waitForEvent('filechooser');
  await page.locator('.byte-field').first().getByRole('button', { name: 'choose a file' }).click();
  await (await chooser).setFiles(join(dir, 'call_7.process.bin'));
  await page.waitForFunction(() => document.querySelector('.boundaries tbody tr td.num')?.textContent === '9');
  const got = await shown(page);
  expectRow(got, toolslice.classifyHop(bytes, adapter, adapter, { toolName: 'read_file', toolCallId: 'call_7' }));
  assert.equal(got.digests[0], toolslice.sha256Hex(bytes));
  assert.match(await page.locator('.byte-field .loaded').first().textContent(), /call_7\.process\.bin: 9 B, hashed exactly as in the file/);
  assert.deepEqual(errors, []);
});
