// How `toolslice check` shares a file among threads (cli/pieces.mjs): each piece is claimed
// by exactly one thread, whatever the threads do at once, the threads end together, and a
// file of any size is cut into a number of pieces the claims can hold.
import test from 'node:test';
import assert from 'node:assert/strict';
import { Worker } from 'node:worker_threads';

const pieces = new URL('../node_modules/toolslice/cli/pieces.mjs', import.meta.url).href;
const { ABSORB_SHARE, claimForWorker, claimNext, claimToKeep, newClaims, newPace, pieceStarts } = await import(pieces);

test('claims: the main thread from the front of the first pool, workers from the second, then each from the other end', () => {
  const claims = newClaims(3, 8);
  assert.equal(claimNext(claims, 0), true);
  assert.equal(claimNext(claims, 0), false, 'a piece is claimed once');
  assert.equal(claimNext(claims, 2), false, 'only the very next piece');
  // Workers start at the split and go forward.
  assert.deepEqual([claimForWorker(claims), claimForWorker(claims)], [3, 4]);
  // The main thread, waiting for piece 3, keeps pieces from the back of the workers' pool.
  assert.deepEqual([claimToKeep(claims), claimToKeep(claims)], [7, 6]);
  // The main thread now has more left (pieces 1 and 2, and five parts to take in after them)
  // than a worker (piece 5): workers take the first pool from its back.
  assert.equal(claimForWorker(claims), 2);
  assert.equal(claimForWorker(claims), 1);
  assert.equal(claimNext(claims, 1), false, 'a worker has it');
  assert.equal(claimForWorker(claims), 5);
  assert.equal(claimToKeep(claims), -1, 'the second pool is used up');
  assert.equal(claimForWorker(claims), -1);
  // Piece 5 is a worker's: the main thread cannot claim it as its next.
  assert.equal(claimNext(claims, 5), false);
});

test('claims: workers out of pieces take the first pool from its back, the main thread its front', () => {
  const claims = newClaims(3, 5);
  assert.equal(claimNext(claims, 0), true);
  assert.equal(claimNext(claims, 1), true);
  assert.deepEqual([claimForWorker(claims), claimForWorker(claims)], [3, 4]);
  assert.equal(claimForWorker(claims), 2);
  assert.equal(claimNext(claims, 2), false, 'a worker has it');
  assert.equal(claimForWorker(claims), -1);
});

// readShared (cli/check.mjs) with one worker, in time: a piece takes `read` to read, a part
// `read * absorb` to take in, the worker starts `late`; the main thread takes each piece in
// order (its own as it reads it, a worker's part once it has arrived, keeping pieces from the
// back of the workers' pool while it waits), the worker claims a piece whenever it is free.
// The time the main thread is done.
function simulate({ pieces: n, split, read, absorb, late }) {
  const claims = newClaims(split, n);
  const arrives = new Map();
  const kept = new Set();
  let free = late;
  let t = 0;
  for (let j = 0; j < n; j++) {
    for (;;) {
      while (free <= t) {
        const k = claimForWorker(claims);
        if (k < 0) free = Infinity;
        else arrives.set(k, (free += read));
      }
      if (claimNext(claims, j)) t += read;
      else if (kept.has(j) || arrives.get(j) <= t) t += read * absorb;
      else {
        const back = claimToKeep(claims);
        if (back >= 0) {
          t += read;
          kept.add(back);
          continue;
        }
        const next = Math.min(free, arrives.get(j) ?? Infinity);
        if (next === Infinity) assert.fail(`piece ${j} is nobody's`);
        t = Math.max(t, next);
        continue;
      }
      break;
    }
  }
  return t;
}

test('claims: the main thread and a worker end within a piece of the best split of the work', () => {
  // From a first pool at least as long as the best split gives the main thread, as the
  // split's estimate makes it (`mainShares` in cli/check.mjs).
  // Reading pieces of 1.5 MB of a trace format here: 7-8 ms each, a part taken in in 1-2 ms,
  // a worker's first claim 30-60 ms after the main thread's first.
  for (const [n, split, absorb, late] of [
    [32, 18, ABSORB_SHARE, 33], [32, 18, 0.19, 33], [32, 14, 0.19, 20], [32, 22, 0.3, 60],
    [32, 16, ABSORB_SHARE, 10], [192, 110, ABSORB_SHARE, 40], [192, 120, 0.15, 80],
  ]) {
    const read = 8;
    // No schedule does better than splitting the pieces between the threads at the best place.
    let best = Infinity;
    for (let x = 0; x <= n; x++) best = Math.min(best, Math.max(x * read + (n - x) * read * absorb, (n - x) * read + late));
    const done = simulate({ pieces: n, split, read, absorb, late });
    assert.ok(done <= best + read, `${n} pieces, split ${split}, absorb ${absorb}, late ${late}: ${done} ms, best ${best.toFixed(1)}`);
  }
});

