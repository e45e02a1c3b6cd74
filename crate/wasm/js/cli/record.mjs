// `toolslice record`: the seed's tool_span + write_bodies for one tool call, from files.
import { appendFileSync } from 'node:fs';
import { intOption, parse, readAll, UsageError } from './common.mjs';
import { directoryStore, inFile, write } from './records.mjs';

export const summary = 'record one tool call: span line out, canonical bodies into a store directory';

const usage = `usage: toolslice record --name NAME --status STATUS --args FILE --result FILE --store DIR
                        [--canonical python|jcs] [--out FILE] [--no-redact] [--no-volatile]
                        [--volatile-key KEY]... [--volatile-path PATH]... [--keep-key KEY]...

In the seed's order: redacts every secret in --args and --result (typed placeholders such as
[REDACTED:github_token], the rules of "toolslice pack"), strips volatile values (timestamps,
request ids, absolute temp paths) into the record's "volatile" attributes, canonicalises
(losslessly: big integers stay exact) and hashes. Writes each canonical body to
DIR/<sha256> (the seeds' layout; an existing file with other text is the "unstable
canonical form" error), and prints the span record as one JSON line (with "receipts" and
"volatile" when anything was redacted or stripped), or appends it to --out. Use '-' for one
of --args/--result to read it from stdin.

  --no-redact          hash and store secrets as they are (explicitly off)
  --no-volatile        hash volatile values with the rest
  --volatile-key KEY   one more volatile key name (any case or separator)
  --volatile-path P    a volatile JSON path: $.meta.run, $.items[*].seen, $.*.ts
  --keep-key KEY       a default volatile key name that is data here (e.g. time)

usage: toolslice record --generation FILE [--turn N] [--id ID] [--no-redact] [--out FILE]

Generation text that never passed through a tool gets its own fingerprint (redacted, then
SHA-256 of its UTF-8 bytes), one JSON line for a file kept beside the manifest
(generation.jsonl next to spans.jsonl; "toolslice diff" compares two such files).

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
      'no-redact': { type: 'boolean' },
      'no-volatile': { type: 'boolean' },
      'volatile-key': { type: 'string', multiple: true },
      'volatile-path': { type: 'string', multiple: true },
      'keep-key': { type: 'string', multiple: true },
      generation: { type: 'string' },
      turn: { type: 'string' },
      id: { type: 'string' },
    },
  });
  if (!parsed) return 0;
  const { values } = parsed;
  if (values.generation !== undefined) return generation(values, toolslice, stdout);
  for (const key of ['turn', 'id']) {
    if (values[key] !== undefined) throw new UsageError(`--${key} goes with --generation`);
  }
  for (const key of ['name', 'status', 'args', 'result', 'store']) {
    if (values[key] === undefined) throw new UsageError(`--${key} is required (see: toolslice record --help)`);
  }
  if (values.args === '-' && values.result === '-') throw new UsageError('only one of --args and --result can be stdin');
  if (!['python', 'jcs'].includes(values.canonical)) {
    throw new UsageError(`--canonical must be python or jcs, got '${values.canonical}'`);
  }
  const argsBytes = await readAll(values.args);
  const resultBytes = await readAll(values.result);
  const tuned = ['volatile-key', 'volatile-path', 'keep-key'].some((k) => values[k] !== undefined);
  if (values['no-volatile'] && tuned) throw new UsageError('--no-volatile cannot be combined with --volatile-key/--volatile-path/--keep-key');
  const volatile = values['no-volatile']
    ? false
    : { keys: values['volatile-key'] ?? [], paths: values['volatile-path'] ?? [], keep: values['keep-key'] ?? [] };
  const options = { form: values.canonical, json: true, redact: !values['no-redact'], volatile };
  const store = directoryStore(values.store, { create: true });
  let span;
  try {
    // One call hashes and stores, so the directory never holds an unredacted body.
    span = toolslice.recordCall(store, values.name, argsBytes, resultBytes, values.status, options);
  } catch (err) {
    if (err.code === 'invalid_policy' || err.code === 'unstable_canonical_form') throw err;
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
  await emit(JSON.stringify(span) + '\n', values.out, stdout);
  return 0;
}

/** `--generation FILE`: the fingerprint of one turn's text, for the file beside the manifest. */
async function generation(values, toolslice, stdout) {
  for (const key of ['name', 'status', 'args', 'result', 'store', 'no-volatile', 'volatile-key', 'volatile-path', 'keep-key']) {
    if (values[key] !== undefined) throw new UsageError(`--${key} does not go with --generation`);
  }
  const text = await readAll(values.generation);
  const fingerprint = toolslice.generationFingerprint(text, {
    turn: intOption(values, 'turn'),
    id: values.id,
    redact: !values['no-redact'],
  });
  await emit(JSON.stringify(fingerprint) + '\n', values.out, stdout);
  return 0;
}

async function emit(line, out, stdout) {
  if (out) {
    try {
      appendFileSync(out, line);
    } catch (err) {
      throw new UsageError(`cannot write ${out}: ${err.code ?? err.message}`);
    }
  } else {
    await write(stdout, line);
  }
}
