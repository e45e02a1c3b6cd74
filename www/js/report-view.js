// One checked file's report: verdict, summary figures, exports, clip-ratio histogram, the
// row table (priority order, filters, search, details), builders and tools, the parent
// rollup, and the invalid and skipped lines. Every figure comes from the package's report;
// this file only lays it out, filters rows for display, and reshapes rows into CSV.
import { el, num, bytes, duration, debounce, download } from './dom.js';
import { histogram } from './histogram.js';
import { PAGE, STATUSES } from './rows.js';

export { STATUSES };


/** Icon and plain words per status: status is never shown by colour alone. */
export const STATUS_INFO = {
  silent_clip: { icon: '✖', words: 'cut without saying so' },
  incomplete: { icon: '✖', words: 'length fields missing' },
  hash_mismatch: { icon: '▲', words: 'same length, different bytes, no reason given' },
  clipped: { icon: '✂', words: 'cut, and the cut was declared' },
  reformatted: { icon: '≈', words: 'the same data in another serialisation, not a cut' },
  ok: { icon: '✔', words: 'reached the model whole' },
};

const LIST_PAGE = 50;

export function statusBadge(status) {
  const info = STATUS_INFO[status] ?? { icon: '?', words: '' };
  return el('span', { class: `badge s-${status}`, title: info.words },
    el('span', { class: 'icon', 'aria-hidden': 'true' }, info.icon), ' ', status);
}

function plural(n, one, many = `${one}s`) {
  return `${num(n)} ${n === 1 ? one : many}`;
}

/** "1 tool span lacks" / "2 tool spans lack" */
function pluralVerb(n, one, verbOne, verbMany) {
  return `${plural(n, one)} ${n === 1 ? verbOne : verbMany}`;
}

/**
 * The exit verdict in plain words, from the report's exit code and counts. `kind`: `fail`,
 * `pass`, or `none` when no tool span was read (nothing was checked, so nothing can be
 * called trustworthy).
 */
export function verdictText(data) {
  const c = data.counts;
  // A file that yields no tool call checks nothing: the checker says so (`nothing_checked`,
  // exit 1 unless empty runs are allowed) with what the file held instead.
  if (c.total === 0) {
    const why = c.invalid ? ` (${plural(c.invalid, 'line')} could not be read as span records)` : '';
    const seen = data.nothing_checked ? ` The checker: ${data.nothing_checked}.` : '';
    return {
      kind: 'none',
      title: `Nothing was checked${data.exit_code !== 0 ? ` (exit code ${data.exit_code})` : ''}.`,
      text: `No tool span was found in this file${why}, so there is nothing to call trustworthy.${seen} See the notes below.`,
    };
  }
  if (data.exit_code !== 0) {
    const parts = [];
    if (c.silent_clip) parts.push(`${plural(c.silent_clip, 'tool result')} reached the model cut without saying so (silent_clip)`);
    if (c.incomplete) parts.push(`${pluralVerb(c.incomplete, 'tool span', 'lacks', 'lack')} the length fields needed to tell (incomplete)`);
    if (c.invalid) parts.push(`${plural(c.invalid, 'line')} could not be read as span records (invalid)`);
    return { kind: 'fail', title: 'Not trustworthy (exit code 1).', text: `${parts.join('; ')}. Fix these before replaying or comparing models.` };
  }
  return {
    kind: 'pass',
    title: 'Every tool span reached the model whole or declared its clip (exit code 0).',
    text: 'That does not prove the answer was correct: it proves nothing was cut silently.',
  };
}

/**
 * Plain-word notes about the input as a whole: an empty file, a file with no span record,
 * a last line that stops mid-record. They restate the report's counts; they decide nothing.
 */
