// Input helpers shared by the small views: a text box that also takes a dropped or chosen
// file (kept as exact bytes), and a reader for files of JSON records.
import { el, bytes as fmtBytes } from './dom.js';

/**
 * A labelled input that holds either pasted text or the exact bytes of a dropped/chosen
 * file. `onchange()` fires on every change; `value()` is the text or the Uint8Array.
 */
export function byteField({ id, label, hint, rows = 5, onchange }) {
  let file = null; // { name, bytes }
  const text = el('textarea', { id, rows, spellcheck: 'false', autocomplete: 'off' });
  const picker = el('input', { type: 'file', class: 'visually-hidden', tabindex: '-1', 'aria-hidden': 'true' });
  const choose = el('button', { type: 'button', class: 'small' }, 'choose a file');
  const clear = el('button', { type: 'button', class: 'small', hidden: true }, 'clear the file');
  const loaded = el('p', { class: 'loaded', hidden: true, role: 'status' });
  const node = el('div', { class: 'byte-field' },
    el('label', { for: id }, label),
    hint ? el('p', { class: 'hint' }, hint) : null,
    text, loaded,
    el('div', { class: 'row' }, choose, clear, picker));

  async function useFile(f) {
    file = { name: f.name, bytes: new Uint8Array(await f.arrayBuffer()) };
    text.hidden = true;
    loaded.hidden = false;
    clear.hidden = false;
    loaded.textContent = `${f.name}: ${fmtBytes(file.bytes.length)}, hashed exactly as in the file.`;
    onchange();
  }
  choose.addEventListener('click', () => picker.click());
  picker.addEventListener('change', () => { if (picker.files[0]) useFile(picker.files[0]); picker.value = ''; });
  clear.addEventListener('click', () => {
    file = null;
    text.hidden = false;
    loaded.hidden = true;
    clear.hidden = true;
    text.focus();
    onchange();
  });
  text.addEventListener('input', () => onchange());
  node.addEventListener('dragover', (e) => { if (e.dataTransfer?.types?.includes('Files')) { e.preventDefault(); node.classList.add('over'); } });
  node.addEventListener('dragleave', () => node.classList.remove('over'));
  node.addEventListener('drop', (e) => {
    if (!e.dataTransfer?.files?.length) return;
    e.preventDefault();
    e.stopPropagation();
    node.classList.remove('over');
    useFile(e.dataTransfer.files[0]);
  });
  return {
    node,
    value: () => (file ? file.bytes : text.value),
    source: () => (file ? file.name : null),
    setText(value) {
      file = null;
      text.hidden = false;
      loaded.hidden = true;
      clear.hidden = true;
      text.value = value;
      onchange();
    },
  };
}

/**
 * The JSON records of a text: a JSON array, one JSON object, or JSON lines (blank lines
 * skipped), read the way `toolslice diff` reads its files. Throws an Error naming the line.
 */
export function readRecords(text, name) {
  const trimmed = text.trim();
  if (trimmed === '') return [];
  if (trimmed.startsWith('[')) {
    let value;
    try {
      value = JSON.parse(trimmed);
    } catch (err) {
      throw new Error(`${name}: not JSON: ${err.message}`);
    }
    if (Array.isArray(value)) return value;
  }
  const records = [];
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i].trim();
    if (line === '') continue;
    try {
      records.push(JSON.parse(line));
    } catch (err) {
      if (records.length === 0) {
        try {
          return [JSON.parse(trimmed)];
        } catch { /* name the line below */ }
      }
      throw new Error(`${name}, line ${i + 1}: not JSON: ${err.message}`);
    }
  }
  return records;
}
