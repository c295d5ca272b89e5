// One client socket: authentication first, then requests, each answered once; subscriptions
// join the gateway's shared feeds and leave them when the socket goes.
import type { WebSocket } from 'ws';
import type { Caller, Session } from '../../bus/contracts/session.ts';
import { ServiceError, badRequest } from '../../bus/errors.ts';
import { newId } from '../../bus/ids.ts';
import type { Logger } from '../../bus/log.ts';
import { tenantOf } from '../../bus/subjects.ts';
import { parse } from '../../bus/validate.ts';
import type { Authenticator } from '../auth/authenticator.ts';
import type { RateLimit } from '../rate-limit.ts';
import type { Send } from '../routes/bus-call.ts';
import type { Feeds } from './feeds.ts';
import type { Counts } from '../counts.ts';
import { encodeDelivery } from './delivery.ts';
import { MessageRate, type WsLimits } from './limits.ts';
import { Outbox } from './outbox.ts';
import type { PushBudgets } from './push-budgets.ts';
import type { PushMetrics } from './push-metrics.ts';
import {
  AuthBody,
  BARE_KEY_CHANNEL,
  PATHS,
  SubscribeBody,
  UnsubscribeBody,
  WsRequest,
  errorReply,
  okReply,
  parseKey,
} from './protocol.ts';

export interface ConnectionDeps {
  authenticator: Authenticator;
  send: Send;
  feeds: Feeds;
  /** Connections per user in this gateway. */
  users: Counts;
  /** Subscriptions per user in this gateway, over all its connections. */
  subscriptions: Counts;
  /** Bytes of pushed data per user per second in this gateway. */
  pushBudgets: PushBudgets;
  pushMetrics: PushMetrics;
  limits: WsLimits;
  log: Logger;
  /** The client's address (client-address.ts), and the budget of failed authentications per address the REST API spends too. */
  address: string;
  authFailures: RateLimit;
  /** The users' request budget, shared with the REST API: a subscribe is a bus request (sessions.get) like a REST read. */
  requests: RateLimit;
  /** Frees the socket's place among its address's unauthenticated ones: once, when it authenticates or goes. */
  releaseAnonymous(): void;
  /** Told once, when the socket authenticates. */
  signedIn(): void;
}

/** Close codes: standard ones where they fit, 44xx mirroring the HTTP status otherwise. */
export const CLOSE = {
  invalidJson: 1007,
  tooSlow: 1013,
  goingAway: 1001,
  unauthorized: 4401,
  idle: 4408,
  /** Too many connections for the user, failed authentications or sockets not signed in for the address. */
  tooManyRequests: 4429,
} as const;

const MAX_TIMER_MS = 2 ** 31 - 1;

export class Connection {
  private caller?: Caller;
  /** Settles once the first message has been judged: true when the socket is authenticated. */
  private authenticated?: Promise<boolean>;
  /** Each subscription's end: it leaves its feed and gives its user's place back. */
  private readonly subscriptions = new Map<string, () => void>();
  /** Where pushed data goes, from the moment the socket is signed in. */
  private outbox?: Outbox;
  private pendingSubscriptions = 0;
  private readonly rate: MessageRate;
  private readonly idle: NodeJS.Timeout;
  /** Closes a socket that has not authenticated in time: idle ones must not hold an address's places. */
  private readonly authDeadline: NodeJS.Timeout;
  private expiry?: NodeJS.Timeout;
  private closed = false;

  constructor(
    private readonly socket: WebSocket,
    private readonly deps: ConnectionDeps,
  ) {
    this.rate = new MessageRate(deps.limits.messagesPerMinute);
    this.idle = setTimeout(() => this.close(CLOSE.idle, 'no message for too long'), deps.limits.idleMs);
    this.authDeadline = setTimeout(() => this.close(CLOSE.idle, 'no authentication in time'), deps.limits.authTimeoutMs);
    socket.on('message', (data) => this.onMessage(data.toString()));
    socket.on('close', () => this.release());
    socket.on('error', (error) => deps.log.debug({ err: error }, 'socket error'));
  }

  close(code: number, reason: string): void {
    if (this.socket.readyState === this.socket.OPEN) this.socket.close(code, reason);
    this.release();
  }

