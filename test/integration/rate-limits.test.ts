// The gateway's budgets against the running service: requests per user (RateLimit-* headers
// on every answer, 429 with Retry-After past the limit, nothing reaching the bus), failed
// authentications per client address (never refusing a valid token; behind a trusted proxy,
// per forwarded client), unauthenticated WebSocket sockets per address and their time to sign
// in, and JWTs (exp required, aud and iss checked, a socket closed when its token expires).
// Other loopback addresses (127.0.0.2...) stand for other clients.
import { test } from '../../ops/support/uvu.ts';
import * as assert from 'uvu/assert';
import { request, type IncomingHttpHeaders } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { randomBytes } from 'node:crypto';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { SignJWT } from 'jose';
import { readConfig } from '../../bus/config.ts';
import { subjects } from '../../bus/subjects.ts';
import { WsClient } from '../../ops/support/ws-client.ts';
import { freePort } from '../../ops/stack/ports.ts';
import { startServices, type Services } from '../../ops/support/services.ts';

const config = readConfig();

const REQUESTS = 6;
const WINDOW_SECONDS = 4;
const AUTH_FAILURES = 5;
const UNAUTHENTICATED_SOCKETS = 3;
const AUTH_TIMEOUT_SECONDS = 3;
const PROXY = '127.0.0.5';
const JWT_SECRET = randomBytes(32).toString('hex');
const JWT_AUDIENCE = 'emotion-stream-tests';
const JWT_ISSUER = 'https://id.example';

let services: Services;
let nc: NatsConnection;
let streamUri: string;
const clients: WsClient[] = [];

interface Answer {
  status: number;
  headers: IncomingHttpHeaders;
  body: any;
}

/** One REST call from the given local address. */
function call(method: string, path: string, options: { token?: string; body?: unknown; from?: string; forwardedFor?: string } = {}): Promise<Answer> {
  const url = new URL(path, services.baseUrl);
  const body = options.body === undefined ? undefined : JSON.stringify(options.body);
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: url.hostname,
        port: url.port,
        path: url.pathname + url.search,
        method,
        localAddress: options.from ?? '127.0.0.1',
        headers: {
          ...(options.token === undefined ? {} : { Authorization: `Bearer ${options.token}` }),
          ...(options.forwardedFor === undefined ? {} : { 'X-Forwarded-For': options.forwardedFor }),
          ...(body === undefined ? {} : { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body) }),
        },
      },
      (response) => {
        let text = '';
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => (text += chunk));
        response.on('end', () => resolve({ status: response.statusCode ?? 0, headers: response.headers, body: text ? JSON.parse(text) : undefined }));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

const remaining = (answer: Answer) => Number(answer.headers['ratelimit-remaining']);

/** Waits until the user's window has started again, so that a test sees a whole budget. */
async function freshWindow(token: string): Promise<void> {
  const probe = await call('GET', '/v1/sessions?limit=1', { token });
  await sleep((Number(probe.headers['ratelimit-reset']) + 0.2) * 1000);
}

test.before(async () => {
  services = await startServices({
    name: 'rate-limits',
    env: {
      RATE_LIMIT_REQUESTS: String(REQUESTS),
      RATE_LIMIT_WINDOW_SECONDS: String(WINDOW_SECONDS),
      AUTH_FAILURES_PER_MINUTE: String(AUTH_FAILURES),
      WS_UNAUTHENTICATED_PER_ADDRESS: String(UNAUTHENTICATED_SOCKETS),
      WS_AUTH_TIMEOUT_SECONDS: String(AUTH_TIMEOUT_SECONDS),
      TRUSTED_PROXIES: PROXY,
      AUTH_JWT_SECRET: JWT_SECRET,
      JWT_AUDIENCE,
      JWT_ISSUER,
    },
  });
  nc = await connect({ servers: config.natsUrl });
  // Nothing listens there: a created session only keeps reconnecting.
  streamUri = `rtmp://127.0.0.1:${await freePort()}/live/none`;
});

test.after(async () => {
  for (const client of clients) client.close();
  await nc?.close();
  await services?.stop();
});

