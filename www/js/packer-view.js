// The classroom packer (seed 004): a tool output, its kind and a limit → the package's
// `pack` → the envelope the model reads. The kept and omitted regions of the (redacted)
// original come from the package's `redact` and `truncate` segments. What to cut, what to
// redact and what hint to give are the package's decisions; this file only calls and shows.
import { el, num, debounce } from './dom.js';
import { loadToolslice } from './wasm.js';

/** The slider's unit: pack budgets the content in code points (Python's len). */
export const UNIT = 'chars';
export const START_LIMIT = 80;
const KINDS = ['text', 'terminal', 'json', 'search', 'file'];
/** pack's kind → truncate's kind, for the highlight of the original. */
const TRUNCATE_KIND = { text: 'other', terminal: 'terminal', json: 'json', search: 'search', file: 'file' };

/** A fake GitHub token planted in get_logs: never a real one, always redacted. */
const FAKE_TOKEN = `ghp_${'A1b2C3d4E5f6G7h8'.repeat(2)}Z9y8`;

/** A job log, exactly 200 characters, with the fake token on its second line. */
const LOG = [
  'job 42 started',
  `auth token=${FAKE_TOKEN}`,
  'fetched 118 rows from the db',
  'wrote batch 1 of 2 (60 rows)',
  'wrote batch 2 of 2 (58 rows)',
  'checksum: ok',
  'done: 118 rows written in 4.20 s.',
].join('\n');

/** Seed 004's three examples. get_logs is exactly 200 characters. */
export const EXAMPLES = {
  get_job: { tool: 'get_job', callId: 'call_1', kind: 'json', text: '{"id":"job_42","status":"done","rows":118}' },
  get_logs: { tool: 'get_logs', callId: 'call_2', kind: 'text', text: LOG },
  ping: { tool: 'ping', callId: 'call_3', kind: 'text', text: 'pong' },
};

