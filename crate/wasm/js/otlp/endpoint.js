// The OTLP/HTTP trace endpoint, shared by the Cloudflare worker and the Node command
// (`toolslice otlp-endpoint`): Web-standard Request in, Response out (fetch,
// DecompressionStream), so the same file runs in workerd and in Node.
//
// POST /v1/traces, JSON or protobuf, gzip or not:
// - the core splits the request (`otlpSplit`): tool spans are held by their trace's keeper
//   (a Durable Object, or a map in Node), the rest is forwarded to the upstream at once;
// - a request the endpoint cannot read (another content type or content encoding, or larger
//   than MAX_BODY_BYTES) is forwarded unchanged and counted;
// - a malformed request (bad gzip, invalid JSON or protobuf) gets 400 with an OTLP Status;
// - when the upstream is down or refuses for now, the exporter gets 503 (or the upstream's
//   429) with Retry-After and retries; the trace keepers ignore spans they already hold, so
//   a retry adds nothing twice.
// GET /v1/toolslice/traces/<trace id>: the trace's run summary. GET /v1/toolslice/stats:
// the endpoint's counters.

/**
 * Decompressed export bodies larger than this are forwarded unchanged, not read: it keeps
 * one request's memory (wasm about 4x the body for JSON, 3x for protobuf, plus the body and
 * the held copies in JS; BENCHMARKS.md) well inside a Worker's
 * 128 MB. The OTLP exporters' default batch (512 spans) is far below it.
 */
export const MAX_BODY_BYTES = 8 * 1024 * 1024;
/** Retry-After when the upstream gave none. */
export const RETRY_AFTER_SECONDS = 5;

const encoder = new TextEncoder();
/** The upstream answers that mean "later" (the OTLP spec's retryable statuses). */
const RETRYABLE = [429, 502, 503, 504];

/** A body over the limit: what was read of it, and the rest of its stream. */
class TooLarge extends Error {
  constructor(chunks, reader) {
    super('too large');
    this.chunks = chunks;
    this.reader = reader;
  }
  /** The whole body again, as a stream: the chunks read, then the rest. */
  stream() {
    const { chunks, reader } = this;
    return new ReadableStream({
      async pull(controller) {
        if (chunks.length) return controller.enqueue(chunks.shift());
        const { done, value } = await reader.read();
        if (done) controller.close();
        else controller.enqueue(value);
      },
      cancel: () => reader.cancel(),
    });
  }
}

/**
 * A trace's part of a split, its bytes copied out of the split's buffer into one of their
 * own: for a keeper in another isolate (a Durable Object), since a structured clone copies
 * a view's whole buffer, and the split's holds the whole request (see `otlpSplit`).
 */
export function ownBytes(measures, held) {
  const parts = [measures, ...held.map((h) => h.body)];
  const out = new Uint8Array(parts.reduce((n, p) => n + p.byteLength, 0));
  let at = 0;
  const views = parts.map((p) => {
    out.set(p, at);
    at += p.byteLength;
    return out.subarray(at - p.byteLength, at);
  });
  return { measures: views[0], held: held.map((h, i) => ({ key: h.key, body: views[i + 1] })) };
}

/** Reads a body stream, at most `max` bytes. */
async function readAll(stream, max) {
  const chunks = [];
  let size = 0;
  if (stream) {
    const reader = stream.getReader();
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      size += value.byteLength;
      chunks.push(value);
      if (size > max) throw new TooLarge(chunks, reader);
    }
  }
  const out = new Uint8Array(size);
  let at = 0;
  for (const c of chunks) {
    out.set(c, at);
    at += c.byteLength;
  }
  return out;
}

function gunzip(bytes) {
  const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream('gzip'));
  return readAll(stream, MAX_BODY_BYTES);
}

/**
 * The function that sends to the upstream: `send(body, headers)` posts to its traces URL.
 * With `protobuf`, JSON requests are written as protobuf first (`otlpJsonToProtobuf`), for
 * upstreams that take protobuf only (Arize Phoenix answers JSON with 415). Requests the
 * endpoint did not read (`encoding` null) go as they came.
 */
export function forwarder({ api, send, protobuf = false }) {
  const forward = (encoding, body, headers) => {
    if (encoding === 'json' && protobuf) {
      body = api.otlpJsonToProtobuf(body);
      encoding = 'protobuf';
    }
    const h = headers ?? new Headers({ 'content-type': encoding === 'protobuf' ? 'application/x-protobuf' : 'application/json' });
    return send(body, h);
  };
  // The endpoint's split then writes a JSON request as protobuf (see `createEndpoint`); what
  // still comes here as JSON is a held span stored before that (or by another setting).
  forward.protobuf = protobuf;
  return forward;
}

function statusBody(api, message, encoding, code = 3) {
  return api.otlpErrorBody(message, code, encoding);
}

/**
 * @param {object} o
 * @param {object} o.api the toolslice package
 * @param {(traceId:string, measures:Uint8Array, held:{key:string, body:Uint8Array}[], encoding:string)=>Promise<void>} o.ingest
 *   hands a trace's part to its keeper
 * @param {(traceId:string)=>Promise<object>} o.summary
 * @param {(encoding:string|null, body:Uint8Array, headers:Headers|null)=>Promise<Response>} o.forward
 *   sends a body to the upstream's /v1/traces
 * @param {{count(kind:string):Promise<void>|void, read():Promise<object>|object}} o.stats
 */
