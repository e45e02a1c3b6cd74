// `toolslice truncate`: cut tool output from stdin (or a file) to a budget and print what the
// model would see, or (--json) the result with its counts and audit record.
import { intOption, parse, readAll, UsageError } from './common.mjs';
import { write } from './records.mjs';

export const summary = 'cut tool output to a hard budget, keeping errors, tail and exit code';

const PATTERNS = ['auto', 'head', 'tail', 'head_tail', 'terminal', 'search', 'file', 'json', 'csv', 'yaml'];
const UNITS = ['bytes', 'chars', 'utf16', 'tokens'];

const usage = `usage: toolslice truncate [--pattern P] [--bytes N | --chars N | --utf16 N | --tokens N]
                          [--exit-code N] [--timed-out] [--command CMD] [--tool NAME]
                          [--range A-B] [--fetch-id ID [--fetch-offset N]] [--no-header]
                          [--json] [FILE]

Reads tool output from FILE (stdin when none or '-') and prints what the model would see:
the output cut to the budget by the pattern, with exact markers. The budget is hard: the
output, markers and header included, never exceeds it.

  --pattern P        auto (default), head, tail, head_tail, terminal, search, file, json,
                     csv, yaml
  --bytes N          budget in UTF-8 bytes (default: 8192 bytes)
  --chars N          budget in code points
  --utf16 N          budget in UTF-16 units (JavaScript string length)
  --tokens N         budget in tokens, by the built-in estimate (not a tokenizer)
  --exit-code N      the command's exit code: shown in the header, never cut
  --timed-out        the command timed out (shown in the header)
  --command CMD      the command that ran (shown in the header)
  --tool NAME        the tool's name (header, audit record, and auto's choice)
  --range A-B        file pattern: the requested lines (1-based, inclusive)
  --fetch-id ID      markers say how to fetch the rest: get_more(id="ID", offset=...)
  --fetch-offset N   byte offset of this text in the stored result (default 0)
  --no-header        no "Tool: / Command: / Exit code: / Output:" header even when an exit
                     code, command or timeout is given
  --json             print the whole result: text, counts, kept ranges, segments, audit

exit status: 0 printed; 2 a usage or I/O error, or a budget too small for the marker.`;

export async function run(args, { toolslice, stdout }) {
  const parsed = parse(args, {
    usage,
    options: {
      pattern: { type: 'string', default: 'auto' },
      bytes: { type: 'string' },
      chars: { type: 'string' },
      utf16: { type: 'string' },
      tokens: { type: 'string' },
      'exit-code': { type: 'string' },
      'timed-out': { type: 'boolean' },
      command: { type: 'string' },
      tool: { type: 'string' },
      range: { type: 'string' },
      'fetch-id': { type: 'string' },
      'fetch-offset': { type: 'string' },
      'no-header': { type: 'boolean' },
      json: { type: 'boolean' },
    },
  });
  if (!parsed) return 0;
  const { values, positionals } = parsed;
  if (positionals.length > 1) throw new UsageError(`truncate reads one input, got ${positionals.length}\n${usage}`);
  if (!PATTERNS.includes(values.pattern)) {
    throw new UsageError(`--pattern must be one of ${PATTERNS.join(', ')}, got '${values.pattern}'`);
  }
  const given = UNITS.filter((u) => values[u] !== undefined);
  if (given.length > 1) throw new UsageError(`give one budget, got --${given.join(' and --')}`);

  const options = { pattern: values.pattern };
  if (given.length === 1) options.budget = { [given[0]]: intOption(values, given[0]) };
  const exitCode = intOption(values, 'exit-code', { min: -(2 ** 31) });
  if (exitCode !== undefined) options.exitCode = exitCode;
  if (values['timed-out']) options.timedOut = true;
  if (values.command !== undefined) options.command = values.command;
  if (values.tool !== undefined) options.tool = values.tool;
  if (values.range !== undefined) {
    const m = /^(\d+)[-:](\d+)$/.exec(values.range);
    if (!m) throw new UsageError(`--range must look like 120-180, got '${values.range}'`);
    options.file = { range: [Number(m[1]), Number(m[2])] };
  }
  if (values['fetch-id'] !== undefined) {
    options.fetch = { id: values['fetch-id'] };
    const offset = intOption(values, 'fetch-offset');
    if (offset !== undefined) options.fetch.offset = offset;
  } else if (values['fetch-offset'] !== undefined) {
    throw new UsageError('--fetch-offset needs --fetch-id');
  }
  // Whether to show the header is the core's rule (header_by_default); the CLI only turns it off.
  if (values['no-header']) options.header = false;

  const input = await readAll(positionals[0]);
  const result = toolslice.truncate(input, options);
  await write(stdout, values.json ? JSON.stringify(result, null, 2) + '\n' : result.text);
  return 0;
}
