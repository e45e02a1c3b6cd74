// The hop view: the bytes at the three boundaries of one tool call (the process output, the
// adapter's output, the tool-result slice of the model request) → the package's
// classifyHop → three digests, three lengths, the mutation_hop label and the row of seed
// 003's table that says where to look. The label is the package's; this file only shows it.
import { el, num, scrollBox, debounce, download } from './dom.js';
import { byteField } from './inputs.js';
import { loadToolslice } from './wasm.js';

/** Seed 003's hop table, row by row, keyed by the label the package returns. */
export const HOP_TABLE = [
  { hop: 'adapter_shrink', comparison: 'Process hash differs, adapter shorter', signal: 'Shrink', inspect: 'Adapter truncate or parse drop', owner: 'the adapter author' },
  { hop: 'adapter_grow', comparison: 'Process hash differs, adapter longer', signal: 'Growth', inspect: 'Adapter wrap or injected default', owner: 'the adapter author' },
  { hop: 'prompt_builder_wrap', comparison: 'Process equals adapter, model longer', signal: 'Growth', inspect: 'Prompt builder added a wrapper', owner: 'the prompt author' },
  { hop: 'prompt_builder_drop', comparison: 'Process equals adapter, model shorter', signal: 'Shrink', inspect: 'Prompt builder dropped fields', owner: 'the prompt author' },
  { hop: 'no_payload_mutation', comparison: 'All three hashes equal, lengths equal', signal: 'None', inspect: 'Not a payload mutation', owner: 'a behaviour review, not transport' },
  { hop: 'hash_slice_mismatch', comparison: 'Hashes equal, model length disagrees', signal: 'Mismatch', inspect: 'You hashed the wrong slice', owner: 'whoever wrote the instrumentation' },
  { hop: 'needs_manual_review', comparison: 'None of the rows above fits (for instance a same-length rewrite)', signal: '—', inspect: 'Compare the bytes by hand', owner: 'a person with the three files' },
];

const ADAPTER_CHANGE = {
  none: 'The adapter passed the process bytes through unchanged.',
  format_only: 'The adapter changed the bytes but not the JSON: key order, whitespace or escapes only (the canonical hashes match).',
  content: 'The adapter changed the JSON itself (the canonical hashes differ).',
  unknown: 'One side is not JSON, so only the raw bytes can be compared.',
};

/** Seed 003's two fixtures, byte for byte. */
const EXAMPLES = {
  wrap: { process: '{"ok":true,"rows":2}', adapter: '{"ok":true,"rows":2}', model: '{"type":"tool_result","body":{"ok":true,"rows":2}}' },
  shrink: { process: '{"ok":true,"rows":2,"note":"abcdef"}', adapter: '{"ok":true,"rows":2}', model: '{"ok":true,"rows":2}' },
};