  private onMessage(text: string): void {
    if (this.closed) return;
    this.idle.refresh();
    let message: unknown;
    try {
      message = JSON.parse(text);
    } catch {
      return this.close(CLOSE.invalidJson, 'invalid JSON');
    }
    if (!this.rate.take()) {
      return this.reply(errorReply(asObject(message), 429, 'rate_limited', `at most ${this.deps.limits.messagesPerMinute} messages a minute per connection; slow down`));
    }
    if (!this.authenticated) {
      this.authenticated = this.authenticate(message).catch((error: unknown) => {
        this.deps.log.error({ err: error }, 'websocket authentication failed');
        this.close(CLOSE.unauthorized, 'unauthorized');
        return false;
      });
      return;
    }
    void this.authenticated.then((ok) => (ok ? this.handle(message) : undefined));
  }

  private async authenticate(message: unknown): Promise<boolean> {
    const { authFailures, address } = this.deps;
    // As on REST, only failures are counted and refused: a valid token passes from any address.
    const refuse = async (text: string) => {
      const failed = await authFailures.take(address);
      if (!failed.allowed) {
        this.reply(errorReply(asObject(message), 429, 'rate_limited', `too many failed authentications from this address; retry in ${Math.max(1, failed.resetSeconds)} s`));
        this.close(CLOSE.tooManyRequests, 'too many failed authentications');
        return false;
      }
      this.reply(errorReply(asObject(message), 401, 'unauthorized', text));
      this.close(CLOSE.unauthorized, 'unauthorized');
      return false;
    };
    const request = asObject(message);
    if (request.path !== PATHS.auth) return refuse(`the first message must be {"id", "path": "${PATHS.auth}", "body": {"token"}}`);
    let token: string;
    try {
      token = parse(AuthBody, request.body, 'body').token;
    } catch {
      return refuse('body.token: a token is required');
    }
    const identity = await this.deps.authenticator.authenticate(token);
    if (!identity) return refuse('the token is not valid');
    if (this.closed) return false;
    const { caller } = identity;
    if (!this.deps.users.acquire(caller.user)) {
      this.reply(errorReply(request, 429, 'too_many_connections', `at most ${this.deps.limits.connectionsPerUser} connections per user`));
      this.close(CLOSE.tooManyRequests, 'too many connections');
      return false;
    }
    this.caller = caller;
    this.outbox = new Outbox(this.socket, {
      budget: this.deps.pushBudgets.open(caller.user),
      bytesPerSecond: this.deps.pushBudgets.bytesPerSecond,
      metrics: this.deps.pushMetrics,
      tooSlow: () => {
        this.deps.log.warn({ user: caller.user, buffered: this.socket.bufferedAmount }, 'websocket client too slow; closing');
        this.close(CLOSE.tooSlow, 'client too slow');
      },
    });
    clearTimeout(this.authDeadline);
    this.deps.releaseAnonymous();
    this.deps.signedIn();
    if (identity.expiresAt !== undefined) this.closeAt(identity.expiresAt);
    this.reply(JSON.stringify({ id: request.id ?? null, path: PATHS.auth, status: 200, body: { user: caller.user, product: caller.product } }));
    return true;
  }

  /** A socket signed in with a token that expires is signed out (closed) when it does. */
  private closeAt(expiresAt: number): void {
    const left = expiresAt - Date.now();
    if (left <= 0) return this.close(CLOSE.unauthorized, 'token expired');
    // Timers hold at most 2^31-1 ms (24.8 days): a later expiry is waited for in steps.
    this.expiry = setTimeout(() => this.closeAt(expiresAt), Math.min(left, MAX_TIMER_MS));
  }

  private async handle(message: unknown): Promise<void> {
    let request: WsRequest | undefined;
    try {
      request = parse(WsRequest, message, 'body');
      const { body, afterReply } = await this.dispatch(request);
      this.reply(okReply(request, body));
      afterReply?.();
    } catch (error) {
      this.reply(this.failure(request ?? asObject(message), error));
    }
  }

  /** The reply's body, and what to push right after the reply. */
  private async dispatch(request: WsRequest): Promise<{ body: unknown; afterReply?: () => void }> {
    switch (request.path) {
      case PATHS.ping:
        return { body: { ts: Date.now() } };
      case PATHS.subscribe:
        return this.subscribe(request);
      case PATHS.unsubscribe:
        return { body: this.unsubscribe(request) };
      case PATHS.auth:
        throw new ServiceError(400, 'already_authenticated', 'this connection is already authenticated');
      default:
        throw new ServiceError(404, 'unknown_path', `no such path: ${request.path}; paths are ${Object.values(PATHS).join(', ')}`);
    }
  }

