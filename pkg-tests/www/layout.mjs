// Layout facts a person would notice, measured in the browser on the laid-out page (not on
// the DOM's structure): tables lay out as tables and every body cell sits under its header
// cell, nothing runs off the side of the screen, no text is drawn over other text, and every
// control is on screen, uncovered and at least 24 x 24 CSS px (WCAG 2.2 target size).
// `layoutProblems(page)` returns one plain sentence per problem; [] when the page is sound.

/** Smallest side of a control, CSS px. */
export const MIN_TARGET = 24;

export async function layoutProblems(page) {
  return page.evaluate((MIN_TARGET) => {
    const problems = [];
    const say = (text) => { if (problems.length < 40) problems.push(text); };
    const vw = document.documentElement.clientWidth;
    const label = (e) => {
      const cls = typeof e.className === 'string' && e.className.trim() ? `.${e.className.trim().split(/\s+/).join('.')}` : '';
      const text = (e.textContent ?? '').trim().replace(/\s+/g, ' ').slice(0, 40);
      return `${e.tagName.toLowerCase()}${e.id ? `#${e.id}` : ''}${cls}${text ? ` "${text}"` : ''}`;
    };
    const shown = (e) => {
      if (e.closest('[hidden], .visually-hidden')) return false;
      for (let n = e; n && n !== document.documentElement; n = n.parentElement) {
        const cs = getComputedStyle(n);
        if (cs.display === 'none' || cs.visibility === 'hidden' || cs.opacity === '0') return false;
        if (n.tagName === 'DETAILS' && !n.open && n !== e && !e.closest('summary')) return false;
      }
      const r = e.getBoundingClientRect();
      return r.width > 0 && r.height > 0;
    };
    /** The part of the screen an element can draw in: its clipping ancestors' boxes (and its own, for the text inside it). */
    const clipOf = (e, self = false) => {
      let box = { left: -Infinity, top: -Infinity, right: Infinity, bottom: Infinity };
      for (let n = self ? e : e.parentElement; n && n !== document.body; n = n.parentElement) {
        const cs = getComputedStyle(n);
        if (cs.overflowX !== 'visible' || cs.overflowY !== 'visible') {
          const r = n.getBoundingClientRect();
          box = {
            left: Math.max(box.left, r.left), top: Math.max(box.top, r.top),
            right: Math.min(box.right, r.right), bottom: Math.min(box.bottom, r.bottom),
          };
        }
      }
      return box;
    };
    const cut = (r, c) => ({ left: Math.max(r.left, c.left), top: Math.max(r.top, c.top), right: Math.min(r.right, c.right), bottom: Math.min(r.bottom, c.bottom) });
    const area = (r) => Math.max(0, r.right - r.left) * Math.max(0, r.bottom - r.top);

    // 1. Table parts lay out as a table (a stray `display` rule once made rows flex boxes).
    // One sentence per table: the first row and cell that is not laid out as one, and how many.
    for (const table of document.querySelectorAll('table')) {
      if (!shown(table)) continue;
      const rows = [...table.rows].filter(shown);
      const badRows = rows.filter((tr) => getComputedStyle(tr).display !== 'table-row');
      const badCells = rows.flatMap((tr) => [...tr.cells]).filter((c) => getComputedStyle(c).display !== 'table-cell');
      if (badRows.length) say(`${label(table)}: ${badRows.length} of ${rows.length} rows are laid out as "${getComputedStyle(badRows[0]).display}", not as table rows, e.g. ${label(badRows[0])}`);
      if (badCells.length) say(`${label(table)}: ${badCells.length} cells are laid out as "${getComputedStyle(badCells[0]).display}", not as table cells, e.g. ${label(badCells[0])}`);
    }

    // 2. Every body cell lies under its header cell, and a row's cells start on one line.
    for (const table of document.querySelectorAll('table')) {
      if (!shown(table) || !table.tHead) continue;
      const headRow = table.tHead.rows[table.tHead.rows.length - 1];
      const columns = [];
      for (const th of headRow.cells) {
        const r = th.getBoundingClientRect();
        for (let k = 0; k < th.colSpan; k++) columns.push({ left: r.left, right: r.right, name: th.textContent.trim() || '(unnamed)' });
      }
      let misplaced = 0;
      let wrapped = 0;
      let first = null;
      for (const body of table.tBodies) {
        for (const tr of body.rows) {
          if (!shown(tr) || [...tr.cells].some((c) => c.colSpan > 1)) continue;
          const tops = new Set();
          [...tr.cells].forEach((cell, i) => {
            const r = cell.getBoundingClientRect();
            tops.add(Math.round(r.top));
            const col = columns[i];
            if (!col) say(`${label(table)}: row ${label(tr)} has a cell beyond the header's ${columns.length} columns`);
            else if (r.left < col.left - 1 || r.right > col.right + 1) {
              misplaced++;
              first ??= `cell ${i + 1} of ${label(tr)} (x ${Math.round(r.left)}–${Math.round(r.right)}) is not under its header "${col.name}" (x ${Math.round(col.left)}–${Math.round(col.right)})`;
            }
          });
          if (tops.size > 1) wrapped++;
        }
      }
      if (misplaced) say(`${label(table)}: ${misplaced} body cells are not under their header cell; the first: ${first}`);
      if (wrapped) say(`${label(table)}: the cells of ${wrapped} rows do not start on one line`);
    }

    // 2b. Chart labels are drawn inside their chart (an SVG clips what runs past its edge).
    for (const chart of document.querySelectorAll('svg')) {
      if (!shown(chart)) continue;
      const c = chart.getBoundingClientRect();
      for (const t of chart.querySelectorAll('text')) {
        const r = t.getBoundingClientRect();
        if (r.width && (r.left < c.left - 1 || r.right > c.right + 1 || r.top < c.top - 1 || r.bottom > c.bottom + 1)) {
          say(`${label(chart)}: the label "${t.textContent}" runs past the chart's edge and is cut off`);
        }
      }
    }

    // 3. Nothing overflows the viewport horizontally (wide content scrolls in its own box).
    const page = document.scrollingElement;
    if (page.scrollWidth > vw + 1) say(`the page is ${page.scrollWidth} px wide in a ${vw} px viewport: it scrolls sideways`);
    for (const e of document.body.querySelectorAll('*')) {
      if (e.closest('svg') && e.tagName.toLowerCase() !== 'svg') continue;
      const r = e.getBoundingClientRect();
      if (r.width === 0 || (r.right <= vw + 1 && r.left >= -1)) continue;
      if (!shown(e) || e.closest('.skip')) continue;
      const c = clipOf(e);
      if (c.right <= vw + 1 && c.left >= -1) continue; // clipped by a box that fits
      const parent = e.parentElement;
      const pr = parent?.getBoundingClientRect();
      if (pr && (pr.right > vw + 1 || pr.left < -1)) continue; // report the outermost only
      say(`${label(e)} reaches x ${Math.round(r.left)}–${Math.round(r.right)}, outside the ${vw} px viewport`);
    }

    // 4. No text is drawn over other text.
    const rects = [];
    const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
    const range = document.createRange();
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      if (!node.textContent.trim()) continue;
      const parent = node.parentElement;
      if (!parent || parent.closest('svg, script, style, select, textarea, option') || !shown(parent)) continue;
      const clip = clipOf(parent, true);
      range.selectNodeContents(node);
      for (const r of range.getClientRects()) {
        const v = cut(r, clip);
        if (area(v) > 0) rects.push({ ...v, node, parent });
      }
    }
    rects.sort((a, b) => a.top - b.top);
    for (let i = 0; i < rects.length; i++) {
      const a = rects[i];
      for (let j = i + 1; j < rects.length && rects[j].top < a.bottom; j++) {
        const b = rects[j];
        if (a.node === b.node) continue;
        const o = cut(a, b);
        // Line boxes of adjacent lines may touch by a pixel or two; glyphs on glyphs is more.
        if (o.right - o.left > 2 && o.bottom - o.top > 4) {
          say(`text overlaps: "${a.node.textContent.trim().slice(0, 30)}" (${label(a.parent)}) and "${b.node.textContent.trim().slice(0, 30)}" (${label(b.parent)})`);
        }
      }
    }

    // 5. Controls: on screen, not covered, large enough to hit.
    const x0 = window.scrollX;
    const y0 = window.scrollY;
    const scrolled = [];
    for (const e of document.querySelectorAll('button, input, select, textarea, summary, [role="tab"], a[href]')) {
      if (!shown(e) || e.closest('.skip') || (e.getAttribute('tabindex') === '-1' && e.getAttribute('aria-hidden') === 'true')) continue;
      if (e.tagName === 'A' && e.closest('p, li, td')) continue; // links inside running text
      const r = e.getBoundingClientRect();
      if (r.width < MIN_TARGET - 0.5 || r.height < MIN_TARGET - 0.5) say(`${label(e)} is ${Math.round(r.width)} x ${Math.round(r.height)} px, smaller than ${MIN_TARGET} x ${MIN_TARGET}`);
      if (r.left < -1 || r.right > vw + 1) {
        const c = clipOf(e);
        if (r.right > c.right + 1 || r.left < c.left - 1) say(`${label(e)} is partly off screen (x ${Math.round(r.left)}–${Math.round(r.right)})`);
      }
      // Bring it into view (its scroll boxes too), then ask what is drawn at its centre.
      for (let n = e.parentElement; n; n = n.parentElement) if (n.scrollTop || n.scrollLeft) scrolled.push([n, n.scrollLeft, n.scrollTop]);
      e.scrollIntoView({ block: 'center', inline: 'nearest' });
      const s = e.getBoundingClientRect();
      const hit = document.elementFromPoint(s.left + s.width / 2, s.top + s.height / 2);
      if (!hit || !(hit === e || e.contains(hit) || (hit.control === e) || (e.labels && [...e.labels].includes(hit)))) {
        say(`${label(e)} is covered by ${hit ? label(hit) : 'nothing on screen'}`);
      }
    }
    for (const n of document.querySelectorAll('*')) if (n.scrollTop || n.scrollLeft) { n.scrollTop = 0; n.scrollLeft = 0; }
    for (const [n, l, t] of scrolled) { n.scrollLeft = l; n.scrollTop = t; }
    window.scrollTo(x0, y0);
    return problems;
  }, MIN_TARGET);
}
