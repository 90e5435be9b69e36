// The search playground: memories (hybrid, k-NN or BM25) or recall, with each result's ranking parts,
// and the /v1/context block the agent would receive within a token budget.
import { call, get, path } from './api.js';
import { badge, fill, h, link, when } from './dom.js';
import { empty, errorBox, table, userHeader } from './ui.js';

const num = (value, digits = 4) => (value === null || value === undefined ? '—' : Number(value).toFixed(digits));
const rank = (r, s) => (r === null || r === undefined ? '—' : `#${r} (${num(s, 3)})`);

function field(label, control) {
  return h('label', { class: 'field' }, label, control);
}

function memoryResults(user, found) {
  if (!found.results.length) return empty('No memory matched.');
  return table(['#', 'Score', 'Memory', 'Kind', 'k-NN', 'BM25', 'RRF', 'Reinforcement'],
    found.results.map((r, i) => h('tr', { 'data-testid': 'search-result', 'data-memory': r.memory_id },
      h('td', { class: 'num' }, i + 1),
      h('td', { class: 'num', 'data-testid': 'score' }, num(r.score)),
      h('td', {}, h('a', { href: link(['users', user, 'memories', r.memory_id]) }, r.text)),
      h('td', {}, badge(r.type, 'kind')),
      h('td', { class: 'num', 'data-part': 'knn' }, rank(r.signals.knn_rank, r.signals.knn_score)),
      h('td', { class: 'num', 'data-part': 'bm25' }, rank(r.signals.bm25_rank, r.signals.bm25_score)),
      h('td', { class: 'num', 'data-part': 'rrf' }, num(r.signals.rrf)),
      h('td', { class: 'num', 'data-part': 'reinforcement' }, `×${num(r.signals.reinforcement_boost, 3)} (${r.reinforcement_count}×)`))),
    { class: 'grid', 'data-testid': 'search-results' });
}

function recallResults(user, found) {
  if (!found.matched.length) return empty('No earlier message matched.');
  const rows = [];
  for (const thread of found.threads) {
    for (const t of thread.turns) {
      const parts = t.signals ? Object.entries(t.signals).map(([k, v]) => `${k} #${v}`).join(' · ') : '';
      rows.push(h('tr', { 'data-testid': t.matched ? 'recall-match' : 'recall-neighbour', 'data-rank': t.rank, class: t.matched ? '' : 'muted' },
        h('td', {}, h('a', { href: link(['users', user, 'sessions', thread.thread], { seqs: String(t.seq) }) }, `${thread.thread} #${t.seq}`)),
        h('td', { class: 'num' }, t.rank ? `#${t.rank}` : 'context'),
        h('td', { class: 'num', 'data-testid': 'score' }, num(t.score)),
        h('td', { 'data-part': 'channels' }, parts || '—'),
        h('td', {}, badge(t.role, `role-${t.role}`)),
        h('td', { class: 'turn-content' }, t.content),
        h('td', {}, when(t.timestamp))));
    }
  }
  return table(['Turn', 'Rank', 'RRF score', 'Ranked by', 'Role', 'Content', 'When'], rows, { class: 'grid', 'data-testid': 'recall-results' });
}

/** Why each item is in the block (in the order it was chosen), and what was left out. */
function contextItems(ctx) {
  const items = ctx.items || [];
  const left = Object.entries(ctx.left_out || {}).filter(([, n]) => n).map(([why, n]) => `${n} ${why.replace('_', ' ')}`);
  return h('div', {},
    table(['#', 'Section', 'Item', 'Why', 'Value', 'Tokens'],
      items.map((item, i) => h('tr', { 'data-testid': 'context-item', 'data-item': item.id },
        h('td', { class: 'num' }, i + 1), h('td', {}, item.section), h('td', {}, item.id),
        h('td', { 'data-part': 'reason' }, item.reason), h('td', { class: 'num' }, num(item.value, 3)),
        h('td', { class: 'num' }, item.tokens))),
      { class: 'grid', 'data-testid': 'context-items' }),
    left.length ? h('p', { class: 'muted', 'data-testid': 'context-left-out' }, `Left out: ${left.join(', ')}`) : null,
    ctx.pending && (ctx.pending.turns_not_extracted || ctx.pending.turns_not_indexed)
      ? h('p', { class: 'warn', 'data-testid': 'context-pending' },
        `Not yet: ${ctx.pending.turns_not_extracted} turn(s) not extracted, ${ctx.pending.turns_not_indexed} not indexed for recall`)
      : null);
}

