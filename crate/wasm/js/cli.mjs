#!/usr/bin/env node
// The toolslice command line: a thin shell over the wasm module. Every decision is made in
// Rust; this file only reads arguments and files, calls the package, and prints.
//
// Each command lives in ./cli/<name>.mjs and exports `summary` (one line for the help
// text) and `run(args, ctx)`, which returns the process exit code. Usage and I/O errors
// exit 2 with a one-line message.
import { UsageError, context } from './cli/common.mjs';

const commands = {
  check: () => import('./cli/check.mjs'),
  convert: () => import('./cli/convert.mjs'),
  hash: () => import('./cli/hash.mjs'),
  record: () => import('./cli/record.mjs'),
  gate: () => import('./cli/gate.mjs'),
  diff: () => import('./cli/diff.mjs'),
  hop: () => import('./cli/hop.mjs'),
  truncate: () => import('./cli/truncate.mjs'),
  pack: () => import('./cli/pack.mjs'),
  'mcp-proxy': () => import('./cli/mcp-proxy.mjs'),
  'get-more': () => import('./cli/get-more.mjs'),
  'otlp-endpoint': () => import('./cli/otlp-endpoint.mjs'),
};

async function main(argv) {
  const [name, ...rest] = argv;
  if (!name || name === '-h' || name === '--help' || name === 'help') {
    const lines = ['usage: toolslice <command> [options]', '', 'commands:'];
    for (const [cmd, load] of Object.entries(commands)) {
      const mod = await load();
      lines.push(`  ${cmd.padEnd(10)} ${mod.summary}`);
    }
    lines.push('', 'Run `toolslice <command> --help` for its options.');
    process.stdout.write(lines.join('\n') + '\n');
    return name ? 0 : 2;
  }
  if (name === '--version' || name === '-V') {
    const { version } = await import('./cli/common.mjs');
    process.stdout.write(`toolslice ${version()}\n`);
    return 0;
  }
  const load = commands[name];
  if (!load) throw new UsageError(`unknown command '${name}' (try: ${Object.keys(commands).join(', ')})`);
  const mod = await load();
  // A command may start work before its context is made (check's worker threads, started
  // as early as the first file's first lines show they are worth it).
  const prepared = await mod.prepare?.(rest);
  // And input it reads while the package loads (check's first file, when not in threads).
  const ahead = prepared ? null : mod.readAhead?.(rest);
  return mod.run(rest, { ...(await context(mod.module)), prepared, ahead });
}

// A reader that stops early (`toolslice check ... | head`) closes the pipe: that is not an
// error worth a stack trace; stop quietly as other Unix tools do.
process.stdout.on('error', (err) => {
  if (err.code === 'EPIPE') process.exit(process.exitCode ?? 0);
  throw err;
});

main(process.argv.slice(2)).then(
  (code) => { process.exitCode = code; },
  (err) => {
    const message = err instanceof UsageError || err?.code ? err.message : (err?.stack ?? String(err));
    process.stderr.write(`toolslice: ${message}\n`);
    process.exitCode = 2;
  },
);
