// The MCP packing proxy as an edge worker (Cloudflare Workers, workerd): the module to
// deploy as it is. Every request is proxied to the MCP server at `MCP_UPSTREAM`, with each
// tools/call result packed (see ./proxy.js). Bindings, all but the first optional:
//
//   MCP_UPSTREAM          the upstream's Streamable HTTP endpoint, e.g. https://mcp.example.com/mcp
//   TOOLSLICE_MCP_CONFIG  the packing configuration: JSON text or a JSON binding
//   TOOLSLICE_PAGES       a Workers KV namespace for get_more's pages (without it: the
//                         isolate's memory, bounded by the configuration's store.max_bytes)
//   TOOLSLICE_SPAN_SINK   a URL that receives each batch of span records as JSONL (POST)
import * as toolslice from '../workerd.js';
import { createMcpProxy, KvPageStore } from './proxy.js';

let proxy;

function spanSink(url) {
  return (spans) =>
    fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/x-ndjson' },
      body: spans.map((s) => JSON.stringify(s)).join('\n') + '\n',
    }).then((res) => {
      if (!res.ok) throw new Error(`span sink ${url} answered ${res.status}`);
    });
}

export default {
  async fetch(request, env, ctx) {
    proxy ??= createMcpProxy(toolslice, {
      upstream: env.MCP_UPSTREAM,
      config: env.TOOLSLICE_MCP_CONFIG,
      store: env.TOOLSLICE_PAGES ? (bounds) => new KvPageStore(env.TOOLSLICE_PAGES, bounds) : undefined,
      sink: env.TOOLSLICE_SPAN_SINK ? spanSink(env.TOOLSLICE_SPAN_SINK) : undefined,
    });
    return proxy.fetch(request, ctx);
  },
};
