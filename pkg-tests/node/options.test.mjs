// One strict decoder for every options object and input record (issue 20): every exported
// function of both modules is listed here, and each object parameter is called with a
// misspelt key. The call must throw `invalid_options` (an options object) or
// `invalid_argument` (an input record), with a message that names the misspelt key and lists
// the accepted ones. A new export that is not listed fails the coverage test, so no
// function can take an object without this check.
import test from 'node:test';
import assert from 'node:assert/strict';
import * as toolslice from 'toolslice';
import * as check from 'toolslice/check';

// One held tool span, as otlpSplit holds it: a one-span OTLP JSON export request.
const HELD = new TextEncoder().encode(JSON.stringify({ resourceSpans: [{ scopeSpans: [{ spans: [{ traceId: '0af7651916cd43dd8448eb211c80319c', spanId: 'b7ad6b7169203331', name: 'execute_tool x' }] }] }] }));

const SPAN = {
  name: 't', status: 'ok',
  args_sha256: '0'.repeat(64), args_len: 2, result_sha256: '0'.repeat(64), result_len: 2,
};

// A path prefix names the object that holds the key (`redact: unknown field ...`).
// export name -> the calls with a misspelt key, or a string saying why it takes no object
// whose keys it reads (strings, bytes, numbers, or records it keeps whole).
const cases = {
  pack: [
    { call: (t) => t.pack({ tool: 't', callId: 'c', text: 'x' }, { limt: 100 }), key: 'limt', code: 'invalid_options', accepted: ['limit', 'pageBytes'] },
    { call: (t) => t.pack({ tool: 't', callId: 'c', text: 'x' }, { redact: { emials: true } }), key: 'emials', code: 'invalid_options', accepted: ['emails', 'usSsn'], path: 'redact' },
    { call: (t) => t.pack({ tool: 't', callId: 'c', text: 'x' }, { shape: { dropkeys: [] } }), key: 'dropkeys', code: 'invalid_options', accepted: ['dropKeys', 'keepKeys'], path: 'shape' },
    { call: (t) => t.pack({ tool: 't', callid: 'c', text: 'x' }), key: 'callid', code: 'invalid_argument', accepted: ['callId', 'exitCode'] },
    { call: (t) => t.pack({ tool: 't', callId: 'c', binary: { bytes: 3, mediatype: 'x' } }), key: 'mediatype', code: 'invalid_argument', accepted: ['mediaType'], path: 'binary' },
  ],
  getMore: [
    { call: (t) => t.getMore('id', 0, 'c', { pagebytes: 10 }), key: 'pagebytes', code: 'invalid_options', accepted: ['pageBytes'] },
  ],
  getMoreFrom: [
    { call: (t) => t.getMoreFrom('record', 'id', 0, 'c', { shortHash: true }), key: 'shortHash', code: 'invalid_options', accepted: ['shortHashes'] },
  ],
  registerTool: [
    { call: (t) => t.registerTool('strict_tool', { maxByte: 10 }), key: 'maxByte', code: 'invalid_options', accepted: ['maxBytes', 'pageBytes'] },
  ],
  StreamPacker: [
    { call: (t) => new t.StreamPacker('t', 'c', undefined, { limt: 10 }), key: 'limt', code: 'invalid_options', accepted: ['limit'] },
  ],
  redact: [
    { call: (t) => t.redact('x', { secretkeys: ['k'] }), key: 'secretkeys', code: 'invalid_options', accepted: ['secretKeys', 'emails'] },
  ],
  redactJson: [
    { call: (t) => t.redactJson({ a: 1 }, { cardnumbers: false }), key: 'cardnumbers', code: 'invalid_options', accepted: ['cardNumbers'] },
  ],
  truncate: [
    { call: (t) => t.truncate('x', { budgte: { bytes: 5 } }), key: 'budgte', code: 'invalid_options', accepted: ['budget', 'pattern'] },
    { call: (t) => t.truncate('x', { terminal: { headshare: 0.5 } }), key: 'headshare', code: 'invalid_options', accepted: ['headShare', 'tailShare'], path: 'terminal' },
    // A function where data belongs is refused, not dropped (JSON.stringify would drop it).
    { call: (t) => t.truncate('x', { countTokens: () => 1 }), key: 'countTokens', code: 'invalid_options', accepted: [] },
  ],
  checkSpans: [
    { call: (t) => t.checkSpans('', { flagedOnly: true }), key: 'flagedOnly', code: 'invalid_options', accepted: ['flaggedOnly', 'format'] },
  ],
  Checker: [
    { call: (t) => new t.Checker({ fromat: 'auto' }), key: 'fromat', code: 'invalid_options', accepted: ['flaggedOnly', 'format'] },
  ],
  PartReader: [
    { call: (t) => new t.PartReader('otlp', { flagedOnly: true }), key: 'flagedOnly', code: 'invalid_options', accepted: ['flaggedOnly', 'format'] },
  ],
  convertToSpans: [
    { call: (t) => t.convertToSpans('', { fromat: 'auto' }), key: 'fromat', code: 'invalid_options', accepted: ['format'] },
  ],
  toolSpan: [
    { call: (t) => t.toolSpan('t', {}, {}, 'ok', { frm: 'jcs' }), key: 'frm', code: 'invalid_options', accepted: ['form', 'json'] },
  ],
  writeBodies: [
    { call: (t) => t.writeBodies(new Map(), SPAN, {}, {}, { jsn: true }), key: 'jsn', code: 'invalid_options', accepted: ['form', 'json'] },
  ],
  classifyHop: [
    { call: (t) => t.classifyHop('a', 'a', 'a', { runid: 'r' }), key: 'runid', code: 'invalid_options', accepted: ['runId', 'toolCallId'] },
  ],
  HopStream: [
    { call: (t) => new t.HopStream({ canonicalLimt: 5 }), key: 'canonicalLimt', code: 'invalid_options', accepted: ['canonicalLimit'] },
    {
      call: (t) => { const s = new t.HopStream(); s.push('a'); return s.close('a', 'a', { toolname: 'x' }); },
      key: 'toolname', code: 'invalid_options', accepted: ['toolName', 'redactions'],
    },
  ],
  McpPacker: [
    { call: (t) => new t.McpPacker({ tols: {} }), key: 'tols', code: 'invalid_options', accepted: ['tools', 'default', 'redact', 'store'] },
  ],
  getMoreTool: 'a format name',
  diffRuns: [
    { call: (t) => t.diffRuns('', '', { leftname: 'l' }), key: 'leftname', code: 'invalid_options', accepted: ['leftName', 'rightName'] },
  ],
  // Records kept whole or read as the seeds write them: a collector's spans, a log's hop rows,
  // the seed's audit records carry fields of their own, which these functions pass through
  // or ignore by design.
  exportReady: 'spans are any JSON objects (a collector adds fields); only the digest fields are read',
  manifest: 'spans are any JSON objects; only name, status and the digests are read',
  readBack: 'spans are compared whole, every field',
  diffManifests: 'manifests are arrays of 4-tuples, no keys',
  recomputeHop: 'hop rows from a log (the seed\'s or ours) may carry fields of their own',
  compareRuns: 'hop rows from a log may carry fields of their own',
  auditSummary: 'audit records are toolslice\'s or the seed\'s own, which differ',
  bodyAction: 'strings only',
  pageStoreStats: 'no arguments',
  start: 'the module start hook (readable panics), no arguments',
  compareSpanRuns: 'two texts',
  readRecords: 'text and a name',
  filterHopRows: 'a log text and a name',
  emitToolSpan: [
    { call: (t) => t.emitToolSpan({ spanid: 's', name: 'n', observed: 'a', injected: 'a', reason: 'none', tokenCount: 1 }), key: 'spanid', code: 'invalid_argument', accepted: ['spanId', 'tokenCount'] },
  ],
  gateTool: [
    { call: (t) => t.gateTool('e', (a) => a, { fomr: 'jcs' }), key: 'fomr', code: 'invalid_options', accepted: ['form', 'redact', 'volatile'] },
  ],
  generationFingerprint: [
    { call: (t) => t.generationFingerprint('x', { trun: 1 }), key: 'trun', code: 'invalid_options', accepted: ['turn', 'id'] },
  ],
  recordCall: [
    { call: (t) => t.recordCall(new Map(), 'e', {}, {}, 'ok', { fomr: 'jcs' }), key: 'fomr', code: 'invalid_options', accepted: ['form', 'volatile'] },
  ],
  runTerminal: [
    { call: (t) => t.runTerminal({ comand: 'x', stdout: 'a' }), key: 'comand', code: 'invalid_argument', accepted: ['command', 'stdout', 'exitCode'] },
    { call: (t) => t.runTerminal({ command: 'x', stdout: 'a' }, { budgte: { bytes: 5 } }), key: 'budgte', code: 'invalid_options', accepted: ['budget', 'pattern'] },
  ],
  otlpAnnotate: [
    { call: (t) => t.otlpAnnotate(HELD, 'json', { status: 'ok', detail: '', observed_bytes: 1, injected_bytes: 1, join: 'order', jion: 'order' }), key: 'jion', code: 'invalid_argument', accepted: ['status', 'join'] },
  ],
  otlpSplit: 'bytes and an encoding name',
  otlpMerge: 'an array of bytes and an encoding name',
  otlpErrorBody: 'a message, a code and an encoding name',
  otlpEncodingOf: 'a content type',
  otlpJsonToProtobuf: 'bytes',
  OtlpTrace: 'a trace id; its methods take JSON text the pipeline wrote',
  estimateTokens: 'a string',
  isErrorLine: 'a string',
  canonicalize: 'text and a form name',
  canonicalizeWithReport: 'text and a form name',
  canonicalizeValue: 'any JSON value, kept whole, and a form name',
  sha256: 'bytes', sha256Hex: 'bytes', sha256Short: 'bytes', sha256Batch: 'bytes', sha256HexBatch: 'bytes',
  sha256Many: 'an array of strings or bytes',
  Sha256: 'no arguments',
  CheckReport: 'made by Checker.finish, not constructed by callers',
};

