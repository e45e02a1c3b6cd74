// Starts the real `@modelcontextprotocol/server-everything` in its Streamable HTTP mode on a
// free port of 127.0.0.1 (it answers POSTs with SSE streams), with extra environment
// variables (its get-env tool prints its environment).
import { spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';

const entry = fileURLToPath(new URL('../node_modules/@modelcontextprotocol/server-everything/dist/index.js', import.meta.url));

export async function freePort() {
  return new Promise((resolve) => {
    const srv = createServer().listen(0, '127.0.0.1', () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });
}

export async function startEverything(env = {}) {
  const port = await freePort();
  const proc = spawn(process.execPath, [entry, 'streamableHttp'], {
    env: { ...process.env, ...env, PORT: String(port) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let log = '';
  proc.stdout.on('data', (d) => (log += d));
  proc.stderr.on('data', (d) => (log += d));
  const url = `http://127.0.0.1:${port}/mcp`;
  for (let i = 0; i < 200; i++) {
    if (proc.exitCode !== null) throw new Error(`server-everything exited: ${log}`);
    if (/listening on port/.test(log)) return { url, stop: () => proc.kill(), log: () => log };
    await new Promise((r) => setTimeout(r, 50));
  }
  proc.kill();
  throw new Error(`server-everything did not start: ${log}`);
}
