// `toolslice pack`: pack one tool result read on stdin (redact, shape, cut, flag) and print
// the envelope the model would read and the seed-000 span record, as JSON.
import { parse, intOption, readAll, UsageError } from './common.mjs';
import { pageDirectory } from './records.mjs';

export const summary = 'pack a tool result (stdin) into the observation the model reads, with its span record';

const usage = `usage: toolslice pack [--tool NAME] [--kind K] [--limit BYTES] [--call-id ID]
                      [--exit-code N] [--command CMD] [--text] [--emails] [--ssn]
                      [--span-only | --content] [--store DIR]
                      [--tenant ID [--tenant-key KEY]]

Reads a tool result on stdin: JSON (an object, array or any JSON value) is packed as
structured output, anything else as text. Prints {"envelope": ..., "span": ..., "receipts":
[...]} as JSON: the envelope is the tool message the model reads (content, truncated,
redacted, omitted counts, next_offset and a get_more hint when cut), the span is seed 000's
clip-aware record (toolslice check accepts it).

  --tool NAME      the tool's name (default: tool)
  --kind K         terminal, search, file, json or text (default: from the name or content)
  --limit BYTES    the budget of the content, marker and header included (default 4096)
  --call-id ID     the tool call id to echo (default: call_1)
  --exit-code N    the command's exit code (shown in a header outside the cut)
  --command CMD    the command that ran (shown in the header)
  --text           pack stdin as text even when it parses as JSON
  --emails         also redact e-mail addresses
  --ssn            also redact US social security numbers
  --store DIR      keep the full redacted result in DIR when it is cut, so the get_more
                   the hint names works: toolslice get-more --store DIR --id ID --offset N
                   (without it, a cut result cannot be paged from the command line)
  --tenant ID      the caller's tenant: rows whose tenant key names another are dropped
                   before anything else sees them, each with a foreign_tenant receipt
  --tenant-key KEY the key that names a row's tenant (default tenant_id)
  --span-only      print only the span record (one JSONL line, for a run file)
  --content        print only the content the model reads

exit status: 0 packed; 2 a usage or I/O error, or a budget too small for even the short
"result too large" error.`;

const KINDS = ['terminal', 'search', 'file', 'json', 'text'];

export async function run(args, { toolslice, stdout }) {
  const parsed = parse(args, {
    usage,
    allowPositionals: false,
    options: {
      tool: { type: 'string' },
      kind: { type: 'string' },
      limit: { type: 'string' },
      'call-id': { type: 'string' },
      'exit-code': { type: 'string' },
      command: { type: 'string' },
      text: { type: 'boolean' },
      emails: { type: 'boolean' },
      ssn: { type: 'boolean' },
      'span-only': { type: 'boolean' },
      content: { type: 'boolean' },
      store: { type: 'string' },
      tenant: { type: 'string' },
      'tenant-key': { type: 'string' },
    },
  });
  if (!parsed) return 0;
  const { values } = parsed;
  if (values.kind !== undefined && !KINDS.includes(values.kind)) {
    throw new UsageError(`--kind must be one of ${KINDS.join(', ')}, got '${values.kind}'`);
  }
  if (values['span-only'] && values.content) throw new UsageError('--span-only and --content cannot be combined');
  const limit = intOption(values, 'limit', { min: 1 });
  const exitCode = values['exit-code'] === undefined ? undefined : intOption(values, 'exit-code', { min: -2147483648 });

  const raw = (await readAll('-')).toString('utf8');
  const input = { tool: values.tool ?? 'tool', callId: values['call-id'] ?? 'call_1' };
  // JSON or text is the core's decision (`raw`), the same for every front end.
  if (values.text) input.text = raw;
  else input.raw = raw;
  if (exitCode !== undefined) input.exitCode = exitCode;
  if (values.command !== undefined) input.command = values.command;

  const options = { redact: { emails: Boolean(values.emails), usSsn: Boolean(values.ssn) } };
  if (limit !== undefined) options.limit = limit;
  if (values.kind !== undefined) options.kind = values.kind;
  if (values['tenant-key'] !== undefined && values.tenant === undefined) throw new UsageError('--tenant-key goes with --tenant');
  if (values.tenant !== undefined) options.tenant = { tenant: values.tenant, key: values['tenant-key'] };
  if (values.store !== undefined) options.store = pageDirectory(values.store, { create: true });

  let result;
  try {
    result = toolslice.pack(input, options);
  } catch (err) {
    if (err?.code) throw new UsageError(`${err.message} (${err.code})`);
    throw err;
  }
  let out;
  if (values['span-only']) out = JSON.stringify(result.span) + '\n';
  else if (values.content) out = result.envelope.content + (result.envelope.content.endsWith('\n') ? '' : '\n');
  else out = JSON.stringify({ envelope: result.envelope, span: result.span, receipts: result.receipts }, null, 2) + '\n';
  await new Promise((resolve, reject) => stdout.write(out, (err) => (err ? reject(err) : resolve())));
  return 0;
}
