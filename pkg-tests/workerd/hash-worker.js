// A worker that hashes its request body with the package's one-shot SHA-256 calls, for the
// test that the glue's fast path (scripts/hash-glue.mjs) works in workerd as in Node.
//   POST /hash[?text]   body: bytes, or text with `?text`   -> { hex, short, raw }
import { sha256, sha256Hex, sha256Short } from 'toolslice';

export default {
  async fetch(request) {
    const url = new URL(request.url);
    if (request.method !== 'POST' || url.pathname !== '/hash') return new Response('ok');
    const data = url.searchParams.has('text') ? await request.text() : new Uint8Array(await request.arrayBuffer());
    const raw = Array.from(sha256(data), (b) => b.toString(16).padStart(2, '0')).join('');
    return Response.json({ hex: sha256Hex(data), short: sha256Short(data), raw });
  },
};
