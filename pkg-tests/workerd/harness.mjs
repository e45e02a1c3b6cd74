// Starts real workerd on a free port with a capnp config from this folder, for the worker
// tests. Resolves once the worker answers; `stop()` ends it.
import { spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';

const here = (p) => fileURLToPath(new URL(p, import.meta.url));
const workerd = here('../node_modules/.bin/workerd');

async function freePort() {
  return new Promise((resolve) => {
    const srv = createServer().listen(0, '127.0.0.1', () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });
}

// `extraSockets`: names of other sockets in the config to move to free ports too; their
// URLs come back in `sockets`.
export async function startWorkerd(config, extraSockets = []) {
  const port = await freePort();
  const sockets = {};
  const args = ['serve', here(config), `--socket-addr=http=127.0.0.1:${port}`, '--verbose'];
  for (const name of extraSockets) {
    const p = await freePort();
    sockets[name] = `http://127.0.0.1:${p}`;
    args.push(`--socket-addr=${name}=127.0.0.1:${p}`);
  }
  const proc = spawn(workerd, args, {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let log = '';
  proc.stdout.on('data', (d) => (log += d));
  proc.stderr.on('data', (d) => (log += d));
  const base = `http://127.0.0.1:${port}`;
  for (let i = 0; i < 100; i++) {
    if (proc.exitCode !== null) throw new Error(`workerd exited: ${log}`);
    try {
      await fetch(base);
      return { base, sockets, stop: () => proc.kill(), log: () => log };
    } catch {
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  proc.kill();
  throw new Error(`workerd did not start: ${log}`);
}
