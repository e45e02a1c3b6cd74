// `toolslice check [FILE...]`: classify every tool span of one or more exported runs.
import { closeSync, openSync, readSync, statSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { parseArgs } from 'node:util';
import { intOption, parse, readBuffers, readChunks, stdinFileSize, UsageError } from './common.mjs';
import { compiledCheckModule, initCheckGlue, saveCompiledCheckModule } from './code-cache.mjs';
import { tierForOneCheck } from './tiering.mjs';

// Threads (node:worker_threads, ./pieces.mjs) are loaded only for a file read by several:
// most checks are of smaller files, and the two cost about 2 ms to load.
let Worker = null;
let pieces = null;
async function loadThreads() {
  [{ Worker }, pieces] = await Promise.all([import('node:worker_threads'), import('./pieces.mjs')]);
}

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
  --threads N      threads that read a large trace file with a value per line, sharing
                   it in pieces of whole lines (the report is the same): by default the
                   CPUs, at most 4, for files of 64 MB or more, and below 128 MB only
                   when the first pieces show the rest takes 0.1 s or more to read; N
                   given, for files of 4 MB or more; 1 reads in this thread only

environment: TOOLSLICE_CODE_CACHE  where V8's optimized code for the checker is kept between
runs (default $XDG_CACHE_HOME/toolslice, else ~/.cache/toolslice; \`off\`: not kept), so a
later run is fast from its first line (Node 20; the report is the same either way)

exit status: 0 every span is fine or declared its clip; 1 a silent clip, an incomplete span,
an invalid line, a clip_reason outside the enum, or a file with no tool call at all (one line
on stderr says what it held); 2 a usage or I/O error.`;

const PROGRESS_MIN_BYTES = 8 << 20;
// Room made in the module's memory up front, as a share of the input's size (see `checkOne`).
const RESERVE_SHARE = 1.5;
// Trace files from this size on are read by several threads by default (see `checkOne`).
// On a 2-CPU machine two threads measured 1.24x faster on 100 MB of OTLP and 1.20x on 300 MB,
// 1.06x on 50 MB (0.63 against 0.67 s, within the noise) and level on 30 MB (medians of 4-6
// interleaved rounds): below, a worker's start (a thread, the module compiled again) and the
// part handed back cost what the second thread saves. With the parts handed back in pieces
// (2026-12-05): 1.16x on 100 MB, 1.26x on 300 MB, level on 50 MB (0.39 s either way), 5
// interleaved rounds each. With the module handed to the worker and the code cache (later
// the same day), still level on 50 MB (OTLP, Langfuse, Agents SDK; 9 interleaved rounds
// each): a worker's Node environment alone takes about 0.09 s here to start, in which this
// thread reads some 15 MB. With the file shared in claimed pieces and the worker started
// under V8's default flags (./pieces.mjs; a worker's first line 60-70 ms after it is made,
// not 115-140), level still (wall, user+sys CPU, medians of 9 interleaved runs, 2026-12-06:
// OTLP 0.46/0.49 s in one thread, 0.46/0.63 in two; Langfuse 0.56/0.59, 0.57/0.84; Agents
// SDK 0.61/0.64, 0.58/0.82): a second thread's own costs (its start, its first pass in a
// fresh instance, a part written and taken in per piece) take what it saves at 50 MB.
// Measured again in the next session (2026-12-06, the same code, 15 interleaved runs each,
// wall / CPU): with V8's code from the code cache two threads gained at 50 MB (OTLP 0.46/0.49
// -> 0.41/0.56 s, Langfuse 0.58/0.62 -> 0.54/0.77, Agents SDK 0.55/0.61 -> 0.48/0.70) and at
// 37 MB (OTLP 0.34 -> 0.32, Langfuse 0.42 -> 0.35; 11 runs), were level at 25 MB in Langfuse
// and the Agents SDK and lost in OTLP (0.31 -> 0.35; 9 runs); without it (a machine's first
// check, TurboFan compiling the module on the second CPU) level at 50 MB and a loss at 37
// (OTLP 0.47 -> 0.51). Hence two sizes then: 32 MB once an earlier check left its code in
// the cache, 64 MB before. Since then one thread reads these formats about twice as fast
// (50 MB of Langfuse 0.58 -> 0.22-0.27 s), and a worker's start costs what it did: with the
// code cache, two threads lost at 50 MB in the bench's recorded runs (2026-12-07, 7 rounds,
// two threads / one: OTLP 0.27/0.24 s, Langfuse 0.30/0.27, Agents SDK 0.34/0.29, a trace per
// copy 0.31/0.26; level or a hundredth worse in the two runs before it) and in 15 interleaved
// runs beside it (Langfuse 0.296/0.268, Agents SDK 0.300/0.295, OTLP 0.275/0.251, a trace per
// copy 0.269/0.273), and gained at 100 MB (Langfuse 0.55/0.61, OTLP 0.53/0.58; 11 runs, a busy
// spell). Hence one size, with the cache or without. Asked for (`--threads 2`: the workers
// start at once, not when the pace says), two threads gained at 50 MB in the next recorded
// run (OTLP 0.24/0.25 s, Langfuse 0.21/0.23, Agents SDK 0.23/0.25, a trace per copy
// 0.22/0.23) and lost on the long Agents SDK runs (0.13/0.11), which is what real exports
// are (each model input re-listing its run): the default stays one thread there.
const PARTS_MIN_BYTES = 64 << 20;
// With `--threads N` given, from this size on: the user asked for threads.
const PARTS_MIN_BYTES_ASKED = 4 << 20;
// By default, below this size the workers start only once this thread has read the first
// pieces and its pace says the rest will take WORKER_MIN_MS or more (`readShared`); from it
// on (and whenever --threads is given) they start before the first line is read, as their
// start then overlaps this thread's. Bytes alone misjudge the work: 50 MB of long Agents SDK
// runs (each model input re-listing its run, most of it measured once) read in 0.12 s in one
// thread and 0.16 s in two (BENCHMARKS.md at 5cd0032), where the worker's start and the two
// CPUs slowing each other (this thread's pieces took about twice as long while the worker read)
// cost more than the worker's share saved; read at about 1 GB/s, the rest of such a file
// takes 40-65 ms when the pace is known, against 130-220 ms for the other trace formats at
// 50 MB. Interleaved runs, 15 each, 2026-12-07, the workers started early / as measured /
// one thread: long Agents SDK runs 0.203 / 0.165 / 0.158 s; OTLP 0.256 / 0.260 / 0.261,
// Langfuse 0.295 / 0.282 / 0.297, Agents SDK 0.299 / 0.313 / 0.307, OTLP with a trace per
// copy 0.273 / 0.273 / 0.276 (level); 300 MB of OTLP 0.85 / 0.88 s (7 runs), hence early
// from 128 MB, where even a file read at 1 GB/s takes 0.1 s or more. As committed, against
// the build before it (a busier spell of the host): long runs 0.173 -> 0.144 s, OTLP 0.364
// -> 0.355 (21 runs), Langfuse 0.370 -> 0.361. At 100 MB (11 runs each): long runs (the 50 MB
// file twice; 74-76 ms left when measured, so no worker) 0.227 -> 0.193 s, one thread 0.188;
// OTLP with the code cache 0.402 -> 0.416 (the worker pays there, and starts some 20 ms
// later), without it level (0.590 -> 0.587).
const PARTS_EAGER_BYTES = 128 << 20;
const WORKER_MIN_MS = 100;

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

/**
 * `{ threads, minBytes, eagerBytes }`: how many threads read a trace file, from what size,
 * and from what size their workers start before the first line is read.
 */
const threadsOf = (values) => {
  const asked = intOption(values, 'threads', { min: 1 });
  if (asked !== undefined) return { threads: asked, minBytes: PARTS_MIN_BYTES_ASKED, eagerBytes: 0 };
  const threads = Math.min(availableParallelism(), 4);
  return { threads, minBytes: PARTS_MIN_BYTES, eagerBytes: PARTS_EAGER_BYTES };
};

/**
 * The arguments as `run` parses them, for the work started before it (`prepare`,
 * `readAhead`): null for help, or for arguments `run` refuses (and says why).
 */
function parsedArgs(args) {
  if (args.includes('-h') || args.includes('--help')) return null;
  try {
    return parseArgs({ args, options: optionSpec, allowPositionals: true, strict: true });
  } catch {
    return null;
  }
}

/**
 * Called before `run`: when the first file is large enough to be read by several threads and
 * its first lines show a value per line (`splittable`), cuts it and starts the workers, whose
 * start (a thread, 60-70 ms here) then overlaps the main thread's. A file checked in one
 * thread gets V8's compiler set for that (./tiering.mjs, which says why not with workers)
 * when the module is not compiled yet. Anything odd (help, a usage error, stdin) prepares no
 * workers, and `run` deals with it.
 */
export async function prepare(args) {
  const parsed = parsedArgs(args);
  if (!parsed) return null;
  let parts = null;
  let compiled = false;
  try {
    const { values, positionals } = parsed;
    const file = positionals[0];
    const { threads, minBytes, eagerBytes } = threadsOf(values);
    const total = file && file !== '-' && threads > 1 ? statSync(file).size : 0;
    if (total && total >= minBytes) {
      const options = checkOptions(values);
      compiled = true;
      const toolslice = initCheckGlue(await import('../check/toolslice.js'));
      if (splittable(toolslice, file, options)) {
        parts = { file, total, ...(await startParts(file, total, threads, options, total >= eagerBytes)) };
      }
    }
  } catch {
    parts = null;
  }
  if (!parts && !compiled) tierForOneCheck();
  return parts;
}

/**
 * Whether the workers are worth starting for `file`: a trace format with a value per line,
 * as its first lines show (at most SNIFF_BYTES, read by a checker of the check's options).
 * Span JSONL and a single JSON document cannot be split, and workers started for them only
 * take CPU (60 MB of span JSONL: 0.25 s in one thread, 0.27 with a worker that ends unused).
 * Still undecided after that many bytes (a first line longer than that), it may be.
 */
function splittable(toolslice, file, options) {
  const fd = openSync(file, 'r');
  let checker = null;
  try {
    checker = new toolslice.Checker(options);
    const buffer = Buffer.allocUnsafe(SNIFF_STEP);
    for (let at = 0; at < SNIFF_BYTES && !checker.formatDecided; ) {
      const n = readSync(fd, buffer, 0, SNIFF_STEP, at);
      if (n === 0) break;
      checker.push(buffer.subarray(0, n));
      at += n;
    }
    return !checker.formatDecided || checker.lineFormat !== undefined;
  } finally {
    // Neither the file nor the checker's memory outlives the look, whatever it threw.
    closeSync(fd);
    checker?.free();
  }
}
const SNIFF_BYTES = 1 << 20;
const SNIFF_STEP = 16 << 10;

/**
 * Called before the module loads when `prepare` started no workers: opens the first file
 * and starts reading its first chunk, so that the loading of the module (the glue, V8's code
 * from the cache, the instance: 10-15 ms) overlaps the file's opening and first read, which
 * the check otherwise waited for once its checker was made (3-8 ms of a 50 MB check, the
 * thread idle). `{ file, chunks, first }` (`chunks` from `readChunks`, `first` its first
 * `next()`), or null (no file, stdin, arguments `run` will refuse, anything but a regular file:
 * a FIFO no one writes to would hold its opening, and with it a check that then refuses
 * its arguments, for ever).
 */
export function readAhead(args) {
  const file = parsedArgs(args)?.positionals[0];
  if (!file || file === '-') return null;
  try {
    if (!statSync(file).isFile()) return null;
  } catch {
    // No such file: `run` says so.
    return null;
  }
  const chunks = readChunks(file);
  const first = chunks.next();
  // Awaited when the file is read; a failure (no such file) is reported there, as without this.
  first.catch(() => {});
  return { file, chunks, first };
}

/** The chunks of a `readAhead`, from its first: a generator like `readChunks`'s. */
async function* resumed({ chunks, first }) {
  try {
    for (let r = await first; !r.done; r = await chunks.next()) yield r.value;
  } finally {
    await chunks.return();
  }
}

export async function run(args, context) {
  try {
    return await checkFiles(args, context);
  } finally {
    // However the check ended (a usage error included), the workers `prepare` started end
    // now, rather than wait for a format that never comes, and a file read ahead but not
    // checked is closed.
    context.prepared?.hub.end();
    await context.ahead?.chunks.return().catch(() => {});
  }
}

async function checkFiles(args, { toolslice, stdout, stderr, prepared, ahead }) {
  const parsed = parse(args, { usage, options: optionSpec });
  if (!parsed) return 0;
  const { values, positionals } = parsed;
  if (values.json && values.jsonl) throw new UsageError('--json and --jsonl cannot be combined');
  const files = positionals.length ? positionals : ['-'];
  const options = checkOptions(values);

  const threads = threadsOf(values);
  const results = [];
  for (const [i, file] of files.entries()) {
    const parts = i === 0 && prepared?.file === file ? prepared : undefined;
    const early = i === 0 && ahead?.file === file ? ahead : undefined;
    const last = i === files.length - 1;
    const { report, bytes } = await checkOne(toolslice, file, options, stderr, threads, parts, last, early);
    results.push({ file, report, bytes });
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
        // The tail in pieces too: a trace export can have a note on every row.
        await out.add(report.tableTailHead());
        await out.rows(report.rowCount, (from, to, into) => report.tableWarningsBytes(from, to, into));
        await out.rows(report.rowCount, (from, to, into) => report.tableNotesBytes(from, to, into));
        await out.add(report.tableTailMiddle());
        await out.rows(report.rollupCount, (from, to, into) => report.tableRollupBytes(from, to, into));
      }
    }
  }
  await out.flush();
  for (const { report } of results) report.free();
  // The report is out: what this run optimized is kept for the next (./code-cache.mjs).
  saveCompiledCheckModule(results.reduce((sum, r) => sum + r.bytes, 0));
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

// `threads`: { threads, minBytes } (see `threadsOf`). `last`: the run's last file, after which
// the process only writes the reports and exits. `ahead`: the file's `readAhead`, if any.
// Returns `{ report, bytes }` (the bytes read).
async function checkOne(toolslice, file, options, stderr, threads, prepared, last, ahead) {
  const checker = new toolslice.Checker(options);
  const total = file === '-' ? stdinFileSize() : sizeOf(file);
  // The report of span JSONL takes up to about the input's size in the module (0.7x mostly
  // ok, 0.9x mostly flagged), a trace's calls and report up to 1.2x (the module's memory
  // for 50 MB of Agents SDK export: 59.8 MB, 49.0 once a text's measures were shared rather
  // than copied to each holder; Langfuse 43.2, OTLP 41.1): room for it in one growth of the
  // module's memory, not hundreds. Each growth costs a scavenge and a full collection of the
  // JS heap (V8 counts the memory's new buffer as external memory, whole), 1-4 ms at the end
  // of a check that outgrew the room; room not used is address space, not resident memory.
  if (total) checker.reserve(total * RESERVE_SHARE);
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
  // Several threads read a large file (see ./pieces.mjs); the workers started in `prepare`
  // when this is that file, and its size is still the one they were given.
  let parts = null;
  if (prepared && prepared.total === total) parts = prepared;
  else if (file !== '-' && threads.threads > 1 && total >= threads.minBytes && splittable(toolslice, file, options)) {
    parts = await startParts(file, total, threads.threads, options, total >= threads.eagerBytes);
  }
  if (parts) {
    // Read in threads after all (`prepare` started none, but this did): not read ahead.
    await ahead?.chunks.return().catch(() => {});
    try {
      await readShared(toolslice, checker, file, options, parts, progress);
    } finally {
      parts.hub.end();
    }
  } else {
    for await (const chunk of ahead ? resumed(ahead) : readChunks(file)) {
      checker.push(chunk);
      progress();
    }
  }
  if (showProgress && lastShown) stderr.write('\r\x1b[K');
  const bytes = checker.bytesRead;
  // The last file's working state is left unfreed (`finishForExit`): nothing runs in this
  // module after it but the writing of reports. Earlier files' is freed for the next.
  return { report: last ? checker.finishForExit() : checker.finish(), bytes };
}

/**
 * Reads the pieces of `parts` into `checker` in file order, sharing them with the workers
 * (./pieces.mjs): a piece nobody has claimed is read here as bytes; a piece a worker read
 * is absorbed as its part; while a worker still reads the next piece, this thread reads one
 * from the back of the workers' pool into a part of its own, or waits. A piece whose part
 * is refused, or whose worker stopped before handing it over, is read here as bytes: the
 * report is the same whatever the threads do, only slower. `parts.pushed` and
 * `parts.absorbed` count the pieces taken in each way, `parts.refused` the parts refused
 * (the tests read them).
 */
async function readShared(toolslice, checker, file, options, parts, progress) {
  const { cuts, claims, hub } = parts;
  parts.pushed = 0;
  parts.absorbed = 0;
  parts.refused = 0;
  // The format goes to the workers as soon as the first lines show it (null: the file cannot
  // be split, and they end), so they start reading while this thread reads the first pieces.
  // Workers not started yet (`hub.waiting`; see PARTS_EAGER_BYTES) are told once this
  // thread's pace shows whether they pay: null (none is started) when the rest of the file
  // will take less than WORKER_MIN_MS at that pace.
  let format;
  const pace = pieces.newPace(cuts);
  const tell = () => {
    if (format !== undefined) return;
    const known = checker.lineFormat ?? null;
    if (known === null && checker.bytesRead < cuts[1]) return;
    if (known !== null && hub.waiting) {
      const left = pace.msLeft(checker.bytesRead, performance.now());
      if (left === undefined) return;
      format = left >= WORKER_MIN_MS ? known : null;
    } else {
      format = known;
    }
    hub.tell(format);
  };
  // One pair of buffers for every piece read here.
  const buffers = readBuffers();
  const push = async (j, end = cuts[j + 1]) => {
    for await (const chunk of readChunks(file, { start: cuts[j], end }, buffers)) {
      checker.push(chunk);
      tell();
      progress();
    }
    tell();
    parts.pushed += 1;
  };
  // Pieces this thread read out of turn, as parts, by index.
  const kept = new Map();
  const keep = async (j) => {
    const reader = new toolslice.PartReader(format, options);
    for await (const chunk of readChunks(file, { start: cuts[j], end: cuts[j + 1] }, buffers)) reader.push(chunk);
    kept.set(j, reader.finish());
  };
  for (let j = 0; j + 1 < cuts.length; j++) {
    if (format === null) {
      // The file cannot be split (or is not worth it), the workers ended without a claim (or
      // were never started): the rest in one go.
      await push(j, cuts[cuts.length - 1]);
      parts.pushed += cuts.length - 2 - j;
      break;
    }
    for (;;) {
      if (pieces.claimNext(claims, j)) {
        await push(j);
        break;
      }
      const part = kept.get(j) ?? hub.take(j);
      if (part !== undefined) {
        kept.delete(j);
        try {
          checker.absorb(part);
          parts.absorbed += 1;
        } catch {
          // A refused part changes nothing: this thread reads the piece itself.
          parts.refused += 1;
          await push(j);
        }
        progress();
        break;
      }
      if (hub.live === 0) {
        // Claimed by a worker that stopped without handing it over.
        await push(j);
        break;
      }
      // A worker reads piece j: meanwhile, one from the back, or wait for the workers.
      const back = format ? pieces.claimToKeep(claims) : -1;
      if (back >= 0) await keep(back);
      else await hub.event();
    }
  }
}

/**
 * Cuts the file into pieces, with the first pool this thread's as far as it is expected to
 * read before the workers meet it (`mainShares`), and makes a worker for each thread after
 * the first: started now when `eager`, else when the hub is first told a format.
 */
async function startParts(file, total, threads, options, eager) {
  await loadThreads();
  const cuts = pieces.lineCuts(file, total, pieces.pieceStarts(total, threads));
  const meet = mainShares(total, threads)[0];
  let split = cuts.findIndex((c) => c >= meet);
  if (split < 1) split = cuts.length - 1;
  const claims = pieces.newClaims(split, cuts.length - 1);
  const { module } = compiledCheckModule();
  return { cuts, claims, hub: partWorkers(threads - 1, { file, cuts, claims, options, module, workers: threads - 1 }, eager) };
}

/**
 * Where this thread is expected to meet the workers in a file of `total` bytes read by `n`
 * threads (the start of each later range, of which the pieces' split takes the first): this
 * thread's range is longer, since it starts first (a worker starts a thread with a Node
 * environment of its own and instantiates the module this thread compiled, 60-70 ms here, in
 * which this thread reads some 10 MB of a trace), and shorter by what it spends taking in
 * the workers' parts (ABSORB_SHARE of reading their bytes). Only a first guess: the claims
 * move the meeting point to where the threads do meet.
 */
function mainShares(total, n) {
  const workerShare = 1 / (n - 1);
  const main = Math.min(0.9 * total, (total * (workerShare - pieces.ABSORB_SHARE) + HEAD_START_BYTES) / (1 - pieces.ABSORB_SHARE + workerShare));
  const first = Math.max(main, total / (4 * n));
  return Array.from({ length: n - 1 }, (_, i) => Math.floor(first + ((total - first) * i) / (n - 1)));
}
const HEAD_START_BYTES = 10e6;

/**
 * `n` workers (./check-part.mjs) reading pieces of the file into parts: `tell(format)` starts
 * them (null ends them), `take(j)` is the part of piece j when it has arrived (once),
 * `live` the workers still running, `ready()` resolves once each has its module (or stopped),
 * `event()` resolves when a part arrives or a worker stops, and `end()` stops them all.
 * Not `eager`, the workers are made by the first `tell` of a format (`waiting` until it
 * comes), and none is made when it is null.
 */
function partWorkers(n, workerData, eager = true) {
  const arrived = new Map();
  let live = n;
  let wake = null;
  const notify = () => {
    const w = wake;
    wake = null;
    w?.();
  };
  let unsettled = n;
  let allSettled;
  const ready = new Promise((resolve) => (allSettled = resolve));
  if (n === 0) allSettled();
  let waiting = !eager;
  let workers = [];
  const make = () => Array.from({ length: n }, () => {
    const worker = new Worker(new URL('./check-part.mjs', import.meta.url), { workerData });
    let over = false;
    let settled = false;
    const settle = () => {
      if (settled) return;
      settled = true;
      unsettled -= 1;
      if (unsettled === 0) allSettled();
    };
    const stop = () => {
      if (over) return;
      over = true;
      live -= 1;
      settle();
      notify();
    };
    // Every message a worker posted before it ended arrives before its 'exit'.
    worker.on('message', (m) => {
      if (m.ready) settle();
      else if (m.part && !over) {
        arrived.set(m.piece, m.part);
        notify();
      } else if (!m.part) stop();
    });
    worker.once('error', stop);
    worker.once('exit', stop);
    // A worker never keeps the process alive: if the check ends another way (an error before
    // `run` reads, say), the process still exits. After the 'message' listener, which refs
    // the worker's port again: unref'd before it, a worker kept a process alive for ever.
    worker.unref();
    return worker;
  });
  if (eager) workers = make();
  return {
    get live() {
      return live;
    },
    get waiting() {
      return waiting;
    },
    // Resolves once every worker has its module and waits for the format, or has stopped
    // (the tests wait for it, so that a loaded machine cannot leave the workers no piece to
    // read; a check never does). Waited for, the workers keep the process alive, as in event().
    ready: () => {
      for (const w of workers) w.ref();
      return ready;
    },
    tell: (format) => {
      if (waiting) {
        waiting = false;
        if (format !== null) {
          try {
            workers = make();
          } catch {
            // A worker that cannot be made reads nothing: this thread reads it all.
            workers = [];
          }
        }
        if (!workers.length) {
          // Not worth starting, or not started: as if each had stopped.
          live = 0;
          unsettled = 0;
          allSettled();
          return;
        }
      }
      for (const w of workers) w.postMessage(format);
    },
    take: (j) => {
      const part = arrived.get(j);
      arrived.delete(j);
      return part;
    },
    event: () => {
      // Waited for: the workers now keep the process alive until one answers.
      for (const w of workers) w.ref();
      return new Promise((resolve) => (wake = resolve));
    },
    end: () => {
      for (const w of workers) w.terminate();
    },
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
