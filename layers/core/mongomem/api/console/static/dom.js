// Building the page safely: every piece of data becomes a text node, attributes come from a fixed list,
// and links only ever point inside the console (hash routes). Nothing here parses HTML.

const ATTRIBUTES = new Set([
  'class', 'id', 'type', 'name', 'value', 'placeholder', 'title', 'for', 'role', 'tabindex',
  'colspan', 'rows', 'min', 'max', 'step', 'disabled', 'checked', 'selected', 'required', 'readonly',
  'hidden', 'open', 'autocomplete', 'spellcheck', 'maxlength',
  'aria-label', 'aria-live', 'aria-current', 'aria-selected', 'aria-busy',
]);

/** An element with safe attributes, `on*` listeners and text or element children. */
export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs || {})) {
    if (value === null || value === undefined || value === false) continue;
    if (name.startsWith('on') && typeof value === 'function') {
      el.addEventListener(name.slice(2), value);
    } else if (name === 'href') {
      el.setAttribute('href', route(value));
    } else if (ATTRIBUTES.has(name) || name.startsWith('data-')) {
      el.setAttribute(name, value === true ? '' : String(value));
    } else {
      throw new Error(`attribute not allowed: ${name}`);
    }
  }
  add(el, children);
  return el;
}

/** Append children: nodes as they are, anything else as text. */
export function add(el, children) {
  for (const child of [children].flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    el.append(child instanceof Node ? child : String(child));
  }
  return el;
}

/** Replace an element's children. */
export function fill(el, ...children) {
  el.replaceChildren();
  return add(el, children);
}

/** A console link: only `#/...` routes are links; anything else becomes an inert `#`. */
export function route(target) {
  const text = String(target);
  return text.startsWith('#/') ? text : '#';
}

/** A hash route from path segments, each encoded (ids may hold ':' '@' '.'), plus query parameters. */
export function link(segments, query) {
  const path = '#/' + segments.map((s) => encodeURIComponent(String(s))).join('/');
  const qs = query ? new URLSearchParams(clean(query)).toString() : '';
  return qs ? `${path}?${qs}` : path;
}

/** The object without empty values (for query strings). */
export function clean(obj) {
  const out = {};
  for (const [k, v] of Object.entries(obj || {})) {
    if (v !== undefined && v !== null && v !== '') out[k] = String(v);
  }
  return out;
}

const SVG_NS = 'http://www.w3.org/2000/svg';
const SVG_ATTRIBUTES = new Set([
  'class', 'viewBox', 'width', 'height', 'x', 'y', 'x1', 'x2', 'y1', 'y2', 'rx', 'd', 'points',
  'text-anchor', 'dominant-baseline', 'role', 'aria-label', 'preserveAspectRatio', 'focusable',
]);

/** An SVG element (for the charts): numbers and classes only, text as text nodes. */
export function svg(tag, attrs = {}, ...children) {
  const el = document.createElementNS(SVG_NS, tag);
  for (const [name, value] of Object.entries(attrs)) {
    if (value === null || value === undefined) continue;
    if (!SVG_ATTRIBUTES.has(name) && !name.startsWith('data-')) throw new Error(`svg attribute not allowed: ${name}`);
    el.setAttribute(name, String(value));
  }
  add(el, children);
  return el;
}

/** An ISO time as "YYYY-MM-DD HH:MM:SS UTC" (the API's clock, whatever the browser's zone). */
export function when(iso) {
  if (!iso) return '—';
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return String(iso);
  return date.toISOString().replace('T', ' ').slice(0, 19) + ' UTC';
}

/** Just the time of day of an ISO time, "HH:MM:SS" (UTC). */
export function clock(iso) {
  const full = when(iso);
  return full.length > 11 && full.endsWith(' UTC') ? full.slice(11, 19) : full;
}

/** A duration in seconds as "42 s", "3.5 min", "2.1 h". */
export function duration(seconds) {
  if (seconds === null || seconds === undefined) return '—';
  if (seconds < 90) return `${Math.round(seconds)} s`;
  if (seconds < 5400) return `${(seconds / 60).toFixed(1)} min`;
  return `${(seconds / 3600).toFixed(1)} h`;
}

/** JSON as indented text (shown with textContent). */
export function json(value) {
  return JSON.stringify(value, null, 2);
}

/** A small status badge. */
export function badge(text, kind) {
  return h('span', { class: `badge badge-${kind || text}`, 'data-status': text }, text);
}
