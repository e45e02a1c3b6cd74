// Each view of the page in the state a person looks at it: the check view with a report of a
// real-looking run, the diff view comparing two runs, the hop view with a classified call,
// the packer with its seed examples. Shared by the layout tests (layout.test.mjs) and the
// screenshot script (screenshots.mjs), so what is checked is what is pictured.
import { createHash } from 'node:crypto';
import { dropFiles, reportFor } from './helpers.mjs';

/** The widths a person uses: a phone, a laptop, a wide monitor; and the dark scheme. */
export const SCREENS = [
  { name: '390', viewport: { width: 390, height: 844 }, colorScheme: 'light' },
  { name: '1280', viewport: { width: 1280, height: 800 }, colorScheme: 'light' },
  { name: '1920', viewport: { width: 1920, height: 1080 }, colorScheme: 'light' },
  { name: '1280-dark', viewport: { width: 1280, height: 800 }, colorScheme: 'dark' },
];

export const VIEWS = ['check', 'diff', 'hop', 'packer'];

const sha = (text) => createHash('sha256').update(text).digest('hex');

/**
 * A coding agent's run as its exporter writes it: 48 tool calls over 12 turns, real SHA-256
 * digests of the bodies, previews with line breaks, two builder versions, and every status
 * (silent clips, a partial span, a same-length rewrite, declared clips) among ok spans.
 */
export function realLookingRun() {
  const tools = ['read_file', 'grep', 'list_dir', 'run_tests', 'fetch_url', 'apply_patch'];
  const lines = [];
  for (let n = 1; n <= 48; n++) {
    const turn = Math.ceil(n / 4);
    const name = tools[(n * 7) % tools.length];
    const body = `${name} result ${n}\n${'src/billing/invoice_line_items.py:'.repeat(1 + (n % 9))}\n`.repeat(20 + ((n * 37) % 400));
    const observed = Buffer.byteLength(body);
    let injected = body;
    let reason = 'none';
    let status = 'ok';
    if (n % 11 === 3) injected = body.slice(0, 8192); // silent: cut, reason none
    else if (n % 13 === 5) { injected = body.slice(0, 4096); reason = 'tool_result_char_limit'; }
    else if (n % 17 === 7) injected = body.replace('result', 'RESULT'); // same length, other bytes
    else if (n === 20) status = 'running';
    const record = {
      trace_id: '4bf92f3577b34da6a3ce929d0e0e4736',
      span_id: `tool-${String(n).padStart(3, '0')}-${sha(`id${n}`).slice(0, 8)}`,
      parent_id: `turn-${String(turn).padStart(2, '0')}-${sha(`turn${turn}`).slice(0, 8)}`,
      name,
      status,
      observed_bytes: observed,
      injected_bytes: Buffer.byteLength(injected),
      injected_tokens: Math.ceil(Buffer.byteLength(injected) / 4),
      clip_reason: reason,
      sha256_observed: sha(body),
      sha256_injected: sha(injected),
      injected_preview: injected.slice(0, 128),
      prompt_builder_version: n <= 24 ? 'prompt-builder@2026.11.3' : 'prompt-builder@2026.11.4+cap-8k',
      model_context_limit_tokens: 128000,
    };
    if (n === 31) delete record.injected_bytes; // incomplete: a length is missing
    lines.push(JSON.stringify(record));
  }
  return `${lines.join('\n')}\n`;
}

export const CHECK_FILE = 'agent-run-2026-11-30T22-14.jsonl';

/** Puts `view` of an open page into the state a person looks at. */
export async function showView(page, view) {
  await page.getByRole('tab', { name: { check: 'Check a run', diff: 'Diff two runs', hop: 'Mutation hop', packer: 'Classroom packer' }[view] }).click();
  const panel = page.locator(`#view-${view}`);
  if (view === 'check') {
    await dropFiles(page, [{ name: CHECK_FILE, text: realLookingRun() }]);
    const section = reportFor(page, CHECK_FILE);
    await section.waitFor();
    await section.locator('button.toggle').first().click();
  } else if (view === 'diff') {
    await panel.getByRole('button', { name: 'two runs of span records', exact: true }).click();
    await panel.locator('table.manifest.only-left').waitFor();
  } else if (view === 'hop') {
    await panel.getByRole('button', { name: 'wrap', exact: true }).click();
    await panel.locator('.hop-label').waitFor();
  } else {
    await panel.locator('.packer-envelope').waitFor();
    await panel.locator('article.seed-card').nth(2).waitFor();
  }
  await page.evaluate(() => window.scrollTo(0, 0));
  return panel;
}
