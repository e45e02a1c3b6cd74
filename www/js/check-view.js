// The check view: files (dropped, picked or pasted) become jobs; a module worker checks them
// one after another as streams, reporting progress; each job shows its progress bar, a
// cancel button, any error in plain words next to the file, and then its report.
import { el, num, bytes, duration, announce } from './dom.js';
import { renderReport, verdictText } from './report-view.js';

/** Files larger than this are always checked in flagged-only mode (bounded memory). */
export const LARGE_FILE_BYTES = 64 * 1000 * 1000;

export function initCheckView() {
  const $ = (id) => document.getElementById(id);
  const jobsRoot = $('jobs');
  const status = $('status');
  const flaggedOnly = $('flagged-only');
  $('large-threshold').textContent = bytes(LARGE_FILE_BYTES);

  const jobs = new Map();
  let nextId = 1;
  let pastes = 0;
  let worker = null;

  function getWorker() {
    if (worker) return worker;
    worker = new Worker(new URL('./check-worker.js', import.meta.url), { type: 'module', name: 'toolslice-check' });
    worker.onmessage = (event) => onWorkerMessage(event.data);
    worker.onerror = (event) => {
      event.preventDefault?.();
      for (const job of jobs.values()) {
        if (job.state === 'queued' || job.state === 'checking') {
          fail(job, 'The checker stopped unexpectedly in this browser. Reload the page and try again.');
        }
      }
      worker = null;
    };
    return worker;
  }

  function onWorkerMessage(msg) {
    const job = jobs.get(msg.id);
    if (!job) return;
    switch (msg.type) {
      case 'started':
      case 'progress':
        job.state = 'checking';
        showProgress(job, msg);
        break;
      case 'done': {
        job.state = 'done';
        showProgress(job, msg, true);
        const meta = { bytes: msg.bytes, ms: msg.ms, large: job.large, endsWithNewline: msg.endsWithNewline };
        const rows = { ...msg.rows, query: (filter, first) => requestRows(job, filter, first) };
        job.report = renderReport(job.name, msg.report, meta, rows, (kind) => requestExport(job, kind));
        job.node.append(job.report);
        const kind = verdictText(msg.report).kind;
        const outcome = { none: 'nothing was checked', fail: 'not trustworthy', pass: 'nothing cut silently' }[kind];
        setState(job, 'done', `Checked ${bytes(msg.bytes)} in ${duration(msg.ms)}: ${num(msg.report.counts.total)} tool spans, ${outcome}.`);
        job.node.dataset.wasmMemory = String(msg.wasmMemory);
        job.node.dataset.verdict = kind;
        job.cancel.hidden = true;
        announce(status, `${job.name}: checked, ${outcome}.`);
        break;
      }
      case 'cancelled':
        job.state = 'cancelled';
        job.cancel.hidden = true;
        job.progress.hidden = true;
        setState(job, 'cancelled', `Cancelled after ${bytes(msg.bytes)} of ${bytes(msg.total)}. Nothing was checked; drop the file again to start over.`);
        announce(status, `${job.name}: cancelled.`);
        break;
      case 'rows':
        job.rowWaiters?.get(msg.req)?.resolve(msg.page);
        job.rowWaiters?.delete(msg.req);
        break;
      case 'error':
        if (msg.req !== undefined && job.rowWaiters?.has(msg.req)) {
          job.rowWaiters.get(msg.req).reject(new Error(msg.message));
          job.rowWaiters.delete(msg.req);
        } else if (job.exportWaiter) {
          job.exportWaiter.reject(new Error(msg.message));
          job.exportWaiter = null;
        } else fail(job, msg.message, msg.code);
        break;
      case 'export':
        job.exportWaiter?.resolve(msg.text);
        job.exportWaiter = null;
        break;
      default:
        break;
    }
  }

  let nextReq = 1;
  /** One page of the job's rows that pass `filter`, from the worker that holds them. */
  function requestRows(job, filter, first) {
    return new Promise((resolve, reject) => {
      const req = nextReq++;
      (job.rowWaiters ??= new Map()).set(req, { resolve, reject });
      getWorker().postMessage({ type: 'rows', id: job.id, req, filter, first });
    });
  }

  function requestExport(job, kind) {
    return new Promise((resolve, reject) => {
      job.exportWaiter = { resolve, reject };
      getWorker().postMessage({ type: 'export', id: job.id, kind });
    });
  }

  function fail(job, message, code) {
    job.state = 'error';
    job.cancel.hidden = true;
    job.progress.hidden = true;
    job.error.hidden = false;
    job.error.replaceChildren(el('span', { class: 'icon', 'aria-hidden': 'true' }, '✖'), ' ', message);
    if (code) job.node.dataset.errorCode = code;
    setState(job, 'error', 'Could not be checked.');
    announce(status, `${job.name}: could not be checked.`);
  }

  function setState(job, state, text) {
    job.node.dataset.state = state;
    job.stateText.textContent = text;
  }

  function showProgress(job, msg, finished = false) {
    const total = msg.total || 1;
    job.progress.hidden = false;
    job.bar.max = total;
    job.bar.value = finished ? total : Math.min(msg.bytes, total);
    const secs = msg.ms / 1000;
    const rate = secs > 0 ? Math.round((msg.spans ?? msg.report?.counts.total ?? 0) / secs) : 0;
    const spans = msg.spans ?? msg.report?.counts.total ?? 0;
    job.barText.textContent = `${bytes(msg.bytes)} of ${bytes(msg.total)} (${Math.floor((100 * msg.bytes) / total)}%) · ` +
      `${num(spans)} spans · ${num(rate)} spans/s · ${duration(msg.ms)}`;
    if (!finished) setState(job, 'checking', 'Checking…');
  }

  function addJob(file, name = file.name) {
    const id = nextId++;
    const large = file.size > LARGE_FILE_BYTES;
    const job = { id, name, file, large, state: 'queued', flaggedOnly: flaggedOnly.checked || large };
    job.stateText = el('span', { class: 'state-text' }, 'Waiting…');
    job.bar = el('progress', { max: '1', value: '0', 'aria-label': `Progress checking ${name}` });
    job.barText = el('span', { class: 'progress-text' });
    job.progress = el('div', { class: 'progress', hidden: true }, job.bar, job.barText);
    job.cancel = el('button', { type: 'button', class: 'cancel', 'aria-label': `Cancel checking ${name}` }, '■ Cancel');
    job.cancel.addEventListener('click', () => {
      job.cancel.disabled = true;
      getWorker().postMessage({ type: 'cancel', id });
    });
    const close = el('button', { type: 'button', class: 'close', 'aria-label': `Close ${name}` }, '✕');
    close.addEventListener('click', () => {
      if (job.state === 'queued' || job.state === 'checking') getWorker().postMessage({ type: 'cancel', id });
      if (job.state === 'done') getWorker().postMessage({ type: 'free', id });
      jobs.delete(id);
      job.node.remove();
    });
    job.error = el('p', { class: 'file-error', role: 'alert', hidden: true });
    job.node = el('article', { class: 'job', 'aria-label': name, 'data-state': 'queued' },
      el('header', {},
        el('h2', {}, name),
        el('span', { class: 'size' }, bytes(file.size)),
        job.flaggedOnly ? el('span', { class: 'pill', title: 'Only flagged rows are listed; counts cover every span.' }, 'flagged rows only') : null,
        job.stateText,
        job.cancel,
        close),
      job.progress,
      job.error);
    jobs.set(id, job);
    jobsRoot.prepend(job.node);
    getWorker().postMessage({ type: 'check', id, file, flaggedOnly: job.flaggedOnly });
    return job;
  }

  function handleFiles(files) {
    const list = [...files];
    if (!list.length) return;
    announce(status, `Checking ${list.length === 1 ? list[0].name : `${list.length} files`}…`);
    for (const file of list) addJob(file);
  }

  // Drop anywhere on the check view; keep the browser from opening a file dropped elsewhere.
  const view = $('view-check');
  const drop = $('drop');
  for (const type of ['dragover', 'drop']) {
    window.addEventListener(type, (e) => {
      if (e.dataTransfer?.types?.includes('Files')) e.preventDefault();
    });
  }
  // Only drags that carry files: text dragged into the paste box behaves as usual.
  const hasFiles = (e) => Boolean(e.dataTransfer?.types?.includes('Files'));
  view.addEventListener('dragover', (e) => {
    if (!hasFiles(e)) return;
    e.preventDefault();
    drop.classList.add('over');
  });
  view.addEventListener('dragleave', (e) => {
    if (!view.contains(e.relatedTarget)) drop.classList.remove('over');
  });
  view.addEventListener('drop', (e) => {
    if (!hasFiles(e)) return;
    e.preventDefault();
    drop.classList.remove('over');
    handleFiles(e.dataTransfer.files);
  });
  $('choose').addEventListener('click', () => $('pick').click());
  $('pick').addEventListener('change', (e) => {
    handleFiles(e.target.files);
    e.target.value = '';
  });
  $('check-paste').addEventListener('click', () => {
    const text = $('paste').value;
    if (!text.trim()) {
      announce(status, 'Paste a run first: span JSONL or one of the trace formats listed above.');
      $('paste').focus();
      return;
    }
    pastes++;
    addJob(new File([text], `pasted-text-${pastes}.jsonl`, { type: 'text/plain' }), `pasted text ${pastes}`);
  });

  return { handleFiles };
}
