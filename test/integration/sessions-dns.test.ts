// A stream's host name is resolved after the user's quota and the host's admission, off libuv's
// thread pool, with a timeout (actors/egress/resolver.ts): one user's creates naming a host
// whose name server never answers cannot delay another user's create.
import { createSocket, type Socket } from 'node:dgram';
import { test } from '../../ops/support/uvu.ts';
import * as assert from 'uvu/assert';
import { startServices, type Services } from '../../ops/support/services.ts';

/** Twice libuv's thread pool; and all of the user's quota, so each one is past it. */
const STALLED_CREATES = 8;
let services: Services;
let nameServer: Socket;
let queries = 0;

test.before(async () => {
  // A name server that reads every query and never answers.
  nameServer = createSocket('udp4');
  nameServer.on('message', () => queries++);
  await new Promise<void>((resolve) => nameServer.bind(0, '127.0.0.1', resolve));
  services = await startServices({
    name: 'sessions-dns',
    env: {
      STREAM_DNS_SERVERS: `127.0.0.1:${nameServer.address().port}`,
      STREAM_DNS_TIMEOUT_MS: '3000',
      STREAM_UNREACHABLE_SECONDS: '900',
      USER_MAX_ACTIVE_SESSIONS: String(STALLED_CREATES),
    },
  });
});

test.after(async () => {
  await services?.stop();
  nameServer?.close();
});

test("creates naming a host whose name server never answers do not delay another user's create, and make nothing", async () => {
  const { alice, bob } = services.users;
  const order: string[] = [];
  const stalled = Array.from({ length: STALLED_CREATES }, async (_, i) => {
    const reply = await services.api('POST', '/v1/sessions', {
      body: { name: `stalled ${i}`, streamUri: `rtmp://camera-${i}.stalled.example/live/x` },
      token: alice.token,
    });
    order.push('alice');
    return reply;
  });
  // Awaited below; an early failure must not end the process before the services are stopped.
  for (const reply of stalled) reply.catch(() => {});
  // Once the name server has been asked, every one of alice's creates is past her quota and the
  // host's admission, waiting for its name.
  const deadline = Date.now() + 10_000;
  while (queries < STALLED_CREATES && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
  assert.ok(queries >= STALLED_CREATES, `the name server was asked ${queries} times`);
  // localhost is answered from the hosts file, as getaddrinfo would: a name, not an address.
  const other = await services.api('POST', '/v1/sessions', { body: { name: 'beside', streamUri: 'rtmp://localhost:9/live/x' }, token: bob.token });
  order.push('bob');
  assert.is(other.status, 201, JSON.stringify(other.body));
  assert.is(order[0], 'bob', `answered in the order ${order.join(', ')}`);

  for (const reply of await Promise.all(stalled)) {
    assert.is(reply.status, 400, JSON.stringify(reply.body));
    assert.equal(reply.body.details, [{ field: 'body.streamUri', message: reply.body.details[0].message }]);
    assert.match(reply.body.message, /cannot be resolved/);
  }
  const listed = await services.api('GET', '/v1/sessions?limit=100', { token: alice.token });
  assert.is(listed.body.data.length, 0, 'the refused creates made nothing');
  // ...and gave back their quota slots at once: alice may still hold all she is allowed.
  for (let i = 0; i < STALLED_CREATES; i++) {
    const created = await services.api('POST', '/v1/sessions', { body: { name: `after ${i}`, streamUri: 'rtmp://127.0.0.1:9/live/x' }, token: alice.token });
    assert.is(created.status, 201, `create ${i}: ${JSON.stringify(created.body)}`);
  }
});

test.run();