function exportsOf(mod) {
  return Object.keys(mod).filter((k) => typeof mod[k] === 'function' && k !== 'default' && !k.startsWith('init') && k !== 'initSync');
}

function assertStrict(t, name, c) {
  assert.throws(() => c.call(t), (err) => {
    assert.ok(err instanceof Error, `${name}: threw ${err}`);
    assert.equal(err.code, c.code, `${name}: ${err.message}`);
    assert.match(err.message, new RegExp('`' + c.key + '`'), `${name}: the message names the key`);
    for (const a of c.accepted) {
      assert.match(err.message, new RegExp('`' + a + '`'), `${name}: the message lists ${a}`);
    }
    if (c.accepted.length) assert.match(err.message, /unknown field `[^`]+`, expected /);
    if (c.path) assert.match(err.message, new RegExp(`\\b${c.path}: unknown field`), `${name}: the message names the path`);
    return true;
  });
}

test('every export of toolslice is classified (a new one must be added here)', () => {
  const missing = exportsOf(toolslice).filter((k) => !(k in cases));
  assert.deepEqual(missing, []);
  const stale = Object.keys(cases).filter((k) => !(k in toolslice));
  assert.deepEqual(stale, []);
});

test('every object parameter of toolslice refuses a misspelt key, naming it and the accepted keys', () => {
  for (const [name, list] of Object.entries(cases)) {
    if (typeof list === 'string') continue;
    for (const c of list) assertStrict(toolslice, name, c);
  }
});

test('toolslice/check: the same decoder and codes', () => {
  const names = exportsOf(check);
  assert.ok(names.length >= 4, names.join(','));
  for (const name of names) {
    assert.ok(name in cases, `${name} is classified`);
    const list = cases[name];
    if (typeof list === 'string') continue;
    for (const c of list) assertStrict(check, name, c);
  }
});

test('the misspelt limit is the security case: pack does not fall back to the default', () => {
  const input = { tool: 't', callId: 'c', text: 'y'.repeat(10000) };
  assert.equal(toolslice.pack(input, { limit: 100 }).envelope.content.length <= 100, true);
  assert.throws(() => toolslice.pack(input, { limt: 100 }), { code: 'invalid_options' });
});

test('correct options still work; undefined values count as absent', () => {
  const r = toolslice.truncate('abc\n'.repeat(100), { budget: { bytes: 100 }, tool: undefined });
  assert.equal(r.truncated, true);
  assert.equal(r.limit, 100);
  assert.equal(new toolslice.HopStream({ canonicalLimit: undefined }).length, 0);
  // An empty input checks nothing: a failure unless empty runs are allowed.
  assert.equal(toolslice.checkSpans('', { flaggedOnly: true }).exitCode, 1);
  assert.equal(toolslice.checkSpans('', { flaggedOnly: true, allowEmpty: true, lenientClipReason: undefined }).exitCode, 0);
});

test('values that are not data are refused with the key path', () => {
  assert.throws(() => toolslice.pack({ tool: 't', callId: 'c', text: 'x' }, { limit: Infinity }), (e) => e.code === 'invalid_options' && /`limit`/.test(e.message));
  assert.throws(() => toolslice.pack({ tool: 't', callId: 'c', text: 'x' }, { redact: { disable: new Set(['jwt']) } }), (e) => e.code === 'invalid_options' && /`redact\.disable`/.test(e.message) && /Map or Set/.test(e.message));
  assert.throws(() => toolslice.pack({ tool: 't', callId: 'c', text: 'x' }, { limit: 10n }), (e) => e.code === 'invalid_options' && /`limit` is a bigint/.test(e.message));
  assert.throws(() => toolslice.truncate('x', [1]), (e) => e.code === 'invalid_options' && /must be an object/.test(e.message));
});
