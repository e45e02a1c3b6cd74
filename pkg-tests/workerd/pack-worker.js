// An example edge worker (Cloudflare Workers / workerd, also runs under Deno and Node):
// it receives a tool result, packs it, and returns the envelope the model reads and the
// seed-000 span record. The body is streamed through `StreamPacker` when `?stream` is set,
// so a multi-megabyte result is packed with memory bounded by the budget.
//
//   POST /pack?tool=NAME&call_id=ID&limit=BYTES[&exit_code=N][&stream]   body: the result
//   GET  /more?id=ID&offset=N[&call_id=ID2]                             the next page
//
// Without `?stream`, a body that parses as JSON is packed as structured output, anything
// else as text (the core decides: `pack({ raw })`). Pages of cut results stay in the module's bounded page store (per isolate).
import { pack, getMore, StreamPacker, registerTool } from 'toolslice';

registerTool('get_logs', { kind: 'terminal', maxBytes: 8192, pageBytes: 4096 });

function json(body, status = 200) {
  return new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json' } });
}

function fail(err) {
  return json({ error: { code: err.code ?? 'internal', message: err.message } }, err.code ? 400 : 500);
}

export default {
  async fetch(request) {
    const url = new URL(request.url);
    const q = url.searchParams;
    try {
      if (request.method === 'GET' && url.pathname === '/more') {
        const page = getMore(q.get('id') ?? '', Number(q.get('offset') ?? 0), q.get('call_id') ?? undefined);
        return json({ envelope: page.envelope, span: page.span });
      }
      if (request.method !== 'POST' || url.pathname !== '/pack') {
        return new Response('POST /pack?tool=NAME&call_id=ID with a tool result as the body\n', { status: 405 });
      }
      const tool = q.get('tool') ?? 'tool';
      const callId = q.get('call_id') ?? crypto.randomUUID();
      const options = {};
      if (q.has('limit')) options.limit = Number(q.get('limit'));
      const exitCode = q.has('exit_code') ? Number(q.get('exit_code')) : undefined;
      let result;
      if (q.has('stream')) {
        const packer = new StreamPacker(tool, callId, q.get('command') ?? undefined, options);
        const reader = request.body.getReader();
        for (;;) {
          const { done, value } = await reader.read();
          if (done) break;
          packer.push(value);
        }
        result = packer.finish(exitCode, false);
      } else {
        // JSON or text is the core's decision (`raw`): the same path as the CLI and the page.
        const input = { tool, callId, raw: await request.text() };
        if (exitCode !== undefined) input.exitCode = exitCode;
        result = pack(input, options);
      }
      return json({ envelope: result.envelope, span: result.span, receipts: result.receipts });
    } catch (err) {
      return fail(err);
    }
  },
};