test('every answer carries the RateLimit headers; past the limit a 429 with Retry-After that changes nothing', async () => {
  const alice = services.users.alice.token;
  await freshWindow(alice);
  const list = await call('GET', '/v1/sessions', { token: alice });
  assert.is(list.status, 200);
  assert.is(list.headers['ratelimit-limit'], String(REQUESTS));
  assert.is(list.headers['ratelimit-policy'], `${REQUESTS};w=${WINDOW_SECONDS}`);
  assert.is(remaining(list), REQUESTS - 1);
  const reset = Number(list.headers['ratelimit-reset']);
  assert.ok(reset >= 1 && reset <= WINDOW_SECONDS, `reset ${reset}`);
  assert.is(list.headers['retry-after'], undefined);

  // Errors spend the budget and say so too.
  const missing = await call('GET', `/v1/sessions/${'0'.repeat(24)}`, { token: alice });
  assert.is(missing.status, 404);
  assert.is(remaining(missing), REQUESTS - 2);
  const invalid = await call('POST', '/v1/sessions', { token: alice, body: { name: 'no stream' } });
  assert.is(invalid.status, 400);
  assert.is(remaining(invalid), REQUESTS - 3);
  const created = await call('POST', '/v1/sessions', { token: alice, body: { name: 'within budget', streamUri } });
  assert.is(created.status, 201, JSON.stringify(created.body));
  assert.is(remaining(created), REQUESTS - 4);
  for (let left = REQUESTS - 5; left >= 0; left--) assert.is(remaining(await call('GET', '/v1/sessions?limit=1', { token: alice })), left);

  // Past the limit: refused before anything is asked of the bus.
  // What the refused create and rename would ask; the host's own traffic for the session created
  // above (its index updates as the worker's state changes) goes on meanwhile.
  const seen: string[] = [];
  const watches = [subjects.create, subjects.api('sessions.update')].map((subject) => nc.subscribe(subject, { callback: (_, m) => void seen.push(m.subject) }));
  await nc.flush();
  const refused = await call('POST', '/v1/sessions', { token: alice, body: { name: 'over budget', streamUri } });
  const refusedRename = await call('PATCH', `/v1/sessions/${created.body._id}`, { token: alice, body: { name: 'renamed over budget' } });
  await nc.flush();
  for (const watch of watches) watch.unsubscribe();
  for (const answer of [refused, refusedRename]) {
    assert.is(answer.status, 429);
    assert.equal([answer.body.error, answer.body.status, answer.body.code], [true, 429, 'rate_limited']);
    const retryAfter = Number(answer.headers['retry-after']);
    assert.ok(retryAfter >= 1 && retryAfter <= WINDOW_SECONDS, `Retry-After ${answer.headers['retry-after']}`);
    assert.is(remaining(answer), 0);
    assert.is(answer.headers['ratelimit-limit'], String(REQUESTS));
  }
  assert.equal(seen, [], 'no request reached the bus');

  // Another user has a budget of their own.
  const bob = await call('GET', '/v1/sessions', { token: services.users.bob.token });
  assert.is(bob.status, 200);
  assert.is(remaining(bob), REQUESTS - 1);

  // Once the window starts again: the accepted create is there, the refused ones changed nothing.
  await sleep(Number(refused.headers['retry-after']) * 1000 + 200);
  const after = await call('GET', '/v1/sessions?limit=100', { token: alice });
  assert.is(after.status, 200);
  assert.equal(after.body.data.map((s: any) => s.name), ['within budget']);
  const session = await call('GET', `/v1/sessions/${created.body._id}`, { token: alice });
  assert.is(session.body.name, 'within budget');
  assert.is((await call('POST', `/v1/sessions/${created.body._id}/stop`, { token: alice })).status, 200);
});

test('failed authentications are limited per address, and a limited address still lets a valid token in', async () => {
  const guesser = '127.0.0.2';
  for (let i = 1; i <= AUTH_FAILURES; i++) {
    const guess = await call('GET', '/v1/sessions', { token: `guess-${i}`, from: guesser });
    assert.is(guess.status, 401);
    assert.is(guess.headers['ratelimit-limit'], String(AUTH_FAILURES));
    assert.is(remaining(guess), AUTH_FAILURES - i);
    assert.is(guess.headers['ratelimit-policy'], `${AUTH_FAILURES};w=60`);
  }
  const blocked = await call('GET', '/v1/sessions', { token: 'guess-again', from: guesser });
  assert.is(blocked.status, 429);
  assert.is(blocked.body.code, 'rate_limited');
  assert.ok(Number(blocked.headers['retry-after']) >= 1);
  const noToken = await call('GET', '/v1/sessions', { from: guesser });
  assert.is(noToken.status, 429);
  // Clients behind one address (a NAT) are not locked out by another's bad tokens: on REST...
  const valid = await call('GET', '/v1/sessions', { token: services.users.alice.token, from: guesser });
  assert.is(valid.status, 200);
  assert.is(valid.headers['ratelimit-limit'], String(REQUESTS), 'counted against the user, not the address');
  // ...and on the WebSocket, where a bad token from there is refused as on REST.
  const socket = await WsClient.open(`${services.baseUrl.replace('http', 'ws')}/ws/v1`, { localAddress: guesser });
  clients.push(socket);
  const signedIn = await socket.request('auth:token', { token: services.users.bob.token });
  assert.is(signedIn.status, 200, JSON.stringify(signedIn.body));
  const guessing = await WsClient.open(`${services.baseUrl.replace('http', 'ws')}/ws/v1`, { localAddress: guesser });
  clients.push(guessing);
  const reply = await guessing.request('auth:token', { token: 'guess-on-ws' });
  assert.is(reply.status, 429);
  assert.is((reply.body as any).code, 'rate_limited');
  assert.is((await guessing.closed).code, 4429);

  // Other addresses are unaffected.
  assert.is((await call('GET', '/v1/sessions', { token: services.users.alice.token, from: '127.0.0.3' })).status, 200);
  assert.is((await call('GET', '/v1/sessions', { token: 'wrong', from: '127.0.0.3' })).status, 401);
});

