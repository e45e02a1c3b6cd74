// CSV of a report's rows (RFC 4180: comma separated, CRLF line ends, fields with a comma,
// quote or line break quoted, quotes doubled). JSON and JSONL exports come from the
// package's own renderings; CSV is only a reshaping of the rows the package returned.

export const CSV_COLUMNS = [
  'line', 'status', 'span_id', 'parent_id', 'name', 'observed_bytes', 'injected_bytes',
  'injected_tokens', 'clip_ratio', 'clip_reason', 'sha256_observed', 'sha256_injected',
  'prompt_builder_version', 'model_context_limit_tokens', 'injected_preview', 'detail', 'warnings',
];

/**
 * One CSV cell. A text cell that a spreadsheet would run as a formula (it starts with
 * = + - @, a tab or a carriage return) gets a leading apostrophe, the usual guard against
 * CSV injection: trace fields are untrusted text.
 */
export function csvCell(value) {
  if (value === null || value === undefined) return '';
  if (Array.isArray(value)) value = value.join('; ');
  if (typeof value === 'number') return String(value);
  let text = String(value);
  if (/^[=+\-@\t\r]/.test(text)) text = `'${text}`;
  return /[",\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}

/** The rows as CSV text, with a header line. */
export function rowsToCsv(rows) {
  const lines = [CSV_COLUMNS.join(',')];
  for (const row of rows) lines.push(CSV_COLUMNS.map((c) => csvCell(row[c] ?? (c === 'warnings' ? [] : null))).join(','));
  return lines.join('\r\n') + '\r\n';
}
