// A small OTLP/HTTP receiver standing in for the backend: it keeps every request it is
// sent (content type, encoding, body) and can be switched down (503) or closed, to test that
// the endpoint gives the exporter a retryable status and loses nothing.
import { createServer } from 'node:http';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gunzipSync } from 'node:zlib';

export async function startReceiver() {
  const requests = [];
  const state = { mode: 'up' };
  const server = createServer((req, res) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      if (state.mode === 'down') {
        res.writeHead(503, { 'retry-after': '1' });
        return res.end('down');
      }
      let body = Buffer.concat(chunks);
      const encoding = req.headers['content-encoding'];
      if (encoding === 'gzip') body = gunzipSync(body);
      requests.push({ path: req.url, contentType: req.headers['content-type'], contentEncoding: encoding, body });
      const proto = (req.headers['content-type'] ?? '').includes('protobuf');
      res.writeHead(200, { 'content-type': proto ? 'application/x-protobuf' : 'application/json' });
      res.end(proto ? '' : '{}');
    });
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  const port = server.address().port;
  return {
    port,
    url: `http://127.0.0.1:${port}/v1/traces`,
    requests,
    state,
    stop: () => new Promise((r) => { server.closeAllConnections(); server.close(r); }),
  };
}

const decoder = fileURLToPath(new URL('./decode.py', import.meta.url));

/** Every span the receiver got, as OTLP JSON spans with plain attribute values. */
export function receivedSpans(requests) {
  const docs = [];
  const protos = requests.filter((r) => (r.contentType ?? '').includes('protobuf'));
  for (const r of requests) {
    if ((r.contentType ?? '').includes('json')) docs.push(JSON.parse(r.body.toString('utf8')));
  }
  if (protos.length) {
    const dir = mkdtempSync(join(tmpdir(), 'otlp-recv-'));
    const files = protos.map((r, i) => {
      const f = join(dir, `${i}.pb`);
      writeFileSync(f, r.body);
      return f;
    });
    const out = execFileSync('python3', [decoder, ...files], { encoding: 'utf8' });
    rmSync(dir, { recursive: true });
    for (const line of out.split('\n')) if (line.trim()) docs.push(JSON.parse(line));
  }
  const spans = [];
  for (const doc of docs) {
    for (const rs of doc.resourceSpans ?? []) {
      for (const ss of rs.scopeSpans ?? []) {
        for (const s of ss.spans ?? []) {
          const attrs = {};
          for (const kv of s.attributes ?? []) {
            const v = kv.value ?? {};
            attrs[kv.key] = v.stringValue ?? (v.intValue !== undefined ? Number(v.intValue) : v.boolValue ?? v.doubleValue);
          }
          spans.push({ ...s, attrs, resource: rs.resource });
        }
      }
    }
  }
  return { spans, docs };
}
