// A histogram of clip ratios (the share of observed bytes that did not reach the model),
// drawn as plain SVG: eleven bars, stacked by status, with counts written on the bars and a
// table of the same numbers for screen readers. Bucketing rows by a number the package
// computed is all the arithmetic done here; no status is decided in this file.
import { el, num, svg } from './dom.js';

export const STACK = ['silent_clip', 'hash_mismatch', 'clipped', 'ok'];

/**
 * Buckets rows by `clip_ratio`: "grew" (< 0: more bytes injected than observed), "0%"
 * (nothing cut), then ten buckets of ten percentage points, (0,10] … (90,100].
 * Rows without a ratio (lengths missing) are counted in `unknown`.
 */
export function bucketRatios(rows) {
  const labels = ['grew', '0%', ...Array.from({ length: 10 }, (_, k) => `${k * 10}–${(k + 1) * 10}%`)];
  const buckets = labels.map((label) => ({ label, total: 0, by: {} }));
  let unknown = 0;
  for (const row of rows) {
    const r = row.clip_ratio;
    if (r === null || r === undefined || Number.isNaN(r)) {
      unknown++;
      continue;
    }
    let index;
    if (r < 0) index = 0;
    else if (r === 0) index = 1;
    else index = 1 + Math.min(10, Math.max(1, Math.ceil(r * 10 - 1e-9)));
    const bucket = buckets[index];
    bucket.total++;
    bucket.by[row.status] = (bucket.by[row.status] ?? 0) + 1;
  }
  // "grew" is shown only when some row grew.
  return { buckets: buckets[0].total ? buckets : buckets.slice(1), unknown };
}

/** The histogram figure for `rows`. */
export function histogram(rows, { caption }) {
  const { buckets, unknown } = bucketRatios(rows);
  const max = Math.max(1, ...buckets.map((b) => b.total));
  const W = 360;
  const H = 170;
  const top = 16;
  const bottom = 36;
  const left = 4;
  const band = (W - left) / buckets.length;
  const barW = Math.max(4, band - 6);
  const scale = (H - top - bottom) / max;
  const described = buckets.filter((b) => b.total).map((b) => `${b.label}: ${b.total}`).join(', ') || 'no rows';
  const chart = svg('svg', {
    viewBox: `0 0 ${W} ${H}`, class: 'histogram', role: 'img',
    'aria-label': `Clip ratio histogram. ${described}.`,
  });
  buckets.forEach((bucket, i) => {
    const x = left + i * band + (band - barW) / 2;
    let y = H - bottom;
    for (const status of STACK) {
      const count = bucket.by[status] ?? 0;
      if (!count) continue;
      const h = Math.max(1, count * scale);
      y -= h;
      chart.append(svg('rect', { x, y, width: barW, height: h, class: `bar s-${status}` },
        svg('title', { text: `${bucket.label}: ${count} ${status}` })));
    }
    if (bucket.total) {
      chart.append(svg('text', { x: x + barW / 2, y: y - 3, class: 'count', 'text-anchor': 'middle', text: bucket.total }));
    }
    const lx = x + barW / 2;
    chart.append(svg('text', {
      x: lx, y: H - bottom + 10, class: 'tick', 'text-anchor': 'end',
      transform: `rotate(-40 ${lx} ${H - bottom + 10})`, text: bucket.label,
    }));
  });
  chart.append(svg('line', { x1: 0, x2: W, y1: H - bottom, y2: H - bottom, class: 'axis' }));

  const legend = el('ul', { class: 'legend' },
    STACK.map((status) => el('li', {}, el('span', { class: `swatch s-${status}`, 'aria-hidden': 'true' }), status)));
  const table = el('table', { class: 'mini' },
    el('caption', { class: 'visually-hidden' }, 'Clip ratio histogram as a table'),
    el('thead', {}, el('tr', {}, el('th', { scope: 'col' }, 'share cut'), STACK.map((s) => el('th', { scope: 'col' }, s)), el('th', { scope: 'col' }, 'total'))),
    el('tbody', {}, buckets.map((b) => el('tr', {},
      el('th', { scope: 'row' }, b.label),
      STACK.map((s) => el('td', { class: 'num' }, num(b.by[s] ?? 0))),
      el('td', { class: 'num' }, num(b.total))))));
  return el('figure', { class: 'histogram-figure' },
    el('figcaption', {}, caption),
    chart,
    legend,
    unknown ? el('p', { class: 'hint' }, `${num(unknown)} row(s) have no ratio (a length is missing) and are not drawn.`) : null,
    el('details', { class: 'as-table' }, el('summary', {}, 'Show these numbers as a table'), table));
}
