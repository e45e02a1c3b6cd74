// DOM helpers shared by the views. Everything that comes from a trace goes through `el`,
// which sets text with text nodes and attributes with setAttribute: no innerHTML anywhere
// on this page, so a hostile string in a trace can only ever be shown, never run.

/**
 * Creates an element. `props`: `class`, `text`, `on<event>` handlers, `hidden`, anything
 * else as an attribute (null/undefined/false skip it). Children: nodes, or values shown as
 * text (null/undefined/false skip them).
 */
export function el(tag, props = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(props)) {
    if (value === null || value === undefined || value === false) continue;
    if (key === 'class') node.className = value;
    else if (key === 'text') node.textContent = String(value);
    else if (key === 'hidden') node.hidden = Boolean(value);
    else if (key.startsWith('on') && typeof value === 'function') node.addEventListener(key.slice(2), value);
    else node.setAttribute(key, value === true ? '' : String(value));
  }
  append(node, children);
  return node;
}

function append(node, children) {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    if (Array.isArray(child)) append(node, child);
    else node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
}

const SVG = 'http://www.w3.org/2000/svg';

/** An SVG element; attributes only, text through `text`. */
export function svg(tag, attrs = {}, ...children) {
  const node = document.createElementNS(SVG, tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (value === null || value === undefined) continue;
    if (key === 'text') node.textContent = String(value);
    else node.setAttribute(key, String(value));
  }
  for (const child of children) if (child) node.append(child);
  return node;
}

const numberFormat = new Intl.NumberFormat('en');

/** 12,345 */
export function num(n) {
  return n === null || n === undefined ? '—' : numberFormat.format(n);
}

/** 1.2 MB (decimal units, as disks and browsers report file sizes). */
export function bytes(n) {
  if (n === null || n === undefined) return '—';
  if (n < 1000) return `${n} B`;
  const units = ['kB', 'MB', 'GB', 'TB'];
  let value = n;
  let unit = -1;
  while (value >= 1000 && unit < units.length - 1) {
    value /= 1000;
    unit++;
  }
  return `${Number(value.toFixed(value < 10 ? 2 : value < 100 ? 1 : 0))} ${units[unit]}`;
}

/** 1.4 s, 320 ms */
export function duration(ms) {
  return ms < 1000 ? `${Math.round(ms)} ms` : `${(ms / 1000).toFixed(1)} s`;
}

/** Offers `text` as a file download, made in the page (a blob: URL, never a request out). */
export function download(name, text, type) {
  const url = URL.createObjectURL(new Blob([text], { type }));
  const a = el('a', { href: url, download: name, hidden: true });
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 60_000);
}

/** Calls `fn` once input has been quiet for `ms`. */
export function debounce(fn, ms) {
  let timer;
  return (...args) => {
    clearTimeout(timer);
    timer = setTimeout(() => fn(...args), ms);
  };
}

/** A short text announced to screen readers through the view's live region. */
export function announce(region, text) {
  region.textContent = '';
  // A fresh text node is announced even when the text repeats.
  setTimeout(() => { region.textContent = text; }, 30);
}

/** A labelled box that scrolls sideways when its content (a wide table) is wider than the screen. */
export function scrollBox(label, child) {
  return el('div', { class: 'table-scroll', role: 'region', 'aria-label': label, tabindex: '0' }, child);
}
