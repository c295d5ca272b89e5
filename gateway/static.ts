// The web dashboard's static files: `/` is its page, `/dashboard/*` its scripts and styles,
// `/vendor/*` the charting library from node_modules. Mounted before authentication: the page
// holds no data, and every API call it makes carries the user's token. The files are a fixed
// list read once at start, looked up by exact path, so no request can name any other file.
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { extname, join } from 'node:path';
import type { Context, Next } from 'koa';
import { notFound } from '../bus/errors.ts';

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
};

// Scripts and styles from this origin only, nothing inline; API calls and the WebSocket go to
// this origin too ('self' covers ws: and wss: of the same host), and no one may frame the page.
const POLICY = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self'",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

interface StaticFile {
  body: Buffer;
  type: string;
  etag: string;
}

function load(path: string): StaticFile {
  const body = readFileSync(path);
  const type = TYPES[extname(path)];
  if (!type) throw new Error(`no content type for ${path}`);
  return { body, type, etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"` };
}

/** URL path -> file: the page, every file of gateway/dashboard/, and uPlot's two files. */
function files(): Map<string, StaticFile> {
  const dashboard = join(import.meta.dirname, 'dashboard');
  const uplot = join(import.meta.dirname, '..', 'node_modules', 'uplot', 'dist');
  const table = new Map<string, StaticFile>([['/', load(join(dashboard, 'index.html'))]]);
  for (const name of readdirSync(dashboard)) {
    if (name !== 'index.html' && TYPES[extname(name)]) table.set(`/dashboard/${name}`, load(join(dashboard, name)));
  }
  for (const name of ['uPlot.esm.js', 'uPlot.min.css']) table.set(`/vendor/${name}`, load(join(uplot, name)));
  return table;
}

export function dashboard() {
  const table = files();
  return async (ctx: Context, next: Next): Promise<void> => {
    if (ctx.method !== 'GET' && ctx.method !== 'HEAD') return next();
    const file = table.get(ctx.path);
    if (!file) {
      // Under the dashboard's own folders, an unknown file is a 404, not a request for a token.
      if (ctx.path.startsWith('/dashboard/') || ctx.path.startsWith('/vendor/')) throw notFound('file');
      return next();
    }
    ctx.set('Content-Security-Policy', POLICY);
    ctx.set('X-Content-Type-Options', 'nosniff');
    ctx.set('Referrer-Policy', 'no-referrer');
    // Revalidated on every load (a cheap 304), so a new version is picked up at once.
    ctx.set('Cache-Control', 'no-cache');
    ctx.etag = file.etag;
    ctx.type = file.type;
    ctx.status = 200;
    if (ctx.fresh) {
      ctx.status = 304;
      return;
    }
    ctx.body = file.body;
  };
}
