// Reading JSON records (spans, hop rows) and the directory body store for the proof
// commands (hash, record, gate, hop). File I/O only: every decision is in Rust.
import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { readAll, UsageError } from './common.mjs';

/**
 * The records of a file (or stdin for '-' / undefined), read by the package's
 * `readRecords`: a JSON array, one JSON object, or JSON lines.
 */
export async function readRecords(toolslice, path) {
  const name = path === undefined || path === '-' ? 'stdin' : path;
  // A coded error (invalid_json) exits 2 with its message, which names the file and line.
  return toolslice.readRecords(await readAll(path), name);
}

/**
 * The seed's body directory (one file per digest holding the canonical text) as the
 * synchronous store the package's functions take: `get`, `set`, `has`. Digests are checked
 * in Rust before they reach here, so they never name a path outside `dir`.
 */
export function directoryStore(dir, { create = false } = {}) {
  if (create) {
    try {
      mkdirSync(dir, { recursive: true });
    } catch (err) {
      throw new UsageError(`cannot create ${dir}: ${err.code ?? err.message}`);
    }
  } else if (!existsSync(dir) || !statSync(dir).isDirectory()) {
    throw new UsageError(`${dir} is not a directory`);
  }
  const file = (digest) => join(dir, digest);
  return {
    get(digest) {
      try {
        return readFileSync(file(digest), 'utf8');
      } catch (err) {
        if (err.code === 'ENOENT') return undefined;
        throw err;
      }
    },
    has(digest) {
      try {
        return statSync(file(digest)).isFile();
      } catch (err) {
        if (err.code === 'ENOENT') return false;
        throw err;
      }
    },
    set(digest, text) {
      try {
        // 'wx': never replace a body; a concurrent writer of the same body is fine.
        writeFileSync(file(digest), text, { encoding: 'utf8', flag: 'wx' });
      } catch (err) {
        if (err.code !== 'EEXIST') throw err;
        if (readFileSync(file(digest), 'utf8') !== text) throw new Error(`unstable canonical form: ${digest}`);
      }
    },
  };
}

/** Writes `text` to stdout and waits for it to drain (large outputs, closed pipes). */
export function write(stream, text) {
  return new Promise((resolve) => {
    if (text === '') return resolve();
    if (stream.write(text)) resolve();
    else stream.once('drain', resolve);
  });
}

/** Prefixes a coded error's message with the file it came from (keeps the code). */
export function inFile(name, err) {
  if (err && typeof err === 'object' && 'code' in err && !(err instanceof UsageError)) {
    err.message = `${name}: ${err.message}`;
  }
  return err;
}

/**
 * A directory as the page store of `pack` and `get-more`: one file per stored result, named
 * by the URI-encoded id (an id is the tool call id, which may hold any character).
 */
export function pageDirectory(dir, { create = false } = {}) {
  if (create) {
    try {
      mkdirSync(dir, { recursive: true });
    } catch (err) {
      throw new UsageError(`cannot create ${dir}: ${err.code ?? err.message}`);
    }
  } else if (!existsSync(dir) || !statSync(dir).isDirectory()) {
    throw new UsageError(`${dir} is not a directory`);
  }
  const file = (id) => join(dir, `${encodeURIComponent(id)}.txt`);
  return {
    get(id) {
      try {
        return readFileSync(file(id), 'utf8');
      } catch (err) {
        if (err.code === 'ENOENT') return undefined;
        throw err;
      }
    },
    set(id, text) {
      writeFileSync(file(id), text);
    },
  };
}
