// Shared by the page tests: serve www/ with the same server and headers as scripts/serve,
// open it in Debian's Chromium, log every request, and drive the check view the way a
// person does (drop through a real DataTransfer, pick with the file chooser, paste).
import { spawnSync } from 'node:child_process';
import { createWriteStream, mkdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { once } from 'node:events';
import { serve } from '../../scripts/static-server.mjs';
import { launch } from '../browser/chromium.mjs';

export const here = (p) => fileURLToPath(new URL(p, import.meta.url));
export const WWW = here('../../www');
export const FIXTURES = here('../fixtures/');
export const ARTIFACTS = here('../artifacts/');
const CLI = here('../node_modules/.bin/toolslice');

/** The page's own files: the only paths a test allows the page to request. */
export const OWN_FILE = /^\/(|index\.html|app\.js|style\.css|js\/[a-z-]+\.js|pkg\/(check\/)?toolslice(\.js|_bg\.wasm))$/;

/**
 * Serves www/ and opens it. Returns { page, url, requests, outside, errors, close }:
 * `requests` are the paths the server saw, `outside` every URL the browser asked for that
 * is not on the page's origin (blob: URLs the page made itself are listed in `blobs`).
 */
export async function openPage(t, { viewport = { width: 1200, height: 900 }, colorScheme = 'light', hash = '' } = {}) {
  const requests = [];
  const server = await serve({ root: WWW, onRequest: (p) => requests.push(p) });
  const browser = await launch();
  const page = await browser.newPage();
  await page.setViewportSize(viewport);
  await page.emulateMedia({ colorScheme });
  const errors = [];
  const outside = [];
  const blobs = [];
  page.on('pageerror', (e) => errors.push(e.message));
  page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
  browser.on('request', (r) => {
    const url = r.url();
    if (url.startsWith(server.url)) return;
    if (url.startsWith(`blob:${server.url.replace(/\/$/, '')}/`)) blobs.push(url);
    else outside.push(url);
  });
  let closed = false;
  const close = async () => {
    if (closed) return;
    closed = true;
    await browser.close();
    await server.close();
  };
  t.after(close);
  await page.goto(server.url + hash);
  await page.waitForFunction(() => document.documentElement.dataset.ready === 'true');
  return { page, browser, url: server.url, requests, outside, blobs, errors, close };
}

/** Drops files on the drop zone through a real DataTransfer. files: [{ name, text }]. */
export async function dropFiles(page, files, target = '#drop') {
  await page.evaluate(({ files, target }) => {
    const dt = new DataTransfer();
    for (const f of files) dt.items.add(new File([f.text], f.name, { type: 'application/jsonl' }));
    const node = document.querySelector(target);
    for (const type of ['dragenter', 'dragover', 'drop']) {
      node.dispatchEvent(new DragEvent(type, { dataTransfer: dt, bubbles: true, cancelable: true }));
    }
  }, { files, target });
}

/** Picks files from disk with the page's file chooser, as a person does. */
export async function pickFiles(page, paths) {
  const chooser = page.waitForEvent('filechooser');
  await page.getByRole('button', { name: 'choose files' }).click();
  await (await chooser).setFiles(paths);
}

export const reportFor = (page, name) => page.locator(`section[aria-label="Report for ${name}"]`);
export const jobFor = (page, name) => page.locator(`article.job[aria-label="${name}"]`);

/** The CLI's output for `toolslice ARGS` (exit 0 or 1), run by Node from the built package. */
export function toolsliceCli(args) {
  const out = spawnSync(CLI, args, { encoding: 'utf8', maxBuffer: 1 << 30 });
  if (out.status !== 0 && out.status !== 1) throw new Error(`toolslice ${args[0]} failed (${out.status ?? out.error}): ${out.stderr}`);
  return out.stdout;
}

/** The CLI's check report for a file (the package's own renderings, run by Node). */
export function cli(args) {
  return toolsliceCli(['check', ...args]);
}

/**
 * Waits until the rows table shows the answer to the last filter or page asked for (the
 * rows are served a page at a time by the check worker, so the table is briefly busy).
 */
export async function rowsSettled(section) {
  await section.locator('table.rows-table:not([aria-busy])').waitFor();
}

/** Every row the table lists (turning its pages until the last), as cell texts. */
export async function allRows(section) {
  const cells = () => section.locator('tbody tr.span-row').evaluateAll((rows) =>
    rows.map((tr) => [...tr.children].slice(1).map((td) => td.textContent.trim())));
  const next = section.locator('.rows .pager button.page-next');
  const all = await cells();
  while ((await next.isVisible()) && (await next.isEnabled())) {
    await next.click();
    await rowsSettled(section);
    all.push(...await cells());
  }
  return all;
}

/** The summary figures as { label: text }. */
export async function figures(section) {
  return Object.fromEntries(await section.locator('dl.figures .figure').evaluateAll((nodes) =>
    nodes.map((n) => [n.querySelector('dt').textContent.replace(/^[^a-z]+/, '').trim(), n.querySelector('dd').textContent.trim()])));
}

/**
 * Writes a span JSONL file of about `size` bytes, or of exactly `spans` tool spans; every
 * `silentEvery`th span is a silent clip.
 */
export async function writeSpanFile(path, { size = Infinity, spans = Infinity, silentEvery = 997 }) {
  const out = createWriteStream(path);
  let n = 0;
  let written = 0;
  let batch = [];
  while (written < size && n < spans) {
    n++;
    const silent = n % silentEvery === 0;
    const observed = 1000 + (n % 5000);
    const line = JSON.stringify({
      span_id: `tool-${n}`, parent_id: `turn-${n >> 4}`, name: ['read_file', 'ls', 'grep', 'fetch'][n % 4],
      status: 'ok', observed_bytes: observed, injected_bytes: silent ? 100 : observed, injected_tokens: 300,
      clip_reason: 'none', sha256_observed: `ab${n}`, sha256_injected: `ab${n}`,
      injected_preview: 'app:\\n  name: billing\\n', prompt_builder_version: n % 2 ? 'cap-v3' : 'cap-v4',
    }) + '\n';
    batch.push(line);
    written += line.length;
    if (batch.length === 4096) {
      if (!out.write(batch.join(''))) await once(out, 'drain');
      batch = [];
    }
  }
  out.end(batch.join(''));
  await once(out, 'finish');
  return { spans: n, bytes: written };
}

export function artifact(name) {
  mkdirSync(ARTIFACTS, { recursive: true });
  return `${ARTIFACTS}${name}`;
}
