// The packer view, until the package's packer is built: it says what it will show and which
// part of the package it waits for, so nobody mistakes an empty panel for a result.
import { el } from './dom.js';

const PENDING = {
  'packer-root': {
    title: 'Classroom packer',
    what: ['A limit slider that starts at 80 characters and three examples: get_job stays whole, get_logs is cut with a hint to call get_more, ping stays whole.',
      'Edit the tool output and kind; see the packed envelope, the kept and omitted regions, the marker, truncated, the hint, and a planted fake token redacted.',
      'Nothing is sent to a server: the packer runs in this tab.'],
    needs: 'the packer from the package (pack)',
  },
};

export function initPendingView() {
  for (const [id, info] of Object.entries(PENDING)) {
    const root = document.getElementById(id);
    if (!root || root.childElementCount) continue;
    root.append(el('div', { class: 'pending' },
      el('p', { class: 'lead' }, el('strong', {}, `${info.title}: not in this build yet.`),
        ` This view appears when the package gains ${info.needs}. It will show:`),
      el('ul', {}, info.what.map((w) => el('li', {}, w)))));
  }
}
