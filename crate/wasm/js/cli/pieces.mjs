// How `toolslice check` shares a large trace file among its threads (see `readShared` in
// check.mjs): the file cut into pieces of whole lines, and the claims every thread makes on
// them, without waiting for another, in shared memory.
//
// The main thread's checker takes the pieces in file order: a piece it reads itself is pushed
// as bytes, a piece another thread read comes as a part and is absorbed, which costs about a
// quarter of reading it. So the pieces are in two pools. The first, pieces 0..split, is the
// main thread's to read from its front; the second, split..n, the workers' from its front.
// Whichever thread runs out takes from the back of the other's pool: the main thread pieces
// it then keeps as parts of its own until their turn, a worker pieces the main thread absorbs
// when it gets there. A worker also takes from the back of the first pool, before its own
// pool is used up, while the main thread has more left to do than the workers: its pool, and
// taking in every part after it, which it can only do once its own pieces are in (absorbing
// a part costs about ABSORB_SHARE of reading its piece). Left to the end, that taking in ran
// alone: on 50 MB of Langfuse the worker was done with its pool as the main thread was with
// its, and sat idle for the 26 ms the main thread then spent absorbing fourteen parts. The
// split is only an estimate of where the threads meet (a worker starts some 0.1 s after the
// main thread, and threads run at speeds the machine decides); the claims correct it while
// the file is read.
//
// The main thread also takes a piece of the second pool from its front when that is the very
// piece it needs next and no worker has claimed it yet (the workers not started, or told
// that the file cannot be split): it reads it as bytes, in order.
import { closeSync, openSync, readSync } from 'node:fs';

// A pool's claims in one 32-bit word, so that a claim at either end is one atomic step:
// the front (the next piece claimed from the front) in the low 16 bits, the back (one past
// the last unclaimed piece) in the high 15.
const MAX_PIECES = 1 << 15;
const pack = (front, back) => (back << 16) | front;

/**
 * Taking in a part costs about a quarter of reading its bytes (0.14 s for the 145 MB a worker
 * read in 0.55 s, of 300 MB of OTLP, 2026-12-05).
 */
export const ABSORB_SHARE = 0.25;

/**
 * Claims on `pieces` pieces, the first pool 0..split: an Int32Array on shared memory, the
 * pools' words, then the split and the number of pieces, which never change.
 */
export function newClaims(split, pieces) {
  if (pieces >= MAX_PIECES) throw new RangeError(`too many pieces: ${pieces}`);
  const claims = new Int32Array(new SharedArrayBuffer(16));
  claims[0] = pack(0, split);
  claims[1] = pack(split, pieces);
  claims[2] = split;
  claims[3] = pieces;
  return claims;
}

/** The pool (0 or 1) piece `j` is in. */
const poolOf = (claims, j) => (j < claims[2] ? 0 : 1);

/**
 * Claims the front piece of `pool`, or -1 when the pool is used up. With `only`, claims it
 * only when it is that piece.
 */
export function claimFront(claims, pool, only = -1) {
  for (;;) {
    const word = Atomics.load(claims, pool);
    const front = word & 0xffff;
    const back = word >>> 16;
    if (front >= back || (only >= 0 && front !== only)) return -1;
    if (Atomics.compareExchange(claims, pool, word, pack(front + 1, back)) === word) return front;
  }
}

/** Claims the back piece of `pool`, or -1 when the pool is used up. */
export function claimBack(claims, pool) {
  for (;;) {
    const word = Atomics.load(claims, pool);
    const front = word & 0xffff;
    const back = word >>> 16;
    if (front >= back) return -1;
    if (Atomics.compareExchange(claims, pool, word, pack(front, back - 1)) === word) return back - 1;
  }
}

/**
 * The main thread's claim of piece `j`, the next it needs, when nobody has claimed it: true
 * when it is now the main thread's to read as bytes.
 */
export function claimNext(claims, j) {
  return claimFront(claims, poolOf(claims, j), j) === j;
}

