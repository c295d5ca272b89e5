// Request/reply over NATS with typed errors in headers, in the manner of NATS micro services:
// a reply either carries the JSON result, or the headers Nats-Service-Error(-Code) and a JSON
// body { code, message, details }.
import { headers, type Msg, type NatsConnection, type Subscription } from '@nats-io/transport-node';
import type { Static } from '@sinclair/typebox';
import { config } from './config.ts';
import { ServiceError, overloaded, unavailable } from './errors.ts';
import { log } from './log.ts';
import { operations, subjectOf, type Operation } from './operations.ts';
import { accept } from './validate.ts';

const ERROR = 'Nats-Service-Error';
const ERROR_CODE = 'Nats-Service-Error-Code';

export type RequestOf<O extends Operation> = Static<(typeof operations)[O]>;

export async function call<R = unknown, O extends Operation = Operation>(
  nc: NatsConnection,
  operation: O,
  request: RequestOf<O>,
  timeoutMs: number = config.requestTimeoutMs,
): Promise<R> {
  let reply: Msg;
  try {
    reply = await nc.request(subjectOf(operation), JSON.stringify(request), { timeout: timeoutMs });
  } catch (error) {
    throw asServiceError(error, operation);
  }
  const status = reply.headers?.get(ERROR_CODE);
  if (status) {
    const body = reply.json<{ code: string; message: string; details?: [] }>();
    throw new ServiceError(Number(status), body.code, body.message, body.details);
  }
  return reply.json<R>();
}

function asServiceError(error: unknown, operation: Operation): ServiceError {
  const noResponders =
    error instanceof Error &&
    (error.name === 'NoRespondersError' ||
      error.cause instanceof Error && error.cause.name === 'NoRespondersError' ||
      ('isNoResponders' in error && typeof error.isNoResponders === 'function' && error.isNoResponders()));
  if (noResponders) {
    return operation === 'sessions.create' ? overloaded() : unavailable('no actor host is reachable; retry later');
  }
  if (error instanceof Error && error.name === 'TimeoutError') {
    return unavailable(`the ${operation} request timed out; retry later`);
  }
  return unavailable(`the bus failed: ${error instanceof Error ? error.message : String(error)}`);
}

/** Answers one operation: validates the request, runs the handler, replies with result or error. */
export function serve<O extends Operation>(
  nc: NatsConnection,
  operation: O,
  handler: (request: RequestOf<O>) => Promise<unknown>,
  options: { queue?: string; subject?: string } = {},
): Subscription {
  return nc.subscribe(options.subject ?? subjectOf(operation), {
    queue: options.queue,
    callback: (error, msg) => {
      if (error) {
        log.error({ err: error, operation }, 'subscription failed');
        return;
      }
      void answer(msg, operation, handler);
    },
  });
}

async function answer<O extends Operation>(
  msg: Msg,
  operation: O,
  handler: (request: RequestOf<O>) => Promise<unknown>,
): Promise<void> {
  try {
    const request = accept(operations[operation], msg.json()) as RequestOf<O>;
    const result = await handler(request);
    msg.respond(JSON.stringify(result ?? null));
  } catch (error) {
    respondError(msg, error, operation);
  }
}

function respondError(msg: Msg, error: unknown, operation: string): void {
  const failure =
    error instanceof ServiceError
      ? error
      : new ServiceError(500, 'internal', 'internal error; the failure was logged');
  if (!(error instanceof ServiceError) || failure.status >= 500) {
    log.error({ err: error, operation }, 'request failed');
  }
  const h = headers();
  h.set(ERROR, failure.message.slice(0, 200));
  h.set(ERROR_CODE, String(failure.status));
  msg.respond(JSON.stringify({ code: failure.code, message: failure.message, details: failure.details }), {
    headers: h,
  });
}
