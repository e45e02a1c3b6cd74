// A Workers KV namespace's storage for workerd, in memory: workerd's own KV binding client
// (a `kvNamespace` binding) sends each operation as an HTTP request to this service, as
// Cloudflare's KV service receives it:
//   GET    /<key>?urlencoded=true        the value; its metadata in the CF-KV-Metadata header; 404 when absent
//   PUT    /<key>?urlencoded=true[&expiration_ttl=S]   body: the value; metadata in CF-KV-Metadata
//   DELETE /<key>?urlencoded=true
// The tests reach it on a second socket to see what the proxy stored: GET /__entries.
const entries = new Map();

function keyOf(url) {
  const raw = url.pathname.slice(1);
  return url.searchParams.get('urlencoded') === 'true' ? decodeURIComponent(raw) : raw;
}

export default {
  async fetch(request) {
    const url = new URL(request.url);
    const now = Date.now() / 1000;
    if (url.pathname === '/__entries') {
      const list = [...entries].map(([key, e]) => ({ key, bytes: e.value.length, metadata: e.metadata, ttl: e.ttl }));
      return Response.json(list);
    }
    const key = keyOf(url);
    if (request.method === 'GET') {
      const e = entries.get(key);
      if (!e || (e.expires && e.expires <= now)) return new Response(null, { status: 404 });
      const headers = e.metadata == null ? {} : { 'CF-KV-Metadata': JSON.stringify(e.metadata) };
      return new Response(e.value, { headers });
    }
    if (request.method === 'PUT') {
      const meta = request.headers.get('CF-KV-Metadata');
      const ttl = url.searchParams.has('expiration_ttl') ? Number(url.searchParams.get('expiration_ttl')) : undefined;
      entries.set(key, {
        value: new Uint8Array(await request.arrayBuffer()),
        metadata: meta ? JSON.parse(meta) : null,
        ttl,
        expires: ttl ? now + ttl : undefined,
      });
      return new Response(null, { status: 204 });
    }
    if (request.method === 'DELETE') {
      entries.delete(key);
      return new Response(null, { status: 204 });
    }
    return new Response('method not allowed', { status: 405 });
  },
};
