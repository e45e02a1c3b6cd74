// Input helper shared by the small views: a text box that also takes a dropped or chosen
// file (kept as exact bytes).
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
    el('div', { class: 'button-row' }, choose, clear, picker));

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
