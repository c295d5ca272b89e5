// The WebSocket API (/ws/v1): one socket per page, authenticated with the token. Subscriptions
// outlive the socket: after a drop the page reconnects with a doubling delay and subscribes
// again, so a gateway restart only leaves a gap in the charts.
import { ApiError } from './api.js';

const PING_MS = 25_000; // the gateway closes a socket silent for 65 s
const RETRY_MIN_MS = 1_000;
const RETRY_MAX_MS = 30_000;

export class Live {
  #token;
  #handlers;
  #socket;
  #nextId = 1;
  #pending = new Map(); // request id -> resolve(reply)
  #subscriptions = new Set(); // every wanted subscription, open or not
  #byId = new Map(); // subscription id -> subscription
  #ping;
  #retryMs = RETRY_MIN_MS;
  #closed = false;

  /** `handlers.onStatus(text)` hears of drops and reconnects; `onUnauthorized(error)` of a refused token. */
  constructor(token, handlers) {
    this.#token = token;
    this.#handlers = handlers;
  }

  /** Opens the socket; resolves with `{user, product}`, rejects with an ApiError if the token is refused. */
  connect() {
    return new Promise((resolve, reject) => {
      const socket = new WebSocket(`${location.protocol === 'https:' ? 'wss' : 'ws'}://${location.host}/ws/v1`);
      this.#socket = socket;
      let authenticated = false;
      socket.addEventListener('open', async () => {
        const reply = await this.#request('auth:token', { token: this.#token });
        if (reply.status !== 200) {
          const error = new ApiError(reply.status, reply.body?.code, reply.body?.message ?? 'the token was refused');
          this.close();
          if (reply.status === 401) this.#handlers.onUnauthorized(error);
          return reject(error);
        }
        authenticated = true;
        this.#retryMs = RETRY_MIN_MS;
        this.#ping = setInterval(() => this.#request('ping'), PING_MS);
        this.#handlers.onStatus('');
        for (const subscription of this.#subscriptions) this.#open(subscription);
        resolve(reply.body);
      });
      socket.addEventListener('message', (event) => this.#receive(event.data));
      socket.addEventListener('close', () => {
        clearInterval(this.#ping);
        this.#byId.clear();
        for (const resolvePending of this.#pending.values()) resolvePending({ status: 0, body: { message: 'the live connection closed' } });
        this.#pending.clear();
        if (this.#closed) return;
        if (!authenticated) reject(new ApiError(0, 'network', 'the live connection to the service could not be opened'));
        this.#handlers.onStatus(`Live connection lost; reconnecting in ${Math.round(this.#retryMs / 1000)} s`);
        setTimeout(() => this.#closed || this.connect().catch(() => {}), this.#retryMs);
        this.#retryMs = Math.min(this.#retryMs * 2, RETRY_MAX_MS);
      });
    });
  }

  /**
   * Follows `channel` for `key` (sessionId, or sessionId:1s ...); `onData(payload)` gets each
   * pushed payload, `onError(error)` a refusal. Returns the function that ends it.
   */
  subscribe(channel, key, onData, onError) {
    const subscription = { channel, key, onData, onError, id: undefined };
    this.#subscriptions.add(subscription);
    if (this.#socket?.readyState === WebSocket.OPEN) this.#open(subscription);
    return () => {
      this.#subscriptions.delete(subscription);
      if (subscription.id === undefined) return;
      this.#byId.delete(subscription.id);
      this.#request('channels:unsubscribe', { id: subscription.id });
    };
  }

  close() {
    this.#closed = true;
    this.#socket?.close();
  }

  async #open(subscription) {
    const reply = await this.#request('channels:subscribe', { channel: subscription.channel, key: subscription.key });
    if (!this.#subscriptions.has(subscription)) {
      if (reply.status === 200) this.#request('channels:unsubscribe', { id: reply.body.id });
      return;
    }
    if (reply.status === 200) {
      subscription.id = reply.body.id;
      this.#byId.set(subscription.id, subscription);
    } else if (reply.status !== 0) {
      subscription.onError(new ApiError(reply.status, reply.body?.code, reply.body?.message ?? 'the subscription was refused'));
    }
  }

  #request(path, body) {
    const id = this.#nextId++;
    return new Promise((resolve) => {
      if (this.#socket?.readyState !== WebSocket.OPEN) return resolve({ status: 0, body: { message: 'the live connection is closed' } });
      this.#pending.set(id, resolve);
      this.#socket.send(JSON.stringify(body === undefined ? { id, path } : { id, path, body }));
    });
  }

  #receive(text) {
    const message = JSON.parse(text);
    if (Array.isArray(message)) {
      const [subscriptionId, , , payload] = message;
      this.#byId.get(subscriptionId)?.onData(payload);
      return;
    }
    const resolve = this.#pending.get(message.id);
    this.#pending.delete(message.id);
    resolve?.(message);
  }
}
