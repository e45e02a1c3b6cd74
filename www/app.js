// The page: files are read as streams and fed to the streaming checker chunk by chunk, all
// in this tab. Everything from a trace is rendered with textContent, never as HTML.
import init, { Checker } from './pkg/toolslice.js';

const ready = init({ module_or_path: new URL('./pkg/toolslice_bg.wasm', import.meta.url) });
const $ = (id) => document.getElementById(id);
const ICON = { silent_clip: '✖', incomplete: '✖', hash_mismatch: '▲', clipped: '✂', ok: '✔' };

function el(tag, props = {}, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(props)) {
    if (k === 'class') node.className = v;
    else node.setAttribute(k, v);
  }
  for (const child of children) node.append(child instanceof Node ? child : document.createTextNode(String(child ?? '')));
  return node;
}

async function checkFile(file) {
  await ready;
  const checker = new Checker();
  const reader = file.stream().getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    checker.push(value);
    $('status').textContent = `Checking ${file.name}: ${Math.round((100 * checker.bytesRead) / (file.size || 1))}%`;
  }
  const report = checker.finish();
  const data = report.toJSON();
  report.free();
  return data;
}

function renderReport(name, data) {
  const c = data.counts;
  const failed = data.exit_code !== 0;
  const section = el('section', { class: 'report', 'aria-label': `Report for ${name}` },
    el('h2', {}, name),
    el('p', { class: `verdict ${failed ? 'fail' : 'pass'}` },
      failed
        ? `✖ Not trustworthy: ${c.silent_clip} silent clip(s), ${c.incomplete} incomplete span(s), ${c.invalid} invalid line(s).`
        : '✔ Every tool span reached the model whole or declared its clip.'),
    el('p', {}, `${c.total} tool spans: ${c.silent_clip} silent_clip, ${c.incomplete} incomplete, ${c.hash_mismatch} hash_mismatch, ${c.clipped} clipped, ${c.ok} ok. ` +
      `${data.silent_clips_per_100.toFixed(1)} silent clips per 100 tool spans.`));
  const head = el('tr', {}, ...['status', 'line', 'span', 'tool', 'observed', 'injected', 'tokens', 'detail'].map((h) => el('th', { scope: 'col' }, h)));
  const body = el('tbody');
  for (const row of data.rows) {
    body.append(el('tr', {},
      el('td', { class: `s-${row.status}` }, `${ICON[row.status]} ${row.status}`),
      el('td', { class: 'num' }, row.line),
      el('td', {}, row.span_id ?? '-'),
      el('td', {}, row.name),
      el('td', { class: 'num' }, row.observed_bytes ?? '—'),
      el('td', { class: 'num' }, row.injected_bytes ?? '—'),
      el('td', { class: 'num' }, row.injected_tokens ?? '—'),
      el('td', {}, [...row.detail, ...(row.warnings ?? [])].join(', '))));
  }
  section.append(el('div', { class: 'table-wrap' }, el('table', {}, el('thead', {}, head), body)));
  const problems = [
    ...data.invalid.map((e) => `line ${e.line}: invalid: ${e.error}`),
    ...data.skipped.map((s) => `line ${s.line}: skipped: ${s.reason}`),
    ...data.rollup.map((r) => `parent ${r.span_id} (${r.own_status ?? 'not in this file'}) hides ${r.silent_clip} silent clip(s), ${r.incomplete} incomplete: ${r.flagged.join(', ')}`),
  ];
  if (problems.length) section.append(el('h3', {}, 'Lines and parents to look at'), el('ul', { class: 'problems' }, ...problems.map((p) => el('li', {}, p))));
  return section;
}

async function handle(files) {
  for (const file of files) {
    try {
      const data = await checkFile(file);
      $('reports').prepend(renderReport(file.name, data));
      $('status').textContent = `Checked ${file.name}.`;
    } catch (err) {
      $('reports').prepend(el('p', { class: 'error' }, `${file.name}: ${err?.message ?? err}`));
      $('status').textContent = '';
    }
  }
}

const drop = $('drop');
drop.addEventListener('dragover', (e) => { e.preventDefault(); drop.classList.add('over'); });
drop.addEventListener('dragleave', () => drop.classList.remove('over'));
drop.addEventListener('drop', (e) => {
  e.preventDefault();
  drop.classList.remove('over');
  handle([...e.dataTransfer.files]);
});
drop.addEventListener('keydown', (e) => { if (e.key === 'Enter' || e.key === ' ') { e.preventDefault(); $('pick').click(); } });
$('pick').addEventListener('change', (e) => handle([...e.target.files]));
