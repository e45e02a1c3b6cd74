// The report's controls: status, tool and builder filters and text search select exactly
// the rows the CLI's report says they should; the table is paged (Previous / Next rows); a
// row's detail shows the injected slice before the observed body; the JSON and JSONL exports
// are the package's renderings (equal to the CLI's output) and the CSV holds every row.
import test from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openPage, dropFiles, reportFor, cli, artifact, rowsSettled } from './helpers.mjs';

// The CSV header the page promises: the row fields of the JSON report, in this order.
const CSV_COLUMNS = [
  'line', 'status', 'span_id', 'parent_id', 'name', 'observed_bytes', 'injected_bytes',
  'injected_tokens', 'clip_ratio', 'clip_reason', 'sha256_observed', 'sha256_injected',
  'prompt_builder_version', 'model_context_limit_tokens', 'injected_preview', 'detail', 'warnings',
];

const TOOLS = ['read_file', 'ls', 'grep', 'fetch', 'search'];
const BUILDERS = ['cap-v3', 'cap-v4', null];

/** 450 spans of every status, five tools, three builders, plus invalid and skipped lines. */
function mixedRun() {
  const lines = [];
  for (let n = 1; n <= 450; n++) {
    const kind = n % 9;
    const observed = 500 + n;
    const rec = {
      span_id: `tool-${n}`, parent_id: `turn-${n % 7}`, name: TOOLS[n % 5], status: 'ok',
      observed_bytes: observed, injected_bytes: observed, injected_tokens: 100 + n,
      clip_reason: 'none', sha256_observed: `obs${n}`, sha256_injected: `obs${n}`,
      injected_preview: `preview of span ${n}\\n`, prompt_builder_version: BUILDERS[n % 3],
    };
    if (rec.prompt_builder_version === null) delete rec.prompt_builder_version;
    if (kind === 1) rec.injected_bytes = Math.floor(observed / (1 + (n % 10)));
    if (kind === 2) { rec.injected_bytes = 100; rec.clip_reason = 'prompt_token_cap'; }
    if (kind === 3) rec.sha256_injected = `inj${n}`;
    if (kind === 4) delete rec.injected_tokens;
    lines.push(JSON.stringify(rec));
    if (n % 150 === 0) lines.push('{"broken": ');
    if (n % 200 === 0) lines.push(JSON.stringify({ span_id: `turn-${n}`, status: 'ok' }));
  }
  return lines.join('\n') + '\n';
}

const dir = mkdtempSync(join(tmpdir(), 'toolslice-report-'));
const file = join(dir, 'mixed.jsonl');
writeFileSync(file, mixedRun());
const expected = JSON.parse(cli(['--json', file]));

async function setup(t) {
  const ctx = await openPage(t);
  await dropFiles(ctx.page, [{ name: 'mixed.jsonl', text: readFileSync(file, 'utf8') }]);
  const section = reportFor(ctx.page, 'mixed.jsonl');
  await section.waitFor();
  return { ...ctx, section };
}

const shownIds = (section) => section.locator('tbody tr.span-row td:nth-child(4)').allTextContents();
const shownText = (section) => section.locator('.rows .shown').textContent();

