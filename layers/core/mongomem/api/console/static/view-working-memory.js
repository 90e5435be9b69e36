// Working memory: view and edit a user's (or a thread's) scratchpad, with the API's validation and merge rules.
import { ApiError, call, get } from './api.js';
import { fill, h, json, link, when } from './dom.js';
import { confirmAction, errorBox, notify, userHeader } from './ui.js';

export async function workingMemoryView({ view, params, live }, user) {
  const scope = params.get('scope') || '';
  const thread = params.get('thread_id') || '';
  const query = { user_id: user, scope, thread_id: thread };
  const [state, tool] = await Promise.all([
    get('/v1/working-memory', query),
    get('/v1/working-memory/tool', query).catch(() => null),
  ]);
  if (!live()) return;
  const schemaMode = state.mode === 'schema';
  const editor = h('textarea', {
    name: 'memory', rows: 16, spellcheck: 'false', 'data-testid': 'wm-editor', 'aria-label': 'Working memory',
  });
  editor.value = schemaMode ? json(state.data || {}) : state.content || '';
  const feedback = h('div', { class: 'feedback', 'aria-live': 'polite', 'data-testid': 'wm-feedback' });
  const meta = h('p', { class: 'muted', 'data-testid': 'wm-meta' });
  const showMeta = (s) => fill(meta, `${s.scope} scope · ${s.mode} mode · version ${s.version} · updated ${when(s.updated_at)}`, s.read_only ? ' · read-only' : '');
  showMeta(state);

  const payload = () => {
    if (!schemaMode) return { content: editor.value };
    try {
      return { data: JSON.parse(editor.value || '{}') };
    } catch (err) {
      throw new ApiError(0, 'invalid_json', `the editor does not hold valid JSON: ${err.message}`, null);
    }
  };
  const write = async (method, label) => {
    fill(feedback);
    try {
      const saved = await call(method, '/v1/working-memory', { query, body: payload() });
      editor.value = saved.mode === 'schema' ? json(saved.data || {}) : saved.content || '';
      showMeta(saved);
      fill(feedback, h('p', { class: 'ok', 'data-testid': 'wm-saved' }, `${label}: version ${saved.version}`));
      notify(`working memory ${label.toLowerCase()}`);
    } catch (err) {
      fill(feedback, errorBox(err));
    }
  };
  const buttons = schemaMode
    ? [h('button', { type: 'button', class: 'primary', 'data-testid': 'wm-merge', onclick: () => write('PATCH', 'Merged') }, 'Merge fields (PATCH)'),
      h('button', { type: 'button', 'data-testid': 'wm-replace', onclick: () => write('PUT', 'Replaced') }, 'Replace (PUT)')]
    : [h('button', { type: 'button', class: 'primary', 'data-testid': 'wm-save', onclick: () => write('PUT', 'Saved') }, 'Save (replace)')];
  const clear = h('button', { type: 'button', class: 'danger', 'data-testid': 'wm-clear' }, 'Clear');
  clear.addEventListener('click', async () => {
    if (!(await confirmAction('Clear this working memory? The agent starts from the template again.', 'Clear'))) return;
    try {
      const cleared = await call('DELETE', '/v1/working-memory', { query });
      editor.value = cleared.mode === 'schema' ? json(cleared.data || {}) : cleared.content || '';
      showMeta(cleared);
      notify('working memory cleared');
    } catch (err) {
      fill(feedback, errorBox(err));
    }
  });

  const scopeForm = h('form', { class: 'filters' },
    h('label', { class: 'field' }, 'Scope',
      h('select', { name: 'scope' },
        h('option', { value: '' }, 'configured default'),
        h('option', { value: 'resource', selected: scope === 'resource' }, 'resource (the user)'),
        h('option', { value: 'thread', selected: scope === 'thread' }, 'thread'))),
    h('label', { class: 'field' }, 'Thread id', h('input', { name: 'thread_id', value: thread, placeholder: 'for thread scope' })),
    h('button', { type: 'submit' }, 'Open'));
  scopeForm.addEventListener('submit', (event) => {
    event.preventDefault();
    window.location.hash = link(['users', user, 'working-memory'], Object.fromEntries(new FormData(scopeForm).entries()));
  });

  const rules = schemaMode
    ? 'Schema mode: the data is validated against the configured JSON Schema. Merge (PATCH) sets the fields you send and keeps the others; a null removes a field; arrays are replaced whole.'
    : 'Template mode: the text is the whole memory (Markdown, usually the configured template filled in); saving replaces it.';
  const schema = tool && tool.tool ? h('details', { class: 'schema' }, h('summary', {}, 'The update tool the agent gets (and its input schema)'),
    h('pre', {}, json(tool.tool))) : null;
  fill(view, userHeader(user, 'working-memory'), scopeForm, meta, h('p', { class: 'muted' }, rules),
    editor, h('div', { class: 'actions' }, buttons, clear), feedback, schema);
}
