// The Node baseline of the proxy benchmark (scripts/bench-mcp.mjs): a process that forwards
// every request to the upstream and streams the answer back, doing nothing else, with the
// same plumbing as `toolslice mcp-proxy` (node:http in, fetch out).
//   node pkg-tests/mcp/passthrough-node.mjs UPSTREAM_URL   prints its URL, serves until killed
import { createServer } from 'node:http';

const upstream = process.argv[2];
const server = createServer(async (req, res) => {
  const headers = new Headers();
  for (const [k, v] of Object.entries(req.headers)) if (k !== 'host' && typeof v === 'string') headers.set(k, v);
  let body;
  if (req.method === 'POST') {
    const chunks = [];
    for await (const c of req) chunks.push(c);
    body = Buffer.concat(chunks);
  }
  const up = await fetch(upstream, { method: req.method, headers, body });
  const out = {};
  up.headers.forEach((v, k) => {
    if (k !== 'content-length' && k !== 'transfer-encoding') out[k] = v;
  });
  res.writeHead(up.status, out);
  if (up.body) for await (const chunk of up.body) res.write(chunk);
  res.end();
});
server.listen(0, '127.0.0.1', () => {
  process.stdout.write(`http://127.0.0.1:${server.address().port}${new URL(upstream).pathname}\n`);
});
