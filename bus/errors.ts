// Errors that cross the bus carry an HTTP status and a machine-readable code, so the gateway
// can answer with the error body of the API without knowing where the error came from.
export interface ErrorDetail {
  field: string;
  message: string;
}

export class ServiceError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details?: ErrorDetail[],
    /** When the client may expect success on a retry, in whole seconds; the gateway's Retry-After. */
    readonly retryAfterSeconds?: number,
  ) {
    super(message);
    this.name = 'ServiceError';
  }
}

export const badRequest = (code: string, message: string, details?: ErrorDetail[]) =>
  new ServiceError(400, code, message, details);
export const notFound = (what = 'session') => new ServiceError(404, 'not_found', `${what} not found`);
/** For a `.catch`: undefined for a 404, so the caller can look elsewhere; any other failure stands. */
export function unlessNotFound(error: unknown): undefined {
  if (error instanceof ServiceError && error.status === 404) return undefined;
  throw error;
}
/** A session whose record has aged out of the bucket is read from the index, and changes no more. */
export const archived = () =>
  new ServiceError(409, 'session_archived', 'the session is archived (finished, and unchanged for longer than records are kept): it can be read and deleted, not changed');
/** No host has room; `retryAfterMs`: when one expects to, if known. */
export const overloaded = (retryAfterMs?: number) =>
  new ServiceError(
    503,
    'overloaded',
    'no analysis capacity is free right now; retry later',
    undefined,
    retryAfterMs === undefined ? undefined : Math.max(1, Math.ceil(retryAfterMs / 1000)),
  );
export const unavailable = (message: string) => new ServiceError(503, 'unavailable', message);
/**
 * The host could not finish in time (it is busy, or the session is changing under many
 * requests at once): a 503 the host decides, with when to retry, rather than the caller's
 * bus timeout, which says nothing. `message` says what state the request left.
 */
export const notInTime = (message: string, retryAfterMs = 1000) =>
  new ServiceError(503, 'unavailable', message, undefined, retryAfterSeconds(retryAfterMs));

// An estimate kept to a span a client will wait.
const retryAfterSeconds = (ms: number) => Math.min(60, Math.max(1, Math.ceil(ms / 1000)));
export const beingDeleted = () => new ServiceError(409, 'being_deleted', 'the session is being deleted');
export const quotaExceeded = (message: string) => new ServiceError(429, 'quota_exceeded', message);

/**
 * A failure of something we depend on (NATS, the KV, ClickHouse) rather than of our code: the
 * client may retry, so it is a 503. Anything else stays a 500, so bugs are not dressed as load.
 */
export function isTransient(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  const code = String((error as { code?: unknown }).code ?? '');
  if (/^(ECONNREFUSED|ECONNRESET|ETIMEDOUT|EPIPE|EAI_AGAIN|503|408|TIMEOUT|CONNECTION_CLOSED|CONNECTION_DRAINING|DISCONNECT)$/i.test(code)) return true;
  // JetStream's own "system temporarily unavailable" (API error 10008): a stream's leader is
  // being elected after a server was lost.
  if (error.name === 'JetStreamApiError' && code === '10008') return true;
  // JetStream's "not enabled" is transient only when it means no server answered yet (its cause,
  // a RequestError), not when the account has no JetStream.
  const names = ['TimeoutError', 'NoRespondersError', 'ClosedConnectionError', 'DrainingConnectionError', 'RequestError', 'ConnectionError'];
  return names.includes(error.name) || (error.cause !== undefined && isTransient(error.cause));
}
