// `toolslice gate`: refuse export while a span is open or a body is missing; check a
// collector's read-back.
import { parse, UsageError } from './common.mjs';
import { directoryStore, readRecords, write } from './records.mjs';

export const summary = 'refuse export while a span is open or a body is missing; verify read-back';

const usage = `usage: toolslice gate --spans FILE [--store DIR] [--fetched FILE] [--json]

Checks spans (a JSON array or JSON lines of span records, as "toolslice record" writes them)
before they leave the machine, and prints one problem per line in the seeds' form:
  open:NAME        the span has no terminal status (ok or error)
  missing:DIGEST   DIR has no body for an args_sha256 / result_sha256
  invalid:NAME:FIELD  the span has no digest there, or not a SHA-256 hex digest

  --store DIR      the body directory (one file per digest); needed for the export check
  --fetched FILE   spans fetched back from the collector: every sent hash must come back
                   unchanged (a missing hash is a failure, never a partial success)
  --json           {"problems": [...], "read_back": {...}} instead of lines

exit status: 0 ready to export (and read-back intact); 1 a problem was found; 2 a usage
or I/O error.`;

export async function run(args, { toolslice, stdout, stderr }) {
  const parsed = parse(args, {
    usage,
    allowPositionals: false,
    options: {
      spans: { type: 'string' },
      store: { type: 'string' },
      fetched: { type: 'string' },
      json: { type: 'boolean' },
    },
  });
  if (!parsed) return 0;
  const { values } = parsed;
  if (values.spans === undefined) throw new UsageError('--spans is required (see: toolslice gate --help)');
  if (values.store === undefined && values.fetched === undefined) {
    throw new UsageError('give --store DIR (export check), --fetched FILE (read-back), or both');
  }
  const spans = await readRecords(toolslice, values.spans);
  const result = {};
  let failed = false;
  if (values.store !== undefined) {
    result.problems = toolslice.exportReady(spans, directoryStore(values.store));
    failed ||= result.problems.length > 0;
  }
  if (values.fetched !== undefined) {
    result.read_back = toolslice.readBack(spans, await readRecords(toolslice, values.fetched));
    failed ||= !result.read_back.ok;
  }
  if (values.json) {
    await write(stdout, JSON.stringify(result, null, 2) + '\n');
    return failed ? 1 : 0;
  }
  const lines = (result.problems ?? []).map((p) => p.message);
  for (const issue of result.read_back?.issues ?? []) lines.push(describe(issue));
  await write(stdout, lines.map((l) => l + '\n').join(''));
  const checked = [values.store !== undefined && 'export', values.fetched !== undefined && 'read-back'].filter(Boolean).join(' and ');
  stderr.write(
    failed
      ? `toolslice: gate closed: ${lines.length} problem${lines.length === 1 ? '' : 's'} in ${spans.length} spans (${checked})\n`
      : `toolslice: gate open: ${spans.length} spans pass the ${checked} check\n`,
  );
  return failed ? 1 : 0;
}

/** One read-back issue as a line: `readback:KIND:NAME[:FIELD] sent -> fetched`. */
function describe(issue) {
  const where = [issue.name ?? `#${issue.sent_index ?? issue.fetched_index}`, issue.field].filter(Boolean).join(':');
  let line = `readback:${issue.kind}:${where}`;
  if (issue.kind === 'changed_field') {
    line += ` ${JSON.stringify(issue.sent)} -> ${JSON.stringify(issue.fetched)}${issue.truncated ? ' (truncated)' : ''}`;
  }
  return line;
}