export function createEndpoint({ api, ingest, summary, forward, stats }) {
  function retryable(reason, upstream) {
    const status = upstream?.status === 429 ? 429 : 503;
    const after = upstream?.headers.get('retry-after') ?? String(RETRY_AFTER_SECONDS);
    return new Response(`upstream unavailable: ${reason}\n`, {
      status,
      headers: { 'retry-after': after, 'content-type': 'text/plain' },
    });
  }

  /** Forwards and maps the upstream's answer to ours. */
  async function relay(encoding, body, headers, success) {
    let res;
    try {
      res = await forward(encoding, body, headers);
    } catch (err) {
      return retryable(err?.message ?? String(err));
    }
    if (res.ok) {
      await res.arrayBuffer().catch(() => {});
      return success();
    }
    if (RETRYABLE.includes(res.status)) {
      await res.arrayBuffer().catch(() => {});
      return retryable(`status ${res.status}`, res);
    }
    // Any other refusal (400, 415, 500 ...) is permanent in OTLP: the upstream's answer to the
    // exporter, passed on.
    return new Response(res.body, { status: res.status, headers: res.headers });
  }

  const contentTypeOf = (encoding) => (encoding === 'protobuf' ? 'application/x-protobuf' : 'application/json');

  function ok(encoding) {
    // ExportTraceServiceResponse with no partial_success: empty in protobuf, {} in JSON.
    const body = encoding === 'protobuf' ? new Uint8Array(0) : encoder.encode('{}');
    return new Response(body, { status: 200, headers: { 'content-type': contentTypeOf(encoding) } });
  }

  async function unchanged(kind, request, raw) {
    await stats.count(kind);
    const headers = new Headers();
    for (const h of ['content-type', 'content-encoding']) {
      const v = request.headers.get(h);
      if (v) headers.set(h, v);
    }
    return relay(null, raw, headers, () => new Response(null, { status: 200 }));
  }

  async function exportTraces(request) {
    const contentType = request.headers.get('content-type') ?? '';
    const encoding = api.otlpEncodingOf(contentType);
    const contentEncoding = (request.headers.get('content-encoding') ?? 'identity').trim().toLowerCase();
    let raw;
    try {
      raw = await readAll(request.body, MAX_BODY_BYTES);
    } catch (err) {
      if (!(err instanceof TooLarge)) throw err;
      // Too large to read here: streamed to the upstream as it came.
      return unchanged('too_large', request, err.stream());
    }
    if (!encoding || !['identity', 'gzip'].includes(contentEncoding)) {
      return unchanged(encoding ? 'unknown_content_encoding' : 'unknown_content_type', request, raw);
    }
    let body = raw;
    if (contentEncoding === 'gzip') {
      try {
        body = await gunzip(raw);
      } catch (err) {
        if (err instanceof TooLarge) {
          err.reader.cancel().catch(() => {});
          return unchanged('too_large', request, raw);
        }
        await stats.count('malformed');
        return malformed(encoding, `content-encoding gzip: the body is not gzip data (${err?.message ?? err})`);
      }
    }
    // For an upstream that takes protobuf only, the core writes a JSON request as protobuf
    // before it splits it, once: a request the writer refuses is refused now (400) rather
    // than after its spans were accepted, when forwarding it could only fail again and
    // again. `split.encoding` is what the parts are written in.
    let split;
    try {
      split = api.otlpSplit(body, encoding, forward.protobuf ?? false);
    } catch (err) {
      if (err?.code !== 'malformed_export') throw err;
      await stats.count('malformed');
      return malformed(encoding, err.message);
    }
    const wire = split.encoding;
    try {
      await Promise.all(split.traces.map((t) => ingest(t.traceId, t.measures, t.held, wire)));
    } catch (err) {
      // The keeper could not store the spans: nothing was accepted, so the exporter retries.
      return retryable(`trace state: ${err?.message ?? err}`);
    }
    if (!split.passthrough) return ok(encoding);
    return relay(wire, split.passthrough, null, () => ok(encoding));
  }

  function malformed(encoding, message) {
    return new Response(statusBody(api, message, encoding), {
      status: 400,
      headers: { 'content-type': contentTypeOf(encoding) },
    });
  }

  return async function handle(request) {
    const url = new URL(request.url);
    if (url.pathname === '/v1/traces') {
      if (request.method !== 'POST') return new Response('POST OTLP trace exports here\n', { status: 405 });
      return exportTraces(request);
    }
    const m = url.pathname.match(/^\/v1\/toolslice\/traces\/([0-9A-Za-z]*)$/);
    if (m && request.method === 'GET') {
      return Response.json(await summary(m[1].toLowerCase()));
    }
    if (url.pathname === '/v1/toolslice/stats' && request.method === 'GET') {
      return Response.json(await stats.read());
    }
    return new Response('not found: the OTLP endpoint is POST /v1/traces\n', { status: 404 });
  };
}
