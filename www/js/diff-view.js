// The diff view: two runs → the package's `diffRuns`, which reads both files and picks the
// comparison from what they hold: clip-aware span files (same observed bytes, different
// injected slice), span records (as `toolslice record` writes them: the multiset diff,
// only_left / only_right, with what the export gate says of each run), hop rows (as
// `toolslice hop` writes them: same, changed, policy drift) or generation fingerprints
// (turns whose text changed). Laying out the result is all this file does; `toolslice diff`
// calls the same function.
import { el, num, scrollBox } from './dom.js';
import { byteField } from './inputs.js';
import { loadToolslice } from './wasm.js';

export function initDiffView(root) {
  const results = el('div', { class: 'diff-results', 'aria-live': 'polite' });
  const update = () => compute();
  const left = byteField({ id: 'diff-left', label: 'Left run (the one you kept)', hint: 'Span records, hop rows or generation fingerprints: a JSON array or JSON lines.', rows: 6, onchange: update });
  const right = byteField({ id: 'diff-right', label: 'Right run (the new one)', hint: 'The same kind of records as the left run.', rows: 6, onchange: update });

  const example = async (kind) => {
    const toolslice = await loadToolslice();
    const [l, r] = { spans: exampleSpans, hops: exampleHops, generations: exampleGenerations }[kind](toolslice);
    left.setText(l);
    right.setText(r);
  };
  root.append(
    el('p', { class: 'lead' }, 'Drop two runs to see what changed at the tool boundary: the spans only one run has, ',
      'for hop rows, which boundary changed and whether a redaction rule changed (policy drift, not a model regression); ',
      'for generation fingerprints, which turns the model wrote differently.'),
    el('div', { class: 'button-row examples' }, el('span', {}, 'Examples made with the package: '),
      el('button', { type: 'button', onclick: () => example('spans') }, 'two runs of span records'),
      el('button', { type: 'button', onclick: () => example('hops') }, 'two runs of hop rows'),
      el('button', { type: 'button', onclick: () => example('generations') }, 'two runs of generation fingerprints')),
    el('div', { class: 'diff-inputs' }, left.node, right.node),
    results);

  async function compute() {
    const texts = [left, right].map((f) => {
      const v = f.value();
      return typeof v === 'string' ? v : new TextDecoder().decode(v);
    });
    if (!texts[0].trim() && !texts[1].trim()) {
      results.replaceChildren(el('p', { class: 'hint' }, 'Give both runs to compare them.'));
      return;
    }
    const toolslice = await loadToolslice();
    try {
      // Reading the records and choosing the comparison are the package's `diffRuns`, the
      // same function `toolslice diff` calls.
      const result = toolslice.diffRuns(texts[0], texts[1], { leftName: left.source() ?? 'left run', rightName: right.source() ?? 'right run' });
      const counts = [result.left_records, result.right_records];
      // Pass or fail is the package's `differs` (what makes `toolslice diff` exit 1); the
      // views below only say it in words and list what the comparison found.
      const names = [left.source() ?? 'left run', right.source() ?? 'right run'];
      if (result.kind === 'slices') results.replaceChildren(renderSlices(result.diff, result.differs));
      else if (result.kind === 'hops') results.replaceChildren(renderHops(result.diff, counts, result.differs));
      else if (result.kind === 'generations') results.replaceChildren(renderGenerations(result.diff, counts, result.differs));
      else results.replaceChildren(renderManifest(result.diff, counts, result.differs), ...gateNotice(result.gate, names));
    } catch (err) {
      results.replaceChildren(el('p', { class: 'file-error', role: 'alert' }, el('span', { class: 'icon', 'aria-hidden': 'true' }, '✖'), ' ', err.message));
    }
  }
  compute();
}

/** compareSpanRuns: same observed hash, different injected slice; builder changes. */
function renderSlices(cmp, differs) {
  const name = (b) => b ?? '(none)';
  const parts = [
    el('p', { class: differs ? 'verdict fail' : 'verdict pass', 'data-differs': String(differs) },
      el('span', { class: 'icon', 'aria-hidden': 'true' }, differs ? '✖' : '✔'), ' ',
      `${cmp.injected_changed.length} tool call(s) observed the same bytes but injected a different slice; ` +
      `${cmp.unchanged} unchanged, ${cmp.only_left} only in the left run, ${cmp.only_right} only in the right run.`),
    el('p', {}, `Builder versions: ${cmp.left_builders.map(name).join(', ') || '—'} → ${cmp.right_builders.map(name).join(', ') || '—'}`,
      cmp.builder_changed ? ' (changed: compare builders before you compare models)' : ' (unchanged)'),
  ];
  if (cmp.injected_changed.length) {
    const head = el('tr', {}, ...['tool', 'observed hash', 'left injected', 'right injected', 'left builder', 'right builder'].map((h) => el('th', { scope: 'col' }, h)));
    const side = (s) => `${s.injected_bytes ?? '—'} B ${s.sha256_injected ?? ''} (${s.span_id ?? `line ${s.line}`})`;
    const body = el('tbody', {}, ...cmp.injected_changed.map((c) => el('tr', {},
      el('td', {}, c.name), el('td', {}, c.sha256_observed), el('td', {}, side(c.left)), el('td', {}, side(c.right)),
      el('td', {}, name(c.left.prompt_builder_version)), el('td', {}, name(c.right.prompt_builder_version)))));
    parts.push(scrollBox('tool calls whose injected slice changed', el('table', {}, el('thead', {}, head), body)));
  }
  return el('div', {}, ...parts);
}

