// One trace's keeper: holds its tool spans until the core decides them, then forwards them
// annotated. Shared by the Durable Object (crate/wasm/js/otlp/worker.js; storage is the
// object's durable storage, the deadline its alarm) and the Node endpoint (a Map and a
// timer). Every decision is the core's (`OtlpTrace`); this file stores bytes and retries.
//
// Storage keys: `state` (the core's trace state, JSON; or, for a large one, `{ parts }`: the
// numbers n, in order, of the keys `part:<n>` that hold it in pieces; see `saveState`),
// `held:<key>` (a held span: a one-span export request and its encoding), `out:<n>`
// (annotated requests not yet accepted by the upstream). Nothing leaves storage before the
// upstream has taken it. (`state` as `{ gen, pieces }`, naming `state:<gen>:<i>`, is how an
// earlier version stored a large state; it is read, and replaced at the next save.)

/** How long to wait before retrying an upstream that refused or was unreachable. */
export const RETRY_MS = 2000;
/**
 * A trace with nothing held and nothing to forward is forgotten after this long without a
 * span: its state (measures of its calls) is only needed while more of the trace may come.
 */
export const IDLE_MS = 10 * 60 * 1000;
/** The upstream answers that mean "later" (the OTLP spec's retryable statuses). */
export const RETRYABLE = [429, 502, 503, 504];
/**
 * The longest piece of a trace's state stored under one key: the core cuts its state
 * (`toJsonPieces`) into pieces of at most 60,000 UTF-8 bytes, so at most as many UTF-16
 * units. A Durable Object's value is at most 128 KiB (key-value storage) or 2 MB (SQLite
 * storage), and V8 stores a string of non-Latin-1 text at two bytes a character; a trace's
 * state can be larger (20,000 calls, the core's limit, about 13 MB of JSON: SQLITE_TOOBIG
 * in workerd, and 503 for every later request of the trace, when it was stored whole).
 */
export const STATE_PIECE_CHARS = 60_000;
/** A state up to this long is stored whole under `state`; a longer one in pieces. */
export const STATE_WHOLE_CHARS = 16_384;
/**
 * A held span kept in memory may share a buffer this large with other bytes (`keptBytes`):
 * the split's buffer of a few small requests (of a 2.3 KB request of the bench's OTLP file:
 * 3.4 KB), so a span waiting for its verdict keeps at most this much alive.
 */
export const SHARED_BUFFER_BYTES = 16 * 1024;
/** ... or one at most this many times its own size. */
export const SHARED_BUFFER_RATIO = 4;

export class TraceKeeper {
  /**
   * @param {object} o
   * @param {object} o.api the toolslice package (OtlpTrace, otlpAnnotate, otlpMerge)
   * @param {string} o.traceId
   * @param {{get(k:string):Promise<any>, put(k:string,v:any):Promise<void>, delete(k:string|string[]):Promise<any>, list(o:{prefix:string}):Promise<Map<string,any>>}} o.storage
   * @param {(ms:number|null)=>Promise<void>} o.setAlarm when to call `alarm()` next (null: never)
   * @param {(encoding:string, body:Uint8Array)=>Promise<Response>} o.forward
   * @param {number} o.deadlineMs
   * @param {()=>number} [o.now]
   */
  constructor({ api, traceId, storage, setAlarm, forward, deadlineMs, idleMs = IDLE_MS, onForget, now = Date.now }) {
    Object.assign(this, { api, traceId, storage, setAlarm, forward, deadlineMs, idleMs, onForget, now });
    this.trace = null;
    this.outSeq = 0;
    // One operation at a time: two requests of one trace must not both forward the outbox
    // (a Durable Object interleaves requests at every await on the network).
    this.queue = Promise.resolve();
  }

  run(fn) {
    const next = this.queue.then(fn, fn);
    this.queue = next.catch(() => {});
    return next;
  }

  async load() {
    if (this.trace) return this.trace;
    const saved = await this.storage.get('state');
    // What the stored state's save wrote (see `saveState`).
    this.stored = null;
    let json = saved;
    if (saved && Array.isArray(saved.parts)) {
      const keys = saved.parts.map((n) => `part:${n}`);
      const texts = await readKeys(this.storage, keys);
      const pieces = new Map(texts.map((text, i) => [printOf(text), { text, n: saved.parts[i] }]));
      this.stored = { pieces, parts: saved.parts, next: saved.parts.reduce((m, n) => Math.max(m, n + 1), 0) };
      json = texts.join('');
    } else if (saved && typeof saved === 'object') {
      const old = Array.from({ length: saved.pieces }, (_, i) => `state:${saved.gen}:${i}`);
      this.stored = { old };
      json = (await readKeys(this.storage, old)).join('');
    }
    this.trace = json ? this.api.OtlpTrace.fromJson(json) : new this.api.OtlpTrace(this.traceId);
    const outs = await this.storage.list({ prefix: 'out:' });
    for (const k of outs.keys()) this.outSeq = Math.max(this.outSeq, Number(k.slice(4)) + 1);
    return this.trace;
  }

