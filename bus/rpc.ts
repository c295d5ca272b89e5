// Request/reply over NATS with typed errors in headers, in the manner of NATS micro services:
// a reply either carries the JSON result, or the headers Nats-Service-Error(-Code) and a JSON
// body { code, message, details }.
import { headers, type Msg, type NatsConnection, type Subscription } from '@nats-io/transport-node';
import { ServiceError, isTransient, notInTime, overloaded, unavailable } from './errors.ts';
import type { Logger } from './log.ts';
import { operations, type Operation, type ReplyOf, type RequestOf } from './operations.ts';
import { accept, checker } from './validate.ts';

const ERROR = 'Nats-Service-Error';
const ERROR_CODE = 'Nats-Service-Error-Code';

export type { ReplyOf, RequestOf };

/** How long the responder has, sent with the request so that it answers in time. */
const TIMEOUT_HEADER = 'Emo-Timeout-Ms';
/**
 * When the caller stops waiting, in ms since the epoch on its clock: a request that reached the
 * responder late (queued behind others, a busy event loop) has only what is left of its wait.
 */
const DEADLINE_HEADER = 'Emo-Deadline';

/**
 * Told how long each request took and how it ended (200, or the error's status), for the
 * process's metrics (bus/request-metrics.ts); passed in, so nothing here is global.
 */
export type RequestObserver = (operation: Operation, side: 'caller' | 'responder', seconds: number, status: number) => void;

export async function call<O extends Operation>(
  nc: NatsConnection,
  operation: O,
  request: RequestOf<O>,
  timeoutMs: number,
  observe?: RequestObserver,
): Promise<ReplyOf<O>> {
  const started = performance.now();
  let status = 200;
  try {
    return await exchange(nc, operation, request, timeoutMs);
  } catch (error) {
    status = error instanceof ServiceError ? error.status : 500;
    throw error;
  } finally {
    observe?.(operation, 'caller', (performance.now() - started) / 1000, status);
  }
}

/** One request and its reply, errors as ServiceError. */
async function exchange<O extends Operation>(
  nc: NatsConnection,
  operation: O,
  request: RequestOf<O>,
  timeoutMs: number,
): Promise<ReplyOf<O>> {
  let reply: Msg;
  try {
    const h = headers();
    const answerWithinMs = timeoutMs - replySlackMs(timeoutMs);
    h.set(TIMEOUT_HEADER, String(answerWithinMs));
    h.set(DEADLINE_HEADER, String(Date.now() + answerWithinMs));
    reply = await nc.request(operations[operation].subject, JSON.stringify(request), { timeout: timeoutMs, headers: h });
  } catch (error) {
    if (operation === 'sessions.create' && isNoResponders(error)) throw overloaded(await roomExpectedIn(nc, timeoutMs));
    throw asServiceError(error, operation);
  }
  let body: unknown;
  try {
    body = reply.json<unknown>();
  } catch {
    throw unavailable(`the ${operation} reply could not be read; retry later`);
  }
  const status = Number(reply.headers?.get(ERROR_CODE));
  if (status) {
    const error = body as { code?: unknown; message?: unknown; details?: []; retryAfterSeconds?: unknown };
    const retryAfter = typeof error.retryAfterSeconds === 'number' ? error.retryAfterSeconds : undefined;
    throw new ServiceError(status, String(error.code), String(error.message), error.details, retryAfter);
  }
  return body as ReplyOf<O>;
}

/**
 * How much earlier than the caller gives up the responder is asked to answer: a reply made at
 * the responder's deadline still has the time to arrive from a host whose event loop runs late
 * (a busy host's turns take hundreds of milliseconds), so the caller gets the host's decision,
 * a 503 with Retry-After, rather than a timeout of its own that says nothing.
 */
const replySlackMs = (timeoutMs: number) => Math.min(1000, Math.round(timeoutMs / 5));

