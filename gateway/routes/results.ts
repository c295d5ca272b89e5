// Spec 4.6-4.9, and the transcript itself: results read back per session.
import Router from '@koa/router';
import { TimelineQuery, TotalsQuery, SpeechSegmentsQuery } from '../../bus/contracts/results.ts';
import type { Operation } from '../../bus/operations.ts';
import { parse } from '../../bus/validate.ts';
import { callerOf } from '../auth/caller.ts';
import type { Send } from './bus-call.ts';
import { foldExpand } from './expand.ts';

const TIMELINES: Record<string, Operation & ('emotions.timeline' | 'audio.features' | 'speech.sentiment')> = {
  '/:sessionId/emotions/timeline': 'emotions.timeline',
  '/:sessionId/audio/features': 'audio.features',
  '/:sessionId/audio/transcription-sentiment': 'speech.sentiment',
};

export function resultRoutes(send: Send): Router {
  const router = new Router({ prefix: '/v1/sessions' });

  router.get('/:sessionId/emotions', async (ctx) => {
    const query = parse(TotalsQuery, foldExpand(ctx.query), 'query', { convert: true });
    ctx.body = await send('emotions.totals', { caller: callerOf(ctx), session: ctx.params.sessionId ?? '', query });
  });

  for (const [path, operation] of Object.entries(TIMELINES)) {
    router.get(path, async (ctx) => {
      const query = parse(TimelineQuery, foldExpand(ctx.query), 'query', { convert: true });
      ctx.body = await send(operation, { caller: callerOf(ctx), session: ctx.params.sessionId ?? '', query });
    });
  }

  router.get('/:sessionId/audio/transcription', async (ctx) => {
    const query = parse(SpeechSegmentsQuery, ctx.query, 'query', { convert: true });
    ctx.body = await send('speech.segments', { caller: callerOf(ctx), session: ctx.params.sessionId ?? '', query });
  });

  return router;
}