  /** One export request's part of this trace. `held`: [{key, body}] in `encoding`. */
  ingest(measures, held, encoding) {
    return this.run(() => this.#ingest(measures, held, encoding));
  }

  async #ingest(measures, held, encoding) {
    const trace = await this.load();
    const got = trace.ingest(measures, this.now(), this.deadlineMs);
    const fresh = new Map();
    for (const h of held) {
      if (got.accepted.includes(h.key)) fresh.set(h.key, { encoding, body: keptBytes(h.body, this.storage) });
    }
    const writes = {};
    for (const [key, value] of fresh) writes[`held:${key}`] = value;
    await this.settle(got.decisions, fresh, writes);
  }

  /** The alarm: decide what passed its deadline, retry what the upstream refused. */
  alarm() {
    return this.run(async () => {
      const trace = await this.load();
      const decisions = trace.expire(this.now(), this.deadlineMs);
      const outs = await this.storage.list({ prefix: 'out:' });
      if (decisions.length === 0 && outs.size === 0 && trace.waiting() === 0) {
        // Idle since the alarm was set: forget the trace.
        const all = await this.storage.list({ prefix: '' });
        await deleteAll(this.storage, [...all.keys()]);
        this.trace?.free();
        this.trace = null;
        await this.onForget?.();
        return;
      }
      await this.settle(decisions, new Map());
    });
  }

  /** Shutdown: decide and forward everything held; true when the upstream took it all. */
  releaseAll() {
    return this.run(async () => {
      const trace = await this.load();
      return this.settle(trace.releaseAll(), new Map());
    });
  }

  summary() {
    return this.run(async () => {
      const trace = await this.load();
      const outs = await this.storage.list({ prefix: 'out:' });
      const refused = (await this.storage.get('refused')) ?? 0;
      return { ...trace.summary(), unforwarded_requests: outs.size, refused_by_upstream: refused };
    });
  }

  /** Annotates the decided spans into the outbox, saves, forwards, and sets the alarm. */
  async settle(decisions, fresh, writes = {}) {
    // All of it in one write and one delete: on disk-backed storage each separate write is a
    // transaction of its own, and they were most of a request's time.
    const gone = [];
    for (const d of decisions) {
      const key = `held:${d.key}`;
      const held = fresh.get(d.key) ?? (await this.storage.get(key));
      if (held) {
        const body = this.api.otlpAnnotate(held.body, held.encoding, d.annotation);
        writes[`out:${this.outSeq++}`] = { encoding: held.encoding, body };
      }
      if (key in writes) delete writes[key];
      else gone.push(key);
    }
    const stored = this.saveState(writes, gone);
    try {
      if (stored) {
        // The pieces of a state go before the `state` key that names them (each put of at
        // most 128 keys is atomic; the puts together are not), and never under a key the
        // stored state names: a write cut short leaves the state stored before it whole.
        const state = writes.state;
        delete writes.state;
        await putAll(this.storage, writes);
        await this.storage.put('state', state);
      } else {
        await putAll(this.storage, writes);
      }
    } catch (err) {
      // Not stored: the state in memory (its spans taken, some decided) is no longer the
      // stored one, and the exporter will send the request again. Read it back from storage
      // next time, so the retry is taken as the first attempt was meant to be.
      this.trace?.free();
      this.trace = null;
      throw err;
    }
    this.stored = stored;
    if (gone.length) await deleteAll(this.storage, gone);
    const delivered = await this.flush();
    const due = this.trace.nextDue();
    const retry = delivered ? null : this.now() + RETRY_MS;
    const next = [due, retry].filter((x) => x != null);
    await this.setAlarm(next.length ? Math.min(...next) : this.now() + this.idleMs);
    return delivered;
  }

  /**
   * Puts the trace's state into `writes`: whole under `state` when short, else its pieces
   * not stored yet under new `part:<n>` keys, and `state` = `{ parts }` naming all its
   * pieces in order by their n (numbers: a list of 10,000 pieces stays far under a Durable
   * Object's 128 KiB value); puts the keys of stored pieces it no longer uses into `gone`;
   * returns what the stored state will be.
   *
   * The core cuts the state where its content says (`toJsonPieces`; see the core's
   * `pipeline::pieces`), so after a request most pieces are the ones stored before: a run of
   * 1,400 tool calls sent span by span wrote its whole state, up to 1.9 MB, after each of its
   * 2,801 requests (2.7 GB in all); see BENCHMARKS.md for what it writes now.
   */
  saveState(writes, gone) {
    const texts = this.trace.toJsonPieces();
    const old = this.stored;
    let stored = null;
    if (texts.reduce((n, t) => n + t.length, 0) <= STATE_WHOLE_CHARS) {
      writes.state = texts.join('');
    } else {
      // The stored pieces and those of this save, by `printOf`; the text decides.
      const was = old?.pieces ?? new Map();
      const pieces = new Map();
      const parts = [];
      let next = old?.next ?? 0;
      for (const text of texts) {
        const print = printOf(text);
        let entry = [pieces.get(print), was.get(print)].find((e) => e?.text === text);
        if (!entry) {
          entry = { text, n: next++ };
          writes[`part:${entry.n}`] = text;
        }
        if (!pieces.has(print)) pieces.set(print, entry);
        parts.push(entry.n);
      }
      writes.state = { parts };
      stored = { pieces, parts, next };
    }
    const kept = new Set(stored?.parts);
    if (old?.parts) for (const n of new Set(old.parts)) if (!kept.has(n)) gone.push(`part:${n}`);
    if (old?.old) gone.push(...old.old);
    return stored;
  }

