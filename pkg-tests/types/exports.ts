// Every export of `toolslice` and `toolslice/check`, called with typed arguments and its
// result used at its declared type. `tsc --noEmit -p types/tsconfig.json` (scripts/test)
// fails when a declaration drifts from what the Rust binding takes or returns, when the
// generated .d.ts does not type-check, or when an export is added or removed without this
// file following (the mapped types below demand one entry per export, no more).
import * as ts from 'toolslice';
import * as check from 'toolslice/check';
import type {
  AuditRecord, BodyAction, CanonicalResult, CheckReport, Conversion, GateProblem, HopRow,
  JsonValue, ManifestDiff, ManifestEntry, MutationHop, PackInput, PackOptions, PackResult,
  PageStoreStats, ReadBack, Redacted, RedactedJson, RunComparison, RunDiff, SpanRunDiff,
  ToolSpan, Truncation, TruncateOptions, AuditSummary, McpConfig, McpPageStats,
  OtlpAnnotation, OtlpDecision, OtlpIngested, OtlpSplit, OtlpTraceSummary,
  EmittedSpan, GatedTool, GenerationFingerprint, TerminalResult,
} from 'toolslice';

const text: string = 'line 1\nline 2\n';
const bytes: Uint8Array = new TextEncoder().encode(text);
const input: PackInput = { tool: 'bash', callId: 'c1', text, exitCode: 0, command: 'ls' };
const packOptions: PackOptions = {
  limit: 100, unit: 'bytes', kind: 'terminal', pageBytes: 200, pageable: true,
  redact: { emails: true, disable: ['jwt'] }, shape: { dropKeys: ['raw'], html: true },
  countTokens: (t: string) => t.length, store: new Map<string, string>(),
};
const truncateOptions: TruncateOptions = { budget: { bytes: 64 }, tool: 'bash', header: false };
const span: ToolSpan = ts.toolSpan('t', { a: 1 }, '{"b":2}', 'ok', { form: 'jcs', json: false });
const row: HopRow = ts.classifyHop(text, bytes, text, { runId: 'r', toolCallId: 'c', toolName: 't', redactions: [] });
const entries: ManifestEntry[] = ts.manifest([span]);
const audit: AuditRecord[] = [];

type Entry = () => unknown;

