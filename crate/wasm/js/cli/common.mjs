// Shared plumbing for the CLI commands: argument parsing, reading files or stdin, usage
// errors. Nothing here decides anything about traces or tool output.
import { readFileSync, createReadStream } from 'node:fs';
import { parseArgs } from 'node:util';

/** A usage or I/O problem: printed as one line, exit code 2. */
export class UsageError extends Error {}

/** The package version, from the package.json next to this file. */
export function version() {
  const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'));
  return pkg.version;
}

/** What every command gets: the loaded package and the process streams. */
export async function context() {
  const toolslice = await import('../node.mjs');
  return { toolslice, stdout: process.stdout, stderr: process.stderr, stdin: process.stdin };
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

/** Chunks of a file (or stdin) for streaming consumers; I/O errors are UsageErrors. */
export async function* readChunks(path) {
  const stream = path === undefined || path === '-' ? process.stdin : createReadStream(path, { highWaterMark: 1 << 20 });
  try {
    for await (const chunk of stream) yield chunk;
  } catch (err) {
    throw new UsageError(`cannot read ${path ?? 'stdin'}: ${err.code ?? err.message}`);
  }
}
