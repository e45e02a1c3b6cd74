// V8's optimizing compiler as a one-shot `toolslice check` wants it.
//
// A check in a fresh process runs the module's hot functions in V8's baseline tier until
// TurboFan has compiled them in the background, and on a 2-CPU machine that compiling (over
// a hundred functions, 300-400 ms of CPU for 50 MB of a trace format) competes with the check
// for the second CPU. Loop unrolling and peeling are 6% of TurboFan's time on these
// functions (5.2% and 1.1% on 50 MB of Langfuse, `node --turbo-stats-wasm`) and make the
// code it then allocates registers for larger; the warm reading is no faster with them
// (1 MiB chunks, within the noise).
//
// Measured 2026-12-05, `toolslice check --flagged-only` on the bench inputs, 15 interleaved
// cold processes each, medians, wall / user+sys CPU: OTLP 50 MB 470/650 -> 440/600 ms, a
// trace per copy 460/679 -> 440/590, Agents SDK long runs 290/390 -> 270/360, Langfuse level
// (570/770 -> 580/760); 300 MB of OTLP in 2 threads 1.21 -> 1.19 s, span JSONL level.
// Earlier single-process measures of the first pass alone (issue 17's notes) put the gain
// within the noise; the CPU it saves shows in whole runs.
//
// Only the command line sets them: flags are the process's, and a library must not change
// its host's. They are set before the module is compiled (workers included: they share the
// process's flags), and only for `check`: a long-lived process (the OTLP endpoint, the MCP
// proxy) keeps V8's defaults for its steady state. Only on the V8 they were measured on
// (Node 20's 11.x): Node 18's V8 may not know them (an unknown flag is an error line on
// stderr), and on a later V8, whose optimizing pipeline differs, they are unmeasured.
import { setFlagsFromString } from 'node:v8';

const FLAGS = '--no-wasm-loop-unrolling --no-wasm-loop-peeling';
const MEASURED_ON_V8 = 11;

/** The V8 flags a check sets on this V8 (`v8Version`, e.g. '11.3.244.8'): '' when none. */
export function checkV8Flags(v8Version = process.versions.v8) {
  return Number.parseInt(v8Version, 10) === MEASURED_ON_V8 ? FLAGS : '';
}

let setFlags = '';

/**
 * Sets this process's `checkV8Flags()`, before the module is compiled, for a check read in
 * one thread. Not for one read by several: once any V8 flag is set, V8's hash of its flags
 * no longer matches the one Node's own JavaScript was compiled under for its code cache, and
 * a worker thread's Node environment compiles all of it from source: a worker's first line
 * ran after 75-119 ms instead of 36-55 (Node 20, 2026-12-05).
 */
export function tierForOneCheck() {
  const flags = checkV8Flags();
  if (flags) setFlagsFromString(flags);
  setFlags = flags;
}

/** The flags `tierForOneCheck` set in this process ('' when none). */
export const tieredFlags = () => setFlags;
