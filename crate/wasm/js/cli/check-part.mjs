// A worker of `toolslice check` reading pieces of a large trace file (see `readShared` in
// check.mjs and ./pieces.mjs): its own instance of the module the main thread compiled
// (given in workerData, with its code), and for each piece it claims (workerData.cuts[j] ..
// workerData.cuts[j + 1]) a PartReader, whose encoded part it posts back as soon as it is
// read (transferred, not copied). It loads the module at once, says so ({ ready }: see the
// hub's `ready()`), and then waits for the format, which the main thread learns from the
// file's first lines; `null` means the file cannot be split (a single JSON document, span
// JSONL) and the worker ends.
import { parentPort, workerData } from 'node:worker_threads';
import { readBuffers, readChunks } from './common.mjs';
import { claimForWorker } from './pieces.mjs';

const { file, cuts, claims, options, workers } = workerData;
try {
  // The module the main thread's checker uses (see `module` in check.mjs), compiled there
  // and shared: its code, optimized by either thread or read from the code cache, serves both.
  const toolslice = await import('../check/toolslice.js');
  toolslice.initSync({ module: workerData.module });
  parentPort.postMessage({ ready: true });
  const format = await new Promise((resolve) => parentPort.once('message', resolve));
  if (format !== null) {
    const buffers = readBuffers();
    for (let j = claimForWorker(claims, workers); j >= 0; j = claimForWorker(claims, workers)) {
      const reader = new toolslice.PartReader(format, options);
      for await (const chunk of readChunks(file, { start: cuts[j], end: cuts[j + 1] }, buffers)) reader.push(chunk);
      const part = reader.finish();
      parentPort.postMessage({ piece: j, part }, [part.buffer]);
    }
  }
} catch (err) {
  // The main thread reads what is left itself: the report is the same, only slower.
  parentPort.postMessage({ error: String(err?.message ?? err) });
}
