// Pipeline health for the signed-in tenant: readiness, backlog per kind, index lag, config, and activity.
import { ApiError, call, get, path } from './api.js';
import { badge, duration, fill, h, link, when } from './dom.js';
import { activityChart } from './chart.js';
import { empty, notify, table } from './ui.js';

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

function retryButton(snap, kind, row) {
  const retry = h('button', { type: 'button', class: 'small', 'data-testid': `retry-${kind}` }, 'Retry');
  retry.addEventListener('click', async () => {
    retry.disabled = true;
    try {
      const result = await call('POST', path('v1', 'snapshots', snap.snapshot_id, 'retry'), { query: { user_id: snap.user_id }, body: { type: kind } });
      notify(result.message);
      row.dataset.status = 'queued';
      retry.replaceWith(badge('queued'));
    } catch (err) {
      retry.disabled = false;
      notify(err instanceof ApiError ? `${err.code}: ${err.message}` : String(err), 'error');
    }
  });
  return retry;
}

/** The dead letters: the tenant's snapshots whose extraction failed for a kind, each with its error. */
export async function deadLettersView({ view, params, live }) {
  const user = params.get('user') || '';
  const rows = h('tbody');
  const more = h('button', { type: 'button', hidden: true }, 'More');
  let cursor = null;
  fill(view,
    h('header', { class: 'view-head' },
      h('h1', {}, 'Dead letters', user ? h('span', { class: 'muted' }, ` · user ${user}`) : ''),
      h('p', { class: 'muted' }, 'Snapshots whose extraction failed, newest first. SQS retries a failed kind until its maxReceiveCount, then the message waits in the kind\'s DLQ; Retry queues it again (the same as `mongomem snapshots retry`).')),
    h('table', { class: 'grid', 'data-testid': 'dead-letters' },
      h('thead', {}, h('tr', {}, ['Snapshot', 'User', 'Session', 'Kind', 'Attempts', 'Failed at', 'Error', ''].map((t) => h('th', {}, t)))),
      rows),
    more);
  const load = async () => {
    const page = await get('/v1/snapshots', { status: 'failed', user_id: user, limit: 50, cursor });
    if (!live()) return;
    for (const snap of page.snapshots) {
      for (const [kind, status] of Object.entries(snap.extraction).sort(([a], [b]) => a.localeCompare(b))) {
        if (status.status !== 'failed') continue;
        const row = h('tr', { 'data-testid': 'dead-letter', 'data-snapshot': snap.snapshot_id, 'data-kind': kind, 'data-status': 'failed' });
        row.append(
          h('td', { class: 'mono' }, h('a', { href: link(['users', snap.user_id, 'sessions', snap.session_id], { snapshot: snap.snapshot_id }) }, snap.snapshot_id)),
          h('td', {}, h('a', { href: link(['users', snap.user_id]) }, snap.user_id)),
          h('td', {}, snap.session_id),
          h('td', {}, kind),
          h('td', { class: 'num' }, status.attempts ?? 0),
          h('td', {}, when(status.updated_at)),
          h('td', { class: 'error-text' }, status.error || ''),
          h('td', {}, retryButton(snap, kind, row)));
        rows.append(row);
      }
    }
    cursor = page.next_cursor;
    more.hidden = !cursor;
    if (!rows.children.length && !cursor) view.append(empty('No failed extraction: nothing waits in a DLQ for this tenant.'));
  };
  more.addEventListener('click', load);
  await load();
}
