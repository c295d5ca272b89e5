// Floods by one user while another works as an ordinary client, both at once, against the
// service at its default bounds; prints what each user saw (answers by status, and latency).
//  - event flood: the first user posts batches of 1000 events from 32 loops; the second posts
//    100 events every 100 ms and lists its sessions.
//  - anonymous flood: tokenless requests and WebSocket sockets that never sign in, from the
//    same address as the second user (clients behind one NAT), who keeps reading and signs in
//    on the WebSocket now and then.
// It fails (exit 1) when the ordinary user got anything but success, or anyone got a 5xx.
// Usage: node --import tsx ops/fuzz/floods.ts [seconds=10]
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { readConfig } from '../../bus/config.ts';
import { MAX_EVENTS_PER_REQUEST } from '../../bus/contracts/events.ts';
import { percentile } from '../support/percentile.ts';
import { freePort } from '../stack/ports.ts';
import { startServiceStack } from '../support/service-stack.ts';
import type { Services } from '../support/services.ts';
import { WsClient } from '../support/ws-client.ts';

const config = readConfig();
const defaults = readConfig({});
const seconds = Number(process.argv[2] ?? 10);

/** What one user saw: answers by status (or failure), and how long the successful ones took. */
class Seen {
  readonly answers: Record<string, number> = {};
  readonly latencies: number[] = [];

  async time(work: () => Promise<{ status: number }>, ok = (status: number) => status < 300): Promise<void> {
    const started = performance.now();
    const outcome = await work().then((reply) => String(reply.status), (error: Error) => error.message.slice(0, 60));
    this.answers[outcome] = (this.answers[outcome] ?? 0) + 1;
    if (ok(Number(outcome))) this.latencies.push(performance.now() - started);
  }

  summary() {
    const ms = (p: number) => (this.latencies.length ? Math.round(percentile(this.latencies, p)) : '-');
    return { answers: JSON.stringify(this.answers), 'p50 ms': ms(50), 'p99 ms': ms(99) };
  }

  /** Every answer a success. */
  get allOk(): boolean {
    return Object.keys(this.answers).every((status) => Number(status) >= 200 && Number(status) < 300);
  }

  get anyServerError(): boolean {
    return Object.keys(this.answers).some((status) => Number(status) >= 500);
  }
}

const loop = async (until: number, step: () => Promise<void>, pauseMs = 0) => {
  while (Date.now() < until) {
    await step();
    if (pauseMs) await sleep(pauseMs);
  }
};

async function eventSource(services: Services, token: string, streamUri: string): Promise<string> {
  const created = await services.api('POST', '/v1/sessions', { token, body: { name: 'flood', streamUri } });
  if (created.status !== 201) throw new Error(`create answered ${created.status}: ${JSON.stringify(created.body)}`);
  const source = await services.api('POST', `/v1/sessions/${created.body._id}/events`, { token, body: { name: 'sensor', format: 'scalar' } });
  return `/v1/sessions/${created.body._id}/events/${source.body.id}`;
}

async function eventFlood(services: Services, streamUri: string) {
  const { alice, bob } = services.users;
  const [flooded, ordinary] = await Promise.all([eventSource(services, alice.token, streamUri), eventSource(services, bob.token, streamUri)]);
  // Session seconds, one batch a second of them.
  let second = 0;
  const batch = (size: number) => {
    second++;
    return Array.from({ length: size }, (_, i) => ({ time: second + i / size, data: Math.random() }));
  };
  const flooder = new Seen();
  const user = new Seen();
  const until = Date.now() + seconds * 1000;
  await Promise.all([
    ...Array.from({ length: 32 }, () => loop(until, () => flooder.time(() => services.api('POST', flooded, { token: alice.token, body: batch(MAX_EVENTS_PER_REQUEST) })))),
    loop(until, () => user.time(() => services.api('POST', ordinary, { token: bob.token, body: batch(100) })), 100),
    loop(until, () => user.time(() => services.api('GET', '/v1/sessions?limit=10', { token: bob.token })), 500),
  ]);
  return { flooder, user };
}

async function anonymousFlood(services: Services) {
  const { bob } = services.users;
  const wsUrl = `${services.baseUrl.replace('http', 'ws')}/ws/v1`;
  const flooder = new Seen();
  const user = new Seen();
  const idle: WsClient[] = [];
  const until = Date.now() + seconds * 1000;
  const holdSocket = async () => {
    await flooder.time(async () => {
      const socket = await WsClient.open(wsUrl);
      idle.push(socket);
      await socket.closed;
      return { status: 200 };
    });
  };
  const signIn = async () => {
    const socket = await WsClient.connect(wsUrl, bob.token);
    socket.close();
    return { status: 200 };
  };
  await Promise.all([
    ...Array.from({ length: 16 }, () => loop(until, () => flooder.time(() => services.api('GET', '/v1/sessions', { token: 'not-a-token' }), () => false))),
    ...Array.from({ length: defaults.wsUnauthenticatedPerAddress + 5 }, () => loop(until, holdSocket, 100)),
    loop(until, () => user.time(() => services.api('GET', '/v1/sessions?limit=10', { token: bob.token })), 200),
    loop(until, () => user.time(signIn), 1000),
  ]);
  for (const socket of idle) socket.close();
  return { flooder, user };
}

const stack = await startServiceStack({
  name: 'fuzz-floods',
  dir: join(config.varDir, 'fuzz', `floods-${process.pid}`),
  database: 'emotions_fuzz',
  // The defaults of every bound the floods meet (the test stack relaxes them otherwise).
  env: {
    STREAM_UNREACHABLE_SECONDS: '86400',
    RATE_LIMIT_REQUESTS: String(defaults.rateLimitRequests),
    REQUESTS_IN_FLIGHT_PER_USER: String(defaults.requestsInFlightPerUser),
    EVENTS_PER_SECOND: String(defaults.eventsPerSecond),
    EVENT_BYTES_PER_SECOND: String(defaults.eventBytesPerSecond),
  },
});
let failed = false;
try {
  const streamUri = `rtmp://127.0.0.1:${await freePort()}/live/flood`;
  const rows: Record<string, ReturnType<Seen['summary']>> = {};
  for (const [name, run] of [['event flood', () => eventFlood(stack.services, streamUri)], ['anonymous flood', () => anonymousFlood(stack.services)]] as const) {
    const { flooder, user } = await run();
    rows[`${name}: flooder`] = flooder.summary();
    rows[`${name}: other user`] = user.summary();
    failed ||= !user.allOk || user.anyServerError || flooder.anyServerError;
    // Budgets per second and in flight start again; the request budget's window too.
    await sleep(defaults.rateLimitWindowSeconds * 1000);
  }
  console.log(`floods of ${seconds} s, two users at once, default bounds`);
  console.table(rows);
} finally {
  await stack.stop();
  if (!failed) stack.removeFiles();
}
console.log(failed ? 'FAILED: the other user saw more than success, or someone got a 5xx' : 'ok');
process.exit(failed ? 1 : 0);
