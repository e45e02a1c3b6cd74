// `toolslice convert --to spans [FILE]`: seed-000 span JSONL from any supported trace format.
import { writeFileSync } from 'node:fs';
import { parse, readAll, UsageError } from './common.mjs';

export const summary = 'write seed-000 span JSONL from an OTLP, Langfuse or OpenAI Agents trace';

const usage = `usage: toolslice convert --to spans [--format NAME] [-o FILE] [FILE]

Reads a trace from FILE, or stdin when no FILE is given, joins each tool result with what a
later model call received, and writes one seed-000 span record per tool call (JSONL) to
stdout or to -o FILE, so the rest of the tooling and the seeds' scripts can read it. Each
record of a trace format carries a "toolslice" object saying where it came from (format,
line, join, notes); the seeds' scripts ignore it. Spans that are not tool calls are left out.

  --to spans       the output format (the only one for now)
  --format NAME    auto (default: detected), spans, otlp, langfuse, openai_agents
  -o, --output F   write to F instead of stdout

exit status: 0 written; 1 some entries could not be read (listed on stderr; the rest is
written); 2 a usage or I/O error.`;

export async function run(args, { toolslice, stdout, stderr }) {
  const parsed = parse(args, {
    usage,
    options: {
      to: { type: 'string' },
      format: { type: 'string' },
      output: { type: 'string', short: 'o' },
    },
  });
  if (!parsed) return 0;
  const { values, positionals } = parsed;
  if (values.to === undefined) throw new UsageError('--to is required (try: --to spans)');
  if (values.to !== 'spans') throw new UsageError(`--to must be 'spans', got '${values.to}'`);
  if (positionals.length > 1) throw new UsageError('convert reads one FILE (or stdin)');
  const file = positionals[0] ?? '-';
  const input = await readAll(file);
  const result = toolslice.convertToSpans(input, { format: values.format ?? 'auto' });
  if (values.output !== undefined) {
    try {
      writeFileSync(values.output, result.jsonl);
    } catch (err) {
      throw new UsageError(`cannot write ${values.output}: ${err.code ?? err.message}`);
    }
  } else {
    await write(stdout, result.jsonl);
  }
  const where = result.read_as?.layout === 'document' ? 'entry' : 'line';
  for (const e of result.invalid) stderr.write(`toolslice: ${where} ${e.line}: ${e.error}\n`);
  if (stderr.isTTY) {
    const layout = result.read_as ? ` (${result.read_as.layout})` : '';
    stderr.write(`toolslice: ${result.records} tool calls from ${result.format}${layout}; ${result.skipped.length} other spans skipped\n`);
  }
  return result.invalid.length ? 1 : 0;
}

function write(stream, text) {
  return new Promise((resolve, reject) => stream.write(text, (err) => (err ? reject(err) : resolve())));
}
