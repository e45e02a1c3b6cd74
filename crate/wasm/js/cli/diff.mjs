// `toolslice diff LEFT RIGHT`: compare two runs, as span manifests or as hop rows.
import { parse, readAll, UsageError } from './common.mjs';
import { write } from './records.mjs';

export const summary = 'diff two runs: span manifests (multiset) or hop rows (policy drift)';

const usage = `usage: toolslice diff [--json] LEFT RIGHT

Compares two runs. Clip-aware span files (seed 000: observed/injected lengths and hashes)
are paired by tool name and observed hash, and every tool call whose observed bytes match
while its injected slice differs is listed, with the builder versions of each run.
Span records (as "toolslice record" writes them) are diffed by the
multiset of (name, status, args_sha256, result_sha256), as the seeds' diff_manifests does:
  - NAME STATUS ARGS RESULT   only in LEFT
  + NAME STATUS ARGS RESULT   only in RIGHT
Hop rows (as "toolslice hop" writes them) are paired by tool_call_id (else by position) and
judged: same, changed (a boundary digest differs), policy_drift (a redaction rule_id
changed: not a model regression), only_left, only_right.

  --json   the seeds' {"only_left": [...], "only_right": [...]} (or the run comparison)

exit status: 0 no difference (policy drift alone counts as none); 1 differences; 2 a usage
or I/O error.`;

export async function run(args, { toolslice, stdout, stderr }) {
  const parsed = parse(args, { usage, options: { json: { type: 'boolean' } } });
  if (!parsed) return 0;
  const { values, positionals } = parsed;
  if (positionals.length !== 2) throw new UsageError('give two files: toolslice diff LEFT RIGHT');
  const [leftFile, rightFile] = positionals;
  if (leftFile === '-' && rightFile === '-') throw new UsageError('only one of LEFT and RIGHT can be stdin');
  // Reading, kind detection and the comparison are the package's (the page's diff view
  // calls the same function); a coded error exits 2 with its one-line message.
  const result = toolslice.diffRuns(await readAll(leftFile), await readAll(rightFile), {
    leftName: leftFile === '-' ? 'stdin' : leftFile,
    rightName: rightFile === '-' ? 'stdin' : rightFile,
  });
  const { kind, diff } = result;
  if (kind === 'slices') await writeSlices(diff, values.json, stdout);
  else if (kind === 'hops') await writeHops(diff, values.json, stdout, stderr);
  else if (values.json) {
    await write(stdout, JSON.stringify(diff) + '\n');
  } else {
    const row = (sign, entry) => `${sign} ${entry.map((f) => f ?? '-').join(' ')}\n`;
    await write(stdout, diff.only_left.map((e) => row('-', e)).join('') + diff.only_right.map((e) => row('+', e)).join(''));
  }
  return result.differs ? 1 : 0;
}

async function writeSlices(cmp, json, stdout) {
  if (json) {
    await write(stdout, JSON.stringify(cmp, null, 2) + '\n');
  } else {
    const name = (b) => b ?? '(none)';
    const lines = cmp.injected_changed.map((c) =>
      `~ ${c.name} observed ${c.sha256_observed}: injected ${c.left.injected_bytes ?? '-'} B ${c.left.sha256_injected ?? '-'} (${c.left.span_id ?? 'line ' + c.left.line}) -> ${c.right.injected_bytes ?? '-'} B ${c.right.sha256_injected ?? '-'} (${c.right.span_id ?? 'line ' + c.right.line})\n`);
    if (cmp.builder_changed) lines.push(`builders: ${cmp.left_builders.map(name).join(',')} -> ${cmp.right_builders.map(name).join(',')}\n`);
    lines.push(`# injected_changed=${cmp.injected_changed.length} unchanged=${cmp.unchanged} only_left=${cmp.only_left} only_right=${cmp.only_right}\n`);
    await write(stdout, lines.join(''));
  }
}

async function writeHops(cmp, json, stdout, stderr) {
  if (json) {
    await write(stdout, JSON.stringify(cmp, null, 2) + '\n');
  } else {
    const lines = [];
    for (const r of cmp.rows) {
      if (r.verdict === 'same') continue;
      const who = [r.tool_call_id ?? `#${r.left_index ?? r.right_index}`, r.tool_name].filter(Boolean).join(' ');
      let detail = '';
      if (r.verdict === 'changed') detail = ` ${r.changed_boundaries.join(',')}: ${r.left_hop} -> ${r.right_hop}`;
      if (r.verdict === 'policy_drift') {
        detail = ' ' + r.drift.map((d) => `${d.field_path} ${d.left_rule_id ?? '(none)'} -> ${d.right_rule_id ?? '(none)'}`).join('; ');
      }
      lines.push(`${r.verdict} ${who}${detail}\n`);
    }
    await write(stdout, lines.join(''));
    stderr.write(
      `toolslice: ${cmp.same} same, ${cmp.changed} changed, ${cmp.policy_drift} policy drift, ${cmp.only_left} only left, ${cmp.only_right} only right\n`,
    );
  }
}