test('filters and search select the rows the report says they should', async (t) => {
  const { section, errors } = await setup(t);
  assert.equal(expected.rows.length, 450);
  const ids = (rows) => rows.map((r) => r.span_id);
  assert.match(await shownText(section), /^Showing rows 1–200 of 450 rows, in priority order\.$/);
  assert.equal(await section.locator('tbody tr.span-row').count(), 200, 'the table draws one page of rows');
  const [prev, next] = [section.getByRole('button', { name: 'Previous rows' }), section.getByRole('button', { name: 'Next rows' })];
  assert.ok(await prev.isDisabled());
  await next.click();
  await rowsSettled(section);
  assert.match(await shownText(section), /^Showing rows 201–400 of 450 rows/);
  assert.deepEqual(await shownIds(section), ids(expected.rows).slice(200, 400), 'page 2 holds the next rows in priority order');
  await next.click();
  await rowsSettled(section);
  assert.deepEqual(await shownIds(section), ids(expected.rows).slice(400), 'the last page holds the rest');
  assert.ok(await next.isDisabled());
  assert.match(await section.locator('.pager .page-where').textContent(), /^Page 3 of 3$/);
  await prev.click();
  await rowsSettled(section);
  assert.match(await shownText(section), /^Showing rows 201–400 of 450 rows/);

  const pick = async (label, option) => {
    await section.getByLabel(label, { exact: true }).selectOption({ label: option });
    await rowsSettled(section);
  };

  for (const status of ['silent_clip', 'incomplete', 'hash_mismatch', 'clipped']) {
    const want = expected.rows.filter((r) => r.status === status);
    await pick('status', `${status} (${want.length})`);
    assert.deepEqual(await shownIds(section), ids(want).slice(0, 200), status);
  }
  await pick('status', 'all (450)');
  await pick('tool', 'grep');
  assert.deepEqual(await shownIds(section), ids(expected.rows.filter((r) => r.name === 'grep')));
  await pick('builder', '(none)');
  assert.deepEqual(await shownIds(section), ids(expected.rows.filter((r) => r.name === 'grep' && r.prompt_builder_version === null)));
  await pick('builder', 'cap-v4');
  const grepV4 = expected.rows.filter((r) => r.name === 'grep' && r.prompt_builder_version === 'cap-v4');
  assert.deepEqual(await shownIds(section), ids(grepV4));
  assert.match(await shownText(section), new RegExp(`^Showing rows 1–${grepV4.length} of ${grepV4.length} matching rows \\(450 in all\\)\\.$`));
  assert.ok(await section.locator('.pager').isHidden(), 'one page needs no pager');

  await pick('tool', 'all tools');
  await pick('builder', 'all builders');
  const search = section.getByLabel('search');
  await search.fill('TOOL-137');
  await section.page().waitForFunction(() => document.querySelectorAll('tbody tr.span-row').length === 1);
  assert.deepEqual(await shownIds(section), ['tool-137']);
  await search.fill('inj12'); // a hash: sha256_injected of tool-12 and tool-120..129
  await section.page().waitForFunction(() => document.querySelectorAll('tbody tr.span-row').length !== 1);
  const byHash = expected.rows.filter((r) => (r.sha256_injected ?? '').includes('inj12'));
  assert.deepEqual((await shownIds(section)).sort(), ids(byHash).sort());
  await search.fill('no row has this text');
  await section.page().waitForFunction(() => document.querySelectorAll('tbody tr.span-row').length === 0);
  assert.match(await shownText(section), /^Showing no rows of 0 matching rows/);
  assert.deepEqual(errors, []);
});

test("the histogram draws the report's own clip_histogram, not bins of its own", async (t) => {
  const { section, errors } = await setup(t);
  const h = expected.clip_histogram;
  const drawn = await section.locator('.histogram-figure table tbody tr').evaluateAll((rows) =>
    rows.map((tr) => [tr.cells[0].textContent, Number(tr.cells[1].textContent.replaceAll(',', ''))]));
  assert.deepEqual(drawn.map(([, n]) => n), [h.not_cut, ...h.bins]);
  assert.equal(drawn[0][0], 'not cut');
  assert.equal(drawn[10][0], '90–100%');
  const unknown = expected.counts.total - h.not_cut - h.bins.reduce((a, b) => a + b, 0);
  // Spans without both lengths have no ratio: said in words, when there are any.
  assert.equal(await section.locator('.histogram-figure .hint').count(), unknown ? 1 : 0);
  assert.deepEqual(errors, []);
});

