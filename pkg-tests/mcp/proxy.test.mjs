// The MCP packing proxy with real parts: the MCP TypeScript SDK's client
// (StreamableHTTPClientTransport) talks to the proxy running in real workerd (the package's
// mcp/worker.js) and in Node (`toolslice mcp-proxy`), in front of real MCP servers from npm
// on 127.0.0.1: @modelcontextprotocol/server-everything (SSE responses) and an SDK McpServer
// with JSON responses (./json-server.mjs).
import test from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { createServer } from 'node:http';
import { mkdtempSync, writeFileSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { checkSpans, getMoreTool, redact } from 'toolslice';
import { startWorkerd } from '../workerd/harness.mjs';
import { startEverything, freePort } from './everything.mjs';
import { startJsonServer, blobText } from './json-server.mjs';

const cli = fileURLToPath(new URL('../node_modules/toolslice/cli.cjs', import.meta.url));
const GH = 'ghp_aB3dE5fG7hI9jK1lM3nO5pQ7rS9tU1vW3xY5';
const SECRET_FRAGMENT = 'aB3dE5fG7h';

const CONFIG = {
  tools: {
    echo: { kind: 'file', max_bytes: 2048, page_bytes: 1024 },
    'get-env': { max_bytes: 1024 },
    blob: { kind: 'file', max_bytes: 4096, page_bytes: 8192 },
  },
  default: { max_bytes: 4096 },
};

/** An SDK client through `url`, recording each response's content type. */
async function connect(url) {
  const types = [];
  const fetchLogged = async (input, init) => {
    const res = await fetch(input, init);
    types.push({ method: init?.method ?? 'GET', type: res.headers.get('content-type') ?? '' });
    return res;
  };
  const client = new Client({ name: 'toolslice-test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(url), { fetch: fetchLogged }));
  return { client, types };
}

/** A local HTTP server that collects the span records a worker posts (its span sink). */
async function spanCollector() {
  const lines = [];
  const server = createServer(async (req, res) => {
    let body = '';
    for await (const c of req) body += c;
    lines.push(...body.split('\n').filter(Boolean));
    res.writeHead(204).end();
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${server.address().port}/spans`, lines, stop: () => server.close() };
}

function stripMeta(result) {
  const { _meta, ...rest } = result;
  return rest;
}

/** Reads a cut text result to its end with get_more: the head, then every page, once. */
async function readAll(client, result) {
  const pack = result._meta['toolslice/pack'];
  const item = pack.items.find((i) => i.next_offset !== undefined);
  const content = result.content[0].text;
  let offset = item.next_offset;
  const parts = [{ head: content, offset }];
  let pages = 0;
  for (;;) {
    const page = await client.callTool({ name: 'get_more', arguments: { id: item.id, offset } });
    const meta = page._meta['toolslice/pack'];
    assert.equal(meta.offset, offset);
    const text = page.content[0].text;
    pages++;
    if (meta.next_offset === undefined) {
      parts.push({ page: text, offset, end: meta.total_bytes, meta, span: page._meta['toolslice/span'] });
      break;
    }
    assert.match(meta.hint, /get_more\(id="[^"]+", offset=\d+\)/);
    parts.push({ page: text, offset, end: meta.next_offset, meta, span: page._meta['toolslice/span'] });
    offset = meta.next_offset;
  }
  return { parts, pages, id: item.id };
}

/** Checks that head + pages are `full` exactly once, in order, and returns the page count. */
function assertReadOnce(full, { parts }) {
  const [{ head, offset }] = parts;
  assert.ok(head.startsWith(full.slice(0, offset)), 'the first page starts with the head of the result');
  let at = offset;
  for (const p of parts.slice(1)) {
    assert.equal(p.offset, at);
    const slice = full.slice(at, p.end);
    assert.ok(p.page.startsWith(slice), `page at ${at} holds bytes ${at}..${p.end}`);
    // What follows the slice is only the trailer naming the next offset.
    const rest = p.page.slice(slice.length);
    if (p.end < full.length) assert.match(rest, /^\n\[get_more: bytes \d+-\d+ of \d+; next: get_more\(id="[^"]+", offset=\d+\)\]$/);
    else assert.equal(rest, '');
    at = p.end;
  }
  assert.equal(at, full.length, 'the pages reach the end');
}

test('the MCP proxy in workerd, in front of server-everything', async (t) => {
  const upstream = await startEverything({ GITHUB_TOKEN: GH });
  t.after(() => upstream.stop());
  const sink = await spanCollector();
  t.after(() => sink.stop());
  process.env.MCP_UPSTREAM = upstream.url;
  process.env.TOOLSLICE_MCP_CONFIG = JSON.stringify(CONFIG);
  process.env.TOOLSLICE_SPAN_SINK = sink.url;
  const proxy = await startWorkerd('../mcp/proxy-config.capnp');
  t.after(() => proxy.stop());
  const { client, types } = await connect(`${proxy.base}/mcp`);
  t.after(() => client.close());
  const direct = (await connect(upstream.url)).client;
  t.after(() => direct.close());
  let calls = 0;

  await t.test('tools/list gains get_more, with the schema the package exports', async () => {
    const { tools } = await client.listTools();
    const names = tools.map((x) => x.name);
    assert.ok(names.includes('echo') && names.includes('get-sum'), names.join(','));
    const gm = tools.find((x) => x.name === 'get_more');
    assert.deepEqual(gm, getMoreTool('mcp'));
    assert.deepEqual(gm.inputSchema.required, ['id', 'offset']);
    const upstreamNames = (await direct.listTools()).tools.map((x) => x.name);
    assert.deepEqual(names, [...upstreamNames, 'get_more']);
  });

  await t.test('a large result is packed: redacted, cut, marked, paged through exactly once (SSE)', async () => {
    const message = Array.from({ length: 400 }, (_, i) => `line ${i} token=${GH}`).join('\n');
    types.length = 0;
    const result = await client.callTool({ name: 'echo', arguments: { message } });
    calls++;
    assert.ok(types.some((x) => x.method === 'POST' && x.type.startsWith('text/event-stream')), JSON.stringify(types));
    const content = result.content[0].text;
    assert.ok(Buffer.byteLength(content) <= 2048, `${Buffer.byteLength(content)} bytes`);
    assert.ok(!content.includes(SECRET_FRAGMENT));
    assert.match(content, /\[REDACTED:github_token\]/);
    assert.match(content, /get_more\(id="ts-[0-9a-f]{12}", offset=\d+\)/, 'the marker names the follow-up call');
    const span = result._meta['toolslice/span'];
    assert.equal(span.clip_reason, 'tool_result_char_limit');
    assert.equal(span.name, 'echo');
    assert.equal(span.observed_bytes, Buffer.byteLength(`Echo: ${message}`));
    assert.equal(span.injected_bytes, Buffer.byteLength(content));
    const pack = result._meta['toolslice/pack'];
    assert.equal(pack.truncated, true);
    assert.equal(pack.redacted, true);
    assert.ok(pack.receipts.length >= 400 && pack.receipts.every((r) => !JSON.stringify(r).includes(SECRET_FRAGMENT)));
    assert.match(pack.items[0].hint, /Call get_more\(id="ts-[0-9a-f]{12}", offset=\d+\)/);
    const full = redact(`Echo: ${message}`).text;
    const read = await readAll(client, result);
    calls += read.pages;
    assert.ok(read.pages >= 10, `${read.pages} pages`);
    for (const p of read.parts.slice(1)) {
      assert.ok(Buffer.byteLength(p.page) <= 1024);
      assert.ok(!p.page.includes(SECRET_FRAGMENT));
    }
    assertReadOnce(full, read);
  });

  await t.test('a small result comes back unchanged, its span ok', async () => {
    const result = await client.callTool({ name: 'get-sum', arguments: { a: 2, b: 3 } });
    calls++;
    const expected = await direct.callTool({ name: 'get-sum', arguments: { a: 2, b: 3 } });
    assert.deepEqual(stripMeta(result), stripMeta(expected));
    const span = result._meta['toolslice/span'];
    assert.equal(span.clip_reason, 'none');
    assert.equal(span.sha256_observed, span.sha256_injected);
    assert.equal(checkSpans(JSON.stringify(span)).toJSON().rows[0].status, 'ok');
  });

  await t.test('structuredContent passes through the JSON pattern, whole when it fits', async () => {
    const args = { location: 'New York' };
    const result = await client.callTool({ name: 'get-structured-content', arguments: args });
    calls++;
    const expected = await direct.callTool({ name: 'get-structured-content', arguments: args });
    assert.deepEqual(result.structuredContent, expected.structuredContent);
    assert.deepEqual(result.content, expected.content);
  });

  await t.test('an image is declared, not shown', async () => {
    const result = await client.callTool({ name: 'get-tiny-image', arguments: {} });
    calls++;
    const expected = await direct.callTool({ name: 'get-tiny-image', arguments: {} });
    const i = expected.content.findIndex((c) => c.type === 'image');
    assert.ok(i >= 0);
    assert.equal(result.content.length, expected.content.length);
    assert.equal(result.content[i].type, 'text');
    const bytes = Buffer.from(expected.content[i].data, 'base64').length;
    assert.match(result.content[i].text, new RegExp(`binary output omitted: ${bytes} bytes of ${expected.content[i].mimeType}`));
    assert.equal(result._meta['toolslice/span'].clip_reason, 'binary_omitted');
  });

  await t.test("the server's environment is redacted before it reaches the client", async () => {
    const result = await client.callTool({ name: 'get-env', arguments: {} });
    calls++;
    const text = result.content.map((c) => c.text).join('');
    assert.ok(!text.includes(SECRET_FRAGMENT));
    assert.ok(Buffer.byteLength(result.content[0].text) <= 1024);
    const read = await readAll(client, result);
    calls += read.pages;
    assert.ok(read.parts.every((p) => !(p.page ?? p.head).includes(SECRET_FRAGMENT)));
    const env = read.parts.slice(1).map((p) => p.page).join('');
    assert.match(env, /"GITHUB_TOKEN": "\[REDACTED:github_token\]"/);
  });

  await t.test('get_more for an unknown id is a tool error the model reads', async () => {
    const result = await client.callTool({ name: 'get_more', arguments: { id: 'ts-000000000000', offset: 0 } });
    calls++;
    assert.equal(result.isError, true);
    assert.match(result.content[0].text, /no stored result for id "ts-000000000000"/);
    const bad = await client.callTool({ name: 'get_more', arguments: { id: 'x' } });
    calls++;
    assert.equal(bad.isError, true);
    assert.match(bad.content[0].text, /missing argument offset/);
  });

  await t.test('a body that is not JSON-RPC is passed through, with a warning', async () => {
    const res = await fetch(`${proxy.base}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: '{this is not json',
    });
    const direct = await fetch(upstream.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: '{this is not json',
    });
    assert.equal(res.status, direct.status);
    assert.deepEqual(await res.json(), await direct.json());
    for (let i = 0; i < 50 && !/not JSON-RPC/.test(proxy.log()); i++) await new Promise((r) => setTimeout(r, 20));
    assert.match(proxy.log(), /request is not JSON-RPC .*passed through unchanged/);
  });

  await t.test('every span the proxy emitted passes toolslice check', async () => {
    for (let i = 0; i < 100 && sink.lines.length < calls; i++) await new Promise((r) => setTimeout(r, 20));
    assert.equal(sink.lines.length, calls);
    const report = checkSpans(sink.lines.join('\n') + '\n');
    assert.equal(report.exitCode, 0, report.table());
    const { counts } = report.toJSON();
    assert.ok(counts.clipped >= 3 && counts.ok >= 2, JSON.stringify(counts));
  });
});

