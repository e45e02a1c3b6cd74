// The package in Deno, imported by its bare name from node_modules ("deno" export condition),
// type-checked against the shipped .d.ts (no `any` reaches users).
import * as toolslice from 'toolslice';

const fixture = (name: string): Uint8Array => Deno.readFileSync(new URL(`../fixtures/${name}`, import.meta.url));

function assertEquals(actual: unknown, expected: unknown, message?: string): void {
  const a = JSON.stringify(actual);
  const e = JSON.stringify(expected);
  if (a !== e) throw new Error(`${message ?? 'not equal'}: ${a} !== ${e}`);
}

Deno.test('resolves the browser/deno entry', () => {
  assertEquals(import.meta.resolve('toolslice').endsWith('/index.js'), true);
});

Deno.test('checks a run from bytes', () => {
  const data: toolslice.Report = toolslice.checkSpans(fixture("clipped.jsonl")).toJSON();
  assertEquals(data.rows.map((r: toolslice.Row) => r.status), ['silent_clip', 'incomplete', 'hash_mismatch', 'ok']);
  assertEquals(data.exit_code, 1);
});

Deno.test('streams a file through the Checker', async () => {
  const whole = toolslice.checkSpans(fixture('malformed.jsonl')).json();
  const file = await Deno.open(new URL('../fixtures/malformed.jsonl', import.meta.url));
  const checker = new toolslice.Checker();
  for await (const chunk of file.readable) checker.push(chunk);
  assertEquals(checker.finish().json(), whole);
});

Deno.test('errors carry a code', () => {
  let caught: (Error & { code?: string }) | undefined;
  try {
    // @ts-expect-error: a number is not an Input; the runtime must still throw a coded Error.
    toolslice.checkSpans(42);
  } catch (err) {
    caught = err as Error & { code?: string };
  }
  assertEquals([caught instanceof Error, caught?.code], [true, 'invalid_argument']);
});