export async function searchView({ view, live }, user) {
  const sessions = await get(path('v1', 'users', user, 'sessions'), { limit: 50 });
  if (!live()) return;
  const query = h('input', { type: 'search', name: 'query', required: true, placeholder: 'what do you want to find?', 'data-testid': 'search-query' });
  const target = h('select', { name: 'target', 'data-testid': 'search-target' },
    h('option', { value: 'memories' }, 'memories'), h('option', { value: 'recall' }, 'recall (earlier messages)'));
  const mode = h('select', { name: 'mode', 'data-testid': 'search-mode' }, ['hybrid', 'knn', 'bm25'].map((m) => h('option', { value: m }, m)));
  const topK = h('input', { type: 'number', name: 'top_k', min: 1, max: 100, value: 10 });
  const results = h('div', { class: 'results', 'aria-live': 'polite' });
  const form = h('form', { class: 'filters', 'data-testid': 'search-form' },
    h('label', { class: 'field grow' }, 'Query', query), field('Against', target), field('Mode', mode), field('Top k', topK),
    h('button', { type: 'submit', class: 'primary' }, 'Search'));
  target.addEventListener('change', () => { mode.disabled = target.value === 'recall'; });
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    fill(results, h('p', { class: 'muted' }, 'Searching…'));
    try {
      const k = Number.parseInt(topK.value, 10) || 10;
      if (target.value === 'memories') {
        const found = await call('POST', '/v1/memories/search', { body: { user_id: user, query: query.value, top_k: k, mode: mode.value } });
        fill(results, h('p', { class: 'muted' }, `${found.results.length} result(s) in ${found.took_ms} ms`), memoryResults(user, found));
      } else {
        const found = await call('POST', '/v1/recall', { body: { user_id: user, query: query.value, top_k: k, message_range: 1 } });
        fill(results, h('p', { class: 'muted' }, `${found.matched.length} match(es) in ${found.took_ms} ms`), recallResults(user, found));
      }
    } catch (err) {
      fill(results, errorBox(err));
    }
  });

  const session = h('select', { name: 'session_id', required: true, 'data-testid': 'context-session' },
    sessions.sessions.map((s) => h('option', { value: s.session_id }, s.session_id)));
  const contextQuery = h('input', { type: 'search', name: 'query', placeholder: 'default: the latest user turn', 'data-testid': 'context-query' });
  const budget = h('input', { type: 'number', name: 'token_budget', min: 256, max: 32000, step: 1, value: 2000, 'data-testid': 'context-budget' });
  const block = h('div', { class: 'results', 'aria-live': 'polite' });
  const contextForm = h('form', { class: 'filters', 'data-testid': 'context-form' },
    field('Session', session), h('label', { class: 'field grow' }, 'Query', contextQuery), field('Token budget', budget),
    h('button', { type: 'submit', class: 'primary', disabled: !sessions.sessions.length }, 'Build context'));
  contextForm.addEventListener('submit', async (event) => {
    event.preventDefault();
    fill(block, h('p', { class: 'muted' }, 'Building…'));
    try {
      const body = { user_id: user, session_id: session.value, token_budget: Number.parseInt(budget.value, 10) };
      if (contextQuery.value.trim()) body.query = contextQuery.value;
      const ctx = await call('POST', '/v1/context', { body });
      fill(block,
        h('p', { 'data-testid': 'context-tokens' }, `${ctx.tokens} of ${ctx.token_budget} tokens`, ctx.query ? ` · query “${ctx.query}”` : ''),
        table(['Section', 'Tokens', 'Items', 'Left out', 'Truncated'],
          ctx.sections.map((s) => h('tr', { 'data-section': s.name },
            h('td', {}, s.title), h('td', { class: 'num' }, s.tokens), h('td', { class: 'num' }, s.ids.length),
            h('td', { class: 'num' }, s.dropped), h('td', {}, s.truncated ? 'yes' : 'no'))),
          { class: 'grid' }),
        contextItems(ctx),
        h('pre', { class: 'context-block', 'data-testid': 'context-block' }, ctx.context));
    } catch (err) {
      fill(block, errorBox(err));
    }
  });

  fill(view, userHeader(user, 'search'),
    h('section', {}, h('h2', {}, 'Search'), form, results),
    h('section', {}, h('h2', {}, 'Context'),
      h('p', { class: 'muted' }, 'The block POST /v1/context gives the agent for its next turn: working memory, recent turns, relevant memories and recalled messages, in priority order, within the budget.'),
      sessions.sessions.length ? contextForm : empty('The user has no session yet.'), block));
}
