// `toolslice mcp-proxy`: the MCP packing proxy (../mcp/proxy.js, the code the edge worker
// runs) on a local port, for MCP servers run on one's own machine. This file is the Node
// plumbing: arguments, the configuration file, node:http in and out, the span file.
import { createServer } from 'node:http';
import { appendFileSync, readFileSync } from 'node:fs';
import { Readable } from 'node:stream';
import { parse, portOption, upstreamOption, UsageError } from './common.mjs';
import { createMcpProxy } from '../mcp/proxy.js';

export const summary = 'proxy an MCP server (Streamable HTTP), packing every tools/call result';

const usage = `usage: toolslice mcp-proxy --upstream URL [--port N] [--config FILE] [--spans FILE]

Listens on 127.0.0.1 and forwards every request to the MCP server at URL (its Streamable
HTTP endpoint), passing messages through untouched except: each tools/call result is packed
with the tool's policy (redacted, cut to its budget with a marker naming get_more, the span
record under the result's _meta["toolslice/span"]); tools/list gains the get_more tool; a
get_more call is answered from the proxy's page store. Prints its URL (the upstream's path
on 127.0.0.1) as the first line of output, then serves until interrupted.

  --upstream URL   the MCP server's endpoint, e.g. http://127.0.0.1:3001/mcp (required)
  --port N         the port to listen on (default: a free one)
  --config FILE    packing configuration (JSON: tools, default, redact, store); default:
                   $TOOLSLICE_MCP_CONFIG when set (JSON text), else 4096 bytes for every tool
  --spans FILE     append every span record the proxy writes to FILE (JSONL, for
                   toolslice check)

Warnings (a request that is not JSON-RPC, passed through unchanged) go to stderr.`;

export async function run(args, { toolslice, stdout, stderr }) {
  const parsed = parse(args, {
    usage,
    allowPositionals: false,
    options: {
      upstream: { type: 'string' },
      port: { type: 'string' },
      config: { type: 'string' },
      spans: { type: 'string' },
    },
  });
  if (!parsed) return 0;
  const { values } = parsed;
  const upstream = upstreamOption(values, 'mcp-proxy');
  const port = portOption(values, 0);
  let config = process.env.TOOLSLICE_MCP_CONFIG || undefined;
  if (values.config !== undefined) {
    try {
      config = readFileSync(values.config, 'utf8');
    } catch (err) {
      throw new UsageError(`cannot read ${values.config}: ${err.code ?? err.message}`);
    }
  }
  const spansFile = values.spans;
  const log = (line) => stderr.write(line + '\n');
  let proxy;
  try {
    proxy = createMcpProxy(toolslice, {
      upstream: upstream.href,
      config,
      log,
      sink: spansFile ? (spans) => appendFileSync(spansFile, spans.map((s) => JSON.stringify(s) + '\n').join('')) : undefined,
    });
  } catch (err) {
    throw new UsageError(`${values.config ?? '$TOOLSLICE_MCP_CONFIG'}: ${err.message}`);
  }

  const server = createServer(async (req, res) => {
    const controller = new AbortController();
    res.on('close', () => controller.abort());
    const headers = new Headers();
    for (const [k, v] of Object.entries(req.headers)) {
      if (Array.isArray(v)) for (const x of v) headers.append(k, x);
      else if (v !== undefined) headers.set(k, v);
    }
    // A POST body is one JSON-RPC message (or batch): read it whole, which costs less than
    // a web stream over the socket. Other methods' bodies (rare) are streamed.
    let body;
    if (req.method === 'POST') {
      const chunks = [];
      for await (const c of req) chunks.push(c);
      body = Buffer.concat(chunks);
    } else if (req.method !== 'GET' && req.method !== 'HEAD') {
      body = Readable.toWeb(req);
    }
    const request = new Request(new URL(req.url, `http://${req.headers.host ?? '127.0.0.1'}`), {
      method: req.method,
      headers,
      body,
      duplex: 'half',
      signal: controller.signal,
    });
    let response;
    try {
      response = await proxy.fetch(request);
    } catch (err) {
      log(`mcp proxy: ${err.message}`);
      res.writeHead(502).end();
      return;
    }
    const out = {};
    response.headers.forEach((v, k) => {
      out[k] = k in out ? `${out[k]}, ${v}` : v;
    });
    res.writeHead(response.status, response.statusText, out);
    if (!response.body) {
      res.end();
      return;
    }
    const reader = response.body.getReader();
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        if (!res.write(value)) await new Promise((r) => res.once('drain', r));
      }
      res.end();
    } catch {
      // The client went away (or the upstream did): end this response only.
      reader.cancel().catch(() => {});
      res.destroy();
    }
  });
  await new Promise((resolve, reject) => {
    server.once('error', (err) => reject(new UsageError(`cannot listen on 127.0.0.1:${port}: ${err.code ?? err.message}`)));
    server.listen(port, '127.0.0.1', resolve);
  });
  const url = `http://127.0.0.1:${server.address().port}${upstream.pathname}`;
  stdout.write(`${url}\n`);
  await new Promise((resolve) => {
    const stop = () => server.close(() => resolve());
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
  });
  return 0;
}
