// The REST API of the service, every call with the signed-in user's token. A failed call
// throws an ApiError holding the API's own words (the `message` of its error body).
export class ApiError extends Error {
  constructor(status, code, message) {
    super(message);
    this.name = 'ApiError';
    this.status = status;
    this.code = code;
  }
}

/** `onUnauthorized` is told when the service no longer accepts the token. */
export function createApi(token, onUnauthorized) {
  async function call(method, path, { query, body } = {}) {
    const url = new URL(`/v1${path}`, location.origin);
    for (const [name, value] of Object.entries(query ?? {})) {
      if (value !== undefined && value !== '') url.searchParams.set(name, String(value));
    }
    const headers = { Authorization: `Bearer ${token}` };
    if (body !== undefined) headers['Content-Type'] = 'application/json';
    let response;
    try {
      response = await fetch(url, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
    } catch {
      throw new ApiError(0, 'network', 'the service could not be reached; check the connection and try again');
    }
    if (response.status === 204) return true; // DELETE: done, nothing to read
    const text = await response.text();
    let parsed;
    try {
      parsed = JSON.parse(text);
    } catch {
      parsed = undefined;
    }
    if (!response.ok) {
      const message = typeof parsed?.message === 'string' ? parsed.message : `the service answered ${response.status} ${response.statusText}`;
      const error = new ApiError(response.status, parsed?.code ?? 'http', message);
      if (response.status === 401) onUnauthorized(error);
      throw error;
    }
    return parsed;
  }

  const session = (id) => `/sessions/${encodeURIComponent(id)}`;
  return {
    listSessions: (query) => call('GET', '/sessions', { query }),
    createSession: (name, streamUri) => call('POST', '/sessions', { body: { name, streamUri } }),
    getSession: (id) => call('GET', session(id)),
    renameSession: (id, name) => call('PATCH', session(id), { body: { name } }),
    stopSession: (id) => call('POST', `${session(id)}/stop`),
    deleteSession: (id) => call('DELETE', session(id)),
    /** `which`: emotions/timeline, audio/features or audio/transcription-sentiment. */
    timeline: (id, which, query) => call('GET', `${session(id)}/${which}`, { query }),
    transcription: (id, query) => call('GET', `${session(id)}/audio/transcription`, { query }),
    events: (id, query) => call('GET', `${session(id)}/events`, { query }),
  };
}

/** Every item of a paged list (limit 100 a page), up to `max` items; `truncated` if there were more. */
export async function allPages(fetchPage, max) {
  const items = [];
  for (let offset = 0; items.length < max; offset += 100) {
    const page = await fetchPage({ limit: 100, offset });
    items.push(...page.data);
    if (!page.hasMore) return { items, truncated: false };
  }
  return { items: items.slice(0, max), truncated: true };
}
