#!/usr/bin/env node
// Bundles the command line into one CommonJS file:   node scripts/bundle-cli.mjs DIR
// reads DIR/cli.mjs and the modules it imports (DIR/cli/*.mjs and the check module's glue,
// as scripts/build staged them) and writes DIR/cli.cjs, the package's `bin`. The full
// module's glue is not in it: the commands that use it `require` its CommonJS build
// (DIR/cjs/) at run time (cli/common.mjs says why).
//
// Why CommonJS: Node 20 starts the ES module loader for an `.mjs` entry (and for every
// `import()`), which reads each module on the thread pool and links them in turns of the
// event loop, while the main thread waits; a CommonJS entry that `require`s everything
// synchronously never starts it. `toolslice check` of the 8.5 KB OTLP fixture, the same
// code either way, 40 interleaved cold runs, medians: 71.8 -> 66.8 ms with
// NODE_EXTRA_CA_CERTS unset, 129.9 -> 121.7 ms with it set (2026-12-07; with the full glue
// left out too, against the modules unbundled: 85.5 -> 80.7 and 130.5 -> 117.9 ms, another
// run). Every run of every command pays that once, and a check of a small file is mostly
// that kind of cost. An ES module bundle of the same code was no faster (78.8 against 75.1
// ms): the loader is the cost, not the number of modules.
//
// The modules stay ES modules in the package (the API, `toolslice/check`, the check's worker
// threads, and the tests import them); only the entry is bundled. `import()`s inside become
// lazy initialisers, so a command loads no more than before: each module's top level still
// runs only when its command asks for it. `import.meta.url` is each module's own URL, as
// if it had not been bundled: the bundle computes it from its own directory and the module's
// place in DIR (the wasm files, package.json and the worker's module are found relative to it).
import { readFile } from 'node:fs/promises';
import { relative, resolve } from 'node:path';

const esbuild = (await import(new URL('../pkg-tests/node_modules/esbuild/lib/main.js', import.meta.url))).default;

if (!process.argv[2]) {
  console.error('usage: node scripts/bundle-cli.mjs DIR');
  process.exit(2);
}
const dir = resolve(process.argv[2]);

// Each module's `import.meta.url`, relative to the bundle's directory at run time.
const ownUrl = {
  name: 'own-import-meta-url',
  setup(build) {
    build.onLoad({ filter: /\.(m?js)$/ }, async (args) => {
      const source = await readFile(args.path, 'utf8');
      const place = relative(dir, args.path).split('\\').join('/');
      if (place.startsWith('..')) throw new Error(`bundle-cli: ${args.path} is outside ${dir}`);
      const url = `new URL(${JSON.stringify(place)}, __toolsliceBase).href`;
      return { contents: source.replaceAll('import.meta.url', url), loader: 'js' };
    });
  },
};

await esbuild.build({
  // Module names in the bundle (its lazy initialisers, stack traces) relative to DIR.
  absWorkingDir: dir,
  entryPoints: [`${dir}/cli.mjs`],
  outfile: `${dir}/cli.cjs`,
  bundle: true,
  platform: 'node',
  format: 'cjs',
  target: 'node18',
  // The entry's `#!/usr/bin/env node` is kept first; this follows it.
  banner: { js: "const __toolsliceBase = require('node:url').pathToFileURL(__dirname + '/').href;" },
  plugins: [ownUrl],
  logLevel: 'warning',
  legalComments: 'none',
});
