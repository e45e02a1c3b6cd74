// `toolslice get-more`: the next page of a result `toolslice pack --store DIR` cut, as the
// observation of the get_more call its hint names.
import { intOption, parse, UsageError } from './common.mjs';
import { pageDirectory } from './records.mjs';

export const summary = 'page through a result that "toolslice pack --store DIR" cut (the get_more its hint names)';

const usage = `usage: toolslice get-more --store DIR --id ID --offset N [--call-id ID] [--page-bytes N]
                          [--content]

Reads the full redacted result "toolslice pack --store DIR" kept under ID and prints the page
at byte offset N as the envelope the model reads ({"envelope": ..., "span": ...}): at most
--page-bytes bytes (default: the packer's page size), trailer included, with next_offset
and a get_more hint while more remains.

  --call-id ID     the id of this get_more call, echoed in the envelope (default: ID)
  --content        print only the content the model reads

exit status: 0 a page; 2 a usage or I/O error, an unknown id or an offset past the end.`;

export async function run(args, { toolslice, stdout }) {
  const parsed = parse(args, {
    usage,
    allowPositionals: false,
    options: {
      store: { type: 'string' },
      id: { type: 'string' },
      offset: { type: 'string' },
      'call-id': { type: 'string' },
      'page-bytes': { type: 'string' },
      content: { type: 'boolean' },
    },
  });
  if (!parsed) return 0;
  const { values } = parsed;
  for (const key of ['store', 'id', 'offset']) {
    if (values[key] === undefined) throw new UsageError(`--${key} is required (see: toolslice get-more --help)`);
  }
  const offset = intOption(values, 'offset');
  const pageBytes = intOption(values, 'page-bytes', { min: 1 });
  const options = { store: pageDirectory(values.store) };
  if (pageBytes !== undefined) options.pageBytes = pageBytes;
  const result = toolslice.getMore(values.id, offset, values['call-id'], options);
  const out = values.content
    ? result.envelope.content + (result.envelope.content.endsWith('\n') ? '' : '\n')
    : JSON.stringify({ envelope: result.envelope, span: result.span }, null, 2) + '\n';
  await new Promise((resolve, reject) => stdout.write(out, (err) => (err ? reject(err) : resolve())));
  return 0;
}