  /** Forwards the outbox, one request per encoding; true when it is empty afterwards. */
  async flush() {
    const outs = await this.storage.list({ prefix: 'out:' });
    if (outs.size === 0) return true;
    const byEncoding = new Map();
    for (const [k, v] of outs) {
      if (!byEncoding.has(v.encoding)) byEncoding.set(v.encoding, []);
      byEncoding.get(v.encoding).push([k, v.body]);
    }
    let all = true;
    for (const [encoding, items] of byEncoding) {
      const body = this.api.otlpMerge(items.map((i) => i[1]), encoding);
      let done = false;
      try {
        const res = await this.forward(encoding, body);
        await res.arrayBuffer().catch(() => {});
        // OTLP's retryable answers are 429, 502, 503 and 504; any other refusal is permanent
        // and will not change on retry: count it and stop, as an exporter would.
        done = res.ok || !RETRYABLE.includes(res.status);
        if (!res.ok && done) {
          const n = (await this.storage.get('refused')) ?? 0;
          await this.storage.put('refused', n + items.length);
        }
      } catch {
        done = false;
      }
      if (done) await deleteAll(this.storage, items.map((i) => i[0]));
      else all = false;
    }
    return all;
  }
}

/** The stored values of `keys` (strings), in order. */
async function readKeys(storage, keys) {
  const texts = [];
  for (let i = 0; i < keys.length; i += 128) {
    const got = await storage.get(keys.slice(i, i + 128));
    for (const k of keys.slice(i, i + 128)) {
      const piece = got.get(k);
      if (typeof piece !== 'string') throw new Error(`stored trace state: ${k} is missing`);
      texts.push(piece);
    }
  }
  return texts;
}

/**
 * A number that tells most pieces apart: a piece's length and a hash of its last 64
 * characters (a piece ends where the core's rolling hash of its last bytes said). Pieces
 * with the same number are compared whole.
 */
function printOf(text) {
  let h = 0;
  for (let i = Math.max(0, text.length - 64); i < text.length; i++) h = (Math.imul(h, 0x01000193) + text.charCodeAt(i)) | 0;
  return (h >>> 0) * 65536 + (text.length & 0xffff);
}

/**
 * A held span's body as it is stored. A split's byte arrays are views of one buffer per
 * request (`otlpSplit`: one allocation rather than one per array). A storage that copies
 * what it is given (a Durable Object's: a structured clone) would copy the whole buffer for
 * each held span, so it gets the span's bytes alone; one that keeps the very value
 * (`MemoryStorage`, `keepsValues`) keeps the view, unless its buffer is larger than
 * SHARED_BUFFER_BYTES and than SHARED_BUFFER_RATIO times the span: a span waiting for its
 * verdict then never keeps much more than itself of a large request alive.
 */
export function keptBytes(body, storage) {
  const buffer = body.buffer.byteLength;
  if (buffer === body.byteLength) return body;
  if (storage.keepsValues && (buffer <= SHARED_BUFFER_BYTES || buffer <= SHARED_BUFFER_RATIO * body.byteLength)) return body;
  return body.slice();
}

// The Durable Object storage API takes at most 128 keys per call.
async function putAll(storage, entries) {
  const keys = Object.keys(entries);
  for (let i = 0; i < keys.length; i += 128) {
    await storage.put(Object.fromEntries(keys.slice(i, i + 128).map((k) => [k, entries[k]])));
  }
}
async function deleteAll(storage, keys) {
  for (let i = 0; i < keys.length; i += 128) await storage.delete(keys.slice(i, i + 128));
}

/**
 * In-memory storage with the Durable Object storage API's shape (for the Node endpoint). It
 * keeps the values it is given, not copies (`keepsValues`).
 */
export class MemoryStorage {
  constructor() {
    this.map = new Map();
  }
  get keepsValues() {
    return true;
  }
  // As a Durable Object's: several keys give a Map of those found.
  async get(key) {
    if (!Array.isArray(key)) return this.map.get(key);
    return new Map(key.filter((k) => this.map.has(k)).map((k) => [k, this.map.get(k)]));
  }
  async put(key, value) {
    if (typeof key === 'object') for (const [k, v] of Object.entries(key)) this.map.set(k, v);
    else this.map.set(key, value);
  }
  async delete(keys) {
    for (const k of Array.isArray(keys) ? keys : [keys]) this.map.delete(k);
  }
  async list({ prefix }) {
    const out = new Map();
    for (const k of [...this.map.keys()].sort()) if (k.startsWith(prefix)) out.set(k, this.map.get(k));
    return out;
  }
}
