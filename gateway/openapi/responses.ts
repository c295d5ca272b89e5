// What every authenticated route may answer besides its own result, as gateway/middleware/
// (auth, json-body, errors) and the bus (bus/rpc.ts) make it, and the headers each answer carries.
import type { DocumentedRoute } from './routes.ts';
import { ref } from './schemas.ts';

/** The statuses any authenticated route may answer with the error body, and why on any route. */
const COMMON_ERRORS: Record<number, string> = {
  400: 'invalid input: a body that is not JSON or nests deeper than 32 levels, a field or query parameter outside its contract; `message` and `details` name the field',
  401: 'no valid bearer token',
  413: 'a body over the size limit (1 MiB by default)',
  429: 'past a budget of the user (`rate_limited`, with Retry-After): requests per window, requests in flight, and per route creates, renames, deletes, events and their bytes; or, for an address, past its failed authentications. A `rate_limited` refusal is answered after a hold (RATE_LIMIT_REFUSAL_HOLD_MS, 250 ms by default)',
  503: 'the bus or a service behind it is unavailable or timed out; a request that fails changes nothing, retry',
};

const header = (description: string, schema: object, required = true) => ({ description, required, schema });

/** The `components.headers` of the document. */
export const headers = {
  'RateLimit-Limit': header('requests allowed per window (for a failed authentication: per address and minute; on a refusal, the limit of the budget that refused it)', { type: 'integer', minimum: 0 }),
  'RateLimit-Remaining': header('requests left in the current window', { type: 'integer', minimum: 0 }),
  'RateLimit-Reset': header('seconds until the window starts again', { type: 'integer', minimum: 0 }),
  'RateLimit-Policy': header('the budget, as `limit;w=window-seconds`', { type: 'string', pattern: '^\\d+;w=\\d+$' }),
  // A quota is not a matter of time: its 429 (`quota_exceeded`) has no Retry-After.
  'Retry-After': header('with `rate_limited`, or `overloaded` (503) when a host knows when it expects room: seconds to wait before retrying', { type: 'integer', minimum: 1 }, false),
  'WWW-Authenticate': header('the authentication scheme expected', { type: 'string', const: 'Bearer' }),
  'X-Request-Id': header("the client's X-Request-Id (letters, digits, `.`, `_`, `-`, up to 128), or a new UUID; it names the request in the logs", { type: 'string' }),
};

type HeaderName = keyof typeof headers;
const headerRefs = (names: HeaderName[]) => Object.fromEntries(names.map((name) => [name, { $ref: `#/components/headers/${name}` }]));

const RATE_LIMIT: HeaderName[] = ['RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset', 'RateLimit-Policy'];

/** The headers of an answer with `status` on `route`. */
export function responseHeaders(route: DocumentedRoute, status: number) {
  if (route.public) return headerRefs(['X-Request-Id']);
  const extra: HeaderName[] = status === 429 || status === 503 ? ['Retry-After'] : status === 401 ? ['WWW-Authenticate'] : [];
  return headerRefs(['X-Request-Id', ...RATE_LIMIT, ...extra]);
}

/** The error answers of `route`: the common ones and its own (404 where it names a session), with their meaning there. */
export function errorResponses(route: DocumentedRoute) {
  if (route.public) return {};
  const own: Record<number, string | undefined> = route.errors ?? {};
  const statuses = [...new Set([...Object.keys(COMMON_ERRORS), ...Object.keys(own)])].map(Number).sort((a, b) => a - b);
  return Object.fromEntries(
    statuses.map((status) => [
      String(status),
      {
        description: [COMMON_ERRORS[status], own[status]].filter(Boolean).join('; or '),
        headers: responseHeaders(route, status),
        content: { 'application/json': { schema: ref('Error') } },
      },
    ]),
  );
}