test('pages in a Workers KV namespace (workerd KV binding)', async (t) => {
  const upstream = await startJsonServer();
  t.after(() => upstream.stop());
  process.env.MCP_UPSTREAM = upstream.url;
  process.env.TOOLSLICE_MCP_CONFIG = JSON.stringify({ ...CONFIG, store: { ttl_seconds: 600 } });
  delete process.env.TOOLSLICE_SPAN_SINK;
  const proxy = await startWorkerd('../mcp/proxy-kv-config.capnp', ['kv']);
  t.after(() => proxy.stop());
  const { client } = await connect(`${proxy.base}/mcp`);
  t.after(() => client.close());
  const big = await client.callTool({ name: 'blob', arguments: { bytes: 50_000 } });
  const read = await readAll(client, big);
  assertReadOnce(blobText(50_000), read);
  const entries = await (await fetch(`${proxy.sockets.kv}/__entries`)).json();
  assert.deepEqual(entries, [{ key: `page:${read.id}`, bytes: 50_000, metadata: { pageBytes: 8192 }, ttl: 600 }]);
});

test('an upstream that does not answer is a JSON-RPC error naming it', async (t) => {
  const port = await freePort();
  process.env.MCP_UPSTREAM = `http://127.0.0.1:${port}/mcp`;
  process.env.TOOLSLICE_MCP_CONFIG = '{}';
  delete process.env.TOOLSLICE_SPAN_SINK;
  const proxy = await startWorkerd('../mcp/proxy-config.capnp');
  t.after(() => proxy.stop());
  const res = await fetch(`${proxy.base}/mcp`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    body: JSON.stringify([{ jsonrpc: '2.0', id: 1, method: 'tools/list' }, { jsonrpc: '2.0', id: 'b', method: 'ping' }]),
  });
  const body = await res.json();
  assert.equal(body.length, 2);
  assert.deepEqual(body.map((m) => m.id), [1, 'b']);
  for (const m of body) {
    assert.equal(m.error.code, -32000);
    assert.ok(m.error.message.includes(`http://127.0.0.1:${port}/mcp`), m.error.message);
  }
});

