// GET /v1/openapi.json: the document, to anyone, without a token: tools and people read it
// before they hold one. Mounted before authentication, so it spends no rate-limit budget either.
import Router from '@koa/router';
import type { OpenApiDocument } from './document.ts';

export function openApiRoute(document: OpenApiDocument): Router {
  const text = JSON.stringify(document);
  const router = new Router();
  router.get('/v1/openapi.json', (ctx) => {
    ctx.type = 'application/json';
    ctx.body = text;
  });
  return router;
}
