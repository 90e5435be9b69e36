// What a real agent call received: the user's latest search, recall and context calls, each with what it
// returned and why (GET /v1/users/{user}/requests; the API keeps the newest calls per user).
import { get, path } from './api.js';
import { badge, fill, h, json, link, when } from './dom.js';
import { empty, userHeader } from './ui.js';

const num = (value, digits = 3) => (value === null || value === undefined ? '—' : Number(value).toFixed(digits));

function target(user, r, item) {
  if (r.kind === 'search') return h('a', { href: link(['users', user, 'memories', item.id]) }, item.id);
  if (r.kind === 'recall') {
    const [thread, seq] = [item.section, item.id.split(':').pop()];
    return h('a', { href: link(['users', user, 'sessions', thread], { seqs: seq }) }, item.id);
  }
  if (item.id.startsWith('mem-')) return h('a', { href: link(['users', user, 'memories', item.id]) }, item.id);
  return h('span', { class: 'mono' }, item.id);
}

function returnedTable(user, r) {
  if (!r.returned.length) return empty('It returned nothing.');
  return h('table', { class: 'grid', 'data-testid': 'request-returned' },
    h('thead', {}, h('tr', {}, ['#', 'Item', r.kind === 'context' ? 'Section' : 'Text', 'Score', 'Why'].map((t) => h('th', {}, t)))),
    h('tbody', {}, r.returned.map((item, i) => h('tr', { 'data-item': item.id },
      h('td', { class: 'num' }, i + 1),
      h('td', {}, target(user, r, item)),
      h('td', {}, r.kind === 'context' ? [item.section || '', item.text ? [' · ', item.text] : ''] : item.text),
      h('td', { class: 'num' }, num(item.score)),
      h('td', { 'data-testid': 'why' }, item.why)))));
}

function requestCard(user, r) {
  const settings = Object.entries(r.request || {}).filter(([k]) => !['sources'].includes(k));
  const left = Object.entries(r.left_out || {}).map(([k, n]) => `${k}: ${n}`).join(', ');
  return h('article', { class: 'snapshot', 'data-testid': 'agent-call', 'data-kind': r.kind },
    h('header', {}, badge(r.kind, 'kind'), ' ',
      h('strong', {}, r.query ? `“${r.query}”` : '(no query)'), ' ',
      h('span', { class: 'muted' }, `${when(r.at)}${r.took_ms !== null && r.took_ms !== undefined ? ` · ${num(r.took_ms, 1)} ms` : ''}${r.tokens ? ` · ${r.tokens} tokens` : ''}`)),
    settings.length ? h('p', { class: 'muted mono' }, settings.map(([k, v]) => `${k}=${typeof v === 'string' ? v : json(v)}`).join('  ')) : null,
    r.request && r.request.sources ? h('pre', { class: 'tool-args' }, json(r.request.sources)) : null,
    returnedTable(user, r),
    left ? h('p', { class: 'warn' }, `Left out to fit the budget: ${left}`) : null,
    r.block ? h('details', {}, h('summary', {}, 'The block as the agent got it'), h('pre', { class: 'context-block', 'data-testid': 'request-block' }, r.block)) : null);
}

export async function requestsView({ view, live }, user) {
  const found = await get(path('v1', 'users', user, 'requests'), {});
  if (!live()) return;
  fill(view, userHeader(user, 'requests'),
    h('p', { class: 'muted' },
      `The latest ${found.kept} search, recall and context calls made for this user (by an agent, the SDK or this console), newest first: what each returned and why it ranked there.`),
    found.requests.length ? h('div', { 'data-testid': 'agent-calls' }, found.requests.map((r) => requestCard(user, r)))
      : empty('No search, recall or context call yet for this user.'));
}