const isNoResponders = (error: unknown) =>
  error instanceof Error &&
  (error.name === 'NoRespondersError' ||
    error.cause instanceof Error && error.cause.name === 'NoRespondersError' ||
    ('isNoResponders' in error && typeof error.isNoResponders === 'function' && error.isNoResponders()));

// The answer of any host will do; one that cannot answer quickly leaves the 503 without a Retry-After.
const ROOM_TIMEOUT_MS = 1000;
/** A request nobody answered in time: a responder that busy is worth a moment before the retry. */
const TIMED_OUT_RETRY_MS = 2000;

/** How long until a host expects room (a host's own estimate: any one host answers); undefined if none answers in time. */
async function roomExpectedIn(nc: NatsConnection, timeoutMs: number): Promise<number | undefined> {
  try {
    return (await exchange(nc, 'sessions.room', {}, Math.min(timeoutMs, ROOM_TIMEOUT_MS))).retryAfterMs;
  } catch {
    return undefined;
  }
}

function asServiceError(error: unknown, operation: Operation): ServiceError {
  if (isNoResponders(error)) {
    return operation === 'sessions.create' ? overloaded() : unavailable('no actor host is reachable; retry later');
  }
  if (error instanceof Error && error.name === 'TimeoutError') {
    // Rare since responders answer 503 at their own deadline; still a clear retry for the client.
    return notInTime(`the ${operation} request timed out; retry later`, TIMED_OUT_RETRY_MS);
  }
  return unavailable(`the bus failed: ${error instanceof Error ? error.message : String(error)}`);
}

/** What a handler knows about the call besides its request. */
export interface CallContext {
  /**
   * When the handler's answer is due (ms since the epoch), a little before the caller stops
   * waiting: a change must not start after it. A handler still running then is answered 503
   * with Retry-After for it, and whatever it does afterwards is nobody's answer.
   */
  deadline: number;
}

export interface ServeOptions {
  /** Where failed requests and replies that could not be sent are logged. */
  log: Logger;
  /** A queue group: one member of it answers each request. */
  queue?: string;
  subject?: string;
  /** Told of each request answered: how long the handler took and the status it answered. */
  observe?: RequestObserver;
}

/** Answers one operation: validates the request, runs the handler, replies with result or error. */
export function serve<O extends Operation>(
  nc: NatsConnection,
  operation: O,
  handler: (request: RequestOf<O>, context: CallContext) => Promise<ReplyOf<O>>,
  options: ServeOptions,
): Subscription {
  const { log } = options;
  return nc.subscribe(options.subject ?? operations[operation].subject, {
    queue: options.queue,
    callback: (error, msg) => {
      if (error) {
        log.error({ err: error, operation }, 'subscription failed');
        return;
      }
      const started = performance.now();
      answer(msg, operation, handler, log).then(
        (status) => options.observe?.(operation, 'responder', (performance.now() - started) / 1000, status),
        (failure: unknown) => log.error({ err: failure, operation }, 'reply could not be sent'),
      );
    },
  });
}

