// The WebSocket API against the running service: authentication, requests and replies,
// ownership, subscriptions to worker state and custom events, and the limits.
import { test } from '../../ops/support/uvu.ts';
import * as assert from 'uvu/assert';
import { createServer, type Server } from 'node:http';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { readConfig } from '../../bus/config.ts';
import { createLog } from '../../bus/log.ts';
import { Authenticator } from '../../gateway/auth/authenticator.ts';
import { ClientAddresses } from '../../gateway/client-address.ts';
import { RateLimit } from '../../gateway/rate-limit.ts';
import { busSender } from '../../gateway/routes/bus-call.ts';
import { WsClient } from '../../ops/support/ws-client.ts';
import { attachWebSocket } from '../../gateway/ws/server.ts';
import { freePort } from '../../ops/stack/ports.ts';
import type { WsLimits } from '../../gateway/ws/limits.ts';
import { connect as connectTcp } from 'node:net';
import { startServices, type Services } from '../../ops/support/services.ts';

const config = readConfig();
const log = createLog(config);

let services: Services;
let wsUrl: string;
let session: string;
const clients: WsClient[] = [];

const connectAs = async (token: string) => {
  const client = await WsClient.connect(wsUrl, token);
  clients.push(client);
  return client;
};
const open = async () => {
  const client = await WsClient.open(wsUrl);
  clients.push(client);
  return client;
};

// Small limits, so that reaching each one is quick.
const LIMITS: WsLimits = {
  subscriptionsPerConnection: 5,
  subscriptionsPerUser: 100,
  pushBytesPerSecondPerUser: 16 * 1024 * 1024,
  connectionsPerUser: 12,
  unauthenticatedPerAddress: 6,
  messagesPerMinute: 60,
  idleMs: 65_000,
  authTimeoutMs: 2000,
  upgradesPerAddressPerMinute: 600,
};

test.before(async () => {
  services = await startServices({
    name: 'ws-protocol',
    env: {
      WS_SUBSCRIPTIONS_PER_CONNECTION: String(LIMITS.subscriptionsPerConnection),
      WS_CONNECTIONS_PER_USER: String(LIMITS.connectionsPerUser),
      WS_UNAUTHENTICATED_PER_ADDRESS: String(LIMITS.unauthenticatedPerAddress),
      WS_MESSAGES_PER_MINUTE: String(LIMITS.messagesPerMinute),
      WS_AUTH_TIMEOUT_SECONDS: String(LIMITS.authTimeoutMs / 1000),
    },
  });
  wsUrl = `${services.baseUrl.replace('http', 'ws')}/ws/v1`;
  // Nothing listens on this port: the worker keeps reconnecting, which is all these tests need.
  const created = await services.api('POST', '/v1/sessions', {
    body: { name: 'ws protocol', streamUri: `rtmp://127.0.0.1:${await freePort()}/live/none` },
  });
  assert.is(created.status, 201, JSON.stringify(created.body));
  session = created.body._id;
});

test.after(async () => {
  for (const client of clients) client.close();
  await services?.stop();
});

test('a request before authentication is answered 401 and the socket closes', async () => {
  const client = await open();
  const reply = await client.request('ping');
  assert.is(reply.status, 401);
  assert.is((reply.body as any).error, true);
  assert.is((reply.body as any).code, 'unauthorized');
  const closed = await client.closed;
  assert.is(closed.code, 4401);
});

test('a wrong token is answered 401 and the socket closes', async () => {
  const client = await open();
  const reply = await client.request('auth:token', { token: 'not-a-token' });
  assert.is(reply.status, 401);
  assert.is((reply.body as any).status, 401);
  assert.is((await client.closed).code, 4401);
});

test('authentication, then ping answers with the server time', async () => {
  const client = await connectAs(services.users.alice.token);
  const before = Date.now();
  const reply = await client.request('ping');
  assert.is(reply.status, 200);
  assert.is(reply.path, 'ping');
  const ts = (reply.body as { ts: number }).ts;
  assert.ok(ts >= before - 1000 && ts <= Date.now() + 1000, `ts ${ts}`);
});

