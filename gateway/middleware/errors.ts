// Every failure becomes the API's error body: ServiceErrors (from validation or from the bus)
// keep their status; Koa's own HTTP errors (405, 413...) keep theirs; anything else is a 500.
import type { Context, Next } from 'koa';
import { ServiceError } from '../../bus/errors.ts';
import { errorBody } from '../error-body.ts';

const CODES: Record<number, string> = {
  400: 'bad_request',
  401: 'unauthorized',
  404: 'not_found',
  405: 'method_not_allowed',
  413: 'payload_too_large',
  415: 'unsupported_media_type',
  501: 'not_implemented',
};

export async function errors(ctx: Context, next: Next): Promise<void> {
  try {
    await next();
    if (ctx.status === 404 && ctx.body === undefined) {
      ctx.status = 404;
      ctx.body = errorBody(404, 'not_found', `no route for ${ctx.method} ${ctx.path}`);
    }
  } catch (error) {
    if (error instanceof ServiceError) {
      ctx.status = error.status;
      ctx.body = errorBody(error.status, error.code, error.message, error.details);
      if (error.retryAfterSeconds !== undefined) ctx.set('Retry-After', String(error.retryAfterSeconds));
      return;
    }
    const status = httpStatus(error);
    if (status && status < 500) {
      ctx.status = status;
      ctx.body = errorBody(status, CODES[status] ?? 'bad_request', (error as Error).message);
      if (status === 405 || status === 501) ctx.set('Allow', (error as { headers?: { Allow?: string } }).headers?.Allow ?? '');
      return;
    }
    ctx.state.error = error;
    ctx.status = 500;
    ctx.body = errorBody(500, 'internal', 'internal error; the failure was logged');
  }
}

function httpStatus(error: unknown): number | undefined {
  const status = (error as { status?: unknown; statusCode?: unknown })?.status ?? (error as { statusCode?: unknown })?.statusCode;
  return typeof status === 'number' ? status : undefined;
}
