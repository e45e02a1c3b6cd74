// The MCP packing proxy: Streamable HTTP between an MCP client and an MCP server, every
// `tools/call` result packed on the way through. Shared by the edge worker (mcp/worker.js)
// and `toolslice mcp-proxy` (cli/mcp-proxy.mjs); it uses only the Fetch API, streams and
// the package's `McpPacker`, so it runs in workerd, Cloudflare Workers and Node.
//
// This file is transport: HTTP in and out, SSE framing, the page store's I/O. Which
// messages change and how (pack a result, add get_more to tools/list, answer get_more,
// the span record, the JSON-RPC error naming the upstream) is decided by `McpPacker`, in
// Rust. Anything the proxy cannot read (a body that is not JSON, an SSE event that is not
// a JSON-RPC message) is forwarded as it came, with a warning in the log: nothing is
// dropped.

const HOP_BY_HOP = ['connection', 'keep-alive', 'transfer-encoding', 'upgrade', 'proxy-connection', 'te', 'trailer'];

/**
 * Pages in Workers KV: each cut result is one value (KV's limit is 25 MiB; the proxy
 * offers paging only for results up to the configured `store.max_bytes`, 16 MiB by
 * default), expiring after `ttlSeconds` (KV's minimum is 60). KV is eventually consistent
 * across locations; a get_more served by the location that packed the result (the usual
 * case: the same client, moments later) reads its own write.
 */
export class KvPageStore {
  constructor(kv, { ttlSeconds = 3600 } = {}) {
    this.kv = kv;
    this.ttlSeconds = Math.max(60, ttlSeconds);
  }

  async put(id, text, { pageBytes }) {
    await this.kv.put(`page:${id}`, text, { expirationTtl: this.ttlSeconds, metadata: { pageBytes } });
    return true;
  }

  async get(id) {
    const { value, metadata } = await this.kv.getWithMetadata(`page:${id}`, 'text');
    return value == null ? undefined : { text: value, pageBytes: metadata?.pageBytes ?? 4096 };
  }
}

function callId() {
  return `ts-${crypto.randomUUID().replaceAll('-', '').slice(0, 12)}`;
}

function jsonResponse(body, status = 200, extra = {}) {
  return new Response(typeof body === 'string' ? body : JSON.stringify(body), {
    status,
    headers: { 'content-type': 'application/json', ...extra },
  });
}

/** Response headers to pass on when the body is re-sent (possibly changed). */
function passHeaders(headers) {
  const out = new Headers(headers);
  for (const h of [...HOP_BY_HOP, 'content-length', 'content-encoding']) out.delete(h);
  return out;
}

/**
 * Creates the proxy. `toolslice` is the loaded package (its `McpPacker`); options:
 *   upstream  the MCP server's Streamable HTTP endpoint (http(s)://host/path)
 *   config    the packing configuration (object or JSON text; see McpConfig)
 *   store     a page store (`put(id, text, {bytes, pageBytes})`, `get(id)` ->
 *             `{text, pageBytes}`), or a function that makes one from the configuration's
 *             bounds; default: the packer's own bounded in-memory store (per process or
 *             isolate: `store.max_bytes` of text, `store.max_entries` results, oldest evicted
 *             first), whose texts never leave the wasm module
 *   sink      called with each batch of span records (`sink(spans)`); may return a promise
 *   log       called with each warning line (default console.warn)
 * Returns `{ fetch(request, ctx?), packer, store }`; `ctx.waitUntil` (a worker's) keeps the
 * sink's promise alive after the response.
 */