test('toolslice mcp-proxy (Node) in front of an SDK server with JSON responses', async (t) => {
  const upstream = await startJsonServer();
  t.after(() => upstream.stop());
  const dir = mkdtempSync(join(tmpdir(), 'toolslice-mcp-'));
  const configFile = join(dir, 'config.json');
  const spansFile = join(dir, 'spans.jsonl');
  writeFileSync(configFile, JSON.stringify({ ...CONFIG, store: { max_entries: 2 } }));
  const proc = spawn(process.execPath, [cli, 'mcp-proxy', '--upstream', upstream.url, '--config', configFile, '--spans', spansFile], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  t.after(() => proc.kill());
  let err = '';
  proc.stderr.on('data', (d) => (err += d));
  const url = await new Promise((resolve, reject) => {
    let out = '';
    proc.stdout.on('data', (d) => {
      out += d;
      if (out.includes('\n')) resolve(out.split('\n')[0]);
    });
    proc.once('exit', (code) => reject(new Error(`mcp-proxy exited ${code}: ${err}`)));
  });
  assert.match(url, /^http:\/\/127\.0\.0\.1:\d+\/mcp$/);
  const { client, types } = await connect(url);
  t.after(() => client.close());

  const { tools } = await client.listTools();
  assert.deepEqual(tools.map((x) => x.name), ['blob', 'get_more']);
  const small = await client.callTool({ name: 'blob', arguments: { bytes: 1000 } });
  assert.equal(small.content[0].text, blobText(1000));
  assert.equal(small._meta['toolslice/span'].clip_reason, 'none');

  const big = await client.callTool({ name: 'blob', arguments: { bytes: 100_000 } });
  // Every POST answer with a body is JSON (the initialized notification's 202 has none).
  const posts = types.filter((x) => x.method === 'POST' && x.type);
  assert.ok(posts.length >= 4 && posts.every((x) => x.type.startsWith('application/json')), JSON.stringify(types));
  assert.ok(Buffer.byteLength(big.content[0].text) <= 4096);
  assert.match(big.content[0].text, /get_more\(id="ts-[0-9a-f]{12}", offset=\d+\)/);
  const read = await readAll(client, big);
  assertReadOnce(blobText(100_000), read);
  assert.ok(read.pages >= 12, `${read.pages} pages of at most 8192 bytes`);

  // A batch (with a notification) passes through; only its tools/call results are packed.
  const hdr = { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-03-26' };
  const batch = JSON.stringify([
    { jsonrpc: '2.0', id: 'small', method: 'tools/call', params: { name: 'blob', arguments: { bytes: 100 } } },
    { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 'none' } },
    { jsonrpc: '2.0', id: 'big', method: 'tools/call', params: { name: 'blob', arguments: { bytes: 9000 } } },
    { jsonrpc: '2.0', id: 'p', method: 'ping' },
  ]);
  const viaProxy = await (await fetch(url, { method: 'POST', headers: hdr, body: batch })).json();
  const viaDirect = await (await fetch(upstream.url, { method: 'POST', headers: hdr, body: batch })).json();
  assert.equal(viaProxy.length, viaDirect.length);
  const byId = (xs, id) => xs.find((m) => m.id === id);
  assert.deepEqual(stripMeta(byId(viaProxy, 'small').result), byId(viaDirect, 'small').result);
  assert.deepEqual(byId(viaProxy, 'p'), byId(viaDirect, 'p'));
  const cut = byId(viaProxy, 'big').result;
  assert.equal(cut._meta['toolslice/span'].observed_bytes, 9000);
  assert.ok(Buffer.byteLength(cut.content[0].text) <= 4096);

  // A batch of get_more calls only is answered here, in order, each by its id.
  const gm = (id, pageId, offset) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'get_more', arguments: { id: pageId, offset } } });
  const pair = await (await fetch(url, { method: 'POST', headers: hdr, body: JSON.stringify([gm(10, read.id, read.parts[0].offset), gm('x', 'nope', 0)]) })).json();
  assert.deepEqual(pair.map((m) => m.id), [10, 'x']);
  assert.equal(pair[0].result.content[0].text, read.parts[1].page);
  assert.equal(pair[1].result.isError, true);

  // The store holds two results (store.max_entries): two more cut results evict the first.
  for (const bytes of [20_000, 30_000]) {
    const r = await client.callTool({ name: 'blob', arguments: { bytes } });
    assert.equal(r._meta['toolslice/pack'].truncated, true);
  }
  const gone = await client.callTool({ name: 'get_more', arguments: { id: read.id, offset: read.parts[0].offset } });
  assert.equal(gone.isError, true);
  assert.match(gone.content[0].text, /evicted from the page store \(it keeps 16 MiB and 2 results, oldest evicted first/);

  const notes = spawnSync(process.execPath, [cli, 'check', spansFile], { encoding: 'utf8' });
  assert.equal(notes.status, 0, notes.stdout + notes.stderr);
  assert.equal(readFileSync(spansFile, 'utf8').trim().split('\n').length, 2 + read.pages + 2 + 2 + 3);
  assert.match(notes.stdout, /total=\d+/);
});

