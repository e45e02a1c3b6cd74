// The proof path in Deno, type-checked against the shipped .d.ts.
import * as toolslice from 'toolslice';

function assertEquals(actual: unknown, expected: unknown, message?: string): void {
  const a = JSON.stringify(actual);
  const e = JSON.stringify(expected);
  if (a !== e) throw new Error(`${message ?? 'not equal'}: ${a} !== ${e}`);
}

Deno.test('canonical forms and digests', () => {
  const text: string = toolslice.canonicalize('{"b":1,"a":[1.0,1e-7]}');
  assertEquals(text, '{"a":[1.0,1e-07],"b":1}');
  const jcs: string = toolslice.canonicalizeValue({ b: 1, a: [1.5, 1e-7] }, 'jcs');
  assertEquals(jcs, '{"a":[1.5,1e-7],"b":1}');
  const result: toolslice.CanonicalResult = toolslice.canonicalizeWithReport('{"a":1,"a":2}');
  assertEquals(result.duplicate_keys, ['$.a']);
  assertEquals(toolslice.sha256Short('abc'), 'ba7816bf8f01cfea');
  const hasher = new toolslice.Sha256();
  hasher.update('ab');
  hasher.update(new Uint8Array([99]));
  assertEquals(hasher.digestHex(), toolslice.sha256Hex('abc'));
});

Deno.test('gate and hop', () => {
  const store = new Map<string, string>();
  const span: toolslice.ToolSpan = toolslice.toolSpan('read_file', { path: 'a' }, 'hi', 'ok');
  toolslice.writeBodies(store, span, { path: 'a' }, 'hi');
  const problems: toolslice.GateProblem[] = toolslice.exportReady([span], store);
  assertEquals(problems, []);
  const manifest: toolslice.ManifestEntry[] = toolslice.manifest([span]);
  const diff: toolslice.ManifestDiff = toolslice.diffManifests(manifest, []);
  assertEquals(diff.only_left.length, 1);
  const row: toolslice.HopRow = toolslice.classifyHop('{"a":1}', '{"a":1}', '{"a":1}');
  const hop: toolslice.MutationHop = row.mutation_hop;
  assertEquals(hop, 'no_payload_mutation');
  const cmp: toolslice.RunComparison = toolslice.compareRuns([row], [row]);
  assertEquals(cmp.same, 1);
});
