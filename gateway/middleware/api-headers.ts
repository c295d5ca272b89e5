// Every answer of the API, errors included, is JSON for one caller: a browser must not guess
// another type for it (a body that echoes input would otherwise run as a page), and no cache
// between the caller and the gateway may keep it for someone else. The dashboard's static
// files set their own Cache-Control (static.ts): they hold no data and are revalidated.
import type { Context, Next } from 'koa';

export async function apiHeaders(ctx: Context, next: Next): Promise<void> {
  ctx.set('X-Content-Type-Options', 'nosniff');
  ctx.set('Cache-Control', 'no-store');
  await next();
}