test('unknown paths, repeated auth and malformed bodies are answered with the error body', async () => {
  const client = await connectAs(services.users.alice.token);
  const unknown = await client.request('channels:list');
  assert.is(unknown.status, 404);
  assert.is((unknown.body as any).code, 'unknown_path');
  assert.is((await client.request('auth:token', { token: services.users.alice.token })).status, 400);
  const badChannel = await client.request('channels:subscribe', { channel: 'nope', key: `${session}:1s` });
  assert.is(badChannel.status, 400);
  assert.match((badChannel.body as any).message, 'body.channel');
  const badFrequency = await client.request('channels:subscribe', { channel: 'session_worker_state', key: `${session}:2s` });
  assert.is(badFrequency.status, 400);
  assert.match((badFrequency.body as any).message, 'body.key');
  client.sendRaw(JSON.stringify({ path: 'ping' }));
  assert.is((await client.request('ping')).status, 200, 'the connection survives a request without id');
});

test('invalid JSON closes the socket', async () => {
  const client = await connectAs(services.users.alice.token);
  client.sendRaw('{"id": 1, "path": ');
  assert.is((await client.closed).code, 1007);
});

test('worker state: the current state at once, then its changes', async () => {
  const client = await connectAs(services.users.alice.token);
  const id = await client.subscribe('session_worker_state', `${session}:10s`);
  const [subscription, ts, type, payload] = await client.nextEvent(([sub]) => sub === id, 2000);
  assert.is(subscription, id);
  assert.is(type, 'session_worker_state');
  assert.ok(Math.abs(ts - Date.now()) < 5000);
  assert.ok(['starting', 'connecting', 'reconnecting'].includes(payload.state), payload.state);
  // The stream cannot be reached: every attempt announces itself, long before the 10 s period.
  // A refused connection fails at once, so the state seen first may already be a failure's
  // `reconnecting`, and the change after it the next attempt's `connecting`: whichever came
  // first, a failure is pushed as it happens.
  const failure = await client.nextEvent(([sub, , , next]) => sub === id && next.state === 'reconnecting', 15_000);
  assert.is(failure[2], 'session_worker_state');
});

test("another user's session, or an unknown one, is not found", async () => {
  const client = await connectAs(services.users.bob.token);
  for (const channel of ['session_worker_state', 'session_emotions_counts']) {
    const reply = await client.request('channels:subscribe', { channel, key: `${session}:1s` });
    assert.is(reply.status, 404, channel);
    assert.is((reply.body as any).code, 'not_found');
  }
  const unknown = await client.request('channels:subscribe', { channel: 'session_worker_state', key: `${'0'.repeat(24)}:1s` });
  assert.is(unknown.status, 404);
  client.close();
  await client.closed;
});

test('custom events are delivered in batches; unsubscribe stops them', async () => {
  const source = await services.api('POST', `/v1/sessions/${session}/events`, { body: { name: 'ws-thermometer', format: 'scalar' } });
  assert.is(source.status, 201);
  const client = await connectAs(services.users.alice.token);
  const id = await client.subscribe('session_custom_events', `${session}:1s`);
  const sent = [{ time: 1, data: 20.5 }, { time: 2, data: 21 }];
  assert.is((await services.api('POST', `/v1/sessions/${session}/events/${source.body.id}`, { body: sent })).status, 201);
  const [, , type, payload] = await client.nextEvent(([sub]) => sub === id, 10_000);
  assert.is(type, 'session_custom_events');
  assert.equal(
    payload.events.map((e: any) => [e.time, e.data, e.source, e.session, e.type]),
    sent.map((e) => [e.time, e.data, source.body.id, session, 'sensor_report']),
  );

  const gone = await client.request('channels:unsubscribe', { id });
  assert.is(gone.status, 200);
  assert.is((await client.request('channels:unsubscribe', { id })).status, 404);
  assert.is((await services.api('POST', `/v1/sessions/${session}/events/${source.body.id}`, { body: { time: 3, data: 22 } })).status, 201);
  await sleep(2500);
  assert.equal(client.events.filter(([sub]) => sub === id), []);
});