export function initHopView(root) {
  const results = el('div', { class: 'hop-results', 'aria-live': 'polite' });
  const update = debounce(() => compute(), 120);
  const fields = {
    process: byteField({ id: 'hop-process', label: '1. Process output', hint: 'The raw bytes the tool process wrote.', onchange: update }),
    adapter: byteField({ id: 'hop-adapter', label: '2. Adapter output', hint: 'After parse, wrap and redact.', onchange: update }),
    model: byteField({ id: 'hop-model', label: '3. Model slice', hint: 'The tool-result slice of the model request, not the whole prompt.', onchange: update }),
  };
  const meta = {
    toolName: el('input', { id: 'hop-tool', type: 'text', autocomplete: 'off', placeholder: 'read_file' }),
    toolCallId: el('input', { id: 'hop-call', type: 'text', autocomplete: 'off', placeholder: 'call_91' }),
    runId: el('input', { id: 'hop-run', type: 'text', autocomplete: 'off', placeholder: 'run_7f3a' }),
  };
  for (const input of Object.values(meta)) input.addEventListener('input', update);
  const example = (name) => {
    for (const [k, v] of Object.entries(EXAMPLES[name])) fields[k].setText(v);
    compute();
  };

  root.append(
    el('p', { class: 'lead' }, 'Paste or drop the bytes one tool call had at each of its three boundaries. ',
      'One digest per boundary, plus the length there, tells which owner changed the bytes: the adapter, the prompt builder, or nobody.'),
    el('div', { class: 'button-row examples' }, el('span', {}, 'Seed examples: '),
      el('button', { type: 'button', onclick: () => example('wrap') }, 'wrap'),
      el('button', { type: 'button', onclick: () => example('shrink') }, 'shrink')),
    el('div', { class: 'hop-inputs' }, fields.process.node, fields.adapter.node, fields.model.node),
    el('p', { class: 'hint' }, 'Pasted text is hashed as UTF-8, with line ends as \\n; drop or choose a file to hash its exact bytes.'),
    el('div', { class: 'hop-meta' },
      el('span', { class: 'field' }, el('label', { for: 'hop-tool' }, 'tool name'), meta.toolName),
      el('span', { class: 'field' }, el('label', { for: 'hop-call' }, 'tool call id'), meta.toolCallId),
      el('span', { class: 'field' }, el('label', { for: 'hop-run' }, 'run id'), meta.runId)),
    results);

  let row = null;
  async function compute() {
    const toolslice = await loadToolslice();
    const options = {};
    if (meta.toolName.value) options.toolName = meta.toolName.value;
    if (meta.toolCallId.value) options.toolCallId = meta.toolCallId.value;
    if (meta.runId.value) options.runId = meta.runId.value;
    try {
      row = toolslice.classifyHop(fields.process.value(), fields.adapter.value(), fields.model.value(), options);
      results.replaceChildren(render(row));
    } catch (err) {
      row = null;
      results.replaceChildren(el('p', { class: 'file-error', role: 'alert' }, `Could not classify: ${err.message}`));
    }
  }

  function render(r) {
    const entry = HOP_TABLE.find((e) => e.hop === r.mutation_hop) ?? HOP_TABLE.at(-1);
    const mutated = r.mutation_hop !== 'no_payload_mutation';
    const same = (a, b) => (a === b ? '=' : '≠');
    return el('div', {},
      el('div', { class: `verdict ${mutated ? 'fail' : 'pass'}`, 'data-hop': r.mutation_hop },
        el('span', { class: 'icon', 'aria-hidden': 'true' }, mutated ? '▲' : '✔'),
        el('p', {}, el('strong', { class: 'hop-label' }, r.mutation_hop), ' · Hop to inspect: ',
          el('strong', {}, entry.inspect), `. Route the review to ${entry.owner}.`)),
      scrollBox('The three boundaries', el('table', { class: 'mini boundaries' },
        el('caption', {}, 'The three boundaries'),
        el('thead', {}, el('tr', {}, ['boundary', 'sha256 (raw bytes)', 'length (bytes)', 'sha256 (canonical JSON)'].map((h, i) => el('th', { scope: 'col', class: i === 2 ? 'num' : null }, h)))),
        el('tbody', {},
          [['process', r.process_sha256, r.process_len, r.process_canonical_sha256], ['adapter', r.adapter_sha256, r.adapter_len, r.adapter_canonical_sha256], ['model', r.model_sha256, r.model_len, undefined]]
            .map(([name, digest, len, canonical]) => el('tr', { 'data-boundary': name },
              el('th', { scope: 'row' }, name), el('td', { class: 'hash' }, digest), el('td', { class: 'num' }, num(len)),
              el('td', { class: 'hash' }, canonical === undefined ? '' : canonical ?? 'not JSON')))))),
      el('p', { class: 'hint' }, `By digest: process ${same(r.process_sha256, r.adapter_sha256)} adapter ${same(r.adapter_sha256, r.model_sha256)} model. `,
        ADAPTER_CHANGE[r.adapter_change] ?? ''),
      scrollBox('Seed 003 hop table', el('table', { class: 'mini hop-table' },
        el('caption', {}, 'Seed 003’s hop table: compare the three digests first, then use length as a tie break'),
        el('thead', {}, el('tr', {}, ['Comparison', 'Length signal', 'Hop to inspect', 'label'].map((h) => el('th', { scope: 'col' }, h)))),
        el('tbody', {}, HOP_TABLE.map((e) => el('tr', { class: e === entry ? 'match' : null, 'aria-current': e === entry ? 'true' : null },
          el('td', {}, e === entry ? el('span', { class: 'icon', 'aria-hidden': 'true' }, '▶ ') : null, e.comparison),
          el('td', {}, e.signal), el('td', {}, e.inspect), el('td', { class: 'id' }, e.hop)))))),
      el('div', { class: 'button-row' },
        el('span', {}, 'The row, as ', el('code', {}, 'toolslice hop'), ' writes it:'),
        el('button', { type: 'button', class: 'small', onclick: () => download('mutation_hop.jsonl', `${JSON.stringify(r)}\n`, 'application/x-ndjson') }, 'Download the row')),
      el('pre', { class: 'preview json-row' }, JSON.stringify(r, null, 2)));
  }

  compute();
}
