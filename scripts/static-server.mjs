// A small static file server for the page and the browser tests. No dependencies: the
// page must work from any static host, so this server does nothing a plain host would not,
// except sending the page's security headers (which a real host should send too).
import { createServer } from 'node:http';
import { createReadStream, statSync } from 'node:fs';
import { extname, join, normalize, resolve, sep } from 'node:path';

const TYPES = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.wasm': 'application/wasm',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.txt': 'text/plain; charset=utf-8',
  '.jsonl': 'text/plain; charset=utf-8',
  '.ts': 'text/plain; charset=utf-8',
};

/** The page's policy: scripts, wasm, styles and fetches from its own origin only. */
export const CSP = [
  "default-src 'self'",
  "script-src 'self' 'wasm-unsafe-eval'",
  "style-src 'self'",
  "img-src 'self' data: blob:",
  "connect-src 'self'",
  "worker-src 'self'",
  "font-src 'none'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

/**
 * Serves `root` on host:port (port 0 picks a free one). Resolves to { url, close }.
 * `onRequest(path)` is called for every request (the tests log them).
 */
export function serve({ root, host = '127.0.0.1', port = 0, onRequest } = {}) {
  const base = resolve(root);
  const server = createServer((req, res) => {
    const path = decodeURIComponent(new URL(req.url, 'http://x').pathname);
    onRequest?.(path);
    let file = normalize(join(base, path));
    if (file !== base && !file.startsWith(base + sep)) return send(res, 403, 'forbidden');
    let info;
    try {
      info = statSync(file);
      if (info.isDirectory()) {
        file = join(file, 'index.html');
        info = statSync(file);
      }
    } catch {
      return send(res, 404, 'not found');
    }
    res.writeHead(200, {
      'content-type': TYPES[extname(file)] ?? 'application/octet-stream',
      'content-length': info.size,
      'content-security-policy': CSP,
      'x-content-type-options': 'nosniff',
      'referrer-policy': 'no-referrer',
      'cache-control': 'no-cache',
    });
    if (req.method === 'HEAD') return res.end();
    createReadStream(file).pipe(res);
  });
  return new Promise((resolvePromise, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      const { port: actual } = server.address();
      resolvePromise({ url: `http://${host}:${actual}/`, close: () => new Promise((r) => server.close(r)), server });
    });
  });
}

function send(res, status, text) {
  res.writeHead(status, { 'content-type': 'text/plain; charset=utf-8' });
  res.end(text + '\n');
}
