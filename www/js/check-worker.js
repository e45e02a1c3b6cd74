// The check worker: reads each file as a stream and feeds the package's streaming Checker
// chunk by chunk, off the main thread. It never holds a whole file: one chunk at a time goes
// in, and only the report (rows, or flagged rows only for large files) comes out.
//
// Messages in:  { type: 'check', id, file: Blob, flaggedOnly }
//               { type: 'cancel', id }
//               { type: 'export', id, kind: 'json' | 'jsonl' | 'csv' }   (the package's renderings; CSV from its rows)
//               { type: 'rows', id, req, filter, first }   (one page of the rows that pass the filter)
//               { type: 'free', id }
// Messages out: { type: 'started' | 'progress', id, bytes, total, spans, lines, ms }
//               { type: 'done', id, report, rows, bytes, total, ms, endsWithNewline, wasmMemory }
//                 (report without its rows; rows: { summary, page } — the first page)
//               { type: 'rows', id, req, page: { first, matching, rows } }
//               { type: 'cancelled', id, bytes, total }
//               { type: 'error', id, code, message }
//               { type: 'export', id, kind, text }
//
// The rows stay here: the main thread gets one page at a time (rows.js), so a report of
// 100,000 tool spans never has to be cloned to it or scanned on it.
//
// It loads the package's check-only module (pkg/check/: the checker and the trace formats,
// about 290 KB gzipped), not the full one the diff, hop and packer views use (about 710 KB).
import init, { Checker } from '../pkg/check/toolslice.js';
import { RowStore } from './rows.js';
import { rowsToCsv } from './csv.js';

const PROGRESS_EVERY_MS = 100;
// A file's chunks are often already buffered, so `await reader.read()` resolves as a
// microtask and never lets a queued message (a cancel) in. Yield to the event loop this often.
const YIELD_EVERY_MS = 50;
// Git's test for binary content: a NUL byte in the first 8000 bytes. Span JSONL is UTF-8
// text and never contains one; this only spares the user a run through a huge binary file.
const BINARY_SNIFF_BYTES = 8000;

let wasm = null;
const ready = init({ module_or_path: new URL('../pkg/check/toolslice_bg.wasm', import.meta.url) }).then((out) => {
  wasm = out;
});

const queue = [];
let current = null;
const reports = new Map();
/** id → RowStore of that report's rows. */
const stores = new Map();

/** Builds search texts for finished reports between messages, so the first search is quick. */
function indexRows() {
  for (const store of stores.values()) {
    if (store.indexSome()) {
      setTimeout(indexRows, 0);
      return;
    }
  }
}

self.onmessage = (event) => {
  const msg = event.data;
  switch (msg.type) {
    case 'check':
      queue.push({ ...msg, cancel: false });
      pump();
      break;
    case 'cancel':
      if (current && current.id === msg.id) current.cancel = true;
      else {
        const at = queue.findIndex((job) => job.id === msg.id);
        if (at >= 0) {
          const [job] = queue.splice(at, 1);
          self.postMessage({ type: 'cancelled', id: job.id, bytes: 0, total: job.file.size });
        }
      }
      break;
    case 'export': {
      const report = reports.get(msg.id);
      if (!report) {
        self.postMessage({ type: 'error', id: msg.id, code: 'no_report', message: 'This report is no longer available; check the file again.' });
        break;
      }
      const text = msg.kind === 'csv' ? rowsToCsv(stores.get(msg.id).rows)
        : msg.kind === 'jsonl' ? report.jsonl() : report.json();
      self.postMessage({ type: 'export', id: msg.id, kind: msg.kind, text });
      break;
    }
    case 'rows': {
      const store = stores.get(msg.id);
      if (!store) {
        self.postMessage({ type: 'error', id: msg.id, req: msg.req, code: 'no_report', message: 'This report is no longer available; check the file again.' });
        break;
      }
      self.postMessage({ type: 'rows', id: msg.id, req: msg.req, page: store.query(msg.filter, msg.first) });
      break;
    }
    case 'free':
      reports.get(msg.id)?.free();
      reports.delete(msg.id);
      stores.delete(msg.id);
      break;
    default:
      break;
  }
};

