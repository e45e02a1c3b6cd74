// The pager's schema as the package exports it (seed 004: get_more must be on the same
// allowlist): one definition in the three shapes agents register tools in, with the
// arguments the packer's hint names.
import test from 'node:test';
import assert from 'node:assert/strict';
import { getMoreTool, pack } from 'toolslice';

test('getMoreTool: MCP, OpenAI and Anthropic shapes share one schema', () => {
  const mcp = getMoreTool('mcp');
  assert.deepEqual(getMoreTool(), mcp);
  assert.equal(mcp.name, 'get_more');
  assert.deepEqual(Object.keys(mcp.inputSchema.properties), ['id', 'offset']);
  assert.deepEqual(mcp.inputSchema.required, ['id', 'offset']);
  assert.equal(mcp.annotations.readOnlyHint, true);

  const openai = getMoreTool('openai');
  assert.equal(openai.type, 'function');
  assert.equal(openai.function.name, 'get_more');
  assert.equal(openai.function.strict, true);
  assert.deepEqual(openai.function.parameters, mcp.inputSchema);
  assert.equal(openai.function.parameters.additionalProperties, false);

  const anthropic = getMoreTool('anthropic');
  assert.equal(anthropic.name, 'get_more');
  assert.deepEqual(anthropic.input_schema, mcp.inputSchema);
  assert.equal(anthropic.description, mcp.description);

  assert.throws(() => getMoreTool('gemini'), (e) => e.code === 'invalid_argument' && /mcp, openai or anthropic/.test(e.message));
});

test("a cut result's hint is a valid call of the exported tool", () => {
  const text = Array.from({ length: 500 }, (_, i) => `line ${i}`).join('\n');
  const { envelope } = pack({ tool: 'cat', callId: 'call_7', text }, { limit: 300 });
  const m = envelope.hint.match(/get_more\(id="([^"]+)", offset=(\d+)\)/);
  assert.ok(m, envelope.hint);
  const args = { id: m[1], offset: Number(m[2]) };
  const schema = getMoreTool('mcp').inputSchema;
  for (const key of schema.required) assert.ok(key in args);
  assert.equal(typeof args.id, schema.properties.id.type);
  assert.ok(Number.isInteger(args.offset) && args.offset >= schema.properties.offset.minimum);
});
