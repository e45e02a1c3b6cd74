// `toolslice check [FILE...]`: classify every tool span of one or more exported runs.
import { statSync } from 'node:fs';
import { parse, readChunks, UsageError } from './common.mjs';

export const summary = 'flag tool spans whose injected slice differs from what the tool observed';

const usage = `usage: toolslice check [--json | --jsonl] [--flagged-only] [--format NAME]
                       [--lenient-clip-reason] [--allow-empty] [FILE...]

Reads each FILE, or stdin when no FILE is given, and prints the seed's table (default), the
JSON report (--json), or one JSON row per line (--jsonl). Accepts seed-000 span JSONL (one
span record per line) and the traces people already have: OTLP JSON (a document, or the
Collector file exporter's one request per line) with OpenTelemetry GenAI, OpenInference or
Vercel AI SDK attributes, Langfuse observation exports, OpenAI Agents SDK trace exports, and
Arize Phoenix span exports. Each tool result is joined with what a later model call
received, and both are measured.

  --json           the whole report as JSON (several files: {"files":[...],"exit_code":N})
  --jsonl          one JSON object per row, in priority order
  --flagged-only   list only rows that are not ok (counts still cover every span)
  --format NAME    auto (default: detected per file), spans, otlp, langfuse, openai_agents,
                   phoenix
  --lenient-clip-reason
                   the seed script's leniency: a clip_reason outside the closed enum
                   declares the clip (by default it does not, and fails the run)
  --allow-empty    a file with no tool call passes (by default it fails: nothing was checked)

exit status: 0 every span is fine or declared its clip; 1 a silent clip, an incomplete span,
an invalid line, a clip_reason outside the enum, or a file with no tool call at all (one line
on stderr says what it held); 2 a usage or I/O error.`;

const PROGRESS_MIN_BYTES = 8 << 20;

export async function run(args, { toolslice, stdout, stderr }) {
  const parsed = parse(args, {
    usage,
    options: {
      json: { type: 'boolean' },
      jsonl: { type: 'boolean' },
      'flagged-only': { type: 'boolean' },
      format: { type: 'string' },
      'lenient-clip-reason': { type: 'boolean' },
      'allow-empty': { type: 'boolean' },
    },
  });
  if (!parsed) return 0;
  const { values, positionals } = parsed;
  if (values.json && values.jsonl) throw new UsageError('--json and --jsonl cannot be combined');
  const files = positionals.length ? positionals : ['-'];
  const options = {
    flaggedOnly: Boolean(values['flagged-only']),
    format: values.format ?? 'auto',
    lenientClipReason: Boolean(values['lenient-clip-reason']),
    allowEmpty: Boolean(values['allow-empty']),
  };

  const results = [];
  for (const file of files) {
    const report = await checkOne(toolslice, file, options, stderr);
    results.push({ file, report });
  }

  let exitCode = 0;
  const out = [];
  const notes = [];
  for (const { file, report } of results) {
    exitCode = Math.max(exitCode, report.exitCode);
    // A run that checked nothing must not look green: say so where a CI log shows it.
    const nothing = report.nothingChecked;
    if (nothing && !options.allowEmpty) notes.push(`toolslice: ${file === '-' ? 'stdin' : file}: ${nothing}\n`);
    if (values.jsonl) out.push(report.jsonl());
    else if (!values.json) out.push((files.length > 1 ? `== ${file}\n` : '') + report.table());
  }
  if (values.json) {
    if (results.length === 1) out.push(results[0].report.json() + '\n');
    else {
      const doc = { files: results.map(({ file, report }) => ({ file, report: report.toJSON() })), exit_code: exitCode };
      out.push(JSON.stringify(doc, null, 2) + '\n');
    }
  }
  for (const { report } of results) report.free();
  await write(stdout, out.join(files.length > 1 && !values.json && !values.jsonl ? '\n' : ''));
  if (notes.length) await write(stderr, notes.join(''));
  return exitCode;
}

async function checkOne(toolslice, file, options, stderr) {
  const checker = new toolslice.Checker(options);
  const total = file === '-' ? 0 : sizeOf(file);
  const showProgress = stderr.isTTY && (total === 0 || total >= PROGRESS_MIN_BYTES);
  const started = Date.now();
  let lastShown = 0;
  for await (const chunk of readChunks(file)) {
    checker.push(chunk);
    if (showProgress && Date.now() - lastShown > 200) {
      lastShown = Date.now();
      const read = checker.bytesRead;
      const pct = total ? ` ${((100 * read) / total).toFixed(0)}%` : '';
      const secs = (Date.now() - started) / 1000 || 1e-3;
      stderr.write(`\rtoolslice: ${file === '-' ? 'stdin' : file}${pct} ${(read / 1e6).toFixed(1)} MB, ${checker.spansRead} spans (${Math.round(checker.spansRead / secs)}/s)`);
    }
  }
  if (showProgress && lastShown) stderr.write('\r\x1b[K');
  return checker.finish();
}

function sizeOf(file) {
  try {
    return statSync(file).size;
  } catch (err) {
    throw new UsageError(`cannot read ${file}: ${err.code ?? err.message}`);
  }
}

function write(stream, text) {
  return new Promise((resolve, reject) => stream.write(text, (err) => (err ? reject(err) : resolve())));
}
