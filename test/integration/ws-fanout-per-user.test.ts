// Fan-out bounded per user, against the running gateway: Alice holds many sockets with many
// subscriptions to her session's custom events while she posts events. Past
// WS_SUBSCRIPTIONS_PER_USER her subscribes are refused (429 too_many_subscriptions), and her
// sockets are sent at most WS_PUSH_BYTES_PER_SECOND_PER_USER, the rest dropped and announced
// (channels:dropped). Meanwhile Bob's subscription to his own session gets every event he posts,
// and his REST reads are answered.
import { test } from '../../ops/support/uvu.ts';
import * as assert from 'uvu/assert';
import { setTimeout as sleep } from 'node:timers/promises';
import { freePort } from '../../ops/stack/ports.ts';
import { startServices, type Services } from '../../ops/support/services.ts';
import { WsClient } from '../../ops/support/ws-client.ts';
import { DROPPED_PATH, PATHS } from '../../gateway/ws/protocol.ts';

const SUBSCRIPTIONS_PER_USER = 40;
const PUSH_BYTES_PER_SECOND = 128 * 1024;
const ALICE_SOCKETS = 8;
const SUBSCRIBES_PER_SOCKET = 10;
const POSTING_SECONDS = 6;

let services: Services;
let wsUrl: string;
const clients: WsClient[] = [];

test.before(async () => {
  services = await startServices({
    name: 'ws-fanout-per-user',
    env: {
      WS_SUBSCRIPTIONS_PER_USER: String(SUBSCRIPTIONS_PER_USER),
      WS_PUSH_BYTES_PER_SECOND_PER_USER: String(PUSH_BYTES_PER_SECOND),
      STREAM_UNREACHABLE_SECONDS: '900',
    },
  });
  wsUrl = `${services.baseUrl.replace('http', 'ws')}/ws/v1`;
});

test.after(async () => {
  for (const client of clients) client.close();
  await services?.stop();
});

/** A socket signed in as `token`, counting the bytes of the pushed messages it receives and keeping the notices. */
async function watcher(token: string) {
  const client = await WsClient.connect(wsUrl, token);
  clients.push(client);
  const seen = { bytes: 0, messages: 0, notices: [] as any[] };
  client.socket.on('message', (data: Buffer) => {
    const message = JSON.parse(data.toString());
    if (Array.isArray(message)) {
      seen.bytes += data.length;
      seen.messages++;
    } else if (message.path === DROPPED_PATH) seen.notices.push(message);
  });
  return { client, seen };
}

async function sessionWithSource(token: string): Promise<{ session: string; source: string }> {
  const streamUri = `rtmp://127.0.0.1:${await freePort()}/live/none`;
  const created = await services.api('POST', '/v1/sessions', { token, body: { name: 'fan-out', streamUri } });
  assert.is(created.status, 201, JSON.stringify(created.body));
  const session = created.body._id as string;
  const source = await services.api('POST', `/v1/sessions/${session}/events`, { token, body: { name: 'sensor', format: 'text' } });
  assert.is(source.status, 201, JSON.stringify(source.body));
  return { session, source: source.body.id as string };
}

