// The report's clip-ratio histogram (the share of observed bytes that did not reach the
// model), drawn as plain SVG: eleven bars with their counts written on them, and a table of
// the same numbers for screen readers. The bins are the report's own `clip_histogram`
// (counted in Rust over every tool span, flagged-only or not): this file only draws them.
import { el, num, svg } from './dom.js';

/** Bar labels: "not cut", then the report's ten bins (i/10, (i+1)/10]. */
export const LABELS = ['not cut', ...Array.from({ length: 10 }, (_, k) => `${k * 10}–${(k + 1) * 10}%`)];

/** The report's histogram as [{ label, total }] in bar order, and the spans with no ratio. */
export function histogramBars(data) {
  const h = data.clip_histogram;
  const counts = [h.not_cut, ...h.bins];
  const drawn = counts.reduce((a, b) => a + b, 0);
  // A span without both lengths has no ratio and is in no bin.
  return { bars: counts.map((total, i) => ({ label: LABELS[i], total })), unknown: Math.max(0, data.counts.total - drawn) };
}

/** The histogram figure for a report. */
export function histogram(data, { caption }) {
  const { bars, unknown } = histogramBars(data);
  const max = Math.max(1, ...bars.map((b) => b.total));
  const W = 360;
  const H = 170;
  const top = 16;
  const bottom = 40;
  // Room for the first rotated label ("not cut"), which runs left of its bar.
  const left = 26;
  const band = (W - left) / bars.length;
  const barW = Math.max(4, band - 6);
  const scale = (H - top - bottom) / max;
  const described = bars.filter((b) => b.total).map((b) => `${b.label}: ${b.total}`).join(', ') || 'no spans';
  const chart = svg('svg', {
    viewBox: `0 0 ${W} ${H}`, class: 'histogram', role: 'img',
    'aria-label': `Clip ratio histogram. ${described}.`,
  });
  bars.forEach((bar, i) => {
    const x = left + i * band + (band - barW) / 2;
    const h = bar.total ? Math.max(1, bar.total * scale) : 0;
    const y = H - bottom - h;
    // Bar 0 is "not cut"; any other bar lost bytes. Colour says it twice: the label says it first.
    if (bar.total) {
      chart.append(svg('rect', { x, y, width: barW, height: h, class: `bar ${i === 0 ? 'b-whole' : 'b-cut'}` },
        svg('title', { text: `${bar.label}: ${bar.total} tool spans` })));
      chart.append(svg('text', { x: x + barW / 2, y: y - 3, class: 'count', 'text-anchor': 'middle', text: num(bar.total) }));
    }
    const lx = x + barW / 2;
    chart.append(svg('text', {
      x: lx, y: H - bottom + 10, class: 'tick', 'text-anchor': 'end',
      transform: `rotate(-40 ${lx} ${H - bottom + 10})`, text: bar.label,
    }));
  });
  chart.append(svg('line', { x1: 0, x2: W, y1: H - bottom, y2: H - bottom, class: 'axis' }));

  const table = el('table', { class: 'mini' },
    el('caption', { class: 'visually-hidden' }, 'Clip ratio histogram as a table'),
    el('thead', {}, el('tr', {}, el('th', { scope: 'col' }, 'share cut'), el('th', { scope: 'col', class: 'num' }, 'tool spans'))),
    el('tbody', {}, bars.map((b) => el('tr', {},
      el('th', { scope: 'row' }, b.label),
      el('td', { class: 'num' }, num(b.total))))));
  return el('figure', { class: 'histogram-figure' },
    el('figcaption', {}, caption),
    chart,
    unknown ? el('p', { class: 'hint' }, `${num(unknown)} tool span(s) have no ratio (a length is missing) and are not drawn.`) : null,
    el('details', { class: 'as-table' }, el('summary', {}, 'Show these numbers as a table'), table));
}