export function createMcpProxy(toolslice, { upstream, config, store, sink, log = (m) => console.warn(m) } = {}) {
  if (!upstream) throw new Error('mcp proxy: the upstream MCP server URL is required');
  const upstreamUrl = new URL(upstream);
  if (!/^https?:$/.test(upstreamUrl.protocol)) throw new Error(`mcp proxy: upstream must be http(s), got ${upstream}`);
  const packer = new toolslice.McpPacker(config);
  const bounds = packer.store;
  const pages = typeof store === 'function' ? store(bounds) : (store ?? null);
  const name = upstreamUrl.href;

  function emit(spans, ctx) {
    if (!sink || spans.length === 0) return;
    try {
      const p = sink(spans);
      if (p && typeof p.then === 'function') {
        const guarded = p.catch((err) => log(`mcp proxy: span sink failed: ${err?.message ?? err}`));
        ctx?.waitUntil?.(guarded);
      }
    } catch (err) {
      log(`mcp proxy: span sink failed: ${err?.message ?? err}`);
    }
  }

  async function keep(stored) {
    if (pages === null) return; // the packer kept them
    for (const s of stored) {
      const ok = await pages.put(s.id, s.text, { bytes: s.bytes, pageBytes: s.page_bytes });
      if (ok === false) log(`mcp proxy: result ${s.id} (${s.bytes} bytes) is larger than the page store; get_more will say so`);
    }
  }

  /** Packs one upstream message; the text to send (the original when unchanged). */
  async function repack(text, pending, ctx) {
    let out;
    try {
      out = packer.packMessage(text, pending, pages === null);
    } catch (err) {
      log(`mcp proxy: upstream message not packed (${err.message}); passed through unchanged`);
      return text;
    }
    for (const w of out.warnings) log(`mcp proxy: ${w}`);
    await keep(out.stored);
    emit(out.spans, ctx);
    return out.text ?? text;
  }

  /** A `get_more` call answered from the page store. */
  async function answerGetMore(info, id, ctx) {
    const call = callId();
    let packed;
    if (info.get_more.invalid) {
      packed = packer.toolError(info.get_more.invalid.message, call);
    } else {
      const { id: pageId, offset } = info.get_more.page;
      if (pages === null) {
        packed = packer.getMoreKept(pageId, offset, call);
      } else {
        const entry = await pages.get(pageId);
        packed = packer.getMore(entry?.text ?? undefined, pageId, offset, entry?.pageBytes ?? 4096, call);
      }
    }
    emit([packed.span], ctx);
    return { jsonrpc: '2.0', id, result: packed.result };
  }

  function forwardRequest(request, body) {
    const target = new URL(upstreamUrl);
    const incoming = new URL(request.url);
    if (incoming.search) target.search = incoming.search;
    const headers = new Headers(request.headers);
    for (const h of [...HOP_BY_HOP, 'host', 'content-length']) headers.delete(h);
    // The proxy reads response bodies: ask for them uncompressed.
    headers.set('accept-encoding', 'identity');
    return fetch(target, { method: request.method, headers, body, redirect: 'manual', signal: request.signal });
  }

  async function handle(request, ctx) {
    if (request.method !== 'POST') {
      // GET (the server's SSE stream), DELETE (end of session), OPTIONS ...: untouched.
      let res;
      try {
        res = await forwardRequest(request, request.method === 'GET' || request.method === 'HEAD' ? undefined : request.body);
      } catch (err) {
        return new Response(`upstream MCP server ${name} failed: ${err.message}\n`, { status: 502 });
      }
      return new Response(res.body, { status: res.status, statusText: res.statusText, headers: passHeaders(res.headers) });
    }

    const raw = new Uint8Array(await request.arrayBuffer());
    const text = new TextDecoder().decode(raw);
    let infos = null;
    try {
      infos = packer.inspectRequest(text);
    } catch (err) {
      log(`mcp proxy: request is not JSON-RPC (${err.message}); passed through unchanged`);
    }

    // get_more: answered here, never sent upstream.
    // (A batch only when every message in it is a get_more call.)
    if (infos && infos.length > 0 && infos.every((i) => i.get_more)) {
      const msg = JSON.parse(text);
      if ((Array.isArray(msg) ? msg.length : 1) === infos.length) {
        const answers = [];
        for (const info of infos) answers.push(await answerGetMore(info, JSON.parse(info.key), ctx));
        return jsonResponse(Array.isArray(msg) ? answers : answers[0]);
      }
    }
    const pending = {};
    for (const i of infos ?? []) {
      if (i.get_more) log(`mcp proxy: get_more in a batch with other messages is forwarded to the upstream`);
      else if (i.method === 'tools/call') pending[i.key] = { method: i.method, tool: i.tool, callId: callId() };
      else if (i.method === 'tools/list') pending[i.key] = { method: i.method };
    }

    let res;
    try {
      res = await forwardRequest(request, raw);
    } catch (err) {
      const body = infos ? packer.upstreamError(text, name, err.message) : undefined;
      if (body) return jsonResponse(body);
      return new Response(`upstream MCP server ${name} failed: ${err.message}\n`, { status: 502 });
    }
    const type = res.headers.get('content-type') ?? '';
    if (!res.ok || Object.keys(pending).length === 0 || !res.body) {
      return new Response(res.body, { status: res.status, statusText: res.statusText, headers: passHeaders(res.headers) });
    }
    if (type.startsWith('text/event-stream')) {
      return new Response(res.body.pipeThrough(sseRepacker((data) => repack(data, pending, ctx), log)), {
        status: res.status,
        statusText: res.statusText,
        headers: passHeaders(res.headers),
      });
    }
    if (type.includes('json')) {
      const body = await res.text();
      return new Response(await repack(body, pending, ctx), {
        status: res.status,
        statusText: res.statusText,
        headers: passHeaders(res.headers),
      });
    }
    log(`mcp proxy: upstream answered a request with ${type || 'no content type'}; passed through unchanged`);
    return new Response(res.body, { status: res.status, statusText: res.statusText, headers: passHeaders(res.headers) });
  }

  return {
    packer,
    /** The caller's page store, or null when the packer keeps the pages. */
    store: pages,
    async fetch(request, ctx) {
      try {
        return await handle(request, ctx);
      } catch (err) {
        log(`mcp proxy: ${err?.stack ?? err}`);
        return new Response(`mcp proxy failed: ${err?.message ?? err}\n`, { status: 502 });
      }
    },
  };
}

