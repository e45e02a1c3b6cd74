#!/usr/bin/env node
// The OTLP endpoint's split of each export request, in one process as the endpoint runs it:
// every line of FILE is one JSON request, given to `otlpSplit` (read every span with the
// check's conventions, hold the tool spans, measure the model calls, write the rest).
// ROUNDS passes over all of them; prints {"documents": N, "seconds": [...]}, one per pass.
// With `protobuf`, each request is split for an upstream that takes protobuf only
// (`otlpSplit(body, 'json', true)`: written as protobuf, then split), as the endpoint does.
// Called by scripts/bench beside `scripts/peers/json_lines.py LIB FILE ROUNDS`.
//   node scripts/bench-endpoint.mjs FILE ROUNDS [protobuf]
import { readFileSync } from 'node:fs';

const [file, rounds, mode] = process.argv.slice(2);
const { otlpSplit } = await import(new URL('../pkg/node.mjs', import.meta.url));
const toProtobuf = mode === 'protobuf';
const split = (body) => otlpSplit(body, 'json', toProtobuf);
const text = readFileSync(file);
const bodies = [];
for (let start = 0, i = 0; i <= text.length; i++) {
  if (i === text.length || text[i] === 10) {
    if (i > start) bodies.push(text.subarray(start, i));
    start = i + 1;
  }
}
const seconds = [];
let tools = 0;
for (let r = 0; r < Number(rounds); r++) {
  const t = performance.now();
  for (const body of bodies) tools += split(body).tools;
  seconds.push((performance.now() - t) / 1000);
}
if (!tools) throw new Error(`${file}: no tool span held`);
console.log(JSON.stringify({ documents: bodies.length, seconds }));