export function inputNotes(data, meta) {
  const c = data.counts;
  const notes = [];
  if (c.lines === 0 || c.lines === c.blank) {
    notes.push({ kind: 'error', text: 'This file is empty: there is nothing to check.' });
  } else if (c.total === 0 && c.invalid > 0 && c.skipped === 0) {
    notes.push({ kind: 'error', text: `This does not look like a span file: none of its ${plural(c.lines - c.blank, 'line')} could be read as a span record (see the invalid lines below). toolslice reads span JSONL (one JSON object per line), OTLP JSON with GenAI or OpenInference attributes, Langfuse, OpenAI Agents SDK and Vercel AI SDK exports.` });
  } else if (c.total === 0) {
    notes.push({ kind: 'error', text: `No tool spans here: ${pluralVerb(c.skipped, 'record', 'was', 'were')} read but none is a tool span, so nothing can be checked.` });
  }
  const last = data.invalid.at(-1);
  if (!meta.endsWithNewline && last && last.line === c.lines) {
    notes.push({ kind: 'warn', text: `The last line (${num(last.line)}) stops in the middle of a record: the export or upload may have been cut off.` });
  }
  // Past the module's memory budgets the check still counts and classifies every span; these
  // notes say so, or a table shorter than the counts would be a silent clip of our own.
  const nk = data.not_kept;
  const at = data.read_as?.layout === 'document' ? 'entry' : 'line';
  if (nk?.rows_from_line != null) {
    notes.push({ kind: 'warn', text: `Not every row is listed: the table stops at the memory limit, and the ${plural(nk.rows, 'row')} from ${at} ${num(nk.rows_from_line)} on ${nk.rows === 1 ? 'is' : 'are'} counted in every figure but not listed.${data.flagged_only ? '' : ' Tick “List flagged rows only” and check the file again to list the rows that matter within it.'}` });
  }
  if (nk?.facts_from_line != null) {
    notes.push({ kind: 'warn', text: `The parent rollup, tool medians and builder rates cover the ${at}s before ${at} ${num(nk.facts_from_line)}: the ${plural(nk.spans, 'span')} from there on did not fit in memory for them (${nk.spans === 1 ? 'it is' : 'they are'} still counted and classified).` });
  }
  if (data.flagged_only) {
    notes.push({ kind: 'info', text: `${meta.large ? `This file is large (${bytes(meta.bytes)}), so it` : 'This file'} was checked in flagged-only mode: the table lists flagged rows only. The ${plural(c.ok, 'ok row')} are counted in every figure but not listed.` });
  }
  return notes;
}

function figure(label, value, cls) {
  return el('div', { class: `figure ${cls ?? ''}` }, el('dt', {}, label), el('dd', {}, value));
}

function summary(data, meta) {
  const c = data.counts;
  const rate = meta.ms > 0 ? Math.round(c.total / (meta.ms / 1000)) : null;
  return el('dl', { class: 'figures' },
    figure('tool spans', num(c.total)),
    STATUSES.map((s) => figure(el('span', {}, el('span', { class: 'icon', 'aria-hidden': 'true' }, STATUS_INFO[s].icon), ' ', s), num(c[s]), `s-${s}${c[s] && s !== 'ok' && s !== 'clipped' && s !== 'reformatted' ? ' hot' : ''}`)),
    figure('silent clips per 100 tool spans', data.silent_clips_per_100.toFixed(1)),
    figure('invalid lines', num(c.invalid), c.invalid ? 's-incomplete hot' : ''),
    figure('skipped lines', num(c.skipped)),
    figure('lines read', num(c.lines)),
    figure('checked', `${bytes(meta.bytes)} in ${duration(meta.ms)}${rate !== null && c.total ? ` (${num(rate)} spans/s)` : ''}`));
}

function exports(name, data, requestExport) {
  const base = name.replace(/\.(jsonl|ndjson|json|txt|log)$/i, '') || 'report';
  const status = el('span', { class: 'hint', role: 'status' });
  const get = async (kind) => {
    status.textContent = `Preparing ${kind.toUpperCase()}…`;
    try {
      // All three come from the worker that holds the report: JSON and JSONL are the
      // package's renderings, CSV a reshaping of its rows (csv.js).
      const text = await requestExport(kind);
      const type = { json: 'application/json', jsonl: 'application/x-ndjson', csv: 'text/csv;charset=utf-8' }[kind];
      download(`${base}.toolslice.${kind}`, text, type);
      status.textContent = `${kind.toUpperCase()} saved.`;
    } catch (err) {
      status.textContent = `Could not export ${kind.toUpperCase()}: ${err?.message ?? err}`;
    }
  };
  return el('div', { class: 'exports' },
    el('span', {}, 'Export the report: '),
    el('button', { type: 'button', 'data-export': 'json', onclick: () => get('json') }, 'JSON'),
    el('button', { type: 'button', 'data-export': 'jsonl', onclick: () => get('jsonl') }, 'JSONL'),
    el('button', { type: 'button', 'data-export': 'csv', onclick: () => get('csv'), title: 'Text cells a spreadsheet would run as a formula get a leading apostrophe.' }, 'CSV'),
    status);
}

