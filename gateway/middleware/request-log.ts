// A request id on every request (the client's X-Request-Id, or a new one) and one structured
// access log line per request once it is answered.
import { randomUUID } from 'node:crypto';
import type { Context, Next } from 'koa';
import type { Logger } from '../../bus/log.ts';

export function requestLog(log: Logger) {
  return async (ctx: Context, next: Next): Promise<void> => {
    const started = process.hrtime.bigint();
    const given = ctx.get('X-Request-Id');
    const id = /^[\w.-]{1,128}$/.test(given) ? given : randomUUID();
    ctx.state.requestId = id;
    ctx.set('X-Request-Id', id);
    try {
      await next();
    } finally {
      const ms = Number(process.hrtime.bigint() - started) / 1e6;
      const line = {
        requestId: id,
        method: ctx.method,
        path: ctx.path,
        status: ctx.status,
        ms: Math.round(ms * 100) / 100,
        user: ctx.state.caller?.user,
      };
      if (ctx.state.error) log.error({ ...line, err: ctx.state.error }, 'request failed');
      else log.info(line, 'request');
    }
  };
}
