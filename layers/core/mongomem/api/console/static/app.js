// The console's shell: sign-in, the header, hash routing, notices and the confirmation dialog.
import { ApiError, call, session } from './api.js';
import { fill, h } from './dom.js';
import { errorBox } from './ui.js';
import { memoriesView, memoryView } from './view-memories.js';
import { deadLettersView, pipelineView } from './view-pipeline.js';
import { requestsView } from './view-requests.js';
import { searchView } from './view-search.js';
import { sessionView } from './view-session.js';
import { userSessionsView, usersView } from './view-users.js';
import { workingMemoryView } from './view-working-memory.js';

const main = document.getElementById('main');

const ROUTES = [
  [/^\/users$/, usersView, 'users'],
  [/^\/users\/([^/]+)$/, userSessionsView, 'users'],
  [/^\/users\/([^/]+)\/sessions\/([^/]+)$/, sessionView, 'users'],
  [/^\/users\/([^/]+)\/memories$/, memoriesView, 'users'],
  [/^\/users\/([^/]+)\/memories\/([^/]+)$/, memoryView, 'users'],
  [/^\/users\/([^/]+)\/search$/, searchView, 'users'],
  [/^\/users\/([^/]+)\/working-memory$/, workingMemoryView, 'users'],
  [/^\/users\/([^/]+)\/requests$/, requestsView, 'users'],
  [/^\/pipeline$/, pipelineView, 'pipeline'],
  [/^\/dead-letters$/, deadLettersView, 'dead-letters'],
];

function parseHash() {
  const raw = window.location.hash.replace(/^#/, '') || '/users';
  const at = raw.indexOf('?');
  const pathPart = at < 0 ? raw : raw.slice(0, at);
  return { path: pathPart || '/users', params: new URLSearchParams(at < 0 ? '' : raw.slice(at + 1)) };
}

function header(section) {
  const signedIn = session.signedIn;
  document.getElementById('top-nav').hidden = !signedIn;
  document.getElementById('sign-out').hidden = !signedIn;
  const tenant = document.getElementById('tenant');
  tenant.hidden = !signedIn;
  tenant.textContent = signedIn ? `tenant ${session.tenant}${session.key ? '' : ' · open stack (no API keys yet)'}` : '';
  for (const a of document.querySelectorAll('[data-nav]')) {
    if (a.dataset.nav === section) a.setAttribute('aria-current', 'page');
    else a.removeAttribute('aria-current');
  }
}

function signInView(message) {
  header(null);
  const key = h('input', {
    id: 'api-key', name: 'api-key', type: 'password', autocomplete: 'off', spellcheck: 'false',
    placeholder: 'mm_…', 'aria-label': 'API key',
  });
  const status = h('div', { class: 'signin-status', 'aria-live': 'polite' }, message ? errorBox(message) : null);
  const form = h('form', { class: 'signin', 'data-testid': 'signin' },
    h('h1', {}, 'Sign in'),
    h('p', { class: 'muted' },
      'Paste an API key (`mongomem keys create`). It stays in this tab only and is sent as the ',
      h('code', {}, 'x-api-key'), ' header of the console\'s API calls. On a local stack without keys, leave it empty.'),
    h('label', { for: 'api-key' }, 'API key'),
    key,
    h('button', { type: 'submit', class: 'primary' }, 'Sign in'),
    status,
  );
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    const value = key.value.trim();
    fill(status, 'Checking the key…');
    try {
      const page = await call('GET', '/v1/users', { query: { limit: 1 }, key: value || null });
      session.signIn(value, page.tenant);
      key.value = '';
      if (!window.location.hash || window.location.hash === '#/signin') window.location.hash = '#/users';
      else render();
    } catch (err) {
      fill(status, errorBox(err.status === 401 ? new ApiError(401, err.code, 'the API refused this key', null) : err));
    }
  });
  fill(main, form);
  key.focus();
}

let current = 0;
let probed = false;

/** A local stack without any API key serves everyone as its default tenant: no sign-in to ask for. */
async function openStack() {
  if (probed) return false;
  probed = true;
  try {
    const page = await call('GET', '/v1/users', { query: { limit: 1 }, key: null });
    session.signIn('', page.tenant);
    return true;
  } catch (err) {
    return false;
  }
}

export async function render() {
  const turn = ++current;
  if (!session.signedIn && !(await openStack())) {
    signInView(null);
    return;
  }
  const { path: target, params } = parseHash();
  const found = ROUTES.map(([re, view, section]) => [target.match(re), view, section]).find(([m]) => m);
  const view = h('section', { class: 'view', 'aria-busy': 'true' }, h('p', { class: 'muted' }, 'Loading…'));
  fill(main, view);
  if (!found) {
    header(null);
    fill(view, h('h1', {}, 'Not found'), h('p', {}, h('a', { href: '#/users' }, 'Back to the users')));
    return;
  }
  const [match, show, section] = found;
  header(section);
  const args = match.slice(1).map((s) => decodeURIComponent(s));
  try {
    await show({ view, params, live: () => turn === current && view.isConnected }, ...args);
  } catch (err) {
    if (err instanceof ApiError && err.status === 401) {
      session.signOut();
      signInView(new ApiError(401, err.code, 'the API no longer accepts this key; sign in again', null));
      return;
    }
    if (turn === current) view.append(errorBox(err));
  } finally {
    view.removeAttribute('aria-busy');
  }
}

document.getElementById('sign-out').addEventListener('click', () => {
  session.signOut();
  window.location.hash = '#/users';
  render();
});
window.addEventListener('hashchange', () => render());
render();
