// The classroom packer (seed 004) shows the package's `pack` for what a person picks: at the
// 80-character start get_job and ping stay whole, get_logs is cut within the limit with a
// hint at get_more and its planted token redacted; a large limit makes get_logs whole.
import test from 'node:test';
import assert from 'node:assert/strict';
import * as toolslice from 'toolslice';
import { openPage, artifact } from './helpers.mjs';

const envelope = async (page) => JSON.parse(await page.locator('pre.packer-envelope').textContent());

async function pick(page, name) {
  await page.getByRole('button', { name, exact: true }).click();
  await page.waitForFunction((n) => document.querySelector('pre.packer-envelope')?.textContent.includes(`"name": "${n}"`), name);
}

const inputs = async (page) => ({
  tool: await page.getByLabel('tool name').inputValue(),
  text: await page.getByLabel('Tool output (editable)').inputValue(),
  kind: await page.getByLabel('tool kind').inputValue(),
  limit: Number(await page.getByLabel(/^Limit/).inputValue()),
});

test('seed 004 at limit 80: get_job and ping whole, get_logs cut with a hint and redacted', async (t) => {
  const { page, errors, outside } = await openPage(t, { hash: '#packer', viewport: { width: 1100, height: 1500 } });
  const view = page.locator('#view-packer');
  assert.match(await view.textContent(), /Nothing is sent to a server/);
  assert.ok(await view.getByText(/Nothing is sent to a server/).isVisible());
  assert.equal(await page.getByLabel(/^Limit/).inputValue(), '80');
  assert.match(await view.locator('label[for="packer-limit"]').textContent(), /characters/);

  await pick(page, 'get_job');
  const job = await inputs(page);
  const jobWant = toolslice.pack({ tool: job.tool, callId: 'call_1', text: job.text }, { limit: 80, unit: 'chars', kind: job.kind });
  const jobGot = await envelope(page);
  assert.equal(jobGot.truncated, false);
  assert.deepEqual(jobGot, JSON.parse(JSON.stringify(jobWant.envelope)));
  assert.equal(jobGot.content, job.text, 'a small result round-trips whole');
  assert.equal(await page.locator('.packer-truncated').textContent(), 'false');

  await pick(page, 'get_logs');
  const logs = await inputs(page);
  assert.equal([...logs.text].length, 200, 'the seed log is 200 characters');
  const token = logs.text.match(/ghp_[A-Za-z0-9]{36}/)?.[0];
  assert.ok(token, 'a fake token is planted in the log');
  const logsGot = await envelope(page);
  const logsWant = toolslice.pack({ tool: 'get_logs', callId: 'call_2', text: logs.text }, { limit: 80, unit: 'chars', kind: logs.kind });
  assert.deepEqual(logsGot, JSON.parse(JSON.stringify(logsWant.envelope)));
  assert.equal(logsGot.truncated, true);
  assert.equal(logsGot.redacted, true);
  assert.ok([...logsGot.content].length <= 80, `content within the limit (${[...logsGot.content].length})`);
  assert.match(logsGot.hint, /get_more/);
  assert.match(await page.locator('.packer-hint').textContent(), /get_more/);
  assert.equal(await page.locator('.packer-truncated').textContent(), 'true');
  const shown = await page.locator('.packer-results').textContent();
  assert.ok(!shown.includes(token), 'the planted token is not in the output');
  assert.ok(!shown.includes(token.slice(0, 12)), 'not even its start');
  assert.ok(await page.locator('.packer-source mark.kept').count() > 0, 'kept regions highlighted');
  assert.ok(await page.locator('.packer-source del.omitted').count() > 0, 'omitted regions highlighted');
  assert.match(await page.locator('.packer-original .legend').textContent(), /kept.*omitted/s);
  await page.screenshot({ path: artifact('view-packer.png') });

  await pick(page, 'ping');
  const ping = await inputs(page);
  const pingGot = await envelope(page);
  assert.equal(pingGot.truncated, false);
  assert.equal(pingGot.content, ping.text);
  assert.deepEqual(pingGot, JSON.parse(JSON.stringify(toolslice.pack({ tool: 'ping', callId: 'call_3', text: ping.text }, { limit: 80, unit: 'chars', kind: ping.kind }).envelope)));

  assert.deepEqual(errors, []);
  assert.deepEqual(outside, []);
});

test('moving the slider to a large limit makes get_logs whole; edits update live', async (t) => {
  const { page, errors, outside } = await openPage(t, { hash: '#packer' });
  await pick(page, 'get_logs');
  assert.equal((await envelope(page)).truncated, true);
  const slider = page.getByLabel(/^Limit/);
  await slider.focus();
  await slider.press('End');
  await page.waitForFunction(() => document.querySelector('.packer-truncated')?.textContent === 'false');
  const whole = await envelope(page);
  assert.equal(whole.truncated, false);
  assert.equal(whole.hint, undefined);
  assert.ok(!whole.content.includes('ghp_A1b2'), 'still redacted when whole');
  assert.match(await page.locator('#packer-limit-value').textContent(), /2,000 characters/);

  await page.getByLabel('tool kind').selectOption('terminal');
  await page.getByLabel('Tool output (editable)').fill('x'.repeat(3000));
  await page.waitForFunction(() => document.querySelector('.packer-truncated')?.textContent === 'true');
  const cut = await envelope(page);
  assert.deepEqual(cut, JSON.parse(JSON.stringify(toolslice.pack({ tool: 'get_logs', callId: 'call_2', text: 'x'.repeat(3000) }, { limit: 2000, unit: 'chars', kind: 'terminal' }).envelope)));
  assert.deepEqual(errors, []);
  assert.deepEqual(outside, []);
});