async function answer<O extends Operation>(
  msg: Msg,
  operation: O,
  handler: (request: RequestOf<O>, context: CallContext) => Promise<ReplyOf<O>>,
  log: Logger,
): Promise<number> {
  const { deadline, sentAt } = timesOf(msg);
  const context = { deadline };
  // Queued behind others past its time: not started, and answered at once while the caller may
  // still be listening (its own wait ends a little later).
  if (Date.now() >= deadline) {
    log.debug({ operation }, 'request arrived after its deadline');
    return respondLate(msg, operation, sentAt, log, 'the host was too busy to start this request in time; nothing was done, retry later');
  }
  let answered = false;
  const due = setTimeout(() => {
    answered = true;
    respondLate(msg, operation, sentAt, log, 'the host could not finish this request in time; retry later');
  }, deadline - Date.now());
  let reply: string | undefined;
  let failure: unknown;
  try {
    const { request: requestSchema, reply: replySchema } = operations[operation];
    const request = accept(requestSchema, msg.json()) as RequestOf<O>;
    const result = await handler(request, context);
    // Cheap with a compiled check, and it keeps every reply true to its published contract.
    if (!checker(replySchema).Check(result)) throw new Error(`the ${operation} reply does not match its contract`);
    reply = JSON.stringify(result);
  } catch (error) {
    failure = error;
  } finally {
    clearTimeout(due);
  }
  if (answered) {
    log.debug({ operation, failed: failure !== undefined }, 'request finished after it was answered 503 at its deadline');
    return LATE;
  }
  if (reply === undefined) {
    // Given up at its deadline (a read's queries end with it): not a failure of the service.
    if (failure instanceof ServiceError && failure.status === LATE && Date.now() >= deadline) {
      return respondLate(msg, operation, sentAt, log, failure.message);
    }
    return respondError(msg, failure, operation, log);
  }
  try {
    msg.respond(reply);
    return 200;
  } catch (error) {
    // Too large for the bus, or the connection is closing: the caller still gets an answer.
    return respondError(msg, error, operation, log);
  }
}

// A request without the header (an older gateway, a tool) gets the gateway's default wait.
const DEFAULT_TIMEOUT_MS = 5000;
/** The status of a request answered at or past its deadline: 503 with Retry-After. */
const LATE = 503;

/**
 * When the answer is due, never later than the caller's wait from now: a clock behind the
 * caller's cannot lengthen it; one ahead shortens it by the difference (milliseconds under
 * NTP). And when, about, the request was sent: how far behind this host is.
 */
function timesOf(msg: Msg): { deadline: number; sentAt: number } {
  const timeoutMs = Number(msg.headers?.get(TIMEOUT_HEADER));
  const budget = Number.isFinite(timeoutMs) && timeoutMs > 0 && timeoutMs <= 600_000 ? timeoutMs : DEFAULT_TIMEOUT_MS;
  const waited = Date.now() + budget;
  const sent = Number(msg.headers?.get(DEADLINE_HEADER));
  const deadline = Number.isFinite(sent) && sent > 0 ? Math.min(waited, sent) : waited;
  return { deadline, sentAt: deadline - budget };
}

/**
 * The host's own 503 for a request it could not answer in time: retry after about as long as
 * this one has waited, which is how far behind the host is.
 */
function respondLate(msg: Msg, operation: string, sentAt: number, log: Logger, message: string): number {
  const behindMs = Date.now() - sentAt;
  log.warn({ operation, behindMs }, 'answered 503: not finished in time');
  try {
    return send(msg, notInTime(message, behindMs));
  } catch (error) {
    // The connection is closing: nobody is left to answer.
    log.debug({ err: error, operation }, 'late answer not sent');
    return LATE;
  }
}

/** Answers the error; returns its status. */
function respondError(msg: Msg, error: unknown, operation: string, log: Logger): number {
  const failure =
    error instanceof ServiceError
      ? error
      : isTransient(error)
        ? unavailable('a service this request needs is unreachable; retry later')
        : new ServiceError(500, 'internal', 'internal error; the failure was logged');
  if (!(error instanceof ServiceError) || failure.status >= 500) {
    log.error({ err: error, operation }, 'request failed');
  }
  return send(msg, failure);
}

function send(msg: Msg, failure: ServiceError): number {
  const h = headers();
  h.set(ERROR, headerText(failure.message));
  h.set(ERROR_CODE, String(failure.status));
  const { code, message, details, retryAfterSeconds } = failure;
  msg.respond(JSON.stringify({ code, message, details, retryAfterSeconds }), {
    headers: h,
  });
  return failure.status;
}

/**
 * The boundary into a NATS header: printable ASCII only, short. Messages quote what users
 * sent (a duplicate source name), and a CR or LF there would make the client library throw.
 */
export function headerText(text: string): string {
  return text.replace(/[^\x20-\x7e]/g, '?').slice(0, 200);
}
