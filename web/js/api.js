/*
 * api.js -- the dashboard's only way to the JobManager's REST API.
 *
 * Every URL is relative (e.g. "jobs/overview"), so the dashboard works at
 * http://host:8081/ and equally behind a reverse proxy under a path prefix.
 * Responses are JSON; a non-2xx answer becomes an ApiError carrying the
 * server's {"errors":[...]} messages (or the HTTP status when there are
 * none), which pages show to the user as they are.
 *
 * When the cluster is configured with a bearer token the server answers 401
 * to mutating requests. The token the user pastes is kept in sessionStorage
 * (gone when the tab closes) and sent as "Authorization: Bearer <token>" on
 * every request; a 401 raises the "sluice:auth-required" event so the shell
 * can open the token box.
 */

const TOKEN_KEY = 'sluice.token';

export class ApiError extends Error {
  constructor(status, messages, path) {
    super(messages.join('; '));
    this.status = status; /* HTTP status, 0 when the server was unreachable */
    this.messages = messages; /* list of human-readable strings */
    this.path = path;
  }
}

export function getToken() {
  try {
    return sessionStorage.getItem(TOKEN_KEY) || '';
  } catch (e) {
    return '';
  }
}

export function setToken(token) {
  try {
    if (token) sessionStorage.setItem(TOKEN_KEY, token);
    else sessionStorage.removeItem(TOKEN_KEY);
  } catch (e) {
    /* storage disabled: the token lives only until reload */
  }
  memoryToken = token || '';
}

let memoryToken = getToken();

/* Encodes one path segment (job ids are hex, TaskManager ids are free text). */
export function seg(v) {
  return encodeURIComponent(String(v));
}

/* Builds "path?k=v&..." from an object, skipping empty values. */
export function withQuery(path, params) {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params || {})) {
    if (v === undefined || v === null || v === '' || v === false) continue;
    q.set(k, String(v));
  }
  const qs = q.toString();
  return qs ? `${path}?${qs}` : path;
}

async function request(method, path, body, asText) {
  const headers = { Accept: asText ? 'text/plain' : 'application/json' };
  let payload;
  if (body instanceof FormData) {
    payload = body; /* multipart: the browser writes the boundary */
  } else {
    /* the JobManager takes mutating calls as JSON only, bodiless ones too */
    if (method !== 'GET') headers['Content-Type'] = 'application/json';
    if (body !== undefined) payload = typeof body === 'string' ? body : JSON.stringify(body);
  }
  const token = memoryToken || getToken();
  if (token) headers.Authorization = `Bearer ${token}`;
  let resp;
  try {
    resp = await fetch(path, { method, headers, body: payload, cache: 'no-store', credentials: 'same-origin' });
  } catch (e) {
    throw new ApiError(0, [`Cannot reach the JobManager (${method} ${path}): ${e.message}`], path);
  }
  const text = await resp.text();
  let data = null;
  let parsed = false;
  if (text) {
    try {
      data = JSON.parse(text);
      parsed = true;
    } catch (e) {
      parsed = false;
    }
  }
  if (!resp.ok) {
    let messages;
    if (parsed && data && Array.isArray(data.errors) && data.errors.length) {
      messages = data.errors.map((m) => (typeof m === 'string' ? m : JSON.stringify(m)));
    } else {
      const detail = !parsed && text ? `: ${text.slice(0, 300)}` : '';
      messages = [`${method} ${path} failed: HTTP ${resp.status} ${resp.statusText}${detail}`];
    }
    if (resp.status === 401) {
      messages.push(token
        ? 'The access token was rejected. Paste a valid one under "Access token".'
        : 'This JobManager requires an access token. Paste it under "Access token".');
      window.dispatchEvent(new CustomEvent('sluice:auth-required'));
    }
    throw new ApiError(resp.status, messages, path);
  }
  if (asText) return text;
  if (text && !parsed) throw new ApiError(resp.status, [`${method} ${path}: the response is not JSON`], path);
  return data;
}

export const api = {
  get: (path) => request('GET', path),
  /* a text answer (a log file) as it is */
  text: (path) => request('GET', path, undefined, true),
  post: (path, body) => request('POST', path, body === undefined ? {} : body),
  patch: (path, body) => request('PATCH', path, body),
  put: (path, body) => request('PUT', path, body),
  /* POST a multipart form (a file upload) */
  upload: (path, form) => request('POST', path, form),
};

/* Returns the value of a promise, or null when it failed (optional data). */
export async function optional(promise) {
  try {
    return await promise;
  } catch (e) {
    return null;
  }
}

/*
 * Polls jobs/<jid>/savepoints/<requestId> every intervalMs until the status
 * is COMPLETED; resolves {location} or {failure} (a message string).
 * onTick(statusId) is called on every answer. Stops after timeoutMs.
 */
export async function pollSavepoint(jid, requestId, onTick, intervalMs = 1000, timeoutMs = 30 * 60 * 1000) {
  const path = `jobs/${seg(jid)}/savepoints/${seg(requestId)}`;
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const r = await api.get(path);
    const status = r && r.status && r.status.id ? String(r.status.id) : 'IN_PROGRESS';
    if (onTick) onTick(status);
    if (status === 'COMPLETED') {
      const op = (r && r.operation) || {};
      if (op['failure-cause']) return { failure: describeFailure(op['failure-cause']) };
      return { location: op.location ? String(op.location) : '' };
    }
    if (Date.now() > deadline) return { failure: `still ${status} after ${Math.round(timeoutMs / 1000)} s; giving up polling` };
    await new Promise((res) => setTimeout(res, intervalMs));
  }
}

/* A failure-cause object ({class, stack-trace, ...}) or string as text. */
export function describeFailure(cause) {
  if (cause === null || cause === undefined) return 'unknown failure';
  if (typeof cause === 'string') return cause;
  const parts = [];
  for (const k of ['class', 'message', 'error', 'stack-trace']) {
    if (cause[k]) parts.push(String(cause[k]));
  }
  return parts.length ? parts.join('\n') : JSON.stringify(cause);
}