  private async subscribe(request: WsRequest): Promise<{ body: unknown; afterReply?: () => void }> {
    const budget = await this.deps.requests.take((this.caller as Caller).user);
    if (!budget.allowed) {
      const retry = Math.max(1, budget.resetSeconds);
      throw new ServiceError(429, 'rate_limited', `at most ${budget.limit} requests per ${budget.windowSeconds} s per user, REST and subscribes together; retry in ${retry} s`, undefined, retry);
    }
    const { channel, key } = parse(SubscribeBody, request.body, 'body');
    const { limits } = this.deps;
    if (this.subscriptions.size + this.pendingSubscriptions >= limits.subscriptionsPerConnection) {
      throw new ServiceError(429, 'too_many_subscriptions', `at most ${limits.subscriptionsPerConnection} subscriptions per connection; unsubscribe first`);
    }
    const { session, frequency } = parseKey(key);
    if (frequency === undefined && channel !== BARE_KEY_CHANNEL) {
      const message = `must be ${SubscribeBody.properties.key.description}`;
      throw badRequest('invalid_body', `body.key: ${message}`, [{ field: 'body.key', message }]);
    }
    const { user } = this.caller as Caller;
    // Every subscription costs the gateway a copy of each message: bounded for the user as a
    // whole, or one user's many connections would multiply its cost past any per-connection bound.
    if (!this.deps.subscriptions.acquire(user)) {
      throw new ServiceError(429, 'too_many_subscriptions', `at most ${limits.subscriptionsPerUser} subscriptions per user on this gateway, over all its connections; unsubscribe first`);
    }
    this.pendingSubscriptions++;
    let found: Session;
    try {
      // Also the ownership check: another user's session is not found.
      found = (await this.deps.send('sessions.get', { caller: this.caller as Caller, session })) as Session;
    } catch (error) {
      this.deps.subscriptions.release(user);
      throw error;
    } finally {
      this.pendingSubscriptions--;
    }
    if (this.closed) {
      this.deps.subscriptions.release(user);
      return { body: null };
    }
    const id = newId(8);
    const outbox = this.outbox as Outbox;
    // Worker states are sent as they change, whatever the frequency: a bare key shares the 1s feed.
    const leave = this.deps.feeds.join(session, tenantOf(found), channel, frequency ?? '1s', { deliver: (delivery) => outbox.push(id, delivery) });
    this.subscriptions.set(id, () => {
      leave();
      this.deps.subscriptions.release(user);
    });
    // `subscriptionId` for clients of the original API; `id` for this API's.
    const body = { id, subscriptionId: id, channel, key };
    if (channel !== 'session_worker_state') return { body };
    const stopReason = found.meta.stopReason ? { stopReason: found.meta.stopReason } : {};
    const current = { state: found.meta.workerState, at: Date.now(), ...stopReason };
    return { body, afterReply: () => outbox.push(id, encodeDelivery(Date.now(), channel, current)) };
  }

  private unsubscribe(request: WsRequest): { id: string; subscriptionId: string } {
    const body = parse(UnsubscribeBody, request.body, 'body');
    const id = body.subscriptionId ?? body.id;
    if (id === undefined || (body.id !== undefined && body.id !== id)) {
      const message = id === undefined ? 'is required (or body.id)' : 'must be the same as body.id when both are given';
      throw badRequest('invalid_body', `body.subscriptionId: ${message}`, [{ field: 'body.subscriptionId', message }]);
    }
    const leave = this.subscriptions.get(id);
    if (!leave) throw new ServiceError(404, 'not_found', `no subscription ${id} on this connection`);
    leave();
    this.subscriptions.delete(id);
    return { id, subscriptionId: id };
  }

  private failure(request: { id?: unknown; path?: unknown }, error: unknown): string {
    if (error instanceof ServiceError) return errorReply(request, error.status, error.code, error.message, error.details);
    this.deps.log.error({ err: error, path: request.path }, 'websocket request failed');
    return errorReply(request, 500, 'internal', 'internal error; the failure was logged');
  }

  private reply(frame: string): void {
    if (this.socket.readyState === this.socket.OPEN) this.socket.send(frame);
  }

  private release(): void {
    if (this.closed) return;
    this.closed = true;
    clearTimeout(this.idle);
    clearTimeout(this.authDeadline);
    clearTimeout(this.expiry);
    for (const leave of this.subscriptions.values()) leave();
    this.subscriptions.clear();
    this.outbox?.release();
    if (this.caller) this.deps.users.release(this.caller.user);
    else this.deps.releaseAnonymous();
  }
}

function asObject(message: unknown): { id?: unknown; path?: unknown; body?: unknown } {
  return typeof message === 'object' && message !== null && !Array.isArray(message) ? message : {};
}
