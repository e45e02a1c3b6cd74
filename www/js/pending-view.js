// The diff, hop and packer views, until the package functions they show are built: each
// says what it will show and which part of the package it waits for, so nobody mistakes an
// empty panel for a result.
import { el } from './dom.js';

const PENDING = {
  'diff-root': {
    title: 'Diff two runs',
    what: ['Drop two runs to see their manifest diff (only_left, only_right).',
      'The tool calls whose observed hashes match while their injected hashes differ: the same file, a different slice.',
      'Prompt builder version changes between the runs: compare builders before comparing models.'],
    needs: 'the manifest and manifest diff from the package (manifest, diffManifests)',
  },
  'hop-root': {
    title: 'Mutation hop',
    what: ['Paste or drop the process, adapter and model bytes of one tool call.',
      'See the three SHA-256 digests and lengths, the mutation hop label, and the row of the decision table that says where to look.'],
    needs: 'the three-boundary classifier from the package (classifyHop)',
  },
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
