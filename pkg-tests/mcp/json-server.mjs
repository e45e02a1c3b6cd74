// A real MCP server from the SDK (@modelcontextprotocol/sdk's McpServer and
// StreamableHTTPServerTransport, stateless, JSON responses instead of SSE) with one tool,
// `blob`, that returns `bytes` bytes of numbered lines. The proxy tests use it for the JSON
// response path; scripts/bench-mcp.mjs uses it for results of exact sizes.
//
//   node pkg-tests/mcp/json-server.mjs [PORT]   prints its URL, serves until killed
import { createServer } from 'node:http';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { z } from 'zod';

const texts = new Map();

/** `bytes` bytes of lines "row N: ...", the same for the same size. */
export function blobText(bytes) {
  let t = texts.get(bytes);
  if (t === undefined) {
    const parts = [];
    let n = 0;
    for (let i = 0; n < bytes; i++) {
      const line = `row ${i}: the quick brown fox jumps over the lazy dog, value=${(i * 7919) % 10007}\n`;
      parts.push(line);
      n += line.length;
    }
    t = parts.join('').slice(0, bytes);
    texts.set(bytes, t);
  }
  return t;
}

function mcpServer() {
  const server = new McpServer({ name: 'toolslice-blob', version: '1.0.0' });
  server.registerTool(
    'blob',
    { description: 'Returns `bytes` bytes of numbered lines.', inputSchema: { bytes: z.number().int().min(0) } },
    async ({ bytes }) => ({ content: [{ type: 'text', text: blobText(bytes) }] }),
  );
  return server;
}

export async function startJsonServer(port = 0) {
  const http = createServer(async (req, res) => {
    const chunks = [];
    for await (const c of req) chunks.push(c);
    let body;
    try {
      body = chunks.length ? JSON.parse(Buffer.concat(chunks).toString('utf8')) : undefined;
    } catch {
      res.writeHead(400, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: -32700, message: 'Parse error' } }));
      return;
    }
    const server = mcpServer();
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    res.on('close', () => {
      transport.close();
      server.close();
    });
    await server.connect(transport);
    await transport.handleRequest(req, res, body);
  });
  await new Promise((resolve) => http.listen(port, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${http.address().port}/mcp`;
  return { url, stop: () => new Promise((r) => { http.closeAllConnections(); http.close(r); }) };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { url } = await startJsonServer(Number(process.argv[2] ?? 0));
  process.stdout.write(`${url}\n`);
}
