// A Vercel AI SDK agent (`generateText` or `streamText` with tools and `stopWhen`) with
// `experimental_telemetry` on, exporting its spans with the stock OTLP/HTTP protobuf exporter.
//
//   node agent.mjs generate|stream
//
// Environment (set by ../py/generate.py): TOOLSLICE_MODEL_URL (the scripted model server),
// TOOLSLICE_OTLP_URL (the receiver), TOOLSLICE_SCENARIO (a JSON file: per tool its
// description, its result, and what the hook passes on).
//
// The hook: `prepareStep`, the AI SDK's way to change the messages of each step; it rewrites
// the tool-result parts' `output.value`.
import { readFileSync } from 'node:fs';
import { generateText, streamText, tool, stepCountIs, jsonSchema } from 'ai';
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { NodeTracerProvider } from '@opentelemetry/sdk-trace-node';
import { BatchSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { resourceFromAttributes } from '@opentelemetry/resources';

const mode = process.argv[2] ?? 'generate';
const withTools = process.argv[3] !== 'no-tools'; // no-tools: a run of model calls only
const scenario = JSON.parse(readFileSync(process.env.TOOLSLICE_SCENARIO, 'utf8'));

const provider = new NodeTracerProvider({
  resource: resourceFromAttributes({ 'service.name': `ai-sdk-${mode}` }),
  spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter({ url: process.env.TOOLSLICE_OTLP_URL }))],
});
provider.register();

const model = createOpenAICompatible({
  name: 'scripted',
  baseURL: process.env.TOOLSLICE_MODEL_URL,
  apiKey: 'sk-scripted',
  includeUsage: true,
}).chatModel('scripted-model');

const tools = Object.fromEntries(
  Object.entries(scenario.tools).map(([name, t]) => [
    name,
    tool({
      description: t.description,
      inputSchema: jsonSchema({ type: 'object', properties: {} }),
      execute: async () => t.result,
    }),
  ]),
);

// The application's cut: each tool result the SDK is about to send is replaced by what the
// scenario passes on (the same text when the result is left unchanged).
function prepareStep({ messages }) {
  return {
    messages: messages.map((m) =>
      m.role !== 'tool'
        ? m
        : {
            ...m,
            content: m.content.map((part) => {
              const t = part.type === 'tool-result' && scenario.tools[part.toolName];
              if (!t || part.output?.type !== 'text') return part;
              return { ...part, output: { ...part.output, value: t.passed_on } };
            }),
          },
    ),
  };
}

const options = {
  model,
  ...(withTools ? { tools } : {}),
  system: 'You are the ops agent.',
  prompt: 'Why does the billing build fail, and which port does it use?',
  stopWhen: stepCountIs(5),
  prepareStep,
  experimental_telemetry: { isEnabled: true, functionId: 'ops-agent' },
};
if (mode === 'stream') {
  const result = streamText(options);
  console.log(await result.text);
} else {
  const result = await generateText(options);
  console.log(result.text);
}
await provider.forceFlush();
await provider.shutdown();
