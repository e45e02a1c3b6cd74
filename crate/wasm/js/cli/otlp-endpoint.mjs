// `toolslice otlp-endpoint`: the OTLP/HTTP trace endpoint on one machine. The same code as
// the Cloudflare worker (../otlp/endpoint.js, ../otlp/keeper.js), with each trace's state in
// memory instead of a Durable Object and a timer instead of its alarm.
import { createServer } from 'node:http';
import { Readable } from 'node:stream';
import { createEndpoint, forwarder } from '../otlp/endpoint.js';
import { MemoryStorage, TraceKeeper } from '../otlp/keeper.js';
import { parse, portOption, upstreamOption, UsageError } from './common.mjs';

export const summary = 'receive OTLP trace exports, annotate tool spans, forward upstream';

const usage = `usage: toolslice otlp-endpoint --upstream URL [--port N] [--deadline SECONDS] [--upstream-protobuf]

Listens on 127.0.0.1 for OTLP/HTTP trace exports (POST /v1/traces, JSON or protobuf, gzip
or not), annotates every tool span with the verdict of toolslice check (toolslice.status,
toolslice.detail, toolslice.observed_bytes, toolslice.injected_bytes, toolslice.join) once
the next model call of its trace has arrived, and forwards every span to URL (the backend's
OTLP/HTTP traces URL, e.g. http://127.0.0.1:6006/v1/traces). Prints its URL on the first
line. GET /v1/toolslice/traces/TRACE_ID gives a trace's run summary; GET
/v1/toolslice/stats the endpoint's counters.

  --upstream URL       where to forward (required)
  --port N             port to listen on (default 4318; 0 picks a free one)
  --deadline SECONDS   how long a tool span waits for the next model call of its trace
                       before it is forwarded as incomplete (default 30)
  --upstream-protobuf  forward JSON exports as protobuf (for upstreams that take protobuf
                       only, like Arize Phoenix); default: in the encoding they came in

On SIGTERM or SIGINT it stops listening, forwards whatever it still holds (annotated
incomplete, saying why) and exits: 0 when the upstream took everything, 1 when not.`;

export async function run(args, { toolslice, stdout, stderr }) {
  const parsed = parse(args, {
    usage,
    allowPositionals: false,
    options: {
      upstream: { type: 'string' },
      port: { type: 'string' },
      deadline: { type: 'string' },
      'upstream-protobuf': { type: 'boolean' },
    },
  });
  if (!parsed) return 0;
  const { values } = parsed;
  const upstream = upstreamOption(values, 'otlp-endpoint');
  const port = portOption(values, 4318);
  const deadline = values.deadline === undefined ? 30 : Number(values.deadline);
  if (!(deadline > 0) || !Number.isFinite(deadline)) {
    throw new UsageError(`--deadline must be a number of seconds > 0, got '${values.deadline}'`);
  }

  const forward = forwarder({
    api: toolslice,
    send: (body, headers) => fetch(upstream, { method: 'POST', headers, body, duplex: 'half' }),
    protobuf: values['upstream-protobuf'] ?? false,
  });

  const keepers = new Map();
  const timers = new Map();
  function keeper(traceId) {
    let k = keepers.get(traceId);
    if (!k) {
      k = new TraceKeeper({
        api: toolslice,
        traceId,
        storage: new MemoryStorage(),
        deadlineMs: deadline * 1000,
        forward,
        setAlarm: async (ms) => {
          clearTimeout(timers.get(traceId));
          if (ms == null) return;
          const t = setTimeout(() => k.alarm().catch((e) => stderr.write(`toolslice: ${e.stack ?? e}\n`)), Math.max(0, ms - Date.now()));
          t.unref();
          timers.set(traceId, t);
        },
        onForget: () => {
          keepers.delete(traceId);
          timers.delete(traceId);
        },
      });
      keepers.set(traceId, k);
    }
    return k;
  }
  const counters = {};
  const handle = createEndpoint({
    api: toolslice,
    ingest: (traceId, measures, held, encoding) => keeper(traceId).ingest(measures, held, encoding),
    summary: (traceId) => keeper(traceId).summary(),
    forward,
    stats: {
      count: (kind) => void (counters[kind] = (counters[kind] ?? 0) + 1),
      read: () => ({ ...counters, traces_in_memory: keepers.size }),
    },
  });

  const server = createServer(async (req, res) => {
    try {
      const hasBody = req.method !== 'GET' && req.method !== 'HEAD';
      const request = new Request(`http://127.0.0.1${req.url}`, {
        method: req.method,
        headers: Object.entries(req.headers).flatMap(([k, v]) => (Array.isArray(v) ? v.map((x) => [k, x]) : [[k, v]])),
        body: hasBody ? Readable.toWeb(req) : undefined,
        duplex: 'half',
      });
      const response = await handle(request);
      const body = Buffer.from(await response.arrayBuffer());
      res.writeHead(response.status, Object.fromEntries(response.headers));
      res.end(body);
    } catch (err) {
      stderr.write(`toolslice: ${err?.stack ?? err}\n`);
      if (!res.headersSent) res.writeHead(500, { 'content-type': 'text/plain' });
      res.end('internal error\n');
    }
  });
  await new Promise((resolve, reject) => {
    server.once('error', (err) => reject(new UsageError(`cannot listen on 127.0.0.1:${port}: ${err.code ?? err.message}`)));
    server.listen(port, '127.0.0.1', resolve);
  });
  stdout.write(`http://127.0.0.1:${server.address().port}\n`);
  stderr.write(`toolslice otlp-endpoint: forwarding to ${upstream.href}, deadline ${deadline} s\n`);

  return new Promise((resolve) => {
    let stopping = false;
    const stop = async (signal) => {
      if (stopping) return;
      stopping = true;
      server.close();
      server.closeAllConnections?.();
      let delivered = true;
      for (const k of [...keepers.values()]) {
        if (!(await k.releaseAll())) delivered = false;
      }
      for (const t of timers.values()) clearTimeout(t);
      if (!delivered) {
        let left = 0;
        for (const k of keepers.values()) left += (await k.summary()).unforwarded_requests;
        stderr.write(`toolslice otlp-endpoint: ${signal}: the upstream did not take ${left} request(s); they are lost\n`);
      } else {
        stderr.write(`toolslice otlp-endpoint: ${signal}: everything held was forwarded\n`);
      }
      resolve(delivered ? 0 : 1);
    };
    process.once('SIGTERM', () => stop('SIGTERM'));
    process.once('SIGINT', () => stop('SIGINT'));
  });
}
