// The console's only way to the data: the public API, with the API key in the x-api-key header.
// The key lives in this tab's sessionStorage; it is never put into a URL, a cookie or the page.

const KEY = 'mongomem.console.key';
const TENANT = 'mongomem.console.tenant';

export class ApiError extends Error {
  constructor(status, code, message, details) {
    super(message);
    this.status = status;
    this.code = code;
    this.details = details;
  }
}

export const session = {
  get key() {
    return sessionStorage.getItem(KEY);
  },
  get tenant() {
    return sessionStorage.getItem(TENANT);
  },
  get signedIn() {
    return sessionStorage.getItem(KEY) !== null;
  },
  signIn(key, tenant) {
    sessionStorage.setItem(KEY, key);
    sessionStorage.setItem(TENANT, tenant);
  },
  signOut() {
    sessionStorage.removeItem(KEY);
    sessionStorage.removeItem(TENANT);
  },
};

/** An API path from encoded segments: path('v1', 'users', id, 'sessions'). */
export function path(...segments) {
  return '/' + segments.map((s) => encodeURIComponent(String(s))).join('/');
}

/** Call the API; resolves to the parsed JSON body, rejects with an ApiError carrying the error envelope. */
export async function call(method, target, { query, body, key } = {}) {
  const url = new URL(target, window.location.origin);
  for (const [name, value] of Object.entries(query || {})) {
    if (value !== undefined && value !== null && value !== '') url.searchParams.set(name, String(value));
  }
  const headers = { accept: 'application/json' };
  const apiKey = key === undefined ? session.key : key;
  if (apiKey) headers['x-api-key'] = apiKey;
  if (body !== undefined) headers['content-type'] = 'application/json';
  let response;
  try {
    response = await fetch(url, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
      credentials: 'omit',
      cache: 'no-store',
      redirect: 'error',
      referrerPolicy: 'no-referrer',
    });
  } catch (err) {
    throw new ApiError(0, 'network_error', 'the API did not answer', null);
  }
  const text = await response.text();
  let data = null;
  try {
    data = text ? JSON.parse(text) : null;
  } catch (err) {
    data = null;
  }
  if (!response.ok) {
    const error = (data && data.error) || {};
    throw new ApiError(response.status, error.code || `http_${response.status}`, error.message || response.statusText, error.details ?? null);
  }
  return data;
}

export const get = (target, query) => call('GET', target, { query });
