// `toolslice hash`: the SHA-256 of a file's canonical JSON, or of its raw bytes.
import { parse, readAll, readChunks, UsageError } from './common.mjs';
import { inFile, write } from './records.mjs';

export const summary = 'SHA-256 of canonical JSON (python or jcs form) or of raw bytes';

const usage = `usage: toolslice hash [--canonical python|jcs|raw] [--short] [--print] [FILE...]

Prints the hex SHA-256 of each FILE (stdin when none): of its canonical JSON text
(default: the python form, byte-identical to the seeds' json.dumps(..., sort_keys=True,
separators=(",", ":"), ensure_ascii=False)), of its RFC 8785 form (jcs), or of its raw bytes
(raw, streamed). With several files each line is "DIGEST  FILE".

  --canonical FORM   python (default), jcs, or raw
  --short            the first 16 hex characters (seed 000's short form)
  --print            print the canonical text instead of its digest

exit status: 0 hashed; 2 a usage or I/O error, or input that is not JSON (for python/jcs).`;

export async function run(args, { toolslice, stdout, stderr }) {
  const parsed = parse(args, {
    usage,
    options: {
      canonical: { type: 'string', default: 'python' },
      short: { type: 'boolean' },
      print: { type: 'boolean' },
    },
  });
  if (!parsed) return 0;
  const { values, positionals } = parsed;
  const form = values.canonical;
  if (!['python', 'jcs', 'raw'].includes(form)) {
    throw new UsageError(`--canonical must be python, jcs or raw, got '${form}'`);
  }
  if (values.print && form === 'raw') throw new UsageError('--print needs a canonical form (python or jcs)');
  const files = positionals.length ? positionals : ['-'];
  const out = [];
  for (const file of files) {
    const name = file === '-' ? 'stdin' : file;
    let digest;
    if (form === 'raw') {
      const hasher = new toolslice.Sha256();
      for await (const chunk of readChunks(file)) hasher.update(chunk);
      digest = hasher.digestHex();
      hasher.free();
    } else {
      const bytes = await readAll(file);
      let result;
      try {
        result = toolslice.canonicalizeWithReport(bytes, form);
      } catch (err) {
        throw inFile(name, err);
      }
      for (const path of result.duplicate_keys) {
        stderr.write(`toolslice: ${name}: duplicate key at ${path}: kept the last value, as Python does\n`);
      }
      if (values.print) {
        out.push(result.text + '\n');
        continue;
      }
      digest = toolslice.sha256Hex(result.text);
    }
    if (values.short) digest = digest.slice(0, 16);
    out.push(files.length > 1 ? `${digest}  ${name}\n` : `${digest}\n`);
  }
  await write(stdout, out.join(''));
  return 0;
}
