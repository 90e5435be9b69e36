// Conflicting facts: active memories of one key that say different things, shown above a user's memories
// until one is deleted or a later statement supersedes them (GET /v1/memories/conflicts).
import { get } from './api.js';
import { fill, h, link, when } from './dom.js';

/** A panel listing the user's conflicts (empty when there are none); filled when the answer arrives. */
export function conflictsPanel(user, live) {
  const panel = h('section', { class: 'conflicts', 'data-testid': 'conflicts', hidden: true });
  get('/v1/memories/conflicts', { user_id: user }).then((found) => {
    if (!live() || !found.conflicts.length) return;
    fill(panel,
      h('h2', { class: 'warn' }, `${found.conflicts.length} conflicting fact(s)`),
      h('p', { class: 'muted' }, 'Active memories of one key that say different things. Delete the wrong one; a later statement of the key also settles it.'),
      h('ul', {}, found.conflicts.map((c) => h('li', { 'data-testid': 'conflict', 'data-key': c.key },
        h('code', {}, c.key), c.agent_id ? ` (agent ${c.agent_id})` : '', ': ',
        c.memories.map((m, i) => [i ? ' vs ' : '',
          h('a', { href: link(['users', user, 'memories', m.memory_id]), 'data-testid': 'conflict-memory' }, m.value),
          ' ', h('span', { class: 'muted' }, `(${when(m.observed_at || m.created_at)})`)])))));
    panel.hidden = false;
  }).catch(() => {});
  return panel;
}
