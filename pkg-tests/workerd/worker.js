// A Cloudflare-style worker that checks a posted trace: POST the span JSONL (or any trace
// format toolslice reads) as the body, get the report back as JSON: 200 when the run passes,
// 422 when it does not, including a body with no tool call at all (the report's
// `nothing_checked` says what it held), unless `?allow_empty` is given. The body is streamed
// through the checker chunk by chunk, so the worker's memory is bounded by the longest line,
// not the upload.
import { Checker } from 'toolslice';

export default {
  async fetch(request) {
    if (request.method !== 'POST') {
      return new Response('POST a span JSONL file to check it\n', { status: 405 });
    }
    const params = new URL(request.url).searchParams;
    const checker = new Checker({ flaggedOnly: params.has('flagged'), allowEmpty: params.has('allow_empty') });
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
