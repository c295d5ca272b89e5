// Spec 4.10 and 4.11: sources and events share POST /v1/sessions/:sessionId/events. A body
// with `name` and `format` registers a source; events go to .../events/:sourceId, or to the
// shared path with `source` in each event. One event or an array of up to 1000.
import Router from '@koa/router';
import { Type } from '@sinclair/typebox';
import {
  EventInput,
  ListEventsQuery,
  MAX_EVENTS_PER_REQUEST,
  RegisterSourceBody,
} from '../../bus/contracts/events.ts';
import { badRequest } from '../../bus/errors.ts';
import { parse } from '../../bus/validate.ts';
import type { Context } from 'koa';
import { spend } from '../middleware/refuse.ts';
import type { UserBudgets } from '../user-budgets.ts';
import { callerOf } from '../auth/caller.ts';
import type { Send } from './bus-call.ts';

export const EventBatch = Type.Array(EventInput, { minItems: 1, maxItems: MAX_EVENTS_PER_REQUEST });
export const SourcedEvent = Type.Object(
  { source: Type.String({ minLength: 1 }), ...EventInput.properties },
  { additionalProperties: false },
);
export const SourcedBatch = Type.Array(SourcedEvent, { minItems: 1, maxItems: MAX_EVENTS_PER_REQUEST });

const isRegistration = (body: unknown) =>
  typeof body === 'object' && body !== null && !Array.isArray(body) &&
  ('name' in body || 'format' in body) && !('time' in body) && !('data' in body);

/** A batch's events, and its body's bytes, spent from the user's budgets per second. */
async function spendEvents(ctx: Context, budgets: UserBudgets, count: number): Promise<void> {
  await spend(ctx, budgets.events, 'events per second', count);
  await spend(ctx, budgets.eventBytes, 'bytes of events per second', ctx.state.bodyBytes as number);
}

export function eventRoutes(send: Send, budgets: UserBudgets): Router {
  const router = new Router({ prefix: '/v1/sessions/:sessionId/events' });

  router.post('/', async (ctx) => {
    const caller = callerOf(ctx);
    const session = ctx.params.sessionId ?? '';
    const body: unknown = ctx.state.body;
    if (isRegistration(body)) {
      ctx.body = await send('sources.register', { caller, session, body: parse(RegisterSourceBody, body, 'body') });
    } else {
      const events = Array.isArray(body) ? parse(SourcedBatch, body, 'body') : [parse(SourcedEvent, body, 'body')];
      const source = events[0]?.source ?? '';
      const mixed = events.findIndex((event) => event.source !== source);
      if (mixed >= 0) {
        throw badRequest('invalid_body', `body.${mixed}.source: all events of a request must come from one source`, [
          { field: `body.${mixed}.source`, message: 'must be the same source as the first event' },
        ]);
      }
      await spendEvents(ctx, budgets, events.length);
      ctx.body = await send('events.add', {
        caller,
        session,
        source,
        events: events.map(({ time, data }) => ({ time, data })),
      });
    }
    ctx.status = 201;
  });

  router.post('/:sourceId', async (ctx) => {
    const body: unknown = ctx.state.body;
    const events = Array.isArray(body) ? parse(EventBatch, body, 'body') : [parse(EventInput, body, 'body')];
    await spendEvents(ctx, budgets, events.length);
    ctx.body = await send('events.add', {
      caller: callerOf(ctx),
      session: ctx.params.sessionId ?? '',
      source: ctx.params.sourceId ?? '',
      events,
    });
    ctx.status = 201;
  });

  router.get('/', async (ctx) => {
    const query = parse(ListEventsQuery, ctx.query, 'query', { convert: true });
    ctx.body = await send('events.list', { caller: callerOf(ctx), session: ctx.params.sessionId ?? '', query });
  });

  return router;
}
