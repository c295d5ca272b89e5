// Spec 4.1-4.5: create, list, get, rename and stop sessions; and delete one, as the original API does.
import Router from '@koa/router';
import { TypeCompiler } from '@sinclair/typebox/compiler';
import type { Context } from 'koa';
import {
  CreateSessionBody,
  IdempotencyKey,
  ListSessionsQuery,
  UpdateSessionBody,
} from '../../bus/contracts/session.ts';
import { badRequest } from '../../bus/errors.ts';
import { parseStreamUri } from '../../bus/stream-uri.ts';
import { parse } from '../../bus/validate.ts';
import { spend } from '../middleware/refuse.ts';
import type { UserBudgets } from '../user-budgets.ts';
import { callerOf } from '../auth/caller.ts';
import type { Send } from './bus-call.ts';

export function sessionRoutes(send: Send, budgets: UserBudgets): Router {
  const router = new Router({ prefix: '/v1/sessions' });

  router.post('/', async (ctx) => {
    const body = parse(CreateSessionBody, ctx.state.body, 'body');
    parseStreamUri(body.streamUri);
    const idempotencyKey = idempotencyKeyOf(ctx);
    await spend(ctx, budgets.creates, 'session creates per minute');
    ctx.body = await send('sessions.create', { caller: callerOf(ctx), body, ...(idempotencyKey ? { idempotencyKey } : {}) });
    ctx.status = 201;
  });

  router.get('/', async (ctx) => {
    const query = parse(ListSessionsQuery, ctx.query, 'query', { convert: true });
    ctx.body = await send('sessions.list', { caller: callerOf(ctx), query });
  });

  router.get('/:sessionId', async (ctx) => {
    ctx.body = await send('sessions.get', { caller: callerOf(ctx), session: ctx.params.sessionId ?? '' });
  });

  router.patch('/:sessionId', async (ctx) => {
    const given = ctx.state.body;
    if (given && typeof given === 'object' && !Array.isArray(given)) {
      const readOnly = Object.keys(given).filter((key) => key !== 'name');
      if (readOnly.length) {
        const details = readOnly.map((key) => ({ field: `body.${key}`, message: 'is read-only; only name can be edited' }));
        throw badRequest('invalid_body', details.map((d) => `${d.field}: ${d.message}`).join('; '), details);
      }
    }
    const body = parse(UpdateSessionBody, given, 'body');
    await spend(ctx, budgets.renames, 'session renames per minute');
    ctx.body = await send('sessions.update', { caller: callerOf(ctx), session: ctx.params.sessionId ?? '', body });
  });

  router.post('/:sessionId/stop', async (ctx) => {
    ctx.body = await send('sessions.stop', { caller: callerOf(ctx), session: ctx.params.sessionId ?? '' });
  });

  router.delete('/:sessionId', async (ctx) => {
    await spend(ctx, budgets.deletes, 'session deletes per minute');
    await send('sessions.delete', { caller: callerOf(ctx), session: ctx.params.sessionId ?? '' });
    ctx.status = 204;
  });

  return router;
}

const KEY_CHECK = TypeCompiler.Compile(IdempotencyKey);

function idempotencyKeyOf(ctx: Context): string | undefined {
  const key = ctx.get('Idempotency-Key');
  if (key === '') return undefined;
  if (!KEY_CHECK.Check(key)) {
    const message = `must be ${IdempotencyKey.description}`;
    throw badRequest('invalid_header', `header.idempotency-key: ${message}`, [{ field: 'header.idempotency-key', message }]);
  }
  return key;
}