test('a row detail shows the injected slice first, then the observed body', async (t) => {
  const { page, section, errors } = await setup(t);
  const row = expected.rows.find((r) => r.status === 'silent_clip');
  const toggle = section.getByRole('button', { name: `Details of line ${row.line}, span ${row.span_id}` });
  assert.equal(await toggle.getAttribute('aria-expanded'), 'false');
  await toggle.click();
  assert.equal(await toggle.getAttribute('aria-expanded'), 'true');
  const detail = section.locator(`#${await toggle.getAttribute('aria-controls')}`);
  assert.ok(await detail.isVisible());
  const headings = await detail.locator('h4').allTextContents();
  assert.deepEqual(headings, ['Injected slice: what the model saw', 'Observed body: what the tool returned', 'Verdict']);
  const injected = await detail.locator('section.injected dd').allTextContents();
  assert.deepEqual(injected.slice(0, 4), [row.injected_preview, String(row.injected_bytes), String(row.injected_tokens), row.sha256_injected]);
  const observed = await detail.locator('section.observed dd').allTextContents();
  assert.deepEqual(observed, [String(row.observed_bytes), row.sha256_observed]);
  assert.match(await detail.locator('.share .hint').textContent(), new RegExp(`^${row.injected_bytes} of ${row.observed_bytes} observed bytes reached the model`));
  await detail.screenshot({ path: artifact('check-row-detail.png') });
  await toggle.press('Enter');
  assert.equal(await toggle.getAttribute('aria-expanded'), 'false');
  assert.ok(await detail.isHidden());
  await page.keyboard.press('Space'); // focus stays on the toggle: Space opens it again
  assert.equal(await toggle.getAttribute('aria-expanded'), 'true');
  assert.deepEqual(errors, []);
});

/** A small RFC 4180 reader, enough to read the page's CSV back. */
function parseCsv(text) {
  const rows = [];
  let row = [];
  let cell = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i];
    if (quoted) {
      if (ch === '"' && text[i + 1] === '"') { cell += '"'; i++; } else if (ch === '"') quoted = false;
      else cell += ch;
    } else if (ch === '"') quoted = true;
    else if (ch === ',') { row.push(cell); cell = ''; } else if (ch === '\r' && text[i + 1] === '\n') { row.push(cell); rows.push(row); row = []; cell = ''; i++; } else cell += ch;
  }
  return rows;
}

async function exported(page, section, kind) {
  const download = page.waitForEvent('download');
  await section.getByRole('button', { name: kind, exact: true }).click();
  const d = await download;
  return { name: d.suggestedFilename(), text: readFileSync(await d.path(), 'utf8') };
}

test('exports: JSON and JSONL equal the CLI output, CSV holds every row', async (t) => {
  const { page, section, errors, outside } = await setup(t);
  const json = await exported(page, section, 'JSON');
  assert.equal(json.name, 'mixed.toolslice.json');
  assert.equal(json.text.trimEnd(), cli(['--json', file]).trimEnd());
  const jsonl = await exported(page, section, 'JSONL');
  assert.equal(jsonl.name, 'mixed.toolslice.jsonl');
  assert.equal(jsonl.text, cli(['--jsonl', file]));

  const csv = await exported(page, section, 'CSV');
  assert.equal(csv.name, 'mixed.toolslice.csv');
  const [header, ...rows] = parseCsv(csv.text);
  assert.deepEqual(header, CSV_COLUMNS);
  assert.equal(rows.length, expected.rows.length);
  rows.forEach((cells, i) => {
    const want = expected.rows[i];
    const got = Object.fromEntries(header.map((h, j) => [h, cells[j]]));
    assert.equal(Number(got.line), want.line);
    assert.equal(got.status, want.status);
    assert.equal(got.span_id, want.span_id);
    assert.equal(got.observed_bytes, String(want.observed_bytes ?? ''));
    assert.equal(got.injected_tokens, String(want.injected_tokens ?? ''));
    assert.equal(got.clip_ratio === '' ? null : Number(got.clip_ratio), want.clip_ratio);
    assert.equal(got.injected_preview, want.injected_preview ?? '');
    assert.equal(got.detail, want.detail.join('; '));
  });
  assert.match(await section.locator('.exports [role="status"]').textContent(), /CSV saved/);
  assert.deepEqual(outside, [], 'an export made a request off the page origin');
  assert.deepEqual(errors, []);
});