function shareFill(share) {
  const fill = el('div', { class: 'share-fill' });
  // CSSOM, not a style attribute: the CSP allows no inline styles.
  fill.style.width = `${(share * 100).toFixed(2)}%`;
  return fill;
}

const pct = (ratio) => (ratio === null || ratio === undefined ? '—' : `${(ratio * 100).toFixed(ratio > 0 && ratio < 0.01 ? 2 : 0)}%`);

function kv(label, value, cls) {
  return [el('dt', {}, label), el('dd', { class: cls }, value ?? '—')];
}

/** A row's details: the injected slice first (what the model saw), then the observed body. */
export function rowDetail(row) {
  const share = row.observed_bytes && row.injected_bytes !== null
    ? Math.min(1, Math.max(0, row.injected_bytes / row.observed_bytes)) : null;
  return el('div', { class: 'detail' },
    el('section', { class: 'injected' },
      el('h4', {}, 'Injected slice: what the model saw'),
      el('dl', {},
        kv('preview', row.injected_preview === null ? null : el('pre', { class: 'preview' }, row.injected_preview)),
        kv('bytes', num(row.injected_bytes)),
        kv('tokens', row.injected_tokens_estimated && row.injected_tokens !== null
          ? `${num(row.injected_tokens)} (an estimate, bytes / 4: traces count tokens per model call, not per tool message)`
          : num(row.injected_tokens)),
        kv('sha256', row.sha256_injected, 'hash'),
        row.model_context_limit_tokens !== null ? kv('context limit', `${num(row.model_context_limit_tokens)} tokens`) : null),
      share !== null ? el('div', { class: 'share' },
        el('div', { class: 'share-bar', role: 'img', 'aria-label': `${(share * 100).toFixed(1)}% of the observed bytes reached the model` },
          shareFill(share)),
        el('p', { class: 'hint' }, `${num(row.injected_bytes)} of ${num(row.observed_bytes)} observed bytes reached the model (${(share * 100).toFixed(1)}%).`)) : null),
    el('section', { class: 'observed' },
      el('h4', {}, 'Observed body: what the tool returned'),
      el('dl', {},
        kv('bytes', num(row.observed_bytes)),
        kv('sha256', row.sha256_observed, 'hash'))),
    el('section', { class: 'why' },
      el('h4', {}, 'Verdict'),
      el('dl', {},
        kv('status', [statusBadge(row.status), ` ${STATUS_INFO[row.status]?.words ?? ''}`]),
        kv('detail', row.detail.join(', ') || null),
        kv('clip_reason', row.clip_reason),
        kv('share cut', pct(row.clip_ratio)),
        kv('builder', row.prompt_builder_version),
        kv('span', row.span_id),
        kv('parent', row.parent_id),
        kv('line', num(row.line)),
        row.join ? kv('paired by', JOIN_WORDS[row.join] ?? row.join) : null,
        row.notes?.length ? kv('notes', el('ul', { class: 'notes' }, row.notes.map((n) => el('li', {}, n)))) : null,
        row.warnings?.length ? kv('warnings', row.warnings.join('; '), 'warn') : null)));
}

/** How a trace-format reader matched a tool result with what a later model call received. */
const JOIN_WORDS = {
  tool_call_id: 'tool_call_id: the tool call id appears on a tool message of a later model call',
  order: 'order: no usable ids, so the k-th tool call was paired with the k-th tool message after the model call',
  unmatched: 'unmatched: no later model call input to pair with (see the notes)',
};