test('toolslice mcp-proxy (Node) streams SSE answers from server-everything', async (t) => {
  const upstream = await startEverything({ GITHUB_TOKEN: GH });
  t.after(() => upstream.stop());
  const proc = spawn(process.execPath, [cli, 'mcp-proxy', '--upstream', upstream.url], { stdio: ['ignore', 'pipe', 'pipe'] });
  t.after(() => proc.kill());
  let err = '';
  proc.stderr.on('data', (d) => (err += d));
  const url = await new Promise((resolve, reject) => {
    let out = '';
    proc.stdout.on('data', (d) => {
      out += d;
      if (out.includes('\n')) resolve(out.split('\n')[0]);
    });
    proc.once('exit', (code) => reject(new Error(`mcp-proxy exited ${code}: ${err}`)));
  });
  const { client, types } = await connect(url);
  t.after(() => client.close());
  const message = Array.from({ length: 300 }, (_, i) => `row ${i} password=${GH}`).join('\n');
  const result = await client.callTool({ name: 'echo', arguments: { message } });
  assert.ok(types.some((x) => x.method === 'POST' && x.type.startsWith('text/event-stream')), JSON.stringify(types));
  const content = result.content[0].text;
  assert.ok(Buffer.byteLength(content) <= 4096, 'the default budget');
  assert.ok(!content.includes(SECRET_FRAGMENT));
  const read = await readAll(client, result);
  assert.ok(read.parts.every((p) => !(p.page ?? p.head).includes(SECRET_FRAGMENT)));
  assert.equal(result._meta['toolslice/span'].clip_reason, 'tool_result_char_limit');
});
