// A request refused before its body was read (401, 404, 429, a body that is not JSON) still has
// that body on its way. When the connection closes right after the answer, as it does for a
// client that sent `Connection: close`, the bytes still arriving make the kernel reset it, and
// the client loses the answer it was sent (RFC 9112, section 9.6). So the rest of a body that a
// valid request could have carried is read and dropped before the answer goes. Past the body
// limit or the time allowed the answer goes anyway, and the rest is dropped as it comes, as Node
// does with any body left unread; a 413 and a transfer coding other than chunked
// (`message-framing.ts`) are answered at once.
import type { IncomingMessage } from 'node:http';
import type { Context, Next } from 'koa';

const DRAIN_MS = 10_000;

export function unreadBody(limitBytes: number) {
  return async (ctx: Context, next: Next): Promise<void> => {
    await next();
    const { req } = ctx;
    if (req.complete || req.destroyed || ctx.status === 413) return;
    const coding = ctx.get('Transfer-Encoding').trim().toLowerCase();
    if (coding === '' || coding === 'chunked') await drain(req, limitBytes);
  };
}

/** Resolves once the body has ended, or is over the limit, or the time is up; it flows on after. */
function drain(req: IncomingMessage, limitBytes: number): Promise<void> {
  return new Promise((resolve) => {
    let bytes = 0;
    const done = () => {
      clearTimeout(timer);
      req.off('data', count).off('end', done).off('close', done);
      resolve();
    };
    const count = (chunk: Buffer) => {
      bytes += chunk.length;
      if (bytes > limitBytes) done();
    };
    const timer = setTimeout(done, DRAIN_MS);
    req.on('data', count).once('end', done).once('close', done);
    req.resume();
  });
}