const COLUMNS = ['', 'status', 'line', 'span', 'tool', 'builder', 'observed', 'injected', 'tokens', 'cut', 'detail'];
/** Columns of numbers: right-aligned, header and cells alike. */
const NUMERIC = new Set(['line', 'observed', 'injected', 'tokens', 'cut']);

function rowCells(row, toggle) {
  return [
    el('td', {}, toggle),
    el('td', {}, statusBadge(row.status)),
    el('td', { class: 'num' }, row.line),
    el('td', { class: 'id' }, row.span_id ?? '-'),
    el('td', {}, row.name),
    el('td', {}, row.prompt_builder_version ?? '—'),
    el('td', { class: 'num' }, num(row.observed_bytes)),
    el('td', { class: 'num' }, num(row.injected_bytes)),
    el('td', { class: 'num' }, num(row.injected_tokens)),
    el('td', { class: 'num' }, pct(row.clip_ratio)),
    el('td', { class: 'text' }, [...row.detail, ...(row.warnings ?? [])].join(', ')),
  ];
}

function select(label, options, onchange) {
  const id = `f-${Math.random().toString(36).slice(2, 9)}`;
  const node = el('select', { id, onchange },
    options.map(([value, text]) => el('option', { value }, text)));
  return { node, field: el('span', { class: 'field' }, el('label', { for: id }, label), node) };
}

/**
 * The rows table, one page at a time. `source`: { summary, page, query(filter, first) }:
 * the filter menus' lists, the first page, and a function resolving to any other page; the
 * rows themselves stay in the check worker (rows.js), so the size of the run does not
 * matter here.
 */
function rowsTable(source) {
  const { summary } = source;
  const status = select('status', [['', `all (${num(summary.total)})`], ...STATUSES.map((s) => [s, `${s} (${num(summary.listed[s])})`])], () => refresh());
  const tool = select('tool', [['', 'all tools'], ...summary.tools.map((t, i) => [String(i), t])], () => refresh());
  const builder = select('builder', [['', 'all builders'], ...summary.builders.map((b, i) => [String(i), b ?? '(none)'])], () => refresh());
  const searchId = `q-${Math.random().toString(36).slice(2, 9)}`;
  const search = el('input', { id: searchId, type: 'search', placeholder: 'span, tool, hash, preview…', autocomplete: 'off', spellcheck: 'false' });
  search.addEventListener('input', debounce(() => refresh(), 150));
  const shown = el('p', { class: 'shown', role: 'status', 'aria-live': 'polite' });
  const tbody = el('tbody');
  const prev = el('button', { type: 'button', class: 'page-prev' }, el('span', { 'aria-hidden': 'true' }, '◀ '), 'Previous rows');
  const next = el('button', { type: 'button', class: 'page-next' }, 'Next rows', el('span', { 'aria-hidden': 'true' }, ' ▶'));
  const where = el('span', { class: 'page-where' });
  const pager = el('div', { class: 'pager', role: 'group', 'aria-label': 'Pages of rows' }, prev, where, next);
  const table = el('table', { class: 'rows-table' },
    el('thead', {}, el('tr', {}, COLUMNS.map((h, i) => el('th', { scope: 'col', class: NUMERIC.has(h) ? 'num' : null }, i === 0 ? el('span', { class: 'visually-hidden' }, 'details') : h)))),
    tbody);
  let filter = {};
  let page = source.page;
  let asked = 0;

  const filters = el('div', { class: 'filters', role: 'search', 'aria-label': 'Filter rows' },
    status.field, tool.field, builder.field,
    el('span', { class: 'field grow' }, el('label', { for: searchId }, 'search'), search));

  /** Asks the worker for a page; only the answer to the latest question is drawn. */
  async function load(first, focus) {
    const mine = ++asked;
    table.setAttribute('aria-busy', 'true');
    try {
      const got = await source.query(filter, first);
      if (mine !== asked) return;
      page = got;
      draw();
      if (focus) (focus.disabled ? tbody.querySelector('button') : focus)?.focus();
    } catch (err) {
      if (mine === asked) shown.textContent = `Could not list the rows: ${err?.message ?? err}`;
    } finally {
      if (mine === asked) table.removeAttribute('aria-busy');
    }
  }

  function refresh() {
    filter = {
      status: status.node.value || undefined,
      tool: tool.node.value === '' ? undefined : summary.tools[Number(tool.node.value)],
      builder: builder.node.value === '' ? undefined : summary.builders[Number(builder.node.value)],
      q: search.value.trim() || undefined,
    };
    load(0);
  }

  function draw() {
    const { first, matching, rows } = page;
    const last = first + rows.length;
    tbody.replaceChildren(...rows.flatMap((row) => tableRow(row)));
    const range = rows.length ? `rows ${num(first + 1)}–${num(last)}` : 'no rows';
    shown.textContent = matching === summary.total
      ? `Showing ${range} of ${plural(summary.total, 'row')}, in priority order.`
      : `Showing ${range} of ${num(matching)} matching ${matching === 1 ? 'row' : 'rows'} (${num(summary.total)} in all).`;
    pager.hidden = matching <= PAGE;
    prev.disabled = first === 0;
    next.disabled = last >= matching;
    where.textContent = `Page ${num(Math.floor(first / PAGE) + 1)} of ${num(Math.max(1, Math.ceil(matching / PAGE)))}`;
  }
  prev.addEventListener('click', () => load(page.first - PAGE, prev));
  next.addEventListener('click', () => load(page.first + PAGE, next));

  function tableRow(row) {
    const detailId = `d-${Math.random().toString(36).slice(2, 10)}`;
    const toggle = el('button', {
      type: 'button', class: 'toggle', 'aria-expanded': 'false', 'aria-controls': detailId,
      'aria-label': `Details of line ${row.line}${row.span_id ? `, span ${row.span_id}` : ''}`,
    }, el('span', { 'aria-hidden': 'true' }, '▸'));
    const tr = el('tr', { class: `span-row r-${row.status}` }, rowCells(row, toggle));
    const detail = el('tr', { class: 'detail-row', id: detailId, hidden: true },
      el('td', { colspan: COLUMNS.length }));
    toggle.addEventListener('click', () => {
      const open = toggle.getAttribute('aria-expanded') !== 'true';
      toggle.setAttribute('aria-expanded', String(open));
      toggle.firstChild.textContent = open ? '▾' : '▸';
      if (open && !detail.firstChild.firstChild) detail.firstChild.append(rowDetail(row));
      detail.hidden = !open;
    });
    return [tr, detail];
  }

  draw();
  return el('div', { class: 'rows' },
    filters, shown,
    el('div', { class: 'table-wrap', tabindex: '0', role: 'region', 'aria-label': 'Rows' }, table),
    pager);
}

