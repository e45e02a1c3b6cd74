// A trapped instance is replaced on the next call (issue 13 item 6): the trapping call
// throws `instance_trapped` saying what is lost, the next call gets a fresh instance, and an
// object of the dead instance refuses to run. A file of its own: it exhausts the instance's
// memory on purpose, and node --test gives each file its own process.
import test from 'node:test';
import assert from 'node:assert/strict';
import * as toolslice from 'toolslice';

const GH = 'ghp_aB3dE5fG7hI9jK1lM3nO5pQ7rS9tU1vW3xY5';

test('a trapped instance is replaced on the next call, saying what was lost', () => {
  toolslice.registerTool('before_trap', { maxBytes: 10 });
  const before = toolslice.pack({ tool: 't', callId: 'kept', text: 'line\n'.repeat(2000) }, { limit: 100 });
  assert.equal(before.envelope.truncated, true);
  const old = new toolslice.StreamPacker('bash', 'old', undefined, { limit: 100 });
  // Exhaust the instance's memory from outside the allocator: the next large allocation
  // fails, and a failed allocation aborts (a trap) - the failure this recovery is for.
  const raw = toolslice.initSync();
  const pages = raw.memory.buffer.byteLength / 65536;
  raw.memory.grow(65536 - pages);
  assert.throws(
    () => toolslice.pack({ tool: 't', callId: 'c', text: 'x'.repeat(64 << 20) }),
    (e) => e.code === 'instance_trapped' && /page store/.test(e.message) && e.cause instanceof WebAssembly.RuntimeError,
  );
  // The next call gets a fresh instance: the page store is empty, everything works.
  const stats = toolslice.pageStoreStats();
  assert.equal(stats.entries, 0);
  assert.throws(() => toolslice.getMore('kept', before.envelope.next_offset), (e) => e.code === 'not_found');
  assert.equal(toolslice.pack({ tool: 't', callId: 'after', text: 'fine' }).envelope.content, 'fine');
  const s = new toolslice.StreamPacker('bash', 'new', undefined, { limit: 100 });
  s.push('ok\n');
  assert.match(s.finish(0).envelope.content, /ok/);
  assert.equal(toolslice.redact(`t ${GH}`).text, 't [REDACTED:github_token]');
  // An object of the dead instance says so instead of touching the new memory.
  assert.throws(() => old.push('x'), (e) => e.code === 'instance_reset');
});
