// `toolslice check [FILE...]`: classify every tool span of one or more exported runs.
import { statSync } from 'node:fs';
import { parse, readChunks, stdinFileSize, UsageError } from './common.mjs';

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
  const notes = [];
  for (const { file, report } of results) {
    exitCode = Math.max(exitCode, report.exitCode);
    // A run that checked nothing must not look green: say so where a CI log shows it.
    const nothing = report.nothingChecked;
    if (nothing && !options.allowEmpty) notes.push(`toolslice: ${file === '-' ? 'stdin' : file}: ${nothing}\n`);
  }
  // Each report is written piece by piece (rows in ranges), never as one string: a run of
  // millions of rows would otherwise be held whole in the module and again in JS (issue 17).
  const out = new Output(stdout);
  if (values.json && results.length > 1) {
    const doc = { files: results.map(({ file, report }) => ({ file, report: report.toJSON() })), exit_code: exitCode };
    await out.add(JSON.stringify(doc, null, 2) + '\n');
  } else {
    for (const [i, { file, report }] of results.entries()) {
      if (values.jsonl) {
        await out.rows(report.rowCount, (from, to, into) => report.jsonlRowsBytes(from, to, into));
      } else if (values.json) {
        await out.add(report.jsonHead());
        await out.rows(report.rowCount, (from, to, into) => report.jsonRowsBytes(from, to, into));
        await out.add(report.jsonMiddle());
        await out.rows(report.rollupCount, (from, to, into) => report.jsonRollupBytes(from, to, into));
        await out.add(report.jsonEnd() + '\n');
      } else {
        await out.add((i > 0 ? '\n' : '') + (files.length > 1 ? `== ${file}\n` : '') + report.tableHead());
        await out.rows(report.rowCount, (from, to, into) => report.tableRowsBytes(from, to, into));
        await out.piece((into) => report.tableTailBytes(into));
      }
    }
  }
  await out.flush();
  for (const { report } of results) report.free();
  if (notes.length) await write(stderr, notes.join(''));
  return exitCode;
}

// Rows rendered per call into the module: a few hundred KB of text.
const ROWS_PER_PIECE = 1024;
// Bytes gathered before a write, so small pieces (a head, a short table) go out together.
const WRITE_BYTES = 1 << 20;
// The buffer the pieces are rendered into: WRITE_BYTES and room for a piece after them.
const BUFFER_BYTES = 4 << 20;

// Writes the report to a stream in pieces of about WRITE_BYTES, waiting for each to be taken
// (backpressure: the output never piles up in memory ahead of a slow reader). The module
// renders the rows as UTF-8 straight into one buffer that is written and reused: decoding
// each piece into a JS string, joining the strings and encoding them back on write cost
// `check --json` a third of its time at 300 MB, and fresh arrays per piece, piling up
// between garbage collections, 30 MB of peak memory (issue 17). Only the short heads and
// tails are strings.
class Output {
  constructor(stream) {
    this.stream = stream;
    this.buffer = Buffer.allocUnsafe(BUFFER_BYTES);
    this.used = 0;
    // A stream on a file descriptor (stdout: a file, a pipe, a terminal) is done with the
    // bytes when its write calls back; any other stream (a PassThrough, a collector) may
    // keep the very Buffer it was given, so it gets a copy, never the reused buffer.
    this.reuse = typeof stream.fd === 'number';
  }
  async add(text) {
    if (!text) return;
    const length = Buffer.byteLength(text);
    if (length > this.buffer.length - this.used) {
      await this.flush();
      if (length > this.buffer.length) return write(this.stream, text);
    }
    this.used += this.buffer.write(text, this.used);
    if (this.used >= WRITE_BYTES) await this.flush();
  }
  // `render(into)`: a piece's bytes, in `into` (the room left in the buffer) when they fit.
  async piece(render) {
    const bytes = render(this.buffer.subarray(this.used));
    if (bytes.buffer === this.buffer.buffer) {
      this.used += bytes.length;
    } else {
      // Larger than the room left: what the buffer holds goes first.
      await this.flush();
      await write(this.stream, bytes);
    }
    if (this.used >= WRITE_BYTES) await this.flush();
  }
  // `render(from, to, into)`: the bytes of rows from..to, in `into` when they fit.
  async rows(n, render) {
    for (let from = 0; from < n; from += ROWS_PER_PIECE) {
      await this.piece((into) => render(from, from + ROWS_PER_PIECE, into));
    }
  }
  async flush() {
    if (!this.used) return;
    const bytes = this.buffer.subarray(0, this.used);
    this.used = 0;
    // Awaited before the buffer is reused: the stream holds it until the write is done.
    await write(this.stream, this.reuse ? bytes : Buffer.from(bytes));
  }
}

async function checkOne(toolslice, file, options, stderr) {
  const checker = new toolslice.Checker(options);
  const total = file === '-' ? stdinFileSize() : sizeOf(file);
  // The report of span JSONL takes up to about the input's size in the module (0.7x mostly
  // ok, 0.9x mostly flagged): room for it in one growth of the module's memory, not hundreds.
  if (total) checker.reserve(total);
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

function write(stream, data) {
  return new Promise((resolve, reject) => stream.write(data, (err) => (err ? reject(err) : resolve())));
}
