// REST requests counted and timed by method, route and status. The route is the router's
// pattern (/v1/sessions/:sessionId), never the raw path, so ids do not become label values.
import type { Context, Next } from 'koa';
import { Counter, Histogram, type Registry } from 'prom-client';

/** A request answered before any route matched it (401, 413, 429, an unknown path). */
export const UNMATCHED = 'unmatched';

const METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);

/** The labels of one answered request: few values each, whatever the client sent. */
export function requestLabels(method: string, matchedRoute: unknown, status: number) {
  return {
    method: METHODS.has(method) ? method : 'other',
    route: typeof matchedRoute === 'string' ? matchedRoute : UNMATCHED,
    status: String(status),
  };
}

export function httpMetrics(registry: Registry) {
  const requests = new Counter({
    name: 'emo_http_requests_total',
    help: 'REST requests answered, by method, route pattern and status',
    labelNames: ['method', 'route', 'status'] as const,
    registers: [registry],
  });
  const duration = new Histogram({
    name: 'emo_http_request_duration_seconds',
    help: 'Time to answer a REST request, by method, route pattern and status',
    labelNames: ['method', 'route', 'status'] as const,
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [registry],
  });
  return async (ctx: Context, next: Next): Promise<void> => {
    const started = performance.now();
    try {
      await next();
    } finally {
      // Outermost middleware: the status is final (the error middleware has mapped any throw).
      const labels = requestLabels(ctx.method, ctx._matchedRoute, ctx.status);
      requests.inc(labels);
      duration.observe(labels, (performance.now() - started) / 1000);
    }
  };
}
