// The `toolslice` command as installed by npm (bin), on good, clipped and malformed files.
import test from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { closeSync, cpSync, mkdtempSync, openSync, readFileSync, realpathSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const bin = fileURLToPath(new URL('../node_modules/.bin/toolslice', import.meta.url));
const fixture = (name) => fileURLToPath(new URL(`../fixtures/${name}`, import.meta.url));
const cli = (args, input) => spawnSync(bin, args, { input, encoding: 'utf8' });

test('check: exit 0 on a clean run, 1 on a silent clip, 1 on malformed lines', () => {
  assert.equal(cli(['check', fixture('good.jsonl')]).status, 0);
  assert.equal(cli(['check', fixture('clipped.jsonl')]).status, 1);
  const bad = cli(['check', fixture('malformed.jsonl')]);
  assert.equal(bad.status, 1);
  assert.match(bad.stdout, /# invalid line 2: not valid JSON/);
});

test('check sets its V8 compiler flags only on the V8 they were measured on, silently', async () => {
  // An unknown V8 flag is an error line on stderr: a clean run prints nothing there.
  const r = cli(['check', fixture('good.jsonl')]);
  assert.equal(r.status, 0);
  assert.equal(r.stderr, '');
  const { checkV8Flags } = await import(new URL('../node_modules/toolslice/cli/tiering.mjs', import.meta.url));
  assert.equal(checkV8Flags('10.2.154.26-node.39'), '');
  assert.equal(checkV8Flags('12.4.254.21-node.33'), '');
  assert.match(checkV8Flags('11.3.244.8-node.33'), /^--no-wasm-loop-unrolling --no-wasm-loop-peeling$/);
});

test('check reads stdin when no file is given', () => {
  const r = cli(['check'], readFileSync(fixture('clipped.jsonl')));
  assert.equal(r.status, 1);
  assert.match(r.stdout, /^silent_clip {6}tool-14/m);
});

test('check reads stdin redirected from a file (read as a file) as it reads the file', () => {
  // Several chunks of 1 MiB, so the reads into alternating buffers are exercised.
  const big = join(mkdtempSync(join(tmpdir(), 'toolslice-')), 'big.jsonl');
  writeFileSync(big, readFileSync(fixture('clipped.jsonl'), 'utf8').repeat(8000));
  const run = (args, stdin) => spawnSync(bin, args, { stdio: [stdin, 'pipe', 'pipe'], encoding: 'utf8', maxBuffer: 1 << 30 });
  for (const args of [['check', '--jsonl'], ['check', '--json', '-']]) {
    const fd = openSync(big, 'r');
    let fromStdin;
    try {
      fromStdin = run(args, fd);
    } finally {
      closeSync(fd);
    }
    const fromFile = run([...args.filter((a) => a !== '-'), big], 'ignore');
    assert.equal(fromStdin.status, 1, fromStdin.stderr);
    assert.ok(fromStdin.stdout.length > 1 << 20);
    assert.equal(fromStdin.stdout, fromFile.stdout, args.join(' '));
  }
});

test('check run() into a stream that keeps the buffers it is given writes the same bytes', async () => {
  // The CLI renders into one reused buffer; a stream that is not a file descriptor (here a
  // Writable that keeps every chunk, as a collector does) must get copies, or later pieces
  // would overwrite what it already holds.
  const { Writable } = await import('node:stream');
  // The subcommand's module as installed (not in the package's exports: the CLI's own).
  const { run } = await import(new URL('../node_modules/toolslice/cli/check.mjs', import.meta.url));
  const toolslice = await import('toolslice');
  const big = join(mkdtempSync(join(tmpdir(), 'toolslice-')), 'big.jsonl');
  writeFileSync(big, readFileSync(fixture('clipped.jsonl'), 'utf8').repeat(8000));
  const kept = [];
  const stdout = new Writable({ write(chunk, _enc, done) { kept.push(chunk); done(); } });
  const stderr = new Writable({ write(_c, _e, done) { done(); } });
  const code = await run(['--jsonl', big], { toolslice, stdout, stderr });
  assert.equal(code, 1);
  const expected = spawnSync(bin, ['check', '--jsonl', big], { encoding: 'utf8', maxBuffer: 1 << 30 }).stdout;
  assert.ok(expected.length > 2 * (1 << 20));
  assert.equal(Buffer.concat(kept).toString('utf8'), expected);
});

test('check reads its first file ahead while the module loads: the same report, the file closed however the check ends', async () => {
  const { readdirSync } = await import('node:fs');
  const { Writable } = await import('node:stream');
  const { run, readAhead } = await import(new URL('../node_modules/toolslice/cli/check.mjs', import.meta.url));
  const toolslice = await import('toolslice');
  // Several chunks of 1 MiB: the first read ahead, the rest as the check goes.
  const big = join(mkdtempSync(join(tmpdir(), 'toolslice-')), 'big.jsonl');
  writeFileSync(big, readFileSync(fixture('clipped.jsonl'), 'utf8').repeat(8000));
  const collect = () => {
    const kept = [];
    return { kept, stream: new Writable({ write(chunk, _enc, done) { kept.push(chunk); done(); } }) };
  };
  const fds = () => readdirSync('/proc/self/fd').length;
  const before = fds();
  const check = async (ahead) => {
    const out = collect();
    const code = await run(['--jsonl', big], { toolslice, stdout: out.stream, stderr: collect().stream, ahead });
    return { code, text: Buffer.concat(out.kept).toString('utf8') };
  };
  const ahead = readAhead(['--jsonl', big]);
  assert.equal(ahead.file, big);
  const read = await check(ahead);
  const plain = await check(undefined);
  assert.equal(read.code, 1);
  assert.ok(plain.text.length > 2 * (1 << 20));
  assert.ok(read.text === plain.text, 'the reports differ');
  // A check that ends before it reads (a usage error) closes the file it read ahead.
  const clash = ['--json', '--jsonl', big];
  const unread = readAhead(clash);
  await assert.rejects(run(clash, { toolslice, stdout: collect().stream, stderr: collect().stream, ahead: unread }), /cannot be combined/);
  // Its opening and first read over (they run on libuv's threads), the file is closed.
  await unread.first;
  await new Promise((resolve) => setTimeout(resolve, 50));
  assert.equal(fds(), before, 'a file left open');
  // Nothing is read ahead of stdin, help, arguments the check refuses, a missing file or
  // one that is not a regular file (a FIFO with no writer would never open).
  const fifo = join(mkdtempSync(join(tmpdir(), 'toolslice-')), 'fifo');
  assert.equal(spawnSync('mkfifo', [fifo]).status, 0);
  for (const args of [['--jsonl'], ['-'], ['--help', big], ['--nope', big], ['/no/such.jsonl'], [fifo]]) {
    assert.equal(readAhead(args), null, args.join(' '));
  }
});

test('check --json prints the report', () => {
  const r = cli(['check', '--json', fixture('clipped.jsonl')]);
  const report = JSON.parse(r.stdout);
  assert.equal(report.exit_code, 1);
  assert.equal(report.counts.silent_clip, 1);
  assert.equal(report.rows[0].span_id, 'tool-14');
});

test('check over several files exits with the worst code', () => {
  const r = cli(['check', '--json', fixture('good.jsonl'), fixture('clipped.jsonl')]);
  assert.equal(r.status, 1);
  const doc = JSON.parse(r.stdout);
  assert.deepEqual(doc.files.map((f) => f.report.exit_code), [0, 1]);
});

test('usage and I/O errors exit 2 with one line', () => {
  for (const args of [['check', '/no/such/file.jsonl'], ['check', '--nope'], ['frobnicate']]) {
    const r = cli(args);
    assert.equal(r.status, 2, args.join(' '));
    assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
    assert.match(r.stderr, /^toolslice: /);
  }
});

test('the bin runs from a copy of the package anywhere: what it loads is found next to it', () => {
  // The bin is one bundled file (scripts/bundle-cli.mjs): the wasm files, package.json and
  // the modules it loads at run time must be found relative to where it is installed, not
  // where it was built. A copy under another directory runs a check (the check module), a
  // hash (the full module) and --version (package.json) as the original does.
  const pkg = realpathSync(fileURLToPath(new URL('../node_modules/toolslice', import.meta.url)));
  const copy = join(mkdtempSync(join(tmpdir(), 'toolslice-copy-')), 'node_modules', 'toolslice');
  cpSync(pkg, copy, { recursive: true });
  const run = (args, input) =>
    spawnSync(process.execPath, [join(copy, 'cli.cjs'), ...args], {
      input,
      encoding: 'utf8',
      env: { ...process.env, TOOLSLICE_CODE_CACHE: 'off' },
    });
  // The copy's own package.json, marked: the one --version reads.
  const manifest = JSON.parse(readFileSync(join(copy, 'package.json'), 'utf8'));
  writeFileSync(join(copy, 'package.json'), JSON.stringify({ ...manifest, version: `${manifest.version}-copy` }));
  assert.equal(run(['--version']).stdout, `toolslice ${manifest.version}-copy\n`);
  const checked = run(['check', fixture('clipped.jsonl')]);
  assert.equal(checked.status, 1, checked.stderr);
  assert.equal(checked.stdout, cli(['check', fixture('clipped.jsonl')]).stdout);
  const text = 'the tool said: exit 1\n';
  const hashed = run(['hash', '--canonical', 'raw'], text);
  assert.equal(hashed.status, 0, hashed.stderr);
  assert.equal(hashed.stdout.trim().split(/\s+/)[0], createHash('sha256').update(text).digest('hex'));
  // And the module a check compiles is the copy's: spoilt there, the check fails there.
  writeFileSync(join(copy, 'check', 'toolslice_bg.wasm'), 'not wasm');
  const spoilt = run(['check', fixture('clipped.jsonl')]);
  assert.equal(spoilt.status, 2);
  assert.match(spoilt.stderr, /CompileError/);
});

test('diff pairs clip-aware spans by observed hash and lists changed injected slices', () => {
  const r = cli(['diff', '--json', fixture('good.jsonl'), fixture('clipped.jsonl')]);
  assert.equal(r.status, 1, r.stderr);
  const d = JSON.parse(r.stdout);
  // tool-14 observed ab12 in both runs; its injected hash is cd34 in both, but the builder moved.
  assert.equal(d.builder_changed, true);
  assert.deepEqual(d.left_builders, ['cap-v3']);
  assert.deepEqual(d.injected_changed, []);
  assert.equal(d.unchanged, 1);
});

test('output into a closed pipe is not an error', () => {
  // Enough rows (several MB of JSONL) that the reader is gone before the writer finishes.
  const big = join(mkdtempSync(join(tmpdir(), 'toolslice-')), 'big.jsonl');
  writeFileSync(big, readFileSync(fixture('clipped.jsonl'), 'utf8').repeat(5000));
  const r = spawnSync('bash', ['-c', `"${bin}" check --jsonl "${big}" | head -c 1 >/dev/null; exit \${PIPESTATUS[0]}`], { encoding: 'utf8' });
  assert.equal(r.stderr, '');
});
