// The worker of `toolslice check` that reads a later range of a large trace file (see
// `parts` in check.mjs): its own module instance, a PartReader over the bytes
// workerData.start..workerData.end, and the encoded part posted back (transferred, not
// copied). It loads the module at once and then waits for the format, which the main thread
// learns from the file's first lines; `null` means the file cannot be split (a single JSON
// document, span JSONL) and the worker ends.
import { parentPort, workerData } from 'node:worker_threads';
import { readChunks } from './common.mjs';

const { file, start, end, options } = workerData;
try {
  // The module the main thread's checker uses (see `module` in check.mjs).
  const toolslice = await import('../check/node.mjs');
  const format = await new Promise((resolve) => parentPort.once('message', resolve));
  if (format !== null) {
    const reader = new toolslice.PartReader(format, options);
    for await (const chunk of readChunks(file, { start, end })) reader.push(chunk);
    const part = reader.finish();
    parentPort.postMessage({ part }, [part.buffer]);
  }
} catch (err) {
  // The main thread reads the range itself: the report is the same, only slower.
  parentPort.postMessage({ error: String(err?.message ?? err) });
}