test("one user's many subscriptions are bounded per user and sent at most its push budget; another user gets every message and its reads", async () => {
  const { alice, bob } = services.users;
  const [mine, theirs] = await Promise.all([sessionWithSource(alice.token), sessionWithSource(bob.token)]);

  const alices = [];
  for (let i = 0; i < ALICE_SOCKETS; i++) alices.push(await watcher(alice.token));
  const answers = await Promise.all(
    alices.flatMap(({ client }) =>
      Array.from({ length: SUBSCRIBES_PER_SOCKET }, () => client.request(PATHS.subscribe, { channel: 'session_custom_events', key: `${mine.session}:1s` })),
    ),
  );
  const statuses = answers.map((answer) => answer.status);
  assert.is(statuses.filter((status) => status === 200).length, SUBSCRIPTIONS_PER_USER, JSON.stringify(statuses));
  const refused = answers.filter((answer) => answer.status === 429);
  assert.is(refused.length, ALICE_SOCKETS * SUBSCRIBES_PER_SOCKET - SUBSCRIPTIONS_PER_USER);
  for (const answer of refused) {
    assert.is((answer.body as any).code, 'too_many_subscriptions');
    assert.match((answer.body as any).message, new RegExp(`at most ${SUBSCRIPTIONS_PER_USER} subscriptions per user`));
  }

  // Bob's subscription, after Alice's are at her bound: his own count.
  const bobs = await watcher(bob.token);
  const bobEvents: number[] = [];
  bobs.client.onEvent = ([, , , payload]) => bobEvents.push(...payload.events.map((event: { time: number }) => event.time));
  await bobs.client.subscribe('session_custom_events', `${theirs.session}:1s`);

  // Alice: 200 events of 200 characters a second, about 60 KB a message, to each of her 40
  // subscriptions: 2.4 MB/s of frames wanted, against a budget of 128 KiB/s. Bob: 5 a second.
  const started = Date.now();
  const bobTimes: number[] = [];
  const reads: number[] = [];
  for (let second = 0; second < POSTING_SECONDS; second++) {
    const events = Array.from({ length: 200 }, (_, i) => ({ time: second + i / 200, data: `${second}:${i}:`.padEnd(200, 'x') }));
    const posted = await services.api('POST', `/v1/sessions/${mine.session}/events/${mine.source}`, { token: alice.token, body: events });
    assert.is(posted.status, 201, JSON.stringify(posted.body));
    const few = Array.from({ length: 5 }, (_, i) => ({ time: second * 10 + i, data: `bob ${second}.${i}` }));
    const bobPosted = await services.api('POST', `/v1/sessions/${theirs.session}/events/${theirs.source}`, { token: bob.token, body: few });
    assert.is(bobPosted.status, 201, JSON.stringify(bobPosted.body));
    bobTimes.push(...few.map((event) => event.time));
    reads.push((await services.api('GET', `/v1/sessions/${theirs.session}`, { token: bob.token })).status);
    await sleep(Math.max(0, started + (second + 1) * 1000 - Date.now()));
  }
  // The last period's messages go out on the next tick.
  const deadline = Date.now() + 10_000;
  while (bobEvents.length < bobTimes.length && Date.now() < deadline) await sleep(100);
  await sleep(1500);
  const spanSeconds = (Date.now() - started) / 1000;

  assert.equal(bobEvents.sort((a, b) => a - b), bobTimes, "Bob's subscription got every event he posted");
  assert.equal(bobs.seen.notices, [], 'nothing of Bob was dropped');
  assert.ok(reads.every((status) => status === 200), `Bob's reads: ${reads.join(', ')}`);

  // At most the budget over the span, plus the bucket's first second and one message (it may
  // pass into debt): the same bound for each of Alice's sockets and for all of them together.
  const largestMessage = 200 * 320;
  const bound = PUSH_BYTES_PER_SECOND * (spanSeconds + 1) + largestMessage;
  const perSocket = alices.map(({ seen }) => seen.bytes);
  const total = perSocket.reduce((sum, bytes) => sum + bytes, 0);
  const report = `Alice's sockets got ${perSocket.join(', ')} bytes (${total} in all) over ${spanSeconds.toFixed(1)} s; bound ${Math.round(bound)}`;
  console.log(report);
  assert.ok(total <= bound, report);
  assert.ok(perSocket.every((bytes) => bytes <= bound), report);
  assert.ok(total >= PUSH_BYTES_PER_SECOND, `what the budget lets through is sent: ${report}`);
  const notices = alices.flatMap(({ seen }) => seen.notices);
  assert.ok(notices.length >= 1, 'her sockets were told that messages were dropped');
  for (const notice of notices) {
    assert.is(notice.id, null);
    assert.is(notice.status, 429);
    assert.is(notice.body.code, 'push_budget');
  }
  // Told once per stretch of drops: never more often than a message got through to that socket.
  for (const { seen } of alices) assert.ok(seen.notices.length <= seen.messages + 1, `${seen.notices.length} notices, ${seen.messages} messages`);
});

test.run();