test('claims: the main thread takes the second pool from its front when no worker has', () => {
  const claims = newClaims(2, 5);
  assert.equal(claimNext(claims, 0), true);
  assert.equal(claimNext(claims, 1), true);
  assert.equal(claimNext(claims, 2), true);
  assert.equal(claimForWorker(claims), 3);
  assert.equal(claimNext(claims, 3), false);
  assert.equal(claimNext(claims, 4), true);
  assert.equal(claimForWorker(claims), -1);
});

test('claims made by four threads at once: every piece exactly once', async () => {
  const n = 30000;
  const split = 8000;
  for (let round = 0; round < 5; round++) {
    const claims = newClaims(split, n);
    // All four start together: the workers wait on `go` once they are running.
    const go = new Int32Array(new SharedArrayBuffer(4));
    const src = `
      import { workerData, parentPort } from 'node:worker_threads';
      const { claimForWorker } = await import(${JSON.stringify(pieces)});
      const { claims, go } = workerData;
      parentPort.postMessage('ready');
      Atomics.wait(go, 0, 0);
      const got = [];
      for (let j = claimForWorker(claims); j >= 0; j = claimForWorker(claims)) got.push(j);
      parentPort.postMessage(got);`;
    const workers = Array.from({ length: 3 }, () => new Worker(src, { eval: true, workerData: { claims, go } }));
    const message = (w) => new Promise((resolve, reject) => (w.once('message', resolve), w.once('error', reject)));
    await Promise.all(workers.map(message));
    const answers = workers.map(message);
    Atomics.store(go, 0, 1);
    Atomics.notify(go, 0);
    // This thread claims as check's main thread does: the next piece when it can, else one
    // from the back to keep (busy meanwhile, as reading it would be).
    const mine = [];
    for (let j = 0; j < n; j++) {
      if (claimNext(claims, j)) mine.push(j);
      else {
        const back = claimToKeep(claims);
        if (back >= 0) mine.push(back);
      }
    }
    const all = [mine, ...(await Promise.all(answers))].flat().sort((a, b) => a - b);
    assert.equal(all.length, n, `round ${round}: ${all.length} claims of ${n} pieces`);
    assert.ok(all.every((j, i) => j === i), `round ${round}: a piece claimed twice or never`);
  }
});

test('pieces: 1 to 8 MB, about 16 per thread, and never more than the claims can hold', () => {
  const sizes = (total, threads) => {
    const starts = [0, ...pieceStarts(total, threads), total];
    return starts.slice(1).map((s, i) => s - starts[i]);
  };
  const mb = 1 << 20;
  const small = sizes(18e6, 2);
  assert.ok(small.slice(0, -1).every((s) => s >= mb - 1 && s <= mb + 1), small.join(' '));
  const mid = sizes(300e6, 2);
  assert.ok(mid.length >= 32 && mid.slice(0, -1).every((s) => s <= 8 * mb), `${mid.length} pieces`);
  // 1 TB: pieces larger than 8 MB rather than more than the claims hold.
  assert.ok(sizes(1e12, 4).length <= 16384);
  assert.throws(() => newClaims(1, 1 << 15), RangeError);
});

test('pace: the time the rest of a file takes, measured from the end of the first piece to the end of the third', () => {
  const cuts = [0, 100, 200, 300, 400, 1000];
  const pace = newPace(cuts);
  // The first piece is not measured (it reads slower than the rest), nor anything before
  // the third piece's end.
  assert.equal(pace.msLeft(50, 10), undefined);
  assert.equal(pace.msLeft(120, 20), undefined);
  assert.equal(pace.msLeft(250, 30), undefined);
  // 300 - 120 bytes in 40 - 20 ms: 9 bytes a ms, and 700 bytes left take 77.8 ms.
  assert.ok(Math.abs(pace.msLeft(300, 40) - 700 / 9) < 1e-9);
  // Slower since: the pace is that of the whole measure, from its start.
  assert.ok(Math.abs(pace.msLeft(400, 80) - (600 * 60) / 280) < 1e-9);
  assert.equal(pace.msLeft(1000, 90), 0, 'nothing left');
  // A file of one or two pieces: known only once read.
  const short = newPace([0, 10, 20]);
  assert.equal(short.msLeft(10, 1), undefined);
  assert.equal(short.msLeft(15, 2), undefined);
  assert.equal(short.msLeft(20, 3), 0);
  // No time measured (a coarse clock): undefined, not a division by zero.
  const still = newPace(cuts);
  assert.equal(still.msLeft(100, 5), undefined);
  assert.equal(still.msLeft(300, 5), undefined);
  assert.ok(still.msLeft(310, 6) > 0);
});
