// `toolslice check [FILE...]`: classify every tool span of one or more exported runs.
import { closeSync, openSync, readSync, statSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import { parseArgs } from 'node:util';
import { intOption, parse, readChunks, stdinFileSize, UsageError } from './common.mjs';
import { compiledCheckModule, saveCompiledCheckModule } from './code-cache.mjs';
import { tierForOneCheck } from './tiering.mjs';

export const summary = 'flag tool spans whose injected slice differs from what the tool observed';
// The check-only module (pkg/check/, built for speed as the full one is): the same
// checker, and two fifths of the bytes for V8 to validate and compile before the first line
// is read (`toolslice check` on one line 0.09 -> 0.08 s; 50 MB in the trace formats level
// within noise; interleaved runs, 2026-12-03).
export const module = 'check';

const usage = `usage: toolslice check [--json | --jsonl] [--flagged-only] [--format NAME]
                       [--lenient-clip-reason] [--allow-empty] [--threads N] [FILE...]

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
  --threads N      threads that read a large trace file with a value per line, each a
                   range of lines (the report is the same): by default the CPUs, at most
                   4, for files of 64 MB or more; N given, for files of 4 MB or more;
                   1 reads in this thread only

environment: TOOLSLICE_CODE_CACHE  where V8's optimized code for the checker is kept between
runs (default $XDG_CACHE_HOME/toolslice, else ~/.cache/toolslice; \`off\`: not kept), so a
later run is fast from its first line (Node 20; the report is the same either way)

exit status: 0 every span is fine or declared its clip; 1 a silent clip, an incomplete span,
an invalid line, a clip_reason outside the enum, or a file with no tool call at all (one line
on stderr says what it held); 2 a usage or I/O error.`;

const PROGRESS_MIN_BYTES = 8 << 20;
// Trace files from this size on are read by several threads by default (see `checkOne`).
// On a 2-CPU machine two threads measured 1.24x faster on 100 MB of OTLP and 1.20x on 300 MB,
// 1.06x on 50 MB (0.63 against 0.67 s, within the noise) and level on 30 MB (medians of 4-6
// interleaved rounds): below, a worker's start (a thread, the module compiled again) and the
// part handed back cost what the second thread saves. With the parts handed back in pieces
// (2026-12-05): 1.16x on 100 MB, 1.26x on 300 MB, level on 50 MB (0.39 s either way), 5
// interleaved rounds each. With the module handed to the worker and the code cache (later
// the same day), still level on 50 MB (OTLP, Langfuse, Agents SDK; 9 interleaved rounds
// each): a worker's Node environment alone takes about 0.09 s here to start, in which this
// thread reads some 15 MB.
const PARTS_MIN_BYTES = 64 << 20;
// With `--threads N` given, from this size on: the user asked for threads.
const PARTS_MIN_BYTES_ASKED = 4 << 20;

const optionSpec = {
  json: { type: 'boolean' },
  jsonl: { type: 'boolean' },
  'flagged-only': { type: 'boolean' },
  format: { type: 'string' },
  'lenient-clip-reason': { type: 'boolean' },
  'allow-empty': { type: 'boolean' },
  threads: { type: 'string' },
};

function checkOptions(values) {
  return {
    flaggedOnly: Boolean(values['flagged-only']),
    format: values.format ?? 'auto',
    lenientClipReason: Boolean(values['lenient-clip-reason']),
    allowEmpty: Boolean(values['allow-empty']),
  };
}

/** `{ threads, minBytes }`: how many threads read a trace file, from what size. */
const threadsOf = (values) => {
  const asked = intOption(values, 'threads', { min: 1 });
  return asked === undefined
    ? { threads: Math.min(availableParallelism(), 4), minBytes: PARTS_MIN_BYTES }
    : { threads: asked, minBytes: PARTS_MIN_BYTES_ASKED };
};

/**
 * Called before the module is loaded: sets V8's compiler for one check (./tiering.mjs), and
 * when the first file is large enough to be read by several threads, cuts it and starts the
 * workers, whose start (a thread, about 0.1 s here) then overlaps the main thread's. Anything
 * odd (help, a usage error, stdin) prepares no workers, and `run` deals with it.
 */
export function prepare(args) {
  if (args.includes('-h') || args.includes('--help')) return null;
  tierForOneCheck();
  try {
    const { values, positionals } = parseArgs({ args, options: optionSpec, allowPositionals: true, strict: true });
    const file = positionals[0];
    const { threads, minBytes } = threadsOf(values);
    if (!file || file === '-' || threads < 2) return null;
    const total = statSync(file).size;
    if (total < minBytes) return null;
    return { file, total, ...startParts(file, total, threads, checkOptions(values)) };
  } catch {
    return null;
  }
}

export async function run(args, { toolslice, stdout, stderr, prepared }) {
  const parsed = parse(args, { usage, options: optionSpec });
  if (!parsed) return 0;
  const { values, positionals } = parsed;
  if (values.json && values.jsonl) throw new UsageError('--json and --jsonl cannot be combined');
  const files = positionals.length ? positionals : ['-'];
  const options = checkOptions(values);

  const threads = threadsOf(values);
  const results = [];
  try {
    for (const [i, file] of files.entries()) {
      const parts = i === 0 && prepared?.file === file ? prepared : undefined;
      const report = await checkOne(toolslice, file, options, stderr, threads, parts);
      results.push({ file, report });
    }
  } finally {
    for (const w of prepared?.workers ?? []) w.end();
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
  // The report is out: what this run optimized is kept for the next (./code-cache.mjs).
  saveCompiledCheckModule();
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

// `threads`: { threads, minBytes } (see `threadsOf`).
async function checkOne(toolslice, file, options, stderr, threads, prepared) {
  const checker = new toolslice.Checker(options);
  const total = file === '-' ? stdinFileSize() : sizeOf(file);
  // The report of span JSONL takes up to about the input's size in the module (0.7x mostly
  // ok, 0.9x mostly flagged): room for it in one growth of the module's memory, not hundreds.
  if (total) checker.reserve(total);
  const showProgress = stderr.isTTY && (total === 0 || total >= PROGRESS_MIN_BYTES);
  const started = Date.now();
  let lastShown = 0;
  const progress = () => {
    if (!showProgress || Date.now() - lastShown <= 200) return;
    lastShown = Date.now();
    const read = checker.bytesRead;
    const pct = total ? ` ${((100 * Math.min(read, total)) / total).toFixed(0)}%` : '';
    const secs = (Date.now() - started) / 1000 || 1e-3;
    stderr.write(`\rtoolslice: ${file === '-' ? 'stdin' : file}${pct} ${(read / 1e6).toFixed(1)} MB, ${checker.spansRead} spans (${Math.round(checker.spansRead / secs)}/s)`);
  };
  // Several threads read a large file: this one the first range, a worker each of the
  // others; the workers started in `prepare` when this is that file, and its size is still
  // the one they were given.
  let parts = { cuts: [0, Infinity], workers: [] };
  if (prepared && prepared.total === total) parts = prepared;
  else if (file !== '-' && threads.threads > 1 && total >= threads.minBytes) parts = startParts(file, total, threads.threads, options);
  // `parts.absorbed` counts the parts taken in (a test reads it from `prepare`'s object).
  const { cuts, workers } = parts;
  let told = false;
  // The format goes to the workers as soon as the first lines show it (or that the file
  // cannot be split), so they start reading while this thread reads the first range.
  const tell = () => {
    const format = checker.lineFormat ?? null;
    if (told || (format === null && checker.bytesRead < cuts[1])) return;
    told = true;
    for (const w of workers) w.tell(format);
  };
  const pushRange = async (range) => {
    for await (const chunk of readChunks(file, range)) {
      checker.push(chunk);
      progress();
    }
  };
  try {
    for await (const chunk of readChunks(file, workers.length ? { start: 0, end: cuts[1] } : undefined)) {
      checker.push(chunk);
      if (!told && workers.length) tell();
      progress();
    }
    tell();
    // Each worker's pieces in order, each taken in as it arrives: while this thread takes
    // in one, the worker reads the next, and only the last piece is left when it is done.
    for (const [i, w] of workers.entries()) {
      let done = cuts[i + 1];
      const end = cuts[i + 2];
      while (done < end) {
        const piece = await w.next();
        if (!piece) break;
        try {
          checker.absorb(piece.part);
          parts.absorbed = (parts.absorbed ?? 0) + 1;
        } catch {
          // A refused piece changes nothing: this thread reads its lines itself.
          await pushRange({ start: done, end: piece.end });
        }
        done = piece.end;
        progress();
      }
      // A worker that failed or stopped: this thread reads what it did not hand over.
      if (done < end) await pushRange({ start: done, end });
    }
  } finally {
    for (const w of workers) w.end();
  }
  if (showProgress && lastShown) stderr.write('\r\x1b[K');
  return checker.finish();
}

/** Cuts the file and starts a worker for each range after the first. */
function startParts(file, total, threads, options) {
  const cuts = lineCuts(file, total, mainShares(total, threads));
  const { module } = compiledCheckModule();
  const workers = cuts.slice(1, -1).map((start, i) => {
    const end = cuts[i + 2];
    const inside = lineCuts(file, total, pieceStarts(start, end)).filter((c) => c > start && c < end);
    return partWorker(file, [start, ...inside, end], options, module);
  });
  return { cuts, workers };
}

/**
 * Where a file of `total` bytes is cut into ranges of whole lines: `[0, c1, ..., total]`,
 * each cut at the first line start at or after one of `at` (ascending byte offsets inside
 * the file). Fewer cuts when the file has too few newlines.
 */
function lineCuts(file, total, at) {
  const cuts = [0];
  const fd = openSync(file, 'r');
  const window = Buffer.allocUnsafe(64 << 10);
  try {
    for (let next of at) {
      if (next <= cuts[cuts.length - 1]) continue;
      // The first newline at or after `next`.
      for (;;) {
        const got = readSync(fd, window, 0, window.length, next);
        if (got === 0) {
          next = total;
          break;
        }
        const nl = window.subarray(0, got).indexOf(10);
        if (nl >= 0) {
          next += nl + 1;
          break;
        }
        next += got;
      }
      if (next >= total) break;
      cuts.push(next);
    }
  } finally {
    closeSync(fd);
  }
  cuts.push(total);
  return cuts;
}

/**
 * Where the ranges of `n` threads start in a file of `total` bytes, after the first (which
 * this thread reads): the first range is longer, since this thread starts first (a worker
 * starts a thread with a Node environment of its own and instantiates the module this thread
 * compiled, about 0.1 s, in which this thread reads some 10 MB of a trace), and shorter by
 * what this thread spends taking in the workers' parts while they still read (ABSORB_SHARE of
 * reading their bytes). Each worker then reads an equal share of the rest.
 */
function mainShares(total, n) {
  const workerShare = 1 / (n - 1);
  const main = Math.min(0.9 * total, (total * (workerShare - ABSORB_SHARE) + HEAD_START_BYTES) / (1 - ABSORB_SHARE + workerShare));
  const first = Math.max(main, total / (4 * n));
  return Array.from({ length: n - 1 }, (_, i) => Math.floor(first + ((total - first) * i) / (n - 1)));
}
const HEAD_START_BYTES = 10e6;
// Taking in a part costs about a quarter of reading its bytes (0.14 s for the 145 MB a worker
// read in 0.55 s, of 300 MB of OTLP, 2026-12-05).
const ABSORB_SHARE = 0.25;

/**
 * Where a worker's range start..end is cut into pieces (the piece starts after `start`),
 * each handed back as soon as it is read: about eight, of 1 to 16 MB. This thread takes in
 * each piece while the worker reads the next, so when the worker is done only the last is
 * left to take in (at most 16 MB of lines, about 15 ms here, where one part of 145 MB took
 * 0.14 s).
 */
function pieceStarts(start, end) {
  const size = Math.min(PIECE_MAX_BYTES, Math.max(PIECE_MIN_BYTES, (end - start) / 8));
  const starts = [];
  for (let at = start + size; at < end; at += size) starts.push(Math.floor(at));
  return starts;
}
const PIECE_MIN_BYTES = 1 << 20;
const PIECE_MAX_BYTES = 16 << 20;

/**
 * A worker reading the `pieces` `cuts[0]..cuts[1]`, `cuts[1]..cuts[2]` ... of the file, each
 * into a part: `tell(format)` starts it (null ends it), `next()` resolves to the next piece,
 * `{ part, end }` (its bytes and where its lines end in the file), or null when the worker
 * failed or stopped (the caller then reads what is left itself), and `end()` stops it.
 */
function partWorker(file, cuts, options, module) {
  const worker = new Worker(new URL('./check-part.mjs', import.meta.url), {
    workerData: { file, cuts, options, module },
  });
  // A worker never keeps the process alive: if the check ends another way (an error), the
  // process still exits.
  worker.unref();
  // Pieces arrived and not yet asked for, and the caller waiting for one.
  const arrived = [];
  let waiting = null;
  const arrive = (piece) => {
    if (waiting) {
      waiting(piece);
      waiting = null;
    } else arrived.push(piece);
  };
  let over = false;
  const stop = () => {
    if (!over) arrive(null);
    over = true;
  };
  worker.on('message', (m) => (m.part && !over ? arrive({ part: m.part, end: m.end }) : stop()));
  worker.once('error', stop);
  worker.once('exit', stop);
  return {
    pieces: cuts.length - 1,
    next: () => {
      // Waited for: the worker now keeps the process alive until it answers.
      worker.ref();
      if (arrived.length) return Promise.resolve(arrived.shift());
      if (over) return Promise.resolve(null);
      return new Promise((resolve) => (waiting = resolve));
    },
    tell: (format) => worker.postMessage(format),
    end: () => worker.terminate(),
  };
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
