// `toolslice record`: the seed's tool_span + write_bodies for one tool call, from files.
import { appendFileSync } from 'node:fs';
import { parse, readAll, UsageError } from './common.mjs';
import { directoryStore, inFile, write } from './records.mjs';

export const summary = 'record one tool call: span line out, canonical bodies into a store directory';

const usage = `usage: toolslice record --name NAME --status STATUS --args FILE --result FILE --store DIR
                        [--canonical python|jcs] [--out FILE]

Canonicalises the JSON in --args and --result (losslessly: big integers stay exact), writes
each canonical body to DIR/<sha256> (the seeds' layout; an existing file with other text is
the "unstable canonical form" error), and prints the span record as one JSON line, or
appends it to --out. Use '-' for one of --args/--result to read it from stdin.

exit status: 0 recorded; 2 a usage or I/O error, non-JSON input, or an unstable body.`;

export async function run(args, { toolslice, stdout }) {
  const parsed = parse(args, {
    usage,
    allowPositionals: false,
    options: {
      name: { type: 'string' },
      status: { type: 'string' },
      args: { type: 'string' },
      result: { type: 'string' },
      store: { type: 'string' },
      canonical: { type: 'string', default: 'python' },
      out: { type: 'string' },
    },
  });
  if (!parsed) return 0;
  const { values } = parsed;
  for (const key of ['name', 'status', 'args', 'result', 'store']) {
    if (values[key] === undefined) throw new UsageError(`--${key} is required (see: toolslice record --help)`);
  }
  if (values.args === '-' && values.result === '-') throw new UsageError('only one of --args and --result can be stdin');
  if (!['python', 'jcs'].includes(values.canonical)) {
    throw new UsageError(`--canonical must be python or jcs, got '${values.canonical}'`);
  }
  const argsBytes = await readAll(values.args);
  const resultBytes = await readAll(values.result);
  const options = { form: values.canonical, json: true };
  let span;
  try {
    span = toolslice.toolSpan(values.name, argsBytes, resultBytes, values.status, options);
  } catch (err) {
    // Say which file did not parse.
    for (const [file, bytes] of [[values.args, argsBytes], [values.result, resultBytes]]) {
      try {
        toolslice.canonicalize(bytes, values.canonical);
      } catch (inner) {
        throw inFile(file === '-' ? 'stdin' : file, inner);
      }
    }
    throw err;
  }
  const store = directoryStore(values.store, { create: true });
  toolslice.writeBodies(store, span, argsBytes, resultBytes, options);
  const line = JSON.stringify(span) + '\n';
  if (values.out) {
    try {
      appendFileSync(values.out, line);
    } catch (err) {
      throw new UsageError(`cannot write ${values.out}: ${err.code ?? err.message}`);
    }
  } else {
    await write(stdout, line);
  }
  return 0;
}
