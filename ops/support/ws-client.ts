// A small client of the WebSocket API, for tools, benchmarks and tests: requests are matched
// to their replies by id; pushed data is handed to `onEvent` and kept for `nextEvent`.
import WebSocket, { type ClientOptions } from 'ws';
import { PATHS, type Reply } from '../../gateway/ws/protocol.ts';

export type PushedEvent = [subscription: string, ts: number, type: string, payload: any];

export class WsClient {
  readonly closed: Promise<{ code: number; reason: string }>;
  /** Every pushed event not yet taken by nextEvent. */
  readonly events: PushedEvent[] = [];
  onEvent?: (event: PushedEvent, receivedAt: number) => void;
  private nextId = 1;
  private readonly pending = new Map<string | number, (reply: Reply) => void>();
  private readonly waiters = new Set<() => void>();

  private constructor(readonly socket: WebSocket) {
    this.closed = new Promise((resolve) => socket.once('close', (code, reason) => resolve({ code, reason: reason.toString() })));
    socket.on('message', (data) => this.receive(data.toString()));
  }

  /** Opens a socket to `url` (ws://host:port/ws/v1); `options` as ws takes them (e.g. a localAddress). */
  static open(url: string, options: ClientOptions = {}): Promise<WsClient> {
    return new Promise((resolve, reject) => {
      const socket = new WebSocket(url, options);
      socket.once('open', () => resolve(new WsClient(socket)));
      socket.once('error', reject);
    });
  }

  /** Opens a socket and authenticates; rejects when the token is refused. */
  static async connect(url: string, token: string): Promise<WsClient> {
    const client = await WsClient.open(url);
    const reply = await client.request(PATHS.auth, { token });
    if (reply.status !== 200) {
      client.close();
      throw new Error(`authentication refused: ${JSON.stringify(reply.body)}`);
    }
    return client;
  }

  request(path: string, body?: unknown, timeoutMs = 10_000): Promise<Reply> {
    const id = this.nextId++;
    this.sendRaw(JSON.stringify({ id, path, body }));
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(id);
        reject(new Error(`no reply to ${path} within ${timeoutMs} ms`));
      }, timeoutMs);
      this.pending.set(id, (reply) => {
        clearTimeout(timer);
        resolve(reply);
      });
    });
  }

  /** Subscribes; resolves with the subscription id, rejects with the error reply. */
  async subscribe(channel: string, key: string): Promise<string> {
    const reply = await this.request(PATHS.subscribe, { channel, key });
    if (reply.status !== 200) throw new Error(`subscribe refused: ${JSON.stringify(reply.body)}`);
    return (reply.body as { id: string }).id;
  }

  sendRaw(text: string): void {
    this.socket.send(text);
  }

  /** The next pushed event matching `accept` (taken out of `events`); rejects after timeoutMs. */
  async nextEvent(accept: (event: PushedEvent) => boolean = () => true, timeoutMs = 10_000): Promise<PushedEvent> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const index = this.events.findIndex(accept);
      if (index >= 0) return this.events.splice(index, 1)[0] as PushedEvent;
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`no matching event within ${timeoutMs} ms`);
      await new Promise<void>((resolve) => {
        const wake = () => {
          clearTimeout(timer);
          this.waiters.delete(wake);
          resolve();
        };
        const timer = setTimeout(wake, left);
        this.waiters.add(wake);
      });
    }
  }

  close(): void {
    this.socket.close();
  }

  private receive(text: string): void {
    const message: unknown = JSON.parse(text);
    if (Array.isArray(message)) {
      const event = message as PushedEvent;
      if (this.onEvent) this.onEvent(event, Date.now());
      else this.events.push(event);
      for (const wake of [...this.waiters]) wake();
      return;
    }
    const reply = message as Reply;
    if (reply.id !== null) this.pending.get(reply.id)?.(reply);
    if (reply.id !== null) this.pending.delete(reply.id);
  }
}