/**
 * A TransformStream over an SSE byte stream: each event whose data is a JSON-RPC message
 * goes through `repack(data)`; the event is re-sent with the result as one `data:` line
 * (JSON has no raw newlines). Events that `repack` leaves alone (and comments, retry
 * lines, ids) are forwarded byte for byte.
 */
export function sseRepacker(repack, log) {
  const decoder = new TextDecoder();
  const encoder = new TextEncoder();
  let buffer = '';
  // Where the search for the next event's end resumes: a multi-megabyte event arrives in
  // many chunks, and rescanning it from its start on each would be quadratic.
  let scanned = 0;

  function nextEnd() {
    const from = Math.max(0, scanned - 3);
    let best = -1;
    let sep = '';
    for (const s of ['\n\n', '\r\n\r\n', '\r\r']) {
      const i = buffer.indexOf(s, from);
      if (i >= 0 && (best < 0 || i < best)) {
        best = i;
        sep = s;
      }
    }
    scanned = best < 0 ? buffer.length : 0;
    return best < 0 ? null : { index: best, sep };
  }

  async function event(block, sep, controller) {
    const lines = block.split(/\r\n|\n|\r/);
    const data = [];
    for (const line of lines) {
      if (line === 'data' || line.startsWith('data:')) data.push(line.slice(5).replace(/^ /, ''));
    }
    if (data.length === 0) {
      controller.enqueue(encoder.encode(block + sep));
      return;
    }
    const original = data.join('\n');
    const text = await repack(original);
    if (text === original) {
      controller.enqueue(encoder.encode(block + sep));
      return;
    }
    let wrote = false;
    const out = [];
    for (const line of lines) {
      if (line === 'data' || line.startsWith('data:')) {
        if (!wrote) out.push(`data: ${text}`);
        wrote = true;
      } else {
        out.push(line);
      }
    }
    controller.enqueue(encoder.encode(out.join('\n') + '\n\n'));
  }

  return new TransformStream({
    async transform(chunk, controller) {
      buffer += decoder.decode(chunk, { stream: true });
      for (;;) {
        const m = nextEnd();
        if (!m) break;
        const block = buffer.slice(0, m.index);
        buffer = buffer.slice(m.index + m.sep.length);
        await event(block, m.sep, controller);
      }
    },
    async flush(controller) {
      buffer += decoder.decode();
      if (buffer.length) {
        log?.('mcp proxy: the SSE stream ended inside an event; its bytes were forwarded as they were');
        controller.enqueue(encoder.encode(buffer));
      }
    },
  });
}
