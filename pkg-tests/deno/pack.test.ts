// The packer in Deno, type-checked against the shipped .d.ts; the example edge worker too.
import * as toolslice from 'toolslice';
import worker from '../workerd/pack-worker.js';

function assert(cond: boolean, message: string): void {
  if (!cond) throw new Error(message);
}

const GH = 'ghp_aB3dE5fG7hI9jK1lM3nO5pQ7rS9tU1vW3xY5';

Deno.test('pack, getMore, redact', () => {
  const input: toolslice.PackInput = { tool: 'logs', callId: 'd1', text: `token=${GH}\n`.repeat(200) };
  const options: toolslice.PackOptions = { limit: 300, pageBytes: 600 };
  const result: toolslice.PackResult = toolslice.pack(input, options);
  const envelope: toolslice.Envelope = result.envelope;
  assert(envelope.truncated && envelope.redacted, 'truncated and redacted');
  assert(new TextEncoder().encode(envelope.content).length <= 300, 'within the limit');
  assert(!envelope.content.includes('aB3dE5'), 'no secret');
  const span: toolslice.SpanRecord = result.span;
  assert(span.clip_reason === 'tool_result_char_limit', String(span.clip_reason));
  const more = toolslice.getMore('d1', envelope.next_offset ?? 0, 'd2');
  assert(more.envelope.name === 'get_more', 'a page');
  const r: toolslice.Redacted = toolslice.redact(`x ${GH}`);
  assert(r.text === 'x [REDACTED:github_token]', r.text);
  const receipts: toolslice.Receipt[] = r.receipts;
  assert(receipts[0].original_len === 40, 'receipt');
  const report = toolslice.checkSpans(JSON.stringify(span) + '\n');
  assert(report.exitCode === 0, 'checks');
});

Deno.test('StreamPacker and the example worker', async () => {
  const s = new toolslice.StreamPacker('build', 's1', undefined, { limit: 1024 });
  const enc = new TextEncoder();
  for (let i = 0; i < 50_000; i++) s.push(enc.encode(`line ${i}\n`));
  const p: toolslice.PackResult = s.finish(0, false);
  assert(enc.encode(p.envelope.content).length <= 1024, 'stream within the limit');
  const res = await worker.fetch(new Request('http://x/pack?tool=t&call_id=w&limit=200', { method: 'POST', body: JSON.stringify({ ok: false, error: { code: 'E1' } }) }));
  const body = await res.json();
  assert(body.envelope.outcome.ok === false, 'outcome kept');
});