function cappedList(items, render, noun) {
  const list = el('ol', { class: 'lines', tabindex: '0', 'aria-label': noun });
  const more = el('button', { type: 'button', class: 'more', hidden: true });
  let n = 0;
  const draw = () => {
    const next = Math.min(items.length, n + LIST_PAGE);
    for (; n < next; n++) list.append(render(items[n]));
    more.hidden = n >= items.length;
    more.textContent = `Show ${num(Math.min(LIST_PAGE, items.length - n))} more ${noun} (${num(items.length - n)} not shown)`;
  };
  more.addEventListener('click', draw);
  draw();
  return [list, more];
}

function builderTable(data) {
  if (!data.builders.length) return null;
  return el('table', { class: 'mini' },
    el('caption', {}, 'Prompt builder versions: compare builders before comparing models'),
    el('thead', {}, el('tr', {}, ['builder', 'spans', 'silent clips', 'per 100 spans'].map((h, i) => el('th', { scope: 'col', class: i ? 'num' : null }, h)))),
    el('tbody', {}, data.builders.map((b) => el('tr', {},
      el('th', { scope: 'row' }, b.prompt_builder_version ?? '(none)'),
      el('td', { class: 'num' }, num(b.spans)),
      el('td', { class: 'num' }, num(b.silent_clip)),
      el('td', { class: 'num' }, b.silent_clip_rate.toFixed(1))))));
}