// One entry per export of the full module: calling it exercises the declared signature.
const full: { [K in keyof typeof ts]: Entry } = {
  default: () => ts.default,
  initSync: () => ts.initSync,
  start: () => ts.start,
  pack: (): PackResult => ts.pack(input, packOptions),
  getMore: (): PackResult => ts.getMore('c1', 0, 'c2', { pageBytes: 300 }),
  getMoreFrom: (): PackResult => ts.getMoreFrom('record', 'c1', 0, null, { shortHashes: true }),
  registerTool: (): void => ts.registerTool('bash', { kind: 'terminal', maxBytes: 4096, pageBytes: 1024, pageable: true }),
  pageStoreStats: (): number => { const s: PageStoreStats = ts.pageStoreStats(); return s.entries + s.maxBytes; },
  StreamPacker: (): PackResult => {
    const s = new ts.StreamPacker('bash', 'c3', 'make', { limit: 512 });
    s.push(bytes);
    s.push(text);
    const held: number = s.heldBytes + s.bytesRead;
    return held >= 0 ? s.finish(0, false) : s.finish();
  },
  redact: (): string => { const r: Redacted = ts.redact(text, { usSsn: true }); return r.receipts[0]?.rule_id ?? r.text; },
  redactJson: (): JsonValue => { const r: RedactedJson = ts.redactJson({ token: 'x' }, { secretKeys: ['token'] }); return r.value; },
  truncate: (): Truncation => ts.truncate(text, truncateOptions, (t: string) => t.length),
  auditSummary: (): AuditSummary => ts.auditSummary(audit),
  estimateTokens: (): number => ts.estimateTokens(text),
  isErrorLine: (): boolean => ts.isErrorLine('error: x'),
  checkSpans: (): number => { const r: CheckReport = ts.checkSpans(text, { flaggedOnly: true, format: 'auto' }); return r.exitCode; },
  Checker: (): string => {
    const c = new ts.Checker({ format: 'spans' });
    const reserved: boolean = c.reserve(1 << 20);
    c.push(bytes);
    const n: number = c.bytesRead + c.linesRead + c.spansRead;
    const report: CheckReport = c.finish();
    const exiting: CheckReport = new ts.Checker().finishForExit();
    const n2: number = report.rowCount + exiting.rowCount;
    const pieces: string = report.tableHead() + report.tableRows(0, n2) + report.tableTail()
      + report.jsonHead() + report.jsonRows(0, n2) + report.jsonTail() + report.jsonlRows(0, n2)
      + report.jsonMiddle() + report.jsonRollup(0, report.rollupCount) + report.jsonEnd()
      + report.tableTailHead() + report.tableTailMiddle();
    const utf8: Uint8Array[] = [report.tableRowsBytes(0, n2), report.jsonRowsBytes(0, n2),
      report.jsonRollupBytes(0, report.rollupCount), report.jsonlRowsBytes(0, n2),
      report.jsonRowsBytes(0, n2, new Uint8Array(1 << 16)), report.tableRowsBytes(0, n2, null), report.tableTailBytes(), report.tableTailBytes(new Uint8Array(64)),
      report.tableWarningsBytes(0, n2), report.tableNotesBytes(0, n2, new Uint8Array(64)),
      report.tableRollupBytes(0, report.rollupCount, null)];
    return `${n} ${report.table()} ${report.json()} ${report.jsonl()} ${report.counts.total} ${pieces} ${utf8.length} ${reserved}`;
  },
  CheckReport: (): unknown => ts.CheckReport,
  PartReader: (): string => {
    const c = new ts.Checker();
    c.push(bytes);
    const format: string | undefined = c.lineFormat;
    const decided: boolean = c.formatDecided;
    const reader = new ts.PartReader(format ?? 'otlp', { flaggedOnly: true });
    reader.push(bytes);
    const part: Uint8Array = reader.finish();
    c.absorb(part);
    return `${part.length} ${c.finish().rowCount} ${decided}`;
  },
  compareSpanRuns: (): SpanRunDiff => ts.compareSpanRuns(text, bytes),
  convertToSpans: (): string => { const c: Conversion = ts.convertToSpans(text, { format: 'otlp' }); return c.jsonl; },
  toolSpan: (): ToolSpan => span,
  writeBodies: (): void => ts.writeBodies(new Map<string, string>(), span, { a: 1 }, '{"b":2}', { json: false }),
  bodyAction: (): BodyAction => ts.bodyAction(span.args_sha256, '{"a":1}', null),
  exportReady: (): GateProblem[] => ts.exportReady([span, { name: 'x' }], new Set<string>()),
  manifest: (): ManifestEntry[] => entries,
  diffManifests: (): ManifestDiff => ts.diffManifests(entries, []),
  readBack: (): boolean => { const r: ReadBack = ts.readBack([span], [span]); return r.ok; },
  classifyHop: (): HopRow => row,
  recomputeHop: (): MutationHop => ts.recomputeHop(row),
  compareRuns: (): RunComparison => ts.compareRuns([row], [row]),
  filterHopRows: (): string => { const f = ts.filterHopRows(text, 'log'); return `${f.rows}${f.kept}${f.invalid}${f.notes.join()}`; },
  HopStream: (): HopRow => {
    const s = new ts.HopStream({ canonicalLimit: 1024 });
    s.push(text);
    return s.length > 0 ? s.close(text, bytes, { toolName: 't' }) : s.close(text, text);
  },
  diffRuns: (): RunDiff => ts.diffRuns(text, bytes, { leftName: 'a', rightName: 'b' }),
  readRecords: (): JsonValue[] => ts.readRecords(text, 'f'),
  canonicalize: (): string => ts.canonicalize('{"b":1,"a":2}', 'jcs'),
  canonicalizeWithReport: (): string[] => { const r: CanonicalResult = ts.canonicalizeWithReport(bytes); return r.duplicate_keys; },
  canonicalizeValue: (): string => ts.canonicalizeValue({ a: [1, 'x', null, true] }, 'python'),
  sha256: (): Uint8Array => ts.sha256(bytes),
  sha256Hex: (): string => ts.sha256Hex(text),
  sha256Short: (): string => ts.sha256Short(new ArrayBuffer(8)),
  sha256Batch: (): Uint8Array => ts.sha256Batch(bytes, new Uint32Array([bytes.length])),
  sha256HexBatch: (): string => ts.sha256HexBatch(bytes, [bytes.length]),
  sha256Many: (): string[] => ts.sha256Many([text, bytes]),
  Sha256: (): string => { const h = new ts.Sha256(); h.update(text); return `${h.length}${h.digestHex()}`; },
  getMoreTool: (): string => `${ts.getMoreTool().name}${ts.getMoreTool('openai').function.name}${ts.getMoreTool('anthropic').input_schema}`,
  McpPacker: (): number => {
    const config: McpConfig = { default: {}, store: { max_bytes: 1 << 20, max_entries: 16 } };
    const p = new ts.McpPacker(config);
    const stats: McpPageStats = p.pageStats;
    return stats.entries + p.store.maxBytes;
  },
  otlpEncodingOf: (): string | undefined => ts.otlpEncodingOf('application/x-protobuf'),
  otlpSplit: (): number => {
    const s: OtlpSplit = ts.otlpSplit(bytes, 'json');
    const held: Uint8Array | undefined = s.traces[0]?.held[0]?.body;
    return s.spans + s.tools + s.models + (s.passthrough?.length ?? 0) + (held?.length ?? 0) + s.traces.length;
  },
  otlpAnnotate: (): Uint8Array => {
    const note: OtlpAnnotation = { status: 'ok', detail: '', observed_bytes: 1, injected_bytes: null, join: 'order' };
    return ts.otlpAnnotate(bytes, 'protobuf', note);
  },
  otlpMerge: (): Uint8Array => ts.otlpMerge([bytes, bytes], 'protobuf'),
  otlpErrorBody: (): Uint8Array => ts.otlpErrorBody('bad', 3, 'json'),
  otlpJsonToProtobuf: (): Uint8Array => ts.otlpJsonToProtobuf(bytes),
  emitToolSpan: (): string => {
    const e: EmittedSpan = ts.emitToolSpan({ spanId: 's1', name: 'read_file', observed: text, injected: 'line 1\n', reason: 'prompt_token_cap', tokenCount: 2 });
    return e.line + String(e.record.injected_bytes);
  },
  gateTool: (): Promise<unknown> => {
    const tool: GatedTool<unknown, unknown> = ts.gateTool('echo', (args: unknown) => args, { store: new Map() });
    return tool({ a: 1 });
  },
  generationFingerprint: (): string => {
    const g: GenerationFingerprint = ts.generationFingerprint(text, { turn: 1 });
    return g.generation_sha256 + g.generation_len;
  },
  recordCall: (): ToolSpan => ts.recordCall(new Map<string, string>(), 'echo', { a: 1 }, { b: 2 }, 'ok', { form: 'python' }),
  runTerminal: (): string => {
    const r: TerminalResult = ts.runTerminal({ command: 'make', stdout: text, stderr: 'error: x\n', exitCode: 2 }, { budget: { bytes: 400 } });
    return r.output + String(r.exit_code);
  },
  OtlpTrace: (): number => {
    const t = new ts.OtlpTrace('ab');
    const got: OtlpIngested = t.ingest('{"trace_id":"ab","tools":[],"models":[]}', 0, 1000);
    const expired: OtlpDecision[] = t.expire(0, 1000);
    const released: OtlpDecision[] = t.releaseAll();
    const summary: OtlpTraceSummary = ts.OtlpTrace.fromJson(t.toJson()).summary();
    return got.accepted.length + expired.length + released.length + summary.decided + t.waiting() + (t.nextDue() ?? 0);
  },
};

// The check-only module: the same declarations for its smaller API.
const small: { [K in keyof typeof check]: Entry } = {
  default: () => check.default,
  initSync: () => check.initSync,
  start: () => check.start,
  checkSpans: (): CheckReport => check.checkSpans(bytes, { flaggedOnly: false, limits: { rowBytes: 1 << 20, factBytes: 1 << 20, lineBytes: 1 << 16, documentBytes: 1 << 20 } }),
  Checker: (): CheckReport => new check.Checker().finish(),
  CheckReport: (): unknown => check.CheckReport,
  PartReader: (): Uint8Array => new check.PartReader('langfuse').finish(),
  compareSpanRuns: (): SpanRunDiff => check.compareSpanRuns(text, text),
  convertToSpans: (): Conversion => check.convertToSpans(bytes),
};

export const everything = [full, small];