const jsonl = (records) => records.map((r) => JSON.stringify(r)).join('\n') + '\n';

/** Seed 002's rename fixture, twice: the right run's model reflowed the patch. */
function exampleSpans(toolslice) {
  const read = toolslice.toolSpan('read_file', { path: 'src/app.py' }, { text: 'def main():\n    run()\n' }, 'ok');
  const grep = toolslice.toolSpan('grep', { pattern: 'run(' }, { hits: ['src/app.py:2'] }, 'ok');
  const patch = (diff) => toolslice.toolSpan('apply_patch', { file: 'src/app.py' }, { diff }, 'ok');
  return [
    jsonl([read, grep, patch('-    run()\n+    start()\n')]),
    jsonl([read, grep, patch('-    run()\n+    start()  # renamed\n')]),
  ];
}

/** Seed 002's generation fingerprints, twice: the right run's model planned turn 2 otherwise. */
function exampleGenerations(toolslice) {
  const fp = (text, turn) => toolslice.generationFingerprint(text, { turn });
  return [
    jsonl([fp('I will read src/app.py first.', 1), fp('Rename run() to start() in src/app.py.', 2), fp('Done: tests pass.', 3)]),
    jsonl([fp('I will read src/app.py first.', 1), fp('Keep run(); add start() as an alias.', 2), fp('Done: tests pass.', 3)]),
  ];
}

/** Two runs of hop rows: call_91's redaction rule changed (policy drift), call_92's model slice got wrapped. */
function exampleHops(toolslice) {
  const body = '{"ok":true,"rows":2}';
  const receipt = (rule) => [{ field_path: '$.token', rule_id: rule, original_len: 40, replacement: '[REDACTED]' }];
  const row = (call, rule) => toolslice.classifyHop(body, body, body, { runId: 'run_7f3a', toolCallId: call, toolName: 'read_file', redactions: receipt(rule) });
  const wrap = (call) => toolslice.classifyHop(body, body, `{"type":"tool_result","body":${body}}`, { runId: 'run_7f3b', toolCallId: call, toolName: 'read_file', redactions: receipt('bearer-v1') });
  return [
    jsonl([row('call_91', 'bearer-v1'), row('call_92', 'bearer-v1')]),
    jsonl([row('call_91', 'bearer-v2'), wrap('call_92')]),
  ];
}

function manifestTable(caption, sign, entries, cls) {
  return scrollBox(caption, el('table', { class: `mini manifest ${cls}` },
    el('caption', {}, `${caption} (${num(entries.length)})`),
    el('thead', {}, el('tr', {}, ['', 'name', 'status', 'args_sha256', 'result_sha256'].map((h) => el('th', { scope: 'col' }, h)))),
    el('tbody', {}, entries.length
      ? entries.map((e) => el('tr', {}, el('td', { 'aria-label': sign === '−' ? 'only left' : 'only right' }, sign),
        e.map((v, i) => el('td', { class: i >= 2 ? 'hash' : null }, v ?? '—'))))
      : el('tr', {}, el('td', { colspan: 5, class: 'hint' }, 'none')))));
}

function renderManifest(diff, counts, changed) {
  return el('div', {},
    el('div', { class: `verdict ${changed ? 'fail' : 'pass'}`, 'data-differs': String(changed) },
      el('span', { class: 'icon', 'aria-hidden': 'true' }, changed ? '▲' : '✔'),
      el('p', {}, el('strong', {}, changed ? 'The tool boundary changed. ' : 'Same tool boundary. '),
        `${num(counts[0])} spans left, ${num(counts[1])} right; ${num(diff.only_left.length)} only left, ${num(diff.only_right.length)} only right. `,
        changed ? 'A span only one run has is a call with other arguments or another result.' : 'The manifests are equal as multisets. That proves the boundary was stable, not that the outputs were wise.')),
    manifestTable('Only in the left run', '−', diff.only_left, 'only-left'),
    manifestTable('Only in the right run', '+', diff.only_right, 'only-right'));
}

/**
 * What the export gate says of each run before their manifests mean anything (the package's
 * `gate`): open spans and malformed records by name. The page has no body store, so bodies
 * are never checked here; it says so and names the command that does check them.
 */