function toolTable(data) {
  if (!data.tools.length) return null;
  return el('table', { class: 'mini' },
    el('caption', {}, 'Tools: a drop in median injected bytes often ships with a new cap'),
    el('thead', {}, el('tr', {}, ['tool', 'spans', 'median observed bytes', 'median injected bytes'].map((h, i) => el('th', { scope: 'col', class: i ? 'num' : null }, h)))),
    el('tbody', {}, data.tools.map((t) => el('tr', {},
      el('th', { scope: 'row' }, t.name),
      el('td', { class: 'num' }, num(t.spans)),
      el('td', { class: 'num' }, num(t.median_observed_bytes)),
      el('td', { class: 'num' }, num(t.median_injected_bytes))))));
}

function rollupList(data) {
  if (!data.rollup.length) return el('p', { class: 'hint' }, 'No parent span hides a silent clip or an incomplete child.');
  const [list, more] = cappedList(data.rollup, (r) => el('li', { class: 'rollup' },
    el('strong', {}, `parent ${r.span_id}`),
    ` (${r.own_status ? `its own span: ${r.own_status}${r.line ? `, line ${r.line}` : ''}` : 'no record of its own in this file'}) hides `,
    `${plural(r.silent_clip, 'silent clip')} and ${plural(r.incomplete, 'incomplete child', 'incomplete children')}: `,
    el('span', { class: 'id' }, r.flagged.join(', '))), 'parents');
  return el('div', {}, list, more);
}

function problemLines(data) {
  const parts = [];
  if (data.invalid.length) {
    const [list, more] = cappedList(data.invalid, (e) => el('li', { class: 'invalid' },
      el('span', { class: 'icon', 'aria-hidden': 'true' }, '✖'), ' ', el('strong', {}, `line ${e.line}`), ': invalid: ', e.error), 'invalid lines');
    parts.push(el('h4', {}, `Invalid lines (${num(data.invalid.length)})`), list, more);
  }
  if (data.skipped.length) {
    const [list, more] = cappedList(data.skipped, (s) => el('li', { class: 'skipped' },
      el('span', { class: 'icon', 'aria-hidden': 'true' }, '↷'), ' ', el('strong', {}, `line ${s.line}`), s.span_id ? ` (span ${s.span_id})` : '', ': skipped: ', s.reason), 'skipped lines');
    parts.push(el('h4', {}, `Skipped lines (${num(data.skipped.length)})`), list, more);
  }
  if (!parts.length) parts.push(el('p', { class: 'hint' }, 'Every line was a tool span or blank: none invalid, none skipped.'));
  return parts;
}

/**
 * The report section for one file: `data` is the report without its rows; `rows` is
 * { summary, page, query } (see rowsTable); `meta`: { bytes, ms, large, endsWithNewline };
 * `requestExport(kind)` resolves to the JSON, JSONL or CSV text.
 */
export function renderReport(name, data, meta, rows, requestExport) {
  const verdict = verdictText(data);
  const notes = inputNotes(data, meta);
  return el('section', { class: 'report', 'aria-label': `Report for ${name}` },
    el('div', { class: `verdict ${verdict.kind}` },
      el('span', { class: 'icon', 'aria-hidden': 'true' }, { pass: '✔', fail: '✖', none: '∅' }[verdict.kind]),
      el('p', {}, el('strong', {}, verdict.title), ' ', verdict.text)),
    notes.map((n) => el('p', { class: `note ${n.kind}`, role: n.kind === 'error' ? 'alert' : null },
      el('span', { class: 'icon', 'aria-hidden': 'true' }, n.kind === 'info' ? 'ℹ' : '⚠'), ' ', n.text)),
    summary(data, meta),
    exports(name, data, requestExport),
    // With no tool span there is no histogram, table or rollup to show: empty ones would
    // only look like a report of nothing wrong.
    verdict.kind === 'none' ? null : [
      el('div', { class: 'charts' },
        histogram(data, { caption: 'Share of observed bytes cut, per tool span' }),
        el('div', { class: 'side-tables' }, builderTable(data), toolTable(data))),
      el('h3', {}, 'Tool spans, most urgent first'),
      rowsTable(rows),
      el('h3', {}, 'Parents hiding a failure'),
      rollupList(data)],
    el('h3', {}, 'Lines that are not tool spans'),
    problemLines(data));
}
