// A user's long-term memories: by kind, status and scope, searchable; one memory's versions and provenance.
import { call, get, path } from './api.js';
import { add, badge, fill, h, json, link, when } from './dom.js';
import { confirmAction, empty, errorBox, notify, userHeader } from './ui.js';
import { conflictsPanel } from './view-conflicts.js';

const KINDS = ['semantic', 'episodic', 'procedural', 'taxonomic', 'preference'];

function select(name, label, options, value) {
  return h('label', { class: 'field' }, label,
    h('select', { name, 'data-testid': `filter-${name}` },
      options.map(([v, text]) => h('option', { value: v, selected: v === value }, text))));
}

/** A memory's visibility as the API sends it: `private` (the user's) or `org` (every user of the tenant). */
function visibilityOf(m) {
  return m.visibility || 'private';
}

/** A date or datetime as its day (valid_from / valid_to may be either). */
function day(value) {
  return String(value).slice(0, 10);
}

function payloadList(payload) {
  return h('dl', { class: 'payload' },
    Object.entries(payload || {}).map(([k, v]) => [h('dt', {}, k), h('dd', {}, typeof v === 'string' ? v : json(v))]));
}

function memoryRow(user, m, score) {
  return h('tr', { 'data-testid': 'memory-row', 'data-memory': m.memory_id, 'data-kind': m.type },
    h('td', {}, badge(m.type, 'kind')),
    h('td', {}, h('a', { href: link(['users', user, 'memories', m.memory_id]) }, m.text)),
    h('td', { 'data-col': 'visibility' }, visibilityOf(m)),
    h('td', {}, badge(m.status)),
    h('td', { class: 'num' }, `v${m.version}`),
    h('td', { class: 'num' }, `×${m.reinforcement_count}`),
    h('td', {}, score === undefined ? when(m.created_at) : score.toFixed(4)));
}

export async function memoriesView({ view, params, live }, user) {
  const kind = params.get('type') || '';
  const status = params.get('status') || '';
  const visibility = params.get('visibility') || '';
  const snapshot = params.get('snapshot') || '';
  const query = params.get('q') || '';
  const form = h('form', { class: 'filters', 'data-testid': 'memory-filters' },
    select('type', 'Kind', [['', 'all kinds'], ...KINDS.map((k) => [k, k])], kind),
    select('status', 'Status', [['', 'current and superseded'], ['active', 'current'], ['superseded', 'superseded'], ['deleted', 'deleted']], status),
    select('visibility', 'Visibility', [['', 'private and org'], ['private', 'private (this user)'], ['org', 'org (every user of the tenant)']], visibility),
    snapshot ? h('input', { type: 'hidden', name: 'snapshot', value: snapshot }) : null,
    h('label', { class: 'field grow' }, 'Search',
      h('input', { type: 'search', name: 'q', value: query, placeholder: 'by meaning and keywords', 'data-testid': 'memory-query' })),
    h('button', { type: 'submit', class: 'primary' }, query ? 'Search' : 'Apply'));
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const data = new FormData(form);
    window.location.hash = link(['users', user, 'memories'], Object.fromEntries(data.entries()));
  });
  for (const el of form.querySelectorAll('select')) el.addEventListener('change', () => form.requestSubmit());
  const rows = h('tbody');
  const more = h('button', { type: 'button', hidden: true }, 'More memories');
  const heading = query ? 'Score' : 'Created';
  const from = snapshot ? h('p', { class: 'evidence-note', 'data-testid': 'snapshot-filter' },
    `Memories with evidence from snapshot ${snapshot} (what its extraction wrote or reinforced) · `,
    h('a', { href: link(['users', user, 'memories']) }, 'all memories')) : null;
  fill(view, userHeader(user, 'memories'), conflictsPanel(user, live), form, from,
    h('table', { class: 'grid', 'data-testid': 'memories' },
      h('thead', {}, h('tr', {}, ['Kind', 'Memory', 'Visibility', 'Status', 'Version', 'Reinforced', heading].map((t) => h('th', {}, t)))),
      rows),
    more);
  if (query) {
    const found = await call('POST', '/v1/memories/search', {
      body: { user_id: user, query, top_k: 50, types: kind ? [kind] : null, visibility: visibility || null, include_superseded: status === '' || status === 'superseded' },
    });
    if (!live()) return;
    const results = found.results.filter((r) => !status || r.status === status);
    rows.append(...results.map((r) => memoryRow(user, r, r.score)));
    if (!results.length) add(view, empty('No memory matches this search.'));
    return;
  }
  let cursor = null;
  const load = async () => {
    const page = await get('/v1/memories', { user_id: user, type: kind, status, visibility, snapshot_id: snapshot, limit: 100, cursor });
    if (!live()) return;
    rows.append(...page.memories.map((m) => memoryRow(user, m)));
    cursor = page.next_cursor;
    more.hidden = !cursor;
    if (!rows.children.length && !cursor) add(view, empty('No memories with these filters.'));
  };
  more.addEventListener('click', load);
  await load();
}