function gateNotice(gate, names) {
  if (!gate || gate.gated) return [];
  const sides = [[names[0], gate.left], [names[1], gate.right]];
  const problems = sides.filter(([, p]) => p.length);
  const parts = [el('p', {}, el('strong', {}, 'Neither run is gated here. '),
    'The page has no body store, so whether each record\'s bodies exist was not checked: ',
    el('code', {}, 'toolslice diff --store DIR'), ' checks them, and fails the diff until both gates are empty.')];
  for (const [name, list] of problems) {
    parts.push(el('p', {}, el('strong', {}, `${name}: ${num(list.length)} problem${list.length === 1 ? '' : 's'} block its export`),
      ' (a manifest of a run with open spans is not the run).'));
    parts.push(el('ul', { class: 'gate-problems' }, list.map((p) => el('li', {}, el('code', {}, p.message), ` (record ${num(p.span + 1)})`))));
  }
  return [el('div', { class: `gate-notice ${problems.length ? 'closed' : 'unchecked'}`, role: 'note', 'data-gated': 'false' },
    el('span', { class: 'icon', 'aria-hidden': 'true' }, problems.length ? '▲' : 'ℹ'), el('div', {}, ...parts))];
}

/** Generation fingerprints: the turns whose text changed, paired by id, turn or position. */
function renderGenerations(d, counts, changed) {
  const side = (len, sha) => (sha ? `${num(len)} B ${sha}` : '—');
  const list = (caption, keys, cls) => el('div', { class: `generation-only ${cls}` },
    el('h3', {}, `${caption} (${num(keys.length)})`),
    keys.length ? el('ul', {}, keys.map((k) => el('li', { class: 'id' }, k))) : el('p', { class: 'hint' }, 'none'));
  return el('div', {},
    el('div', { class: `verdict ${changed ? 'fail' : 'pass'}`, 'data-differs': String(changed) },
      el('span', { class: 'icon', 'aria-hidden': 'true' }, changed ? '▲' : '✔'),
      el('p', {}, el('strong', {}, changed ? 'Some generations changed. ' : 'The generations are the same. '),
        `${num(counts[0])} turns left, ${num(counts[1])} right: ${num(d.same)} same, ${num(d.changed.length)} changed, `,
        `${num(d.only_left.length)} only left, ${num(d.only_right.length)} only right.`)),
    scrollBox('Turns whose text changed', el('table', { class: 'mini generations' },
      el('caption', {}, 'Turns whose text changed (the fingerprints of redacted text)'),
      el('thead', {}, el('tr', {}, ['turn', 'left', 'right'].map((h) => el('th', { scope: 'col' }, h)))),
      el('tbody', {}, d.changed.length
        ? d.changed.map((c) => el('tr', {}, el('td', { class: 'id' }, c.key),
          el('td', { class: 'hash' }, side(c.left_len, c.left_sha256)), el('td', { class: 'hash' }, side(c.right_len, c.right_sha256))))
        : el('tr', {}, el('td', { colspan: 3, class: 'hint' }, 'none'))))),
    list('Only in the left run', d.only_left, 'only-left'),
    list('Only in the right run', d.only_right, 'only-right'));
}

function renderHops(cmp, counts, changed) {
  return el('div', {},
    el('div', { class: `verdict ${changed ? 'fail' : 'pass'}`, 'data-differs': String(changed) },
      el('span', { class: 'icon', 'aria-hidden': 'true' }, changed ? '▲' : '✔'),
      el('p', {}, el('strong', {}, changed ? 'Some tool calls changed. ' : 'No tool call changed. '),
        `${num(counts[0])} hop rows left, ${num(counts[1])} right: ${num(cmp.same)} same, ${num(cmp.changed)} changed, `,
        `${num(cmp.policy_drift)} policy drift, ${num(cmp.only_left)} only left, ${num(cmp.only_right)} only right.`)),
    scrollBox('Tool calls compared', el('table', { class: 'mini hop-compare' },
      el('caption', {}, 'Tool calls, paired by tool_call_id (else by position)'),
      el('thead', {}, el('tr', {}, ['verdict', 'tool call', 'tool', 'changed boundaries', 'hop left → right', 'policy drift'].map((h) => el('th', { scope: 'col' }, h)))),
      el('tbody', {}, cmp.rows.map((r) => el('tr', { class: `v-${r.verdict}` },
        el('td', {}, el('span', { class: 'icon', 'aria-hidden': 'true' }, r.verdict === 'same' ? '✔ ' : r.verdict === 'policy_drift' ? 'ℹ ' : '▲ '), r.verdict),
        el('td', { class: 'id' }, r.tool_call_id ?? `#${r.left_index ?? r.right_index}`),
        el('td', {}, r.tool_name ?? '—'),
        el('td', {}, r.changed_boundaries.join(', ') || '—'),
        el('td', {}, `${r.left_hop ?? '—'} → ${r.right_hop ?? '—'}`),
        el('td', {}, r.drift.map((d) => `${d.field_path}: ${d.left_rule_id ?? '(none)'} → ${d.right_rule_id ?? '(none)'}`).join('; ') || '—')))))));
}