test('limits answer 429 with the error body', async () => {
  const client = await connectAs(services.users.alice.token);
  const replies = await Promise.all(
    Array.from({ length: LIMITS.subscriptionsPerConnection + 1 }, () =>
      client.request('channels:subscribe', { channel: 'session_audio_features', key: `${session}:1s` }),
    ),
  );
  assert.is(replies.filter((r) => r.status === 200).length, LIMITS.subscriptionsPerConnection);
  const refused = replies.find((r) => r.status === 429);
  assert.ok(refused, 'one subscription over the limit is refused');
  assert.is((refused?.body as any).code, 'too_many_subscriptions');

  // A fresh connection: its whole allowance, then a hundred more at once.
  const chatty = await connectAs(services.users.alice.token);
  const burst = await Promise.all(Array.from({ length: LIMITS.messagesPerMinute + 100 }, () => chatty.request('ping')));
  const limited = burst.filter((r) => r.status === 429);
  assert.ok(limited.length >= 1 && limited.length <= 101, `${limited.length} pings limited`);
  assert.is((limited[0]?.body as any).code, 'rate_limited');

  const bobs: WsClient[] = [];
  for (let i = 0; i < LIMITS.connectionsPerUser; i++) bobs.push(await connectAs(services.users.bob.token));
  const extra = await open();
  const reply = await extra.request('auth:token', { token: services.users.bob.token });
  assert.is(reply.status, 429);
  assert.is((reply.body as any).code, 'too_many_connections');
  assert.is((await extra.closed).code, 4429);
  bobs[0]?.close();
  await bobs[0]?.closed;
  await sleep(200);
  await connectAs(services.users.bob.token);
  for (const bob of bobs) bob.close();
});

test('sockets that never authenticate are limited per address: a new one closes the oldest; authenticating frees the place', async () => {
  const waiting: WsClient[] = [];
  for (let i = 0; i < LIMITS.unauthenticatedPerAddress; i++) waiting.push(await open());
  const newcomer = await open();
  assert.is((await waiting[0]!.closed).code, 4429);
  // Idle sockets could not keep the newcomer from signing in.
  assert.is((await newcomer.request('auth:token', { token: services.users.alice.token })).status, 200);
  // Signed in, it holds no place among them: one more opens and every other stays.
  const another = await open();
  assert.is((await another.request('ping')).status, 401, 'the socket was let in');
  for (const client of waiting.slice(1)) assert.is(client.socket.readyState, client.socket.OPEN);
  for (const client of [...waiting, newcomer]) client.close();
  await Promise.all([...waiting, newcomer, another].map((client) => client.closed));
});

test('upgrade requests reset by the client, on any path and at any stage, leave the gateway serving', async () => {
  const port = Number(new URL(services.baseUrl).port);
  const paths = ['/elsewhere', '/ws/v1', '/v1/sessions', '/ws/v1?x=1'];
  await Promise.all(
    Array.from({ length: 200 }, (_, i) =>
      new Promise<void>((resolve) => {
        const socket = connectTcp(port, '127.0.0.1', () => {
          socket.write(
            `GET ${paths[i % paths.length]} HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n` +
              `Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n`,
          );
          // A reset, not a close: half of them at once, half once the server has started answering.
          setTimeout(() => socket.resetAndDestroy(), i % 2 ? 0 : 5);
        });
        socket.on('error', () => {});
        socket.on('close', () => resolve());
      }),
    ),
  );
  assert.ok(process.kill(services.gateway.pid, 0), 'the gateway is alive');
  assert.is((await services.api('GET', '/v1/sessions')).status, 200);
  await connectAs(services.users.alice.token);
});

test('silence closes the socket; requests keep it open (short idle limit, in-process server)', async () => {
  const tokens = join(config.varDir, 'test', `ws-idle-tokens-${process.pid}.json`);
  writeFileSync(tokens, JSON.stringify([{ token: 'idle-token', user: 'idle-user', product: 'tests' }]));
  const nc: NatsConnection = await connect({ servers: config.natsUrl });
  const server: Server = createServer();
  const ws = attachWebSocket(server, {
    nc,
    authenticator: new Authenticator({ tokensFile: tokens }),
    send: busSender(nc, config.requestTimeoutMs),
    log: log.child({ component: 'ws-test' }),
    authFailures: new RateLimit(60, 60),
    requests: new RateLimit(1000, 10),
    addresses: new ClientAddresses([]),
    limits: { ...LIMITS, idleMs: 600 },
  });
  const port = await freePort();
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  try {
    const client = await WsClient.connect(`ws://127.0.0.1:${port}/ws/v1`, 'idle-token');
    const opened = Date.now();
    for (let i = 0; i < 4; i++) {
      await sleep(300);
      assert.is((await client.request('ping')).status, 200);
    }
    const { code } = await client.closed;
    assert.is(code, 4408);
    assert.ok(Date.now() - opened >= 1800);
  } finally {
    await ws.close();
    server.close();
    await nc.close();
  }
});

test.run();