/**
 * A worker's claim, one of `workers`: the second pool's front, or the first's back while the
 * main thread has more than a piece more to do than each worker (see the top of this file);
 * the first's back once the second is used up; -1 when none is left. The pieces being read
 * are not counted: each thread has one.
 */
export function claimForWorker(claims, workers = 1) {
  const first = Atomics.load(claims, 0);
  const second = Atomics.load(claims, 1);
  const firstBack = first >>> 16;
  const mainLeft = firstBack - (first & 0xffff) + ABSORB_SHARE * (claims[3] - firstBack);
  const workersLeft = ((second >>> 16) - (second & 0xffff)) / workers;
  if (mainLeft > workersLeft + 1) {
    const j = claimBack(claims, 0);
    if (j >= 0) return j;
  }
  const j = claimFront(claims, 1);
  return j >= 0 ? j : claimBack(claims, 0);
}

/** The main thread's claim while it waits for a worker's piece: the second pool's back. */
export function claimToKeep(claims) {
  return claimBack(claims, 1);
}

/**
 * The main thread's pace over a file cut at `cuts`, by which check.mjs decides whether
 * workers not started yet are worth starting: measured from the end of the first piece (the
 * first megabytes are read slower, memory first touched and code first run: 80-110 MB/s
 * over the first piece of inputs read at 230-1000 MB/s after it) to the end of piece
 * PACE_PIECES. `msLeft(read, now)` (bytes read so far, `performance.now()`) is then the time
 * the rest of the file takes at that pace, and undefined before; 0 once all is read.
 */
export function newPace(cuts) {
  const total = cuts[cuts.length - 1];
  const until = cuts[Math.min(PACE_PIECES, cuts.length - 1)];
  let from = null;
  return {
    msLeft(read, now) {
      if (read >= total) return 0;
      if (from === null) {
        if (read >= cuts[1]) from = { read, now };
        return undefined;
      }
      if (read < until || read <= from.read || now <= from.now) return undefined;
      return ((total - read) * (now - from.now)) / (read - from.read);
    },
  };
}
const PACE_PIECES = 3;

/**
 * Where a file of `total` bytes is cut into ranges of whole lines: `[0, c1, ..., total]`,
 * each cut at the first line start at or after one of `at` (ascending byte offsets inside
 * the file). Fewer cuts when the file has too few newlines (a line longer than a piece makes
 * one piece of it).
 */
export function lineCuts(file, total, at) {
  const cuts = [0];
  const fd = openSync(file, 'r');
  const window = Buffer.allocUnsafe(64 << 10);
  try {
    for (let next of at) {
      if (next <= cuts[cuts.length - 1]) continue;
      // The first newline at or after `next`.
      for (;;) {
        const got = readSync(fd, window, 0, window.length, next);
        if (got === 0) {
          next = total;
          break;
        }
        const nl = window.subarray(0, got).indexOf(10);
        if (nl >= 0) {
          next += nl + 1;
          break;
        }
        next += got;
      }
      if (next >= total) break;
      cuts.push(next);
    }
  } finally {
    closeSync(fd);
  }
  cuts.push(total);
  return cuts;
}

/**
 * Where the pieces of a file of `total` bytes read by `threads` threads start: about 16 per
 * thread, of 1 to 8 MB (never more than MAX_PIECES / 2). Small enough that the thread that
 * finishes last has little left when the others run out, large enough that a piece's own
 * costs (a part and its message, a read from a new position) stay small.
 */
export function pieceStarts(total, threads) {
  const size = Math.max(total / (MAX_PIECES / 2), Math.min(PIECE_MAX_BYTES, Math.max(PIECE_MIN_BYTES, total / (16 * threads))));
  const starts = [];
  for (let at = size; at < total; at += size) starts.push(Math.floor(at));
  return starts;
}
const PIECE_MIN_BYTES = 1 << 20;
const PIECE_MAX_BYTES = 8 << 20;
