// The trace formats in Deno, type-checked against the shipped .d.ts: the new option, report
// and row fields, and convertToSpans are typed (no `any`).
import * as toolslice from 'toolslice';

const fixture = (name: string): Uint8Array =>
  Deno.readFileSync(new URL(`../../crate/core/tests/fixtures/formats/${name}`, import.meta.url));

function assertEquals(actual: unknown, expected: unknown, message?: string): void {
  const a = JSON.stringify(actual);
  const e = JSON.stringify(expected);
  if (a !== e) throw new Error(`${message ?? 'not equal'}: ${a} !== ${e}`);
}

Deno.test('an OpenAI Agents SDK trace, forced and detected', () => {
  const options: toolslice.CheckOptions = { format: 'openai_agents' };
  const data: toolslice.Report = toolslice.checkSpans(fixture('openai-agents.jsonl'), options).toJSON();
  const format: toolslice.Format | 'unknown' = data.format;
  assertEquals(format, 'openai_agents');
  const layout: 'lines' | 'document' | undefined = data.read_as?.layout;
  assertEquals(layout, 'lines');
  const joins: (toolslice.Join | undefined)[] = data.rows.map((r: toolslice.Row) => r.join);
  assertEquals(joins.every((j) => j === 'order'), true);
  assertEquals(data.counts.silent_clip, 2);
});

Deno.test('convertToSpans', () => {
  const out: toolslice.Conversion = toolslice.convertToSpans(fixture('otlp-genai.json'), { format: 'auto' });
  assertEquals([out.format, out.records, out.invalid.length], ['otlp', 7, 0]);
  const again: toolslice.Report = toolslice.checkSpans(out.jsonl).toJSON();
  assertEquals(again.counts.silent_clip, 2);
});