test('a trace-format row says how it was paired, why, and that its tokens are an estimate', async (t) => {
  const ctx = await openPage(t);
  const path = new URL('../../crate/core/tests/fixtures/formats/langfuse.jsonl', import.meta.url);
  await dropFiles(ctx.page, [{ name: 'langfuse.jsonl', text: readFileSync(path, 'utf8') }]);
  const section = reportFor(ctx.page, 'langfuse.jsonl');
  await section.waitFor();
  const report = JSON.parse(cli(['--json', path.pathname]));
  const explained = report.rows.filter((r) => r.notes?.length || r.join === 'unmatched').slice(0, 2);
  assert.ok(explained.length > 0, 'the fixture has rows with notes');
  for (const row of explained) {
    const toggle = section.getByRole('button', { name: `Details of line ${row.line}, span ${row.span_id}` });
    await toggle.click();
    const detail = section.locator(`#${await toggle.getAttribute('aria-controls')}`);
    const why = detail.locator('section.why');
    assert.match(await why.textContent(), new RegExp(`paired by${row.join}:`));
    assert.deepEqual(await why.locator('ul.notes li').allTextContents(), row.notes ?? []);
    if (row.injected_tokens_estimated && row.injected_tokens !== null) {
      assert.match(await detail.locator('section.injected').textContent(), /\(an estimate, bytes \/ 4/);
    }
  }
  assert.deepEqual(ctx.errors, []);
});

test('a report past the memory limit says which rows it did not list', async (t) => {
  // The page's notes for a real report of the package's check with lowered budgets (a file
  // big enough to reach the page's own 256 MiB would make a slow test): the counts cover
  // every span, so a table shorter than them must say so.
  const ctx = await openPage(t);
  const got = await ctx.page.evaluate(async () => {
    const { loadToolslice } = await import('/js/wasm.js');
    const { inputNotes } = await import('/js/report-view.js');
    const toolslice = await loadToolslice();
    let text = '';
    for (let i = 1; i <= 3000; i++) {
      text += JSON.stringify({ span_id: `s${i}`, name: 'read', observed_bytes: 100, injected_bytes: i % 3 ? 100 : 10, injected_tokens: 3 }) + '\n';
    }
    const meta = { endsWithNewline: true, bytes: text.length, large: false };
    const notes = (limits, flaggedOnly) => {
      const r = toolslice.checkSpans(text, { limits, flaggedOnly });
      const data = r.toJSON();
      r.free();
      return { notKept: data.not_kept, notes: inputNotes(data, meta) };
    };
    return { limited: notes({ rowBytes: 32 << 10, factBytes: 16 << 10 }, false), flagged: notes({ rowBytes: 8 << 10 }, true), whole: notes(undefined, false) };
  });
  const { limited, flagged, whole } = got;
  assert.deepEqual(whole.notes, [], 'a report that kept everything has no note');
  const rows = limited.notes.find((n) => /Not every row is listed/.test(n.text));
  assert.ok(rows, JSON.stringify(limited.notes));
  assert.equal(rows.kind, 'warn');
  assert.match(rows.text, new RegExp(`the ${limited.notKept.rows.toLocaleString('en-US')} rows from line ${limited.notKept.rows_from_line.toLocaleString('en-US')} on are counted in every figure but not listed`));
  assert.match(rows.text, /Tick “List flagged rows only”/);
  const facts = limited.notes.find((n) => /parent rollup, tool medians and builder rates/.test(n.text));
  assert.ok(facts, JSON.stringify(limited.notes));
  assert.match(facts.text, new RegExp(`before line ${limited.notKept.facts_from_line.toLocaleString('en-US')}: the ${limited.notKept.spans.toLocaleString('en-US')} spans`));
  // Already flagged-only: the note does not suggest it again.
  const flaggedRows = flagged.notes.find((n) => /Not every row is listed/.test(n.text));
  assert.ok(flaggedRows && !/Tick/.test(flaggedRows.text), JSON.stringify(flagged.notes));
  assert.deepEqual(ctx.errors, []);
});
