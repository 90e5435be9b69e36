// One session: the timeline of its turns and the snapshots cut from it, with per-kind extraction status.
import { ApiError, call, get, path } from './api.js';
import { badge, clock, fill, h, json, link, when } from './dom.js';
import { errorBox, notify, userHeader } from './ui.js';

const PAGE = 50;
const RETRYABLE = new Set(['failed', 'skipped']);
const SETTLED = new Set(['done', 'failed', 'skipped']);

function seqList(text) {
  return (text || '').split(',').map((s) => Number.parseInt(s, 10)).filter((n) => Number.isInteger(n) && n > 0);
}

function toolCalls(calls) {
  if (!calls || !calls.length) return null;
  return h('ul', { class: 'tool-calls', 'data-testid': 'tool-calls' },
    calls.map((c) => h('li', {},
      h('span', { class: 'tool-name' }, `→ ${c.name}`), ' ', h('code', {}, c.id),
      h('pre', { class: 'tool-args' }, json(c.arguments || {})))));
}

function turnItem(turn, highlighted) {
  const meta = [h('span', { class: 'seq' }, `#${turn.seq}`), badge(turn.role, `role-${turn.role}`), h('time', {}, when(turn.timestamp))];
  if (turn.name) meta.push(h('span', { class: 'muted' }, turn.name));
  if (turn.tool_call_id) meta.push(h('span', { class: 'muted' }, `answers ${turn.tool_call_id}`));
  if (turn.snapshot_id) meta.push(h('span', { class: 'muted snap-ref' }, turn.snapshot_id));
  return h('li', {
    class: `turn role-${turn.role}${highlighted ? ' evidence' : ''}`,
    'data-testid': 'turn', 'data-seq': turn.seq, 'data-role': turn.role,
  },
  h('div', { class: 'turn-meta' }, meta),
  turn.content ? h('div', { class: 'turn-content', 'data-testid': 'turn-content' }, turn.content) : null,
  toolCalls(turn.tool_calls));
}

function kindRow(user, snap, kind, status, onRetried) {
  const retry = RETRYABLE.has(status.status)
    ? h('button', { type: 'button', class: 'small', 'data-testid': `retry-${kind}` }, 'Retry')
    : null;
  if (retry) {
    retry.addEventListener('click', async () => {
      retry.disabled = true;
      try {
        const result = await call('POST', path('v1', 'snapshots', snap.snapshot_id, 'retry'), { query: { user_id: user }, body: { type: kind } });
        notify(result.message);
        onRetried(result.snapshot);
      } catch (err) {
        retry.disabled = false;
        notify(err instanceof ApiError ? `${err.code}: ${err.message}` : String(err), 'error');
      }
    });
  }
  const row = h('tr', { 'data-kind': kind, 'data-status': status.status },
    h('td', {}, kind),
    h('td', {}, badge(status.status)),
    h('td', { class: 'num' }, status.attempts ?? 0),
    h('td', { class: 'num' }, status.memories ?? '—'),
    h('td', { class: 'nowrap', title: when(status.updated_at) }, clock(status.updated_at)),
    h('td', {}, retry));
  if (!status.error) return [row];
  return [row, h('tr', { class: 'error-row', 'data-error-for': kind },
    h('td', { colspan: 6, class: 'error-text' }, status.error))];
}