test('behind a trusted proxy each forwarded client has its own failure budget; anyone else\'s X-Forwarded-For is ignored', async () => {
  const spend = async (from: string, forwardedFor: string) => {
    for (let i = 0; i < AUTH_FAILURES; i++) assert.is((await call('GET', '/v1/sessions', { token: 'bad', from, forwardedFor })).status, 401);
    return (await call('GET', '/v1/sessions', { token: 'bad', from, forwardedFor })).status;
  };
  assert.is(await spend(PROXY, '198.51.100.1'), 429);
  // Another client through the same proxy, and the first one with a valid token.
  assert.is((await call('GET', '/v1/sessions', { token: 'bad', from: PROXY, forwardedFor: '198.51.100.2' })).status, 401);
  assert.is((await call('GET', '/v1/sessions', { token: services.users.alice.token, from: PROXY, forwardedFor: '198.51.100.1' })).status, 200);
  // A client cannot choose its address by writing the header itself: the proxy's entry is the last.
  assert.is((await call('GET', '/v1/sessions', { token: 'bad', from: PROXY, forwardedFor: '198.51.100.9, 198.51.100.1' })).status, 429);
  // Not a trusted proxy: counted by its own address, whatever it forwards.
  const untrusted = '127.0.0.6';
  assert.is(await spend(untrusted, '198.51.100.3'), 429);
  assert.is((await call('GET', '/v1/sessions', { token: 'bad', from: untrusted, forwardedFor: '198.51.100.4' })).status, 429);
});

const jwt = (claims: { exp?: number; aud?: string; iss?: string }, user = 'jwt-user') => {
  const token = new SignJWT({ product: 'tests', ...claims }).setProtectedHeader({ alg: 'HS256' }).setSubject(user);
  return token.sign(new TextEncoder().encode(JWT_SECRET));
};

test('a JWT needs exp and the configured audience and issuer; a socket is closed when its token expires', async () => {
  const inAMinute = Math.floor(Date.now() / 1000) + 60;
  assert.is((await call('GET', '/v1/sessions', { token: await jwt({ exp: inAMinute, aud: JWT_AUDIENCE, iss: JWT_ISSUER }), from: '127.0.0.7' })).status, 200);
  for (const claims of [{ aud: JWT_AUDIENCE, iss: JWT_ISSUER }, { exp: inAMinute, iss: JWT_ISSUER }, { exp: inAMinute, aud: JWT_AUDIENCE }, { exp: inAMinute, aud: 'other', iss: JWT_ISSUER }]) {
    assert.is((await call('GET', '/v1/sessions', { token: await jwt(claims), from: '127.0.0.7' })).status, 401, JSON.stringify(claims));
  }

  const expiresAt = (Math.floor(Date.now() / 1000) + 3) * 1000;
  const socket = await WsClient.connect(`${services.baseUrl.replace('http', 'ws')}/ws/v1`, await jwt({ exp: expiresAt / 1000, aud: JWT_AUDIENCE, iss: JWT_ISSUER }));
  clients.push(socket);
  assert.is((await socket.request('ping')).status, 200);
  const closed = await socket.closed;
  assert.is(closed.code, 4401);
  assert.ok(Date.now() >= expiresAt - 20, 'not before the token expired');
});

test('unauthenticated WebSocket sockets are limited per address, the oldest making way, and closed if they do not sign in in time', async () => {
  const url = `${services.baseUrl.replace('http', 'ws')}/ws/v1`;
  const crowd = '127.0.0.4';
  const idle: WsClient[] = [];
  for (let i = 0; i < UNAUTHENTICATED_SOCKETS; i++) idle.push(await WsClient.open(url, { localAddress: crowd }));
  clients.push(...idle);
  // Past the bound a new socket is let in and the address's oldest closed.
  const latecomer = await WsClient.open(url, { localAddress: crowd });
  clients.push(latecomer);
  assert.is((await idle[0]!.closed).code, 4429);
  // Another address is not touched, and may open one and authenticate.
  const other = await WsClient.connect(url, services.users.bob.token).catch((error: Error) => error.message);
  assert.ok(other instanceof WsClient, String(other));
  clients.push(other as WsClient);
  for (const socket of idle.slice(1)) assert.is(socket.socket.readyState, socket.socket.OPEN);

  // Idle sockets are closed once their time to sign in is up.
  for (const socket of [...idle.slice(1), latecomer]) assert.is((await socket.closed).code, 4408);
  assert.is((other as WsClient).socket.readyState, (other as WsClient).socket.OPEN, 'a signed-in socket stays');
});

test.run();