test('all three seed examples side by side: envelope, the span record pack emitted, and its check verdict', async (t) => {
  const { page, errors, outside } = await openPage(t, { hash: '#packer', viewport: { width: 1280, height: 900 } });
  const cards = page.locator('article.seed-card');
  await cards.nth(2).waitFor();
  const want = {
    get_job: { callId: 'call_1', kind: 'json', truncated: false, status: 'ok' },
    get_logs: { callId: 'call_2', kind: 'text', truncated: true, status: 'clipped' },
    ping: { callId: 'call_3', kind: 'text', truncated: false, status: 'ok' },
  };
  assert.deepEqual(await cards.evaluateAll((n) => n.map((c) => c.dataset.seed)), Object.keys(want));
  const boxes = await cards.evaluateAll((n) => n.map((c) => c.getBoundingClientRect().top));
  assert.ok(boxes.every((top) => Math.abs(top - boxes[0]) < 1), 'side by side at laptop width');
  for (const [name, w] of Object.entries(want)) {
    const card = page.locator(`article.seed-card[data-seed="${name}"]`);
    const env = JSON.parse(await card.locator('pre.seed-envelope').textContent());
    const span = JSON.parse(await card.locator('pre.seed-span').textContent());
    // The page's seed text, run through the package here: the same envelope and span.
    const text = name === 'get_job' ? '{"id":"job_42","status":"done","rows":118}' : name === 'ping' ? 'pong' : null;
    if (text) {
      const packed = toolslice.pack({ tool: name, callId: w.callId, text }, { limit: 80, unit: 'chars', kind: w.kind });
      assert.deepEqual(env, JSON.parse(JSON.stringify(packed.envelope)), name);
      assert.deepEqual(span, JSON.parse(JSON.stringify(packed.span)), name);
    }
    assert.equal(env.truncated, w.truncated, name);
    assert.equal(await card.locator('p.gate').getAttribute('data-truncated'), String(w.truncated), name);
    // The verdict shown is check's verdict on exactly that span record.
    const report = toolslice.checkSpans(`${JSON.stringify(span)}\n`).toJSON();
    assert.equal(report.rows[0].status, w.status, name);
    const verdict = card.locator('p.check-verdict');
    assert.equal(await verdict.getAttribute('data-status'), report.rows[0].status, name);
    assert.equal(await verdict.getAttribute('data-exit-code'), String(report.exit_code), name);
    assert.match(await verdict.textContent(), new RegExp(`toolslice check: . ${w.status} .*exit code 0\\.$`), name);
  }
  // Moving the limit moves all three: at 2,000 characters get_logs is whole too.
  const slider = page.getByLabel(/^Limit/);
  await slider.focus();
  await slider.press('End');
  await page.waitForFunction(() => document.querySelector('article.seed-card[data-seed="get_logs"] p.gate')?.dataset.truncated === 'false');
  assert.equal(await page.locator('article.seed-card[data-seed="get_logs"] p.check-verdict').getAttribute('data-status'), 'clipped', 'whole but redacted: a declared change');
  assert.deepEqual(errors, []);
  assert.deepEqual(outside, []);
});

test("the original's kept, omitted and redacted stretches are the ones pack returned", async (t) => {
  const { page, errors } = await openPage(t, { hash: '#packer' });
  await pick(page, 'get_logs');
  const text = await page.getByLabel('Tool output (editable)').inputValue();
  const { cut, envelope } = toolslice.pack({ tool: 'get_logs', callId: 'call_2', text }, { limit: 80, unit: 'chars', kind: 'text', segments: true });
  const kept = cut.segments.filter((s) => s.kind === 'kept').map((s) => cut.source.slice(...s.source));
  const shown = await page.locator('.packer-source').evaluate((pre) => [...pre.children].map((n) => [n.tagName.toLowerCase(), n.textContent]));
  assert.equal(shown.map(([, s]) => s).join(''), cut.source, 'the whole redacted result, in order');
  assert.deepEqual(shown.filter(([tag]) => tag === 'mark').map(([, s]) => s), kept);
  assert.deepEqual(await page.locator('.packer-source span.redacted').allTextContents(), cut.redacted.map((r) => cut.source.slice(...r)));
  assert.match(await page.locator('.packer-source span.redacted').first().textContent(), /^\[REDACTED:github_token\]$/);
  const markers = cut.segments.filter((s) => s.kind === 'marker').map((s) => envelope.content.slice(...s.output));
  assert.equal(await page.locator('.packer-marker').textContent(), `Marker: ${markers.join(' · ')}`);
  assert.doesNotMatch(await page.locator('#view-packer').textContent(), /differs slightly/);
  assert.deepEqual(errors, []);
});