export function initPackerView(root) {
  const update = debounce(() => compute(), 60);
  const limit = el('input', { id: 'packer-limit', type: 'range', min: '20', max: '2000', step: '1', value: String(START_LIMIT), 'aria-describedby': 'packer-limit-value' });
  const limitValue = el('output', { id: 'packer-limit-value', for: 'packer-limit' });
  const tool = el('input', { id: 'packer-tool', type: 'text', autocomplete: 'off', value: 'get_logs' });
  const kind = el('select', { id: 'packer-kind' }, KINDS.map((k) => el('option', { value: k }, k)));
  const output = el('textarea', { id: 'packer-output', rows: '8', spellcheck: 'false' });
  const results = el('div', { class: 'packer-results', 'aria-live': 'polite' });
  let callId = 'call_2';

  const showLimit = () => { limitValue.textContent = `${num(Number(limit.value))} characters`; };
  limit.addEventListener('input', () => { showLimit(); update(); });
  for (const input of [tool, output]) input.addEventListener('input', update);
  kind.addEventListener('change', update);

  const example = (name) => {
    const ex = EXAMPLES[name];
    tool.value = ex.tool;
    callId = ex.callId;
    kind.value = ex.kind;
    output.value = ex.text;
    compute();
  };

  root.append(
    el('p', { class: 'lead' }, 'Limit 80 characters so you can see the cut. A small job result stays whole, a 200-character log is marked truncated and points at get_more, ping stays full. ',
      'Change the limit and watch which side of the gate you land on.'),
    el('p', { class: 'privacy packer-privacy' }, el('strong', {}, 'Nothing is sent to a server.'),
      ' The packer runs in this tab; the output you type never leaves it.'),
    el('div', { class: 'row examples' }, el('span', {}, 'Seed examples: '),
      Object.keys(EXAMPLES).map((name) => el('button', { type: 'button', 'data-example': name, onclick: () => example(name) }, name))),
    el('div', { class: 'packer-controls filters' },
      el('span', { class: 'field grow' }, el('label', { for: 'packer-limit' }, 'Limit (characters, counted as code points)'), limit, limitValue),
      el('span', { class: 'field' }, el('label', { for: 'packer-tool' }, 'tool name'), tool),
      el('span', { class: 'field' }, el('label', { for: 'packer-kind' }, 'tool kind'), kind)),
    el('div', { class: 'paste' }, el('label', { for: 'packer-output' }, 'Tool output (editable)'), output),
    results);

  async function compute() {
    const toolslice = await loadToolslice();
    const text = output.value;
    const input = { tool: tool.value || 'tool', callId, text };
    const options = { limit: Number(limit.value), unit: UNIT, kind: kind.value };
    try {
      const packed = toolslice.pack(input, options);
      results.replaceChildren(render(packed, highlight(toolslice, input, options)));
    } catch (err) {
      results.replaceChildren(el('p', { class: 'file-error', role: 'alert' }, `Could not pack: ${err.message}`));
    }
  }

  /** The package's cut of the redacted original, for the kept/omitted highlight. */
  function highlight(toolslice, input, options) {
    try {
      const red = toolslice.redact(input.text);
      const cut = toolslice.truncate(red.text, {
        budget: { [UNIT]: options.limit }, tool: input.tool, kind: TRUNCATE_KIND[options.kind],
        fetch: { id: input.callId, tool: 'get_more' },
      });
      return { source: red.text, cut };
    } catch {
      return null;
    }
  }

  function render(packed, hl) {
    const env = packed.envelope;
    return el('div', {},
      el('div', { class: `verdict ${env.truncated ? 'fail' : 'pass'}`, 'data-truncated': String(env.truncated) },
        el('span', { class: 'icon', 'aria-hidden': 'true' }, env.truncated ? '✂' : '✔'),
        el('p', {}, 'truncated: ', el('strong', { class: 'packer-truncated' }, String(env.truncated)),
          env.truncated ? ' · the model sees a cut result and is told how to page.' : ' · the model sees the whole result.',
          env.redacted ? ' · redacted: true (a secret was replaced).' : '')),
      el('dl', { class: 'figures' },
        el('div', { class: 'figure' }, el('dt', {}, 'content length (characters)'), el('dd', { class: 'packer-length' }, num([...env.content].length))),
        el('div', { class: 'figure' }, el('dt', {}, 'limit (characters)'), el('dd', {}, num(Number(limit.value)))),
        el('div', { class: 'figure' }, el('dt', {}, 'omitted bytes'), el('dd', {}, num(env.omitted.bytes))),
        el('div', { class: 'figure' }, el('dt', {}, 'receipts (redactions)'), el('dd', {}, num(packed.receipts.length)))),
      el('h3', {}, 'Hint'),
      el('p', { class: 'packer-hint' }, env.hint ?? (env.error ? `error: ${env.error}` : 'No hint: nothing was cut.')),
      el('h3', {}, 'What the model reads (content)'),
      el('pre', { class: 'preview packer-content' }, env.content),
      original(hl, env),
      el('h3', {}, 'The packed envelope'),
      el('pre', { class: 'preview packer-envelope' }, JSON.stringify(env, null, 2)));
  }

  function original(hl, env) {
    if (!hl) return null;
    const { source, cut } = hl;
    const parts = [];
    let at = 0;
    const kept = cut.segments.filter((s) => s.kind === 'kept' && s.source).map((s) => s.source).sort((a, b) => a[0] - b[0]);
    for (const [from, to] of kept) {
      if (from > at) parts.push(el('del', { class: 'omitted' }, source.slice(at, from)));
      if (to > from) parts.push(el('mark', { class: 'kept' }, source.slice(Math.max(from, at), to)));
      at = Math.max(at, to);
    }
    if (at < source.length) parts.push(el('del', { class: 'omitted' }, source.slice(at)));
    const markers = cut.segments.filter((s) => s.kind === 'marker').map((s) => cut.text.slice(...s.output));
    return el('section', { class: 'packer-original', 'aria-label': 'The original, kept and omitted' },
      el('h3', {}, 'The original (after redaction), kept and omitted'),
      el('ul', { class: 'legend' },
        el('li', {}, el('mark', { class: 'kept' }, 'kept'), ' text the model reads'),
        el('li', {}, el('del', { class: 'omitted' }, 'omitted'), ' text cut out (struck through), reachable with get_more')),
      el('pre', { class: 'preview packer-source' }, parts),
      el('p', { class: 'hint packer-marker' }, markers.length ? `Marker: ${markers.join(' · ')}` : 'Marker: none (nothing was cut).'),
      cut.text === env.content ? null
        : el('p', { class: 'hint' }, 'Regions from the package’s truncate of the redacted text; pack also shaped this result, so its content differs slightly.'));
  }

  showLimit();
  example('get_logs');
}
