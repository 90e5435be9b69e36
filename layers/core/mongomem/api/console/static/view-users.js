// The tenant's users, and one user's sessions.
import { get, path } from './api.js';
import { add, fill, h, link, when } from './dom.js';
import { empty, userHeader } from './ui.js';

// Memories shared by every user of the tenant are kept under this owner; it is not a user (no sessions,
// no working memory), so it gets no user pages: any user's memories show them with visibility "org".
const ORG_OWNER = '#org';

function userRow(u) {
  const org = u.user_id === ORG_OWNER;
  const name = org
    ? h('span', { 'data-testid': 'org-row-label' }, 'the organisation ',
      h('span', { class: 'muted' }, '(memories shared by every user: open a user\'s memories, visibility org)'))
    : h('a', { href: link(['users', u.user_id]) }, u.user_id);
  return h('tr', { 'data-testid': org ? 'org-row' : 'user-row', 'data-user': u.user_id },
    h('td', {}, name),
    h('td', { class: 'num' }, u.sessions),
    h('td', { class: 'num' }, u.memories),
    h('td', {}, when(u.last_activity_at)));
}

export async function usersView({ view, live }) {
  const body = h('tbody');
  const more = h('button', { type: 'button', hidden: true }, 'More users');
  let cursor = null;
  const load = async () => {
    const page = await get('/v1/users', { limit: 50, cursor });
    if (!live()) return;
    body.append(...page.users.map(userRow));
    cursor = page.next_cursor;
    more.hidden = !cursor;
    if (!body.children.length) view.append(empty('No users yet: record a turn or write a memory for one.'));
  };
  more.addEventListener('click', load);
  fill(view,
    h('header', { class: 'view-head' }, h('h1', {}, 'Users'),
      h('p', { class: 'muted' }, 'Everyone this tenant has recorded turns, memories or working memory for.')),
    h('table', { class: 'grid', 'data-testid': 'users' },
      h('thead', {}, h('tr', {}, h('th', {}, 'User'), h('th', {}, 'Sessions'), h('th', {}, 'Memories'), h('th', {}, 'Last activity'))),
      body),
    more);
  await load();
}

export async function userSessionsView({ view, live }, user) {
  const rows = h('tbody');
  const more = h('button', { type: 'button', hidden: true }, 'More sessions');
  let cursor = null;
  fill(view, userHeader(user, 'sessions'),
    h('table', { class: 'grid', 'data-testid': 'sessions' },
      h('thead', {}, h('tr', {}, ['Session', 'Agent', 'Turns', 'Not yet promoted', 'Started', 'Last turn'].map((t) => h('th', {}, t)))),
      rows),
    more);
  const load = async () => {
    const page = await get(path('v1', 'users', user, 'sessions'), { limit: 50, cursor });
    if (!live()) return;
    for (const s of page.sessions) {
      rows.append(h('tr', { 'data-testid': 'session-row', 'data-session': s.session_id },
        h('td', {}, h('a', { href: link(['users', user, 'sessions', s.session_id]) }, s.session_id)),
        h('td', {}, s.agent_id || '—'),
        h('td', { class: 'num' }, s.turn_count),
        h('td', { class: 'num' }, s.unpromoted_count),
        h('td', {}, when(s.created_at)),
        h('td', {}, when(s.last_turn_at))));
    }
    cursor = page.next_cursor;
    more.hidden = !cursor;
    if (!rows.children.length) add(view, empty('No sessions recorded for this user.'));
  };
  more.addEventListener('click', load);
  await load();
}
