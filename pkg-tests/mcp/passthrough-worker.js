// The baseline of the proxy benchmark (scripts/bench-mcp.mjs): a worker that forwards every
// request to MCP_UPSTREAM and streams the response back, doing nothing else.
export default {
  async fetch(request, env) {
    const headers = new Headers(request.headers);
    headers.delete('host');
    headers.set('accept-encoding', 'identity');
    const res = await fetch(env.MCP_UPSTREAM, {
      method: request.method,
      headers,
      body: request.method === 'GET' || request.method === 'HEAD' ? undefined : request.body,
    });
    return new Response(res.body, { status: res.status, headers: res.headers });
  },
};
