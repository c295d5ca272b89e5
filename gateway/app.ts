// The REST gateway: stateless; authenticates, validates, and turns each call into one bus request.
import Koa from 'koa';
import type { Registry } from 'prom-client';
import type { Logger } from '../bus/log.ts';
import type { Authenticator } from './auth/authenticator.ts';
import type { ClientAddresses } from './client-address.ts';
import { apiHeaders } from './middleware/api-headers.ts';
import { auth, type RequestLimits } from './middleware/auth.ts';
import { errors } from './middleware/errors.ts';
import { holdRefusals } from './middleware/hold-refusals.ts';
import { eventsBeforeBody } from './middleware/events-before-body.ts';
import { inFlight } from './middleware/in-flight.ts';
import { httpMetrics } from './middleware/http-metrics.ts';
import { jsonBody } from './middleware/json-body.ts';
import { messageFraming } from './middleware/message-framing.ts';
import { requestLog } from './middleware/request-log.ts';
import { unreadBody } from './middleware/unread-body.ts';
import type { OpenApiDocument } from './openapi/document.ts';
import { openApiRoute } from './openapi/route.ts';
import type { Send } from './routes/bus-call.ts';
import { eventRoutes } from './routes/events.ts';
import { resultRoutes } from './routes/results.ts';
import { sessionRoutes } from './routes/sessions.ts';
import { dashboard } from './static.ts';
import type { UserBudgets } from './user-budgets.ts';

export interface AppOptions {
  send: Send;
  authenticator: Authenticator;
  /** Who a request comes from, for the budget of failed authentications. */
  addresses: ClientAddresses;
  limits: RequestLimits;
  budgets: UserBudgets;
  log: Logger;
  bodyLimitBytes: number;
  /** How long a refusal past a budget is held before it is answered (middleware/hold-refusals.ts). */
  refusalHoldMs: number;
  /** Served at GET /v1/openapi.json. */
  openApi: OpenApiDocument;
  /** Where REST requests are counted (the gateway's /metrics); none for an app built alone. */
  registry?: Registry;
}

export function createApp(options: AppOptions): Koa {
  const app = new Koa();
  app.silent = true;
  app.use(apiHeaders);
  if (options.registry) app.use(httpMetrics(options.registry));
  app.use(requestLog(options.log));
  // Outside `errors`: it reads what a refused request left unread before its answer goes.
  app.use(unreadBody(options.bodyLimitBytes));
  app.use(errors);
  app.use(holdRefusals({ holdMs: options.refusalHoldMs, heldAtOnce: options.budgets.inFlight.limit, addresses: options.addresses }));
  app.use(messageFraming);
  // Before auth: the document is public.
  const openApi = openApiRoute(options.openApi);
  app.use(openApi.routes());
  app.use(openApi.allowedMethods({ throw: true }));
  app.use(dashboard());
  app.use(auth(options.authenticator, options.limits, options.addresses));
  app.use(inFlight(options.budgets.inFlight));
  app.use(eventsBeforeBody(options.budgets));
  app.use(jsonBody(options.bodyLimitBytes));
  const { send, budgets } = options;
  for (const router of [sessionRoutes(send, budgets), resultRoutes(send), eventRoutes(send, budgets)]) {
    app.use(router.routes());
    app.use(router.allowedMethods({ throw: true }));
  }
  return app;
}