async function pump() {
  if (current) return;
  while (queue.length) {
    current = queue.shift();
    try {
      await check(current);
    } catch (err) {
      self.postMessage({ type: 'error', id: current.id, code: err?.code ?? 'internal', message: String(err?.message ?? err) });
    }
    current = null;
  }
}

async function check(job) {
  try {
    await ready;
  } catch (err) {
    throw Object.assign(new Error(`The checker could not start in this browser: ${err?.message ?? err}`), { code: 'init_failed' });
  }
  const { id, file } = job;
  const total = file.size;
  const started = performance.now();
  const checker = new Checker({ flaggedOnly: Boolean(job.flaggedOnly) });
  // Room in the module's memory for the whole file, made once: growing it a few pages at a
  // time as rows arrive makes the engine collect garbage at every step (a third of the time).
  checker.reserve(total);
  const reader = file.stream().getReader();
  let lastPost = 0;
  let lastYield = performance.now();
  let sniffed = 0;
  let lastByte = -1;
  const progress = (type) => self.postMessage({
    type, id, bytes: checker.bytesRead, total, spans: checker.spansRead, lines: checker.linesRead,
    ms: performance.now() - started,
  });
  progress('started');
  try {
    for (;;) {
      if (job.cancel) {
        const bytes = checker.bytesRead;
        await reader.cancel().catch(() => {});
        self.postMessage({ type: 'cancelled', id, bytes, total });
        return;
      }
      let chunk;
      try {
        chunk = await reader.read();
      } catch (err) {
        throw Object.assign(new Error(
          `The file could not be read after ${checker.bytesRead} of ${total} bytes: it may have been moved, ` +
          `changed or still be downloading (${err?.name ?? 'read error'}). Check it again once it is complete.`,
        ), { code: 'read_failed' });
      }
      if (chunk.done) break;
      const bytes = chunk.value;
      if (bytes.length === 0) continue;
      if (sniffed < BINARY_SNIFF_BYTES) {
        const head = bytes.subarray(0, BINARY_SNIFF_BYTES - sniffed);
        if (head.includes(0)) {
          await reader.cancel().catch(() => {});
          throw Object.assign(new Error(
            'This is not a text file: it contains NUL bytes (a binary file, an archive, or text saved as UTF-16). ' +
            'toolslice reads UTF-8 JSON text: span JSONL, OTLP JSON (GenAI or OpenInference), Langfuse, OpenAI Agents SDK or Vercel AI SDK exports.',
          ), { code: 'binary_file' });
        }
        sniffed += head.length;
      }
      checker.push(bytes);
      lastByte = bytes[bytes.length - 1];
      const now = performance.now();
      if (now - lastPost >= PROGRESS_EVERY_MS) {
        lastPost = now;
        progress('progress');
      }
      if (now - lastYield >= YIELD_EVERY_MS) {
        await new Promise((resolve) => setTimeout(resolve, 0));
        lastYield = performance.now();
      }
    }
    const bytes = checker.bytesRead;
    if (bytes !== total) {
      throw Object.assign(new Error(
        `Only ${bytes} of the file's ${total} bytes could be read: the file changed or was cut while it was being read. ` +
        'Check it again once it is complete.',
      ), { code: 'short_read' });
    }
    const report = checker.finish();
    const data = report.toJSON();
    reports.set(id, report);
    const store = new RowStore(data.rows);
    stores.set(id, store);
    delete data.rows;
    setTimeout(indexRows, 0);
    self.postMessage({
      type: 'done', id, report: data, rows: { summary: store.summary(), page: store.query({}) },
      bytes, total, ms: performance.now() - started,
      endsWithNewline: lastByte === 10 || bytes === 0, wasmMemory: wasm.memory.buffer.byteLength,
    });
  } finally {
    checker.free();
  }
}
