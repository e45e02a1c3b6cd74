// `toolslice hop`: classify which hop mutated a tool result (seed 003), or filter a log.
import { appendFileSync } from 'node:fs';
import { parse, readAll, readChunks, UsageError } from './common.mjs';
import { readRecords, write } from './records.mjs';

export const summary = 'which hop mutated a tool result: process, adapter, prompt builder';

const usage = `usage: toolslice hop --process FILE --adapter FILE --model FILE [--log FILE]
                     [--mutations-only] [--run-id ID] [--call-id ID] [--tool NAME]
                     [--receipts FILE]
       toolslice hop --mutations-only [LOG]

Hashes the three boundaries of one tool call (raw process output, streamed; the adapter's
output; the tool-result slice of the model request), labels the hop that changed the bytes
with the seeds' table (mutation_hop), and prints the row as one JSON line, or appends it
to --log. The row also carries canonical hashes of the process and adapter bytes when they
are JSON, so adapter_change tells a key-order change (format_only) from a content change.

  --mutations-only   print/append nothing for a no_payload_mutation row; with no --process,
                     filter the rows of LOG (or stdin) like
                     jq -c 'select(.mutation_hop != "no_payload_mutation")'
  --run-id, --call-id, --tool   the row's run_id, tool_call_id, tool_name
  --receipts FILE    redaction receipts (JSON array of {field_path, rule_id, original_len,
                     replacement}) stored beside the row

exit status: 0 classified (or filtered); 1 the filter met lines that are not hop rows;
2 a usage or I/O error.`;

export async function run(args, { toolslice, stdout, stderr }) {
  const parsed = parse(args, {
    usage,
    options: {
      process: { type: 'string' },
      adapter: { type: 'string' },
      model: { type: 'string' },
      log: { type: 'string' },
      'mutations-only': { type: 'boolean' },
      'run-id': { type: 'string' },
      'call-id': { type: 'string' },
      tool: { type: 'string' },
      receipts: { type: 'string' },
    },
  });
  if (!parsed) return 0;
  const { values, positionals } = parsed;
  const given = ['process', 'adapter', 'model'].filter((k) => values[k] !== undefined);
  if (given.length === 0 && values['mutations-only']) {
    if (positionals.length > 1) throw new UsageError('give at most one LOG file to filter');
    return filter(toolslice, positionals[0], stdout, stderr);
  }
  if (given.length !== 3) {
    const missing = ['process', 'adapter', 'model'].filter((k) => values[k] === undefined);
    throw new UsageError(`missing ${missing.map((k) => '--' + k).join(', ')} (see: toolslice hop --help)`);
  }
  if (positionals.length) throw new UsageError(`unexpected argument '${positionals[0]}'`);
  if ([values.process, values.adapter, values.model].filter((f) => f === '-').length > 1) {
    throw new UsageError('only one of --process, --adapter, --model can be stdin');
  }

  const options = { runId: values['run-id'], toolCallId: values['call-id'], toolName: values.tool };
  if (values.receipts !== undefined) {
    const receipts = await readRecords(toolslice, values.receipts);
    options.redactions = receipts.flat();
  }
  // Adapter and model first: the process stream is classified only after it closes.
  const adapter = await readAll(values.adapter);
  const model = await readAll(values.model);
  const stream = new toolslice.HopStream();
  for await (const chunk of readChunks(values.process)) stream.push(chunk);
  const row = stream.close(adapter, model, options);
  stream.free();

  if (values['mutations-only'] && row.mutation_hop === 'no_payload_mutation') return 0;
  const line = JSON.stringify(row) + '\n';
  if (values.log !== undefined) {
    try {
      appendFileSync(values.log, line);
    } catch (err) {
      throw new UsageError(`cannot write ${values.log}: ${err.code ?? err.message}`);
    }
  } else {
    await write(stdout, line);
  }
  return 0;
}

/** The rows of a log that are not no_payload_mutation (the core's filter), printed. */
async function filter(toolslice, file, stdout, stderr) {
  const name = file === undefined || file === '-' ? 'stdin' : file;
  const result = toolslice.filterHopRows(await readAll(file), name);
  for (const note of result.notes) stderr.write(`toolslice: ${note}\n`);
  await write(stdout, result.rows);
  return result.invalid ? 1 : 0;
}
