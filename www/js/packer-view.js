// The classroom packer (seed 004): a tool output, its kind and a limit → the package's
// `pack` → the envelope the model reads, the span record the packer emitted, and the verdict
// `check` gives that record: both ends of the mission in one place. The kept, omitted and
// redacted stretches of the original are the ones `pack` itself returns (`segments: true`),
// so what is shown is exactly what was packed. What to cut, what to redact, what hint to
// give and how to judge the span are the package's decisions; this file only calls and shows.
import { el, num, debounce } from './dom.js';
import { loadToolslice } from './wasm.js';
import { statusBadge, STATUS_INFO } from './report-view.js';

/** The slider's unit: pack budgets the content in code points (Python's len). */
export const UNIT = 'chars';
export const START_LIMIT = 80;
const KINDS = ['text', 'terminal', 'json', 'search', 'file'];

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
  const seeds = el('div', { class: 'packer-seeds' });
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
      'Change the limit and watch which side of the gate each lands on.'),
    el('p', { class: 'privacy packer-privacy' }, el('strong', {}, 'Nothing is sent to a server.'),
      ' The packer runs in this tab; the output you type never leaves it.'),
    el('div', { class: 'packer-controls filters' },
      el('span', { class: 'field grow' }, el('label', { for: 'packer-limit' }, 'Limit (characters, counted as code points)'), limit, limitValue)),
    el('section', { class: 'packer-seeds-section', 'aria-labelledby': 'packer-seeds-title' },
      el('h3', { id: 'packer-seeds-title' }, 'The three seed examples at this limit'),
      seeds),
    el('section', { class: 'packer-try', 'aria-labelledby': 'packer-try-title' },
      el('h3', { id: 'packer-try-title' }, 'Try one: edit the output, the tool or its kind'),
      el('div', { class: 'button-row examples' }, el('span', {}, 'Start from a seed example: '),
        Object.keys(EXAMPLES).map((name) => el('button', { type: 'button', 'data-example': name, onclick: () => example(name) }, name))),
      el('div', { class: 'filters' },
        el('span', { class: 'field' }, el('label', { for: 'packer-tool' }, 'tool name'), tool),
        el('span', { class: 'field' }, el('label', { for: 'packer-kind' }, 'tool kind'), kind)),
      el('div', { class: 'paste' }, el('label', { for: 'packer-output' }, 'Tool output (editable)'), output),
      results));

  /** pack, then check on the span record pack emitted: the two ends of one tool call. */
  function run(toolslice, input, packKind) {
    const packed = toolslice.pack(input, { limit: Number(limit.value), unit: UNIT, kind: packKind, segments: true });
    const report = toolslice.checkSpans(`${JSON.stringify(packed.span)}\n`);
    try {
      const data = report.toJSON();
      return { packed, check: { exitCode: data.exit_code, row: data.rows[0] ?? null } };
    } finally {
      report.free();
    }
  }

  async function compute() {
    const toolslice = await loadToolslice();
    const at = limit.value;
    try {
      const { packed, check } = run(toolslice, { tool: tool.value || 'tool', callId, text: output.value }, kind.value);
      results.replaceChildren(render(packed, check));
    } catch (err) {
      results.replaceChildren(el('p', { class: 'file-error', role: 'alert' }, `Could not pack: ${err.message}`));
    }
    if (seeds.dataset.limit !== at) {
      seeds.dataset.limit = at;
      seeds.replaceChildren(...Object.entries(EXAMPLES).map(([name, ex]) => seedCard(toolslice, name, ex)));
    }
  }

  function seedCard(toolslice, name, ex) {
    let shown;
    try {
      const { packed, check } = run(toolslice, { tool: ex.tool, callId: ex.callId, text: ex.text }, ex.kind);
      const env = packed.envelope;
      shown = [
        gate(env),
        el('h5', {}, 'Envelope: what the model reads'),
        el('pre', { class: 'preview seed-envelope' }, JSON.stringify(env, null, 2)),
        el('h5', {}, 'Span record the packer emitted'),
        el('pre', { class: 'preview seed-span' }, JSON.stringify(packed.span, null, 2)),
        checkVerdict(check),
      ];
    } catch (err) {
      shown = [el('p', { class: 'file-error', role: 'alert' }, `Could not pack: ${err.message}`)];
    }
    return el('article', { class: 'seed-card', 'data-seed': name, 'aria-label': `Seed example ${name}` },
      el('h4', {}, el('code', {}, ex.tool), ` (${ex.kind}, ${num([...ex.text].length)} characters)`),
      ...shown);
  }

  function gate(env) {
    return el('p', { class: `gate ${env.truncated ? 'cut' : 'whole'}`, 'data-truncated': String(env.truncated) },
      el('span', { class: 'icon', 'aria-hidden': 'true' }, env.truncated ? '✂' : '✔'), ' ',
      env.truncated ? 'Cut: truncated, with a hint to page.' : 'Whole: the model reads all of it.',
      env.redacted ? ' A secret was redacted.' : '');
  }

  /** `check`'s verdict on the packer's span record, in its own words. */
  function checkVerdict(check) {
    const status = check.row?.status;
    return el('p', { class: 'check-verdict', 'data-status': status ?? 'none', 'data-exit-code': String(check.exitCode) },
      el('strong', {}, 'toolslice check: '),
      status ? statusBadge(status) : 'no tool span',
      status ? ` (${STATUS_INFO[status]?.words ?? ''}${check.row.clip_reason ? `; clip_reason ${check.row.clip_reason}` : ''}), exit code ${check.exitCode}.` : `, exit code ${check.exitCode}.`);
  }

  function render(packed, check) {
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
      el('h4', {}, 'Hint'),
      el('p', { class: 'packer-hint' }, env.hint ?? (env.error ? `error: ${env.error}` : 'No hint: nothing was cut.')),
      el('h4', {}, 'What the model reads (content)'),
      el('pre', { class: 'preview packer-content' }, env.content),
      original(packed.cut, env),
      el('div', { class: 'packer-ends' },
        el('section', { 'aria-label': 'The packed envelope' },
          el('h4', {}, 'The packed envelope'),
          el('pre', { class: 'preview packer-envelope' }, JSON.stringify(env, null, 2))),
        el('section', { 'aria-label': 'The span record and its check' },
          el('h4', {}, 'The span record the packer emitted'),
          el('pre', { class: 'preview packer-span' }, JSON.stringify(packed.span, null, 2)),
          checkVerdict(check))));
  }

  /** The text pack cut (after redaction), drawn from pack's own segments. */
  function original(cut, env) {
    if (!cut) return null;
    const { source } = cut;
    const kept = cut.segments.filter((s) => s.kind === 'kept' && s.source).map((s) => s.source);
    const cuts = new Set([0, source.length]);
    for (const [a, b] of [...kept, ...cut.redacted]) cuts.add(a).add(b);
    const at = [...cuts].sort((a, b) => a - b);
    const inside = (ranges, a, b) => ranges.some(([x, y]) => x <= a && b <= y);
    const parts = [];
    for (let i = 0; i + 1 < at.length; i++) {
      const [a, b] = [at[i], at[i + 1]];
      if (a === b) continue;
      const piece = inside(cut.redacted, a, b) ? el('span', { class: 'redacted' }, source.slice(a, b)) : source.slice(a, b);
      parts.push(inside(kept, a, b) ? el('mark', { class: 'kept' }, piece) : el('del', { class: 'omitted' }, piece));
    }
    const markers = cut.segments.filter((s) => s.kind === 'marker').map((s) => env.content.slice(...s.output));
    return el('section', { class: 'packer-original', 'aria-label': 'The original, kept and omitted' },
      el('h4', {}, 'The original (after redaction), kept and omitted'),
      el('ul', { class: 'legend' },
        el('li', {}, el('mark', { class: 'kept' }, 'kept'), ' text the model reads'),
        el('li', {}, el('del', { class: 'omitted' }, 'omitted'), ' text cut out (struck through), reachable with get_more'),
        el('li', {}, el('span', { class: 'redacted' }, '[REDACTED]'), ' a secret pack replaced (boxed)')),
      el('pre', { class: 'preview packer-source' }, parts),
      el('p', { class: 'hint packer-marker' }, markers.length ? `Marker: ${markers.join(' · ')}` : 'Marker: none (nothing was cut).'),
      env.error ? el('p', { class: 'hint' }, 'The result does not fit even when cut, so the model reads the short error instead: none of it is kept.') : null);
  }

  showLimit();
  example('get_logs');
}
