// `toolslice diff LEFT RIGHT`: compare two runs, as span manifests or as hop rows.
import { parse, readAll, UsageError } from './common.mjs';
import { directoryStore, write } from './records.mjs';

export const summary = 'diff two runs: span manifests (multiset) or hop rows (policy drift)';

const usage = `usage: toolslice diff [--json] [--store DIR | --left-store DIR --right-store DIR]
                      [--ungated] LEFT RIGHT

Compares two runs. Clip-aware span files (seed 000: observed/injected lengths and hashes)
are paired by tool name and observed hash, and every tool call whose observed bytes match
while its injected slice differs is listed, with the builder versions of each run.
Span records (as "toolslice record" writes them) are diffed by the
multiset of (name, status, args_sha256, result_sha256), as the seeds' diff_manifests does:
  - NAME STATUS ARGS RESULT   only in LEFT
  + NAME STATUS ARGS RESULT   only in RIGHT
but only after both export gates are empty (seed 002): every span closed, every body in
the store. A run that is not gated (open spans, missing bodies, or no store given to check
them) is named on stderr and the diff fails unless --ungated.
Generation fingerprints ("toolslice record --generation", the file beside the manifest)
are paired by id, else turn, else position, and each changed turn is listed.
Hop rows (as "toolslice hop" writes them) are paired by tool_call_id (else by position) and
judged: same, changed (a boundary digest differs), policy_drift (a redaction rule_id
changed: not a model regression), only_left, only_right.

  --json            the seeds' {"only_left": [...], "only_right": [...]} (or the run
                    comparison); the gate's verdict goes to stderr, as without --json
  --store DIR       the body directory of both runs
  --left-store DIR, --right-store DIR   one per run
  --ungated         diff span records even when a run is not gated (still reported)

exit status: 0 no difference (policy drift alone counts as none); 1 differences, or span
records that are not gated; 2 a usage or I/O error.`;

export async function run(args, { toolslice, stdout, stderr }) {
  const parsed = parse(args, {
    usage,
    options: {
      json: { type: 'boolean' },
      store: { type: 'string' },
      'left-store': { type: 'string' },
      'right-store': { type: 'string' },
      ungated: { type: 'boolean' },
    },
  });
  if (!parsed) return 0;
  const { values, positionals } = parsed;
  if (positionals.length !== 2) throw new UsageError('give two files: toolslice diff LEFT RIGHT');
  const [leftFile, rightFile] = positionals;
  if (leftFile === '-' && rightFile === '-') throw new UsageError('only one of LEFT and RIGHT can be stdin');
  // Reading, kind detection and the comparison are the package's (the page's diff view
  // calls the same function); a coded error exits 2 with its one-line message.
  if (values.store !== undefined && (values['left-store'] !== undefined || values['right-store'] !== undefined)) {
    throw new UsageError('give --store DIR, or --left-store and --right-store, not both');
  }
  const storeOf = (dir) => (dir === undefined ? undefined : directoryStore(dir));
  const result = toolslice.diffRuns(await readAll(leftFile), await readAll(rightFile), {
    leftName: leftFile === '-' ? 'stdin' : leftFile,
    rightName: rightFile === '-' ? 'stdin' : rightFile,
    store: storeOf(values.store),
    leftStore: storeOf(values['left-store']),
    rightStore: storeOf(values['right-store']),
    allowUngated: Boolean(values.ungated),
  });
  const { kind, diff } = result;
  if (result.gate && !result.gate.gated) reportGate(result.gate, leftFile, rightFile, stderr);
  if (kind === 'slices') await writeSlices(diff, values.json, stdout);
  else if (kind === 'hops') await writeHops(diff, values.json, stdout, stderr);
  else if (kind === 'generations') await writeGenerations(diff, values.json, stdout);
  else if (values.json) {
    await write(stdout, JSON.stringify(diff) + '\n');
  } else {
    const row = (sign, entry) => `${sign} ${entry.map((f) => f ?? '-').join(' ')}\n`;
    await write(stdout, diff.only_left.map((e) => row('-', e)).join('') + diff.only_right.map((e) => row('+', e)).join(''));
  }
  return result.fails ? 1 : 0;
}

/** Says on stderr which run is not gated, and why (the verdict is the package's). */
function reportGate(gate, leftFile, rightFile, stderr) {
  for (const [file, problems, checked] of [
    [leftFile, gate.left, gate.left_bodies_checked],
    [rightFile, gate.right, gate.right_bodies_checked],
  ]) {
    const why = problems.map((p) => p.message);
    if (!checked) why.push('bodies not checked (give --store DIR)');
    if (why.length) stderr.write(`toolslice: ${file === '-' ? 'stdin' : file} is not gated: ${why.join(', ')}\n`);
  }
  if (!gate.allowed_ungated) stderr.write('toolslice: diff refused: both gates must be empty first (--ungated to diff anyway)\n');
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

async function writeGenerations(d, json, stdout) {
  if (json) return write(stdout, JSON.stringify(d, null, 2) + '\n');
  const lines = d.changed.map((c) => `~ ${c.key} ${c.left_len ?? '-'} B ${c.left_sha256 ?? '-'} -> ${c.right_len ?? '-'} B ${c.right_sha256 ?? '-'}\n`);
  for (const k of d.only_left) lines.push(`- ${k}\n`);
  for (const k of d.only_right) lines.push(`+ ${k}\n`);
  lines.push(`# generations same=${d.same} changed=${d.changed.length} only_left=${d.only_left.length} only_right=${d.only_right.length}\n`);
  return write(stdout, lines.join(''));
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
