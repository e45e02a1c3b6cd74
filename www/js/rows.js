// A report's rows, kept where they were made (the check worker) and served one page at a
// time, so that the page's main thread never holds, clones or scans a run's rows: a run of
// 100,000 tool spans costs the tab one page of 200. The rows and their order are the
// package's (priority order); this file only selects the ones a person's filters ask for.

/** Rows per page of the table. */
export const PAGE = 200;
export const STATUSES = ['silent_clip', 'incomplete', 'hash_mismatch', 'clipped', 'reformatted', 'ok'];
/** Search texts are built this many rows at a time between messages, once a report is done. */
const INDEX_CHUNK = 5000;

/** Everything a search can find in a row, lower-cased. */
export function rowText(row) {
  return [row.line, row.span_id, row.parent_id, row.name, row.status, row.clip_reason, row.sha256_observed,
    row.sha256_injected, row.injected_preview, row.prompt_builder_version, ...row.detail, ...(row.warnings ?? []),
    ...(row.notes ?? [])]
    .filter((v) => v !== null && v !== undefined).join('\n').toLowerCase();
}

export class RowStore {
  constructor(rows) {
    this.rows = rows;
    this.texts = new Array(rows.length);
    this.indexed = 0;
    this.last = null;
  }

  /** What the filter menus list: each tool, each builder (null: none), rows per status. */
  summary() {
    const listed = Object.fromEntries(STATUSES.map((s) => [s, 0]));
    const tools = new Set();
    const builders = new Set();
    for (const r of this.rows) {
      listed[r.status]++;
      tools.add(r.name);
      builders.add(r.prompt_builder_version ?? null);
    }
    return {
      total: this.rows.length,
      listed,
      tools: [...tools].sort(),
      builders: [...builders].sort((a, b) => (a ?? '').localeCompare(b ?? '')),
    };
  }

  text(i) {
    return (this.texts[i] ??= rowText(this.rows[i]));
  }

  /** Builds some search texts ahead of the first search; false once all are built. */
  indexSome() {
    const end = Math.min(this.rows.length, this.indexed + INDEX_CHUNK);
    for (; this.indexed < end; this.indexed++) this.text(this.indexed);
    return this.indexed < this.rows.length;
  }

  /**
   * One page of the rows that pass `filter` ({ status, tool, builder, q }: a field left
   * undefined does not filter; builder null means rows without one), from `first`.
   */
  query(filter, first = 0) {
    const key = JSON.stringify([filter.status, filter.tool, filter.builder === undefined ? 0 : [filter.builder], filter.q]);
    if (this.last?.key !== key) {
      const q = (filter.q ?? '').trim().toLowerCase();
      const matching = [];
      for (let i = 0; i < this.rows.length; i++) {
        const r = this.rows[i];
        if (filter.status && r.status !== filter.status) continue;
        if (filter.tool !== undefined && r.name !== filter.tool) continue;
        if (filter.builder !== undefined && (r.prompt_builder_version ?? null) !== filter.builder) continue;
        if (q && !this.text(i).includes(q)) continue;
        matching.push(i);
      }
      this.last = { key, matching };
    }
    const { matching } = this.last;
    const start = Math.max(0, Math.min(first, Math.max(0, (Math.ceil(matching.length / PAGE) - 1) * PAGE)));
    return {
      first: start,
      matching: matching.length,
      rows: matching.slice(start, start + PAGE).map((i) => this.rows[i]),
    };
  }
}
