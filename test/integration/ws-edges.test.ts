// The WebSocket API's edges, each with two clients: an address's flood of upgrades is refused
// on the upgrade (429, Retry-After) while another address connects, an IPv6 client is one
// client per /64 however it varies the rest, sockets that sign in are never refused for their
// number, and a user's flood of subscribes spends the user's request budget (the one REST
// requests spend) while another user's subscribes succeed.
import { test } from '../../ops/support/uvu.ts';
import * as assert from 'uvu/assert';
import WebSocket from 'ws';
import { freePort } from '../../ops/stack/ports.ts';
import { startServices, type Services } from '../../ops/support/services.ts';
import { WsClient } from '../../ops/support/ws-client.ts';
import { PATHS } from '../../gateway/ws/protocol.ts';

const UPGRADES_PER_MINUTE = 10;
const REQUESTS_PER_WINDOW = 40;

let services: Services;
let wsUrl: string;
const clients: WsClient[] = [];

test.before(async () => {
  services = await startServices({
    name: 'ws-edges',
    env: {
      // The test's connections come through 127.0.0.1, a proxy that names the client it serves.
      TRUSTED_PROXIES: '127.0.0.1',
      WS_UPGRADES_PER_ADDRESS_PER_MINUTE: String(UPGRADES_PER_MINUTE),
      RATE_LIMIT_REQUESTS: String(REQUESTS_PER_WINDOW),
      RATE_LIMIT_WINDOW_SECONDS: '60',
      WS_SUBSCRIPTIONS_PER_CONNECTION: '200',
      STREAM_UNREACHABLE_SECONDS: '900',
    },
  });
  wsUrl = `${services.baseUrl.replace('http', 'ws')}/ws/v1`;
});

test.after(async () => {
  for (const client of clients) client.close();
  await services?.stop();
});

/** An upgrade as the client `forwardedFor` (named by the trusted proxy): its status, and Retry-After on a refusal. */
function upgrade(forwardedFor: string): Promise<{ status: number; retryAfter?: string; client?: WsClient }> {
  return new Promise((resolve, reject) => {
    const socket = new WebSocket(wsUrl, { headers: { 'X-Forwarded-For': forwardedFor } });
    socket.once('unexpected-response', (_request, response) => {
      resolve({ status: response.statusCode ?? 0, retryAfter: response.headers['retry-after'] as string | undefined });
      socket.terminate();
    });
    socket.once('open', () => {
      socket.close();
      resolve({ status: 101 });
    });
    socket.once('error', (error) => {
      if (socket.readyState !== WebSocket.CLOSED) reject(error);
    });
  });
}

/** Opens a socket as `forwardedFor` and signs in. */
async function signIn(forwardedFor: string, token: string): Promise<WsClient> {
  const client = await WsClient.open(wsUrl, { headers: { 'X-Forwarded-For': forwardedFor } });
  clients.push(client);
  const reply = await client.request(PATHS.auth, { token });
  assert.is(reply.status, 200, JSON.stringify(reply.body));
  return client;
}

test("an IPv6 /64's flood of upgrades, each from another address in it, is refused with 429 on the upgrade; another /64 and an IPv4 client connect", async () => {
  const flood = [];
  for (let i = 1; i <= UPGRADES_PER_MINUTE + 10; i++) flood.push(await upgrade(`2001:db8:a:1::${i.toString(16)}`));
  const opened = flood.filter((answer) => answer.status === 101).length;
  const refused = flood.filter((answer) => answer.status === 429);
  assert.is(opened, UPGRADES_PER_MINUTE, JSON.stringify(flood.map((answer) => answer.status)));
  assert.is(refused.length, 10);
  assert.ok(refused.every((answer) => Number(answer.retryAfter) >= 1 && Number(answer.retryAfter) <= 60), JSON.stringify(refused));
  // The same /64 written otherwise, and an IPv4-mapped spelling of nothing new: still refused.
  assert.is((await upgrade('2001:0db8:000a:0001:ffff:ffff:ffff:ffff')).status, 429);

  const { bob } = services.users;
  const neighbour = await signIn('2001:db8:a:2::1', bob.token);
  assert.is((await neighbour.request(PATHS.ping)).status, 200);
  assert.is((await upgrade('203.0.113.7')).status, 101);
});

test('sockets that sign in give their upgrade back: one address signs in far more often than the bound and is never refused', async () => {
  const { alice } = services.users;
  for (let i = 0; i < 3 * UPGRADES_PER_MINUTE; i++) {
    const client = await signIn('198.51.100.20', alice.token);
    client.close();
    await client.closed;
  }
});

test("a user's subscribes spend its request budget, REST's too: past it 429 rate_limited, while another user's subscribes succeed", async () => {
  const { alice, bob } = services.users;
  const streamUri = `rtmp://127.0.0.1:${await freePort()}/live/none`;
  const create = async (token: string) => {
    const created = await services.api('POST', '/v1/sessions', { token, body: { name: 'edges', streamUri } });
    assert.is(created.status, 201, JSON.stringify(created.body));
    return created.body._id as string;
  };
  const [mine, theirs] = await Promise.all([create(alice.token), create(bob.token)]);
  const flooder = await signIn('192.0.2.10', alice.token);
  const other = await signIn('192.0.2.11', bob.token);

  const subscribe = (client: WsClient, session: string) => client.request(PATHS.subscribe, { channel: 'session_worker_state', key: session });
  const answers = [];
  for (let i = 0; i < REQUESTS_PER_WINDOW + 10; i++) answers.push(await subscribe(flooder, mine));
  const ok = answers.filter((answer) => answer.status === 200).length;
  const refused = answers.filter((answer) => answer.status === 429);
  // The create spent one of the window's requests, and nothing else of Alice's did.
  assert.is(ok, REQUESTS_PER_WINDOW - 1, JSON.stringify(answers.map((answer) => answer.status)));
  assert.is(refused.length, answers.length - ok);
  assert.ok(refused.every((answer) => (answer.body as { code: string }).code === 'rate_limited'));
  assert.match((refused[0]!.body as { message: string }).message, /requests per 60 s per user/);
  // One budget: Alice's REST requests are refused now as well.
  assert.is((await services.api('GET', '/v1/sessions', { token: alice.token })).status, 429);

  for (let i = 0; i < 10; i++) assert.is((await subscribe(other, theirs)).status, 200, `Bob's subscribe ${i}`);
  assert.is((await services.api('GET', '/v1/sessions', { token: bob.token })).status, 200);
});

test.run();
