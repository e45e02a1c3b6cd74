// A Cloudflare-style worker that checks a posted trace: POST the span JSONL as the body,
// get the report back as JSON. The body is streamed through the checker chunk by chunk, so
// the worker's memory is bounded by the longest line, not the upload.
import { Checker } from 'toolslice';

export default {
  async fetch(request) {
    if (request.method !== 'POST') {
      return new Response('POST a span JSONL file to check it\n', { status: 405 });
    }
    const checker = new Checker({ flaggedOnly: new URL(request.url).searchParams.has('flagged') });
    const reader = request.body.getReader();
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      checker.push(value);
    }
    const report = checker.finish();
    const body = report.json();
    const status = report.exitCode === 0 ? 200 : 422;
    report.free();
    return new Response(body, { status, headers: { 'content-type': 'application/json' } });
  },
};
