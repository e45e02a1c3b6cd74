// The worker of `toolslice check` that reads a later range of a large trace file (see
// `parts` in check.mjs): its own instance of the module the main thread compiled (given in
// workerData, with its code), a PartReader over each piece
// workerData.cuts[i]..workerData.cuts[i + 1] of the range, and each encoded part posted
// back as it is read (transferred, not copied). It loads the module at once and then waits
// for the format, which the main thread learns from the file's first lines; `null` means
// the file cannot be split (a single JSON document, span JSONL) and the worker ends.
import { parentPort, workerData } from 'node:worker_threads';
import { readChunks } from './common.mjs';

const { file, cuts, options } = workerData;
try {
  // The module the main thread's checker uses (see `module` in check.mjs), compiled there
  // and shared: its code, optimized by either thread or read from the code cache, serves both.
  const toolslice = await import('../check/toolslice.js');
  toolslice.initSync({ module: workerData.module });
  const format = await new Promise((resolve) => parentPort.once('message', resolve));
  if (format !== null) {
    // A part per piece, posted as soon as it is read (the main thread takes in one while
    // this reads the next).
    for (let i = 0; i + 1 < cuts.length; i++) {
      const reader = new toolslice.PartReader(format, options);
      for await (const chunk of readChunks(file, { start: cuts[i], end: cuts[i + 1] })) reader.push(chunk);
      const part = reader.finish();
      parentPort.postMessage({ part, end: cuts[i + 1] }, [part.buffer]);
    }
  }
} catch (err) {
  // The main thread reads what is left itself: the report is the same, only slower.
  parentPort.postMessage({ error: String(err?.message ?? err) });
}