function snapshotCard(user, session, snap, highlight) {
  const card = h('article', { class: 'snapshot', 'data-testid': 'snapshot', 'data-snapshot': snap.snapshot_id });
  let polls = 0;
  const watch = async () => {
    // After a retry: follow the kind until it settles (the extraction runs in the background).
    if (!card.isConnected || polls++ > 60) return;
    try {
      const fresh = await get(path('v1', 'snapshots', snap.snapshot_id), { user_id: user });
      draw(fresh);
      if (Object.values(fresh.extraction).some((s) => !SETTLED.has(s.status))) setTimeout(watch, 1000);
    } catch (err) {
      card.append(errorBox(err));
    }
  };
  const draw = (s) => {
    const kinds = Object.entries(s.extraction).sort(([a], [b]) => a.localeCompare(b));
    fill(card,
      h('header', {},
        h('a', { href: link(['users', user, 'sessions', session], { seqs: range(s.from_seq, s.to_seq).join(','), snapshot: s.snapshot_id }), class: 'seq-range' },
          `seq ${s.from_seq}–${s.to_seq}`),
        ' ', badge(s.reason, 'reason'), ' ', h('span', { class: 'muted' }, `${s.turn_count} turns · cut ${when(s.created_at)}`)),
      h('p', { class: 'muted mono' }, s.snapshot_id, ' · ',
        h('a', { href: link(['users', user, 'memories'], { snapshot: s.snapshot_id }), 'data-testid': 'snapshot-memories' },
          'memories from this snapshot')),
      s.missing_seqs && s.missing_seqs.length ? h('p', { class: 'warn' }, `missing seqs (never written): ${s.missing_seqs.join(', ')}`) : null,
      h('table', { class: 'grid kinds' },
        h('thead', {}, h('tr', {}, ['Kind', 'Status', 'Attempts', 'Memories', 'Updated', ''].map((t) => h('th', {}, t)))),
        h('tbody', {}, kinds.map(([kind, status]) => kindRow(user, s, kind, status, (updated) => { draw(updated); setTimeout(watch, 800); })))));
    if (highlight === s.snapshot_id) card.classList.add('selected');
  };
  draw(snap);
  return card;
}

function range(from, to) {
  const out = [];
  for (let i = from; i <= to && out.length < 500; i += 1) out.push(i);
  return out;
}

export async function sessionView({ view, params, live }, user, session) {
  const highlighted = new Set(seqList(params.get('seqs')));
  const selected = params.get('snapshot');
  const q = { user_id: user };
  const state = await get(path('v1', 'sessions', session), q);
  if (!live()) return;
  // Evidence may be old: start the page just after the highlighted turns.
  const newestWanted = highlighted.size ? Math.max(...highlighted) + 1 + 5 : null;
  const first = await get(path('v1', 'sessions', session, 'turns'), { ...q, limit: PAGE, before_seq: newestWanted && newestWanted <= state.turn_count ? newestWanted : null });
  if (!live()) return;
  const list = h('ol', { class: 'timeline', 'data-testid': 'timeline' });
  const earlier = h('button', { type: 'button', hidden: true }, 'Earlier turns');
  let before = null;
  const show = (page, prepend) => {
    const items = page.turns.map((t) => turnItem(t, highlighted.has(t.seq)));
    if (prepend) list.prepend(...items);
    else list.append(...items);
    before = page.next_before_seq;
    earlier.hidden = !before;
  };
  earlier.addEventListener('click', async () => {
    const page = await get(path('v1', 'sessions', session, 'turns'), { ...q, limit: PAGE, before_seq: before });
    show(page, true);
  });
  show(first, false);
  const snaps = state.snapshots.length
    ? state.snapshots.map((s) => snapshotCard(user, session, s, selected))
    : [h('p', { class: 'muted' }, 'No snapshot yet: the session is promoted when it goes idle or grows long.')];
  fill(view,
    userHeader(user, 'sessions'),
    h('h2', { 'data-testid': 'session-title' }, 'Session ', h('span', { class: 'mono' }, session)),
    h('p', { class: 'muted' },
      `${state.turn_count} turns · ${state.unpromoted_count} not yet promoted · agent ${state.agent_id || '—'} · last turn ${when(state.last_turn_at)}`,
      state.due_at ? ` · due for promotion ${when(state.due_at)}` : ''),
    highlighted.size ? h('p', { class: 'evidence-note', 'data-testid': 'evidence-note' },
      `Highlighted: ${highlighted.size === 1 ? 'turn' : 'turns'} ${[...highlighted].sort((a, b) => a - b).join(', ')}`,
      selected ? ` of snapshot ${selected}` : '', ' · ',
      h('a', { href: link(['users', user, 'sessions', session]) }, 'newest turns')) : null,
    h('div', { class: 'columns' },
      h('section', { class: 'col-main' }, h('h3', {}, 'Timeline'), earlier, list),
      h('section', { class: 'col-side' }, h('h3', {}, 'Snapshots'), snaps)));
  const mark = list.querySelector('.evidence');
  if (mark) mark.scrollIntoView({ block: 'center' });
}
