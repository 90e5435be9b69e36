// Pipeline health for the signed-in tenant: readiness, backlog per kind, index lag, config, and activity.
import { get } from './api.js';
import { badge, duration, fill, h, when } from './dom.js';
import { activityChart } from './chart.js';
import { table } from './ui.js';

function card(title, ok, ...lines) {
  return h('article', { class: `card ${ok === true ? 'good' : ok === false ? 'bad' : ''}`, 'data-card': title },
    h('h3', {}, title, ok === undefined ? null : [' ', badge(ok ? 'ready' : 'not ready', ok ? 'done' : 'failed')]),
    lines.map((line) => h('p', {}, line)));
}

export async function pipelineView({ view, params, live }) {
  const user = params.get('user') || '';
  const days = Number.parseInt(params.get('days') || '30', 10) || 30;
  const [p, stats] = await Promise.all([
    get('/v1/pipeline', { user_id: user }),
    get('/v1/stats/memories', { user_id: user, days }),
  ]);
  if (!live()) return;
  const kinds = Object.entries(p.extraction.kinds);
  fill(view,
    h('header', { class: 'view-head' },
      h('h1', {}, 'Pipeline', user ? h('span', { class: 'muted' }, ` · user ${user}`) : ''),
      h('p', { class: 'muted' }, `Figures of tenant ${p.tenant}${p.user_id ? `, user ${p.user_id}` : ''} only: its sessions, snapshots, memories and turns.`)),
    h('p', { 'data-testid': 'pipeline-ready' }, badge(p.ready ? 'ready' : 'not ready', p.ready ? 'done' : 'failed'),
      p.reasons.length ? ` ${p.reasons.join('; ')}` : ' an LLM and an embedding provider are usable'),
    h('div', { class: 'cards' },
      card('LLM', p.llm.ready, p.llm.name, p.llm.offline ? 'offline pattern extractor (no LLM calls)' : '', p.llm.reason || ''),
      card('Embeddings', p.embeddings.ready, p.embeddings.name, p.embeddings.reason || ''),
      card('Search index', p.index.reachable, p.index.kind || 'none configured',
        `${p.index.pending} version(s) waiting for the index`, `lag ${duration(p.index.lag_seconds)}`),
      card('Config', undefined, h('span', { class: 'mono', 'data-testid': 'config-version' }, p.config.sha256 ? p.config.sha256.slice(0, 12) : 'defaults'), `source: ${p.config.source}`),
      card('Promotion', undefined, h('span', { 'data-testid': 'sessions-waiting' }, `${p.promotion.sessions_waiting} session(s) waiting`)),
      card('Recall', undefined, p.recall.enabled ? `${p.recall.pending_turns} turn(s) waiting to be embedded` : 'disabled')),
    h('h2', {}, 'Extraction by kind'),
    h('p', { class: 'muted' }, `Enabled: ${p.extraction.enabled.join(', ') || 'none'}. Failed snapshots are retried by SQS until the DLQ takes them; retry one from its session.`),
    table(['Kind', 'Queued', 'Running', 'Failed', 'Oldest waiting'],
      kinds.map(([kind, k]) => h('tr', { 'data-kind': kind },
        h('td', {}, kind), h('td', { class: 'num', 'data-col': 'queued' }, k.queued), h('td', { class: 'num', 'data-col': 'running' }, k.running),
        h('td', { class: `num${k.failed ? ' bad' : ''}`, 'data-col': 'failed' }, k.failed), h('td', {}, when(k.oldest_waiting_at)))),
      { class: 'grid', 'data-testid': 'kinds' }),
    h('h2', {}, `Memory activity, last ${stats.days.length} days`),
    h('p', { class: 'muted', 'data-testid': 'activity-totals' },
      `${stats.totals.added} added · ${stats.totals.updated} updated · ${stats.totals.reinforced} reinforced`),
    activityChart(stats.days));
}
