// Shared pieces of the views: notices, the confirmation dialog and the error box.
import { ApiError } from './api.js';
import { fill, h, link } from './dom.js';

/** A short notice at the bottom of the page. */
export function notify(text, kind = 'ok') {
  const box = document.getElementById('toasts');
  const note = h('div', { class: `toast toast-${kind}`, role: kind === 'error' ? 'alert' : 'status' }, text);
  box.append(note);
  setTimeout(() => note.remove(), 4000);
}

/** Ask before a destructive action; resolves true when the user confirmed. */
export function confirmAction(text, okLabel = 'Delete') {
  const dialog = document.getElementById('confirm');
  fill(document.getElementById('confirm-text'), text);
  const ok = document.getElementById('confirm-ok');
  const cancel = document.getElementById('confirm-cancel');
  ok.textContent = okLabel;
  return new Promise((resolve) => {
    const done = (answer) => {
      ok.removeEventListener('click', yes);
      cancel.removeEventListener('click', no);
      dialog.removeEventListener('cancel', no);
      if (dialog.open) dialog.close();
      resolve(answer);
    };
    const yes = () => done(true);
    const no = () => done(false);
    ok.addEventListener('click', yes);
    cancel.addEventListener('click', no);
    dialog.addEventListener('cancel', no);
    dialog.showModal();
  });
}

/** The error envelope as the user should read it: what failed and, for validation, which fields. */
export function errorBox(err) {
  const box = h('div', { class: 'error', role: 'alert', 'data-testid': 'error' });
  if (err instanceof ApiError) {
    box.append(h('strong', {}, `${err.status || ''} ${err.code}`.trim()), ': ', err.message);
    // Validation errors come as a list of {path, message}: the 422 envelope's details, or details.errors.
    const details = Array.isArray(err.details) ? err.details : Array.isArray(err.details?.errors) ? err.details.errors : [];
    if (details.length) {
      box.append(h('ul', {}, details.map((d) => h('li', {}, d.path ? `${d.path}: ` : '', d.message || JSON.stringify(d)))));
    }
  } else {
    box.append(String(err && err.message ? err.message : err));
  }
  return box;
}

const TABS = [
  ['sessions', 'Sessions', (u) => link(['users', u])],
  ['memories', 'Memories', (u) => link(['users', u, 'memories'])],
  ['working-memory', 'Working memory', (u) => link(['users', u, 'working-memory'])],
  ['search', 'Search & context', (u) => link(['users', u, 'search'])],
  ['requests', 'Agent calls', (u) => link(['users', u, 'requests'])],
];

/** The heading of every per-user view, with the user's tabs. */
export function userHeader(user, active, ...extra) {
  return h('header', { class: 'view-head' },
    h('p', { class: 'crumbs' }, h('a', { href: '#/users' }, 'Users'), ' / ', h('span', { 'data-testid': 'crumb-user' }, user)),
    h('h1', {}, h('span', { class: 'muted' }, 'User '), user, ...extra),
    h('nav', { class: 'tabs', 'aria-label': 'User views' },
      TABS.map(([id, label, to]) => h('a', { href: to(user), 'aria-current': id === active ? 'page' : null, 'data-tab': id }, label))),
  );
}

/** A table from column headings and rows of cells. */
export function table(headings, rows, attrs = {}) {
  return h('table', attrs,
    h('thead', {}, h('tr', {}, headings.map((t) => h('th', {}, t)))),
    h('tbody', {}, rows));
}

/** An empty-state line. */
export function empty(text) {
  return h('p', { class: 'empty muted' }, text);
}