function decisionsTable(decisions) {
  if (!decisions || !decisions.length) return null;
  return h('table', { class: 'grid decisions', 'data-testid': 'decisions' },
    h('thead', {}, h('tr', {}, ['Decision', 'By', 'Reason', 'Score', 'When'].map((t) => h('th', {}, t)))),
    h('tbody', {}, decisions.map((d) => h('tr', { 'data-decision': d.decision },
      h('td', {}, badge(d.decision, 'decision')),
      h('td', {}, badge(d.by, `by-${d.by}`)),
      h('td', {}, d.reason),
      h('td', { class: 'num' }, d.score === null || d.score === undefined ? '—' : d.score.toFixed(3)),
      h('td', {}, when(d.at))))));
}

function evidenceList(user, evidence) {
  if (!evidence || !evidence.length) return null;
  return h('ul', { class: 'evidence-list', 'data-testid': 'evidence' }, evidence.map((e) => {
    if (!e.snapshot_id) return h('li', {}, badge(e.source || 'api', 'source'), ' written through the API (no source turns)');
    const open = h('button', { type: 'button', class: 'link', 'data-testid': 'evidence-link', 'data-snapshot': e.snapshot_id },
      `snapshot ${e.snapshot_id}`, e.seqs && e.seqs.length ? ` · turns ${e.seqs.join(', ')}` : '');
    const item = h('li', {}, badge(e.source || 'extraction', 'source'), ' ', open);
    open.addEventListener('click', async () => {
      try {
        // Evidence names a snapshot; the snapshot names the session the turns live in.
        const snap = await get(path('v1', 'snapshots', e.snapshot_id), { user_id: user });
        const seqs = e.seqs && e.seqs.length ? e.seqs : [];
        window.location.hash = link(['users', user, 'sessions', snap.session_id], { seqs: seqs.join(','), snapshot: snap.snapshot_id });
      } catch (err) {
        item.append(errorBox(err));
      }
    });
    return item;
  }));
}

function versionCard(user, v, current) {
  return h('li', { class: `version${v.memory_id === current ? ' current' : ''}`, 'data-testid': 'version', 'data-version': v.version, 'data-status': v.status },
    h('header', {},
      h('strong', {}, `v${v.version}`), ' ', badge(v.status), ' ',
      h('span', { class: 'muted' }, `created ${when(v.created_at)} · reinforced ×${v.reinforcement_count}`,
        v.last_reinforced_at ? ` (last ${when(v.last_reinforced_at)})` : '',
        v.valid_to ? ` · valid ${v.valid_from || '?'} → ${day(v.valid_to)}` : v.valid_from ? ` · valid from ${v.valid_from}` : '')),
    h('p', { class: 'memory-text', 'data-testid': 'version-text' }, v.text),
    payloadList(v.payload),
    h('h4', {}, 'Decisions'),
    decisionsTable(v.decisions) || h('p', { class: 'muted' }, 'none recorded'),
    h('h4', {}, 'Provenance'),
    evidenceList(user, v.evidence) || h('p', { class: 'muted' }, 'no evidence recorded'),
    h('p', { class: 'muted mono' }, `${v.memory_id} · index ${v.index_state || '—'} · ${v.embedding_model || 'no embedding'}`));
}

export async function memoryView({ view, live }, user, memoryId) {
  const found = await get(path('v1', 'memories', memoryId), { user_id: user, history: 'true' });
  if (!live()) return;
  const m = found.memory;
  const chain = found.history || [m];
  const decisions = chain.flatMap((v) => v.decisions || []);
  const count = (kind) => decisions.filter((d) => d.decision === kind).length;
  const remove = h('button', { type: 'button', class: 'danger', 'data-testid': 'delete-memory', disabled: m.status === 'deleted' }, 'Delete memory');
  remove.addEventListener('click', async () => {
    const ok = await confirmAction(`Delete this memory and all ${chain.length} of its versions? Search, recall and context stop returning it.`);
    if (!ok) return;
    try {
      const result = await call('DELETE', path('v1', 'memories', memoryId), { query: { user_id: user } });
      notify(`deleted ${result.deleted_versions} version(s) of ${result.lineage_id}`);
      window.location.hash = link(['users', user, 'memories']);
    } catch (err) {
      view.append(errorBox(err));
    }
  });
  fill(view, userHeader(user, 'memories'),
    h('section', { class: 'memory-head', 'data-testid': 'memory' },
      h('p', {}, badge(m.type, 'kind'), ' ', badge(m.status), ' ', h('span', { class: 'muted', 'data-testid': 'memory-visibility' }, `${visibilityOf(m)} · lineage ${m.lineage_id}`)),
      h('h2', { class: 'memory-text', 'data-testid': 'memory-text' }, m.text),
      h('p', { class: 'summary', 'data-testid': 'memory-summary' },
        `${chain.length} version(s) · ${count('UPDATE')} update(s) · ${count('REINFORCE')} reinforcement(s) · `,
        `${decisions.filter((d) => d.by === 'llm').length} decided by the LLM, ${decisions.filter((d) => d.by === 'rule').length} by rules`),
      remove),
    h('h3', {}, 'Version chain'),
    h('ol', { class: 'versions', 'data-testid': 'versions' }, chain.slice().reverse().map((v) => versionCard(user, v, m.memory_id))));
}
