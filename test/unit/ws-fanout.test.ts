// Fan-out per user: each payload of a feed is serialised once for every socket and subscription
// listening (the same Buffer goes to each), every user's pushed bytes come out of that user's
// own bucket, and a socket whose messages are dropped is told once. Real sockets on loopback,
// in this process.
import { test } from '../../ops/support/uvu.ts';
import * as assert from 'uvu/assert';
import type { AddressInfo } from 'node:net';
import { Registry } from 'prom-client';
import WebSocket, { WebSocketServer } from 'ws';
import { createLog } from '../../bus/log.ts';
import { readConfig } from '../../bus/config.ts';
import { encodeDelivery, type Delivery, type EncodeDelivery } from '../../gateway/ws/delivery.ts';
import { Fanout } from '../../gateway/ws/fanout.ts';
import { Outbox } from '../../gateway/ws/outbox.ts';
import { PushBudgets } from '../../gateway/ws/push-budgets.ts';
import { pushMetrics } from '../../gateway/ws/push-metrics.ts';

const log = createLog(readConfig());

interface Pair {
  server: WebSocket;
  received: unknown[];
}

/** `count` sockets to an in-process WebSocket server: the server's end of each, and what its client received. */
async function socketPairs(count: number): Promise<{ pairs: Pair[]; close(): Promise<void> }> {
  const wss = new WebSocketServer({ port: 0, host: '127.0.0.1' });
  await new Promise<void>((resolve) => wss.once('listening', resolve));
  const port = (wss.address() as AddressInfo).port;
  const servers: WebSocket[] = [];
  wss.on('connection', (socket) => servers.push(socket));
  const clients: WebSocket[] = [];
  const pairs: Pair[] = [];
  for (let i = 0; i < count; i++) {
    const client = new WebSocket(`ws://127.0.0.1:${port}`);
    const received: unknown[] = [];
    client.on('message', (data) => received.push(JSON.parse(data.toString())));
    await new Promise((resolve) => client.once('open', resolve));
    while (servers.length <= i) await new Promise((resolve) => setImmediate(resolve));
    clients.push(client);
    pairs.push({ server: servers[i] as WebSocket, received });
  }
  return {
    pairs,
    async close() {
      for (const client of clients) client.terminate();
      await new Promise((resolve) => wss.close(resolve));
    },
  };
}

const until = async (done: () => boolean) => {
  const deadline = Date.now() + 5000;
  while (!done()) {
    if (Date.now() > deadline) throw new Error('not within 5 s');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
};

const outbox = (socket: WebSocket, budgets: PushBudgets, user: string, registry = new Registry()) =>
  new Outbox(socket, { budget: budgets.open(user), bytesPerSecond: budgets.bytesPerSecond, metrics: pushMetrics(registry), tooSlow: () => socket.close(1013) });

test('a payload is serialised once for every socket and subscription listening, and each gets its own message', async () => {
  const SOCKETS = 6;
  const SUBSCRIPTIONS_PER_SOCKET = 3;
  const { pairs, close } = await socketPairs(SOCKETS);
  try {
    let encoded = 0;
    const counting: EncodeDelivery = (ts, channel, payload) => {
      encoded++;
      return encodeDelivery(ts, channel, payload);
    };
    const fanout = new Fanout('session_custom_events', counting, log);
    const budgets = new PushBudgets(1024 * 1024);
    const handed: Delivery[] = [];
    pairs.forEach(({ server }, s) => {
      const box = outbox(server, budgets, 'u1');
      for (let i = 0; i < SUBSCRIPTIONS_PER_SOCKET; i++) {
        const id = `sub-${s}-${i}`;
        fanout.listeners.add({ deliver: (delivery) => (handed.push(delivery), box.push(id, delivery)) });
      }
    });
    const payloads = [1, 2, 3].map((n) => ({ events: [{ session: 's', source: 'src', user: 'u1', type: 'sensor_report', time: n, data: 'é'.repeat(n) }] }));
    for (const payload of payloads) fanout.send(payload);

    assert.is(encoded, payloads.length, 'one serialisation per payload');
    assert.is(handed.length, payloads.length * SOCKETS * SUBSCRIPTIONS_PER_SOCKET);
    assert.is(new Set(handed.map((delivery) => delivery.tail)).size, payloads.length, 'every listener got the same Buffer');
    await until(() => pairs.every(({ received }) => received.length === payloads.length * SUBSCRIPTIONS_PER_SOCKET));
    pairs.forEach(({ received }, s) => {
      for (const payload of payloads) {
        const ids = received.filter((m: any) => m[3].events[0].time === payload.events[0]!.time).map((m: any) => m[0]).sort();
        assert.equal(ids, Array.from({ length: SUBSCRIPTIONS_PER_SOCKET }, (_, i) => `sub-${s}-${i}`));
      }
      for (const message of received as any[]) {
        assert.is(message.length, 4);
        assert.is(message[2], 'session_custom_events');
        assert.equal(message[3], payloads[message[3].events[0].time - 1]);
      }
    });
  } finally {
    await close();
  }
});

test("push budget: one second at once, a frame larger than what is left still passes and is paid back; users apart; reconnecting does not refill it", () => {
  const start = 1_000_000;
  const budgets = new PushBudgets(1000);
  const a = budgets.open('a', start);
  const a2 = budgets.open('a', start);
  const b = budgets.open('b', start);
  assert.ok(a.take(600, start));
  assert.ok(a2.take(600, start), 'not empty yet: passes, into debt (-200)');
  assert.not.ok(a.take(1, start), "the user's sockets share one bucket");
  assert.ok(b.take(1000, start), "another user's bucket is whole");
  assert.not.ok(a.take(1, start + 200), 'the debt is paid back first');
  assert.ok(a.take(1, start + 201));
  a.release(start + 201);
  a2.release(start + 201);
  const again = budgets.open('a', start + 201);
  assert.not.ok(again.take(1, start + 201), 'a user that reconnects finds its bucket as it left it');
  again.release(start + 201);
  b.release(start + 5000);
  assert.is(budgets.size, 0, 'buckets of users without sockets are forgotten once refilled');
});

test('a socket over budget: its messages are dropped and counted, it is told once, then gets messages again', async () => {
  const { pairs, close } = await socketPairs(1);
  try {
    const { server, received } = pairs[0] as Pair;
    const registry = new Registry();
    const budgets = new PushBudgets(1024);
    const box = outbox(server, budgets, 'u1', registry);
    const delivery = encodeDelivery(1, 'session_custom_events', { events: ['x'.repeat(600)] });
    const start = Date.now();
    for (let i = 0; i < 5; i++) box.push('s1', delivery, start);
    box.push('s1', delivery, start + 2000);
    box.push('s1', delivery, start + 2000);
    box.push('s1', delivery, start + 2000);
    await until(() => received.length === 6);
    const kinds = received.map((m: any) => (Array.isArray(m) ? 'data' : `${m.path} ${m.status} ${m.body.code}`));
    assert.equal(kinds, ['data', 'data', 'channels:dropped 429 push_budget', 'data', 'data', 'channels:dropped 429 push_budget']);
    assert.is((received[2] as any).id, null);
    assert.match((received[2] as any).body.message, /1024 bytes\/s per user/);
    const dropped = await registry.getSingleMetric('emo_websocket_messages_dropped_total')!.get();
    assert.is(dropped.values.find((v) => v.labels.reason === 'push_budget')?.value, 4);
  } finally {
    await close();
  }
});

test.run();
