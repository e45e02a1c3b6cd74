// The OTLP endpoint as a Cloudflare Worker: the shared endpoint (toolslice/otlp/endpoint.js)
// in front, one Durable Object per trace id (TraceObject, running the shared keeper with the
// object's durable storage and alarm), and one small Durable Object for the counters.
//
// Bindings (see wrangler.toml and config.capnp next to this file):
//   TRACES        Durable Object namespace of TraceObject
//   STATS         Durable Object namespace of StatsObject
//   UPSTREAM_URL  where to forward (the backend's OTLP/HTTP traces URL)
//   UPSTREAM      optional service binding that carries the forwarded requests (workerd
//                 tests use an external service; on Cloudflare, plain fetch to the URL)
//   DEADLINE_SECONDS  how long a tool span waits for the next model call (default 30)
//   UPSTREAM_ENCODING "protobuf" to forward JSON requests as protobuf (for upstreams that
//                 take protobuf only, like Arize Phoenix); default: the encoding they came in
import { DurableObject } from 'cloudflare:workers';
import * as api from 'toolslice';
import { createEndpoint, forwarder as makeForwarder, ownBytes } from 'toolslice/otlp/endpoint.js';
import { TraceKeeper } from 'toolslice/otlp/keeper.js';

function forwarder(env) {
  const send = (body, headers) => {
    const init = { method: 'POST', headers, body };
    return env.UPSTREAM ? env.UPSTREAM.fetch(env.UPSTREAM_URL, init) : fetch(env.UPSTREAM_URL, init);
  };
  return makeForwarder({ api, send, protobuf: env.UPSTREAM_ENCODING === 'protobuf' });
}

const deadlineMs = (env) => Number(env.DEADLINE_SECONDS ?? 30) * 1000;

export class TraceObject extends DurableObject {
  constructor(ctx, env) {
    super(ctx, env);
    this.keeper = new TraceKeeper({
      api,
      traceId: '',
      storage: ctx.storage,
      setAlarm: (ms) => ctx.storage.setAlarm(ms),
      forward: forwarder(env),
      deadlineMs: deadlineMs(env),
    });
  }
  async ingest(traceId, measures, held, encoding) {
    this.keeper.traceId = traceId;
    await this.keeper.ingest(measures, held, encoding);
  }
  async summary(traceId) {
    this.keeper.traceId = traceId;
    return this.keeper.summary();
  }
  async alarm() {
    await this.keeper.alarm();
  }
}

export class StatsObject extends DurableObject {
  async count(kind) {
    const n = (await this.ctx.storage.get(kind)) ?? 0;
    await this.ctx.storage.put(kind, n + 1);
  }
  async read() {
    return Object.fromEntries(await this.ctx.storage.list());
  }
}

export default {
  async fetch(request, env) {
    const trace = (id) => env.TRACES.get(env.TRACES.idFromName(id || '(no trace id)'));
    const stats = env.STATS.get(env.STATS.idFromName('stats'));
    const handle = createEndpoint({
      api,
      // The trace's bytes alone: the split's arrays are views of the whole request's buffer,
      // which the call to the Durable Object would otherwise copy whole for each trace.
      ingest: (traceId, measures, held, encoding) => {
        const own = ownBytes(measures, held);
        return trace(traceId).ingest(traceId, own.measures, own.held, encoding);
      },
      summary: (traceId) => trace(traceId).summary(traceId),
      forward: forwarder(env),
      stats: { count: (kind) => stats.count(kind), read: () => stats.read() },
    });
    return handle(request);
  },
};
