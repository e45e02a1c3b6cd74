// Shared plumbing for the CLI commands: argument parsing, reading files or stdin, usage
// errors. Nothing here decides anything about traces or tool output.
import { close, fstatSync, open, read as fsRead, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { parseArgs } from 'node:util';

/** A usage or I/O problem: printed as one line, exit code 2. */
export class UsageError extends Error {}

/** The package version, from the package.json next to this file. */
export function version() {
  const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'));
  return pkg.version;
}

/**
 * What every command gets: the loaded package and the output streams. Not stdin: a command
 * that reads it takes `process.stdin` when it does (making the stream for a terminal or a
 * file costs 2-4 ms, which every `check` of a file paid for nothing).
 */
// `module`: 'check' for the check-only module (what `check` uses: the same checker, two fifths
// of the bytes for V8 to validate and compile at start), else the full one.
export async function context(module) {
  // The check module through ./code-cache.mjs: compiled once per process (its workers get the
  // same module), with V8's optimized code from an earlier run when there is some.
  // The full module through its CommonJS glue (what `require('toolslice')` loads), required
  // at run time rather than imported: the command line is bundled into one file
  // (scripts/bundle-cli.mjs), and the full glue, 109 KB of it, was parsed by every command,
  // `check` included, which never runs it (about 8 M instructions of a check of the 8.5 KB
  // OTLP fixture, 2% of the process: 406.5-409.2 -> 398.0-401.4 M, callgrind, code cache off). Required, it is a file of its own, read by the
  // commands that use it, and still without the ES module loader.
  const toolslice = module === 'check'
    ? (await import('./code-cache.mjs')).initCheckGlue(await import('../check/toolslice.js'))
    : createRequire(import.meta.url)('../cjs/toolslice.js');
  return { toolslice, stdout: process.stdout, stderr: process.stderr };
}

/**
 * `node:util` parseArgs with errors turned into UsageError and `--help` handled: returns
 * null after printing the help text.
 */
export function parse(args, { options = {}, allowPositionals = true, usage }) {
  let parsed;
  try {
    parsed = parseArgs({
      args,
      options: { help: { type: 'boolean', short: 'h' }, ...options },
      allowPositionals,
      strict: true,
    });
  } catch (err) {
    // One line: the problem, and where to read the options.
    const first = err.message.split('\n')[0].split('. To specify')[0].replace(/\.$/, '');
    const command = usage.match(/^usage: (toolslice \S+)/)?.[1] ?? 'toolslice';
    throw new UsageError(`${first} (see: ${command} --help)`);
  }
  if (parsed.values.help) {
    process.stdout.write(usage + '\n');
    return null;
  }
  return parsed;
}

/** An integer option value, or a UsageError naming the option. */
export function intOption(values, name, { min = 0 } = {}) {
  const raw = values[name];
  if (raw === undefined) return undefined;
  if (!/^-?\d+$/.test(raw) || Number(raw) < min || !Number.isSafeInteger(Number(raw))) {
    throw new UsageError(`--${name} must be an integer >= ${min}, got '${raw}'`);
  }
  return Number(raw);
}

/** `--upstream URL` of the two servers (mcp-proxy, otlp-endpoint): required, http(s). */
export function upstreamOption(values, command) {
  if (!values.upstream) throw new UsageError(`--upstream URL is required (see: toolslice ${command} --help)`);
  let upstream;
  try {
    upstream = new URL(values.upstream);
  } catch {
    throw new UsageError(`--upstream must be a URL, got '${values.upstream}'`);
  }
  if (upstream.protocol !== 'http:' && upstream.protocol !== 'https:') {
    throw new UsageError(`--upstream must be an http(s) URL, got '${values.upstream}'`);
  }
  return upstream;
}

/** `--port N` of the two servers: 0 (any free port) to 65535, else `dflt`. */
export function portOption(values, dflt) {
  const port = intOption(values, 'port') ?? dflt;
  if (port > 65535) throw new UsageError(`--port must be at most 65535, got '${port}'`);
  return port;
}

/** The whole of a file (or stdin for '-' / undefined) as bytes; I/O errors are UsageErrors. */
export async function readAll(path) {
  if (path === undefined || path === '-') {
    const chunks = [];
    for await (const chunk of process.stdin) chunks.push(chunk);
    return Buffer.concat(chunks);
  }
  try {
    return readFileSync(path);
  } catch (err) {
    throw new UsageError(`cannot read ${path}: ${err.code ?? err.message}`);
  }
}

/** Bytes read from a file at a time by readChunks (larger chunks measured no faster). */
const CHUNK_BYTES = 1 << 20;

/** Two buffers for `readChunks` to read into in turn. */
export const readBuffers = () => [Buffer.allocUnsafe(CHUNK_BYTES), Buffer.allocUnsafe(CHUNK_BYTES)];

/** The size of stdin when it is a regular file (`< FILE`), else 0 (a pipe, a terminal). */
export function stdinFileSize() {
  try {
    const stat = fstatSync(0);
    return stat.isFile() ? stat.size : 0;
  } catch {
    return 0;
  }
}

/**
 * Chunks of a file (or stdin for '-' / undefined) for streaming consumers; I/O errors are
 * UsageErrors. Each chunk is valid only until the next one is asked for: a file (stdin too,
 * when it is one) is read into two buffers in turn, the next chunk read (off the main
 * thread) while the consumer takes the current one, which every consumer copies into the
 * module at once. A stream allocated a fresh buffer per chunk instead (64 KiB ones for
 * stdin), and they piled up between garbage collections: 30 MB of peak memory on a 300 MB
 * `check --flagged-only` (issue 17). A pipe or a terminal on stdin stays a stream.
 * `range` ({ start, end }) reads only those bytes of a file; `buffers` (from `readBuffers`)
 * are the two buffers to read into, for a caller that reads many ranges one after another
 * (check's pieces): fresh ones per range, 2 MiB a piece, took 25 MB more peak memory on a
 * 300 MB check.
 */
export async function* readChunks(path, range, buffers = readBuffers()) {
  const stdin = path === undefined || path === '-';
  if (stdin && !stdinFileSize()) {
    try {
      for await (const chunk of process.stdin) yield chunk;
    } catch (err) {
      throw new UsageError(`cannot read stdin: ${err.code ?? err.message}`);
    }
    return;
  }
  const fail = (err) => new UsageError(`cannot read ${stdin ? 'stdin' : path}: ${err.code ?? err.message}`);
  let fd = 0;
  if (!stdin) {
    try {
      fd = await new Promise((resolve, reject) => open(path, 'r', (err, f) => (err ? reject(err) : resolve(f))));
    } catch (err) {
      throw fail(err);
    }
  }
  // `range` ({ start, end }, a file's bytes start..end): read at those positions; otherwise
  // from where the descriptor stands (stdin may be a file already part read).
  let position = range ? range.start : null;
  const read = (buffer) => {
    const length = range ? Math.max(0, Math.min(buffer.length, range.end - position)) : buffer.length;
    const at = position;
    const bytes = new Promise((resolve, reject) => {
      if (length === 0) return resolve(0);
      fsRead(fd, buffer, 0, length, at, (err, n) => (err ? reject(fail(err)) : resolve(n)));
    });
    // Handled here too: a read may fail while the consumer is still busy with the chunk
    // before, and it is awaited (and the error thrown) when the consumer asks for more.
    bytes.catch(() => {});
    return bytes;
  };
  let next = 0;
  let pending = read(buffers[next]);
  try {
    for (;;) {
      const n = await pending;
      pending = undefined;
      if (n === 0) return;
      if (range) position += n;
      const chunk = buffers[next].subarray(0, n);
      next ^= 1;
      pending = read(buffers[next]);
      yield chunk;
    }
  } finally {
    // A consumer that stops early (an error, a break) leaves a read in flight: let it end
    // before the file is closed under it.
    await pending?.catch(() => {});
    if (!stdin) await new Promise((resolve) => close(fd, () => resolve()));
  }
}
