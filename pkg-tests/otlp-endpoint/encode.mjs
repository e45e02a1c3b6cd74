// A protobuf writer for the load test and the benchmark: OTLP JSON requests (string
// attributes, hex ids) as ExportTraceServiceRequest bytes, written here independently of the
// package's decoder.
export function pb(doc) {
  const varint = (n) => {
    const out = [];
    let v = BigInt(n);
    while (v >= 0x80n) { out.push(Number(v & 0x7fn) | 0x80); v >>= 7n; }
    out.push(Number(v));
    return Buffer.from(out);
  };
  const field = (num, bytes) => Buffer.concat([varint((num << 3) | 2), varint(bytes.length), bytes]);
  const fixed64 = (num, v) => { const b = Buffer.alloc(8); b.writeBigUInt64LE(BigInt(v)); return Buffer.concat([varint((num << 3) | 1), b]); };
  const str = (num, s) => field(num, Buffer.from(s));
  const kvs = (num, list) => list.map((a) => field(num, Buffer.concat([str(1, a.key), field(2, str(1, a.value.stringValue))])));
  const span = (s) => Buffer.concat([
    field(1, Buffer.from(s.traceId, 'hex')), field(2, Buffer.from(s.spanId, 'hex')),
    ...(s.parentSpanId ? [field(4, Buffer.from(s.parentSpanId, 'hex'))] : []),
    str(5, s.name), varint(6 << 3), varint(s.kind), fixed64(7, s.startTimeUnixNano), fixed64(8, s.endTimeUnixNano),
    ...kvs(9, s.attributes),
  ]);
  return Buffer.concat(doc.resourceSpans.map((rs) => field(1, Buffer.concat([
    field(1, Buffer.concat(kvs(1, rs.resource.attributes))),
    ...rs.scopeSpans.map((ss) => field(2, Buffer.concat([field(1, str(1, ss.scope.name)), ...ss.spans.map((s) => field(2, span(s)))]))),
  ]))));
}

