// The NATS server leading the sessions bucket (and the idempotency keys) killed with kill -9
// during a burst of creates, each with its own Idempotency-Key; every client retries a create
// that failed through the other gateway until it gets an answer. A create whose write reached
// the bucket but whose acknowledgement was lost with the leader must not become a second
// session on the retry, nor a session no client knows of: exactly one session per key, each
// user's quota exact. (Before admission kept such a create's key, this made a second session.)
import { randomBytes } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { jetstreamManager, type JetStreamManager } from '@nats-io/jetstream';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { test } from '../../ops/support/uvu.ts';
import * as assert from 'uvu/assert';
import { readConfig } from '../../bus/config.ts';
import { buckets } from '../../bus/subjects.ts';
import { startCluster, type Cluster } from '../../ops/stack/cluster.ts';
import { freePort } from '../../ops/stack/ports.ts';
import { waitUntil } from '../../ops/stack/process.ts';
import { httpRequest } from '../../ops/stack/http-client.ts';

const config = readConfig();
// Each user's creates, and their quota: a session counted twice, or not at all, shows.
const PER_USER = 8;
const users = ['alice', 'bob'].map((user) => ({ user, token: `${user}-${randomBytes(8).toString('hex')}` }));
// How long the leader's followers are held before it is killed: long enough for creates in
// flight to send their writes, well within the bus's wait.
const HELD_MS = 1000;
const SESSIONS_STREAM = `KV_${buckets.sessions}`;
const KEYS_STREAM = `KV_${buckets.idempotency}`;

let cluster: Cluster;
let nc: NatsConnection;
let jsm: JetStreamManager;
let streamUri: string;

interface Reply {
  status: number;
  body: any;
}

/** A request the way a client makes it: its token, method, path, body and Idempotency-Key. */
type Request = [token: string, method: string, path: string, body?: unknown, key?: string];

async function api(base: string, ...[token, method, path, body, key]: Request): Promise<Reply> {
  try {
    const { status, text } = await httpRequest(base + path, {
      method,
      headers: {
        Authorization: `Bearer ${token}`,
        ...(body === undefined ? {} : { 'Content-Type': 'application/json' }),
        ...(key === undefined ? {} : { 'Idempotency-Key': key }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(15_000),
    });
    return { status, body: text ? JSON.parse(text) : undefined };
  } catch {
    // The connection broke or the answer never came: as unknown to the client as a 503.
    return { status: 0, body: undefined };
  }
}

/**
 * Asks as a client does until it gets an answer: through the first gateway, then again through
 * the second after each status in `retryOn` (503 or no answer may hide a session made).
 */
async function answer(retryOn: number[], ...request: Request): Promise<Reply & { retried: boolean; sentAt: number }> {
  const [first, second] = cluster.gateways;
  let sentAt = Date.now();
  let reply = await api(first!.baseUrl, ...request);
  let retried = false;
  while (retryOn.includes(reply.status)) {
    retried = true;
    await sleep(500);
    sentAt = Date.now();
    reply = await api(second!.baseUrl, ...request);
  }
  return { ...reply, retried, sentAt };
}

const leaderOf = async (stream: string) => (await jsm.streams.info(stream)).cluster?.leader;

async function allCurrent(stream: string): Promise<boolean> {
  const info = await jsm.streams.info(stream);
  const replicas = info.cluster?.replicas ?? [];
  return Boolean(info.cluster?.leader) && replicas.length === 2 && replicas.every((replica) => replica.current && !replica.offline);
}

/** Moves the idempotency keys' leader until it is the sessions bucket's: one kill then takes both. */
async function leadBothFrom(leader: string): Promise<void> {
  for (let moves = 0; (await leaderOf(KEYS_STREAM)) !== leader; moves++) {
    assert.ok(moves < 12, `the idempotency keys' leader did not move to ${leader}`);
    const before = await leaderOf(KEYS_STREAM);
    await nc.request(`$JS.API.STREAM.LEADER.STEPDOWN.${KEYS_STREAM}`, '', { timeout: 5000 });
    await waitUntil('a new leader of the idempotency keys', async () => (await leaderOf(KEYS_STREAM)) !== before && (await allCurrent(KEYS_STREAM)), 30_000);
  }
}

/**
 * The sessions in the bucket itself, by user, as its stream's leader has them (a direct read may
 * be answered by the restarted server before it has caught up with every key).
 */
async function sessionsInBucket(): Promise<Map<string, { id: string; state: string }[]>> {
  const info = await jsm.streams.info(SESSIONS_STREAM, { subjects_filter: '>' });
  const found = new Map<string, { id: string; state: string }[]>();
  for (const subject of Object.keys(info.state.subjects ?? {})) {
    const message = await jsm.streams.getMessage(SESSIONS_STREAM, { last_by_subj: subject });
    if (!message || message.header?.get('KV-Operation')) continue;
    const record = message.json<{ id: string; user: string; state: string }>();
    found.set(record.user, [...(found.get(record.user) ?? []), { id: record.id, state: record.state }]);
  }
  return found;
}

test.before(async () => {
  const dir = join(config.varDir, 'test', `kv-leader-${process.pid}`);
  mkdirSync(dir, { recursive: true });
  const tokensFile = join(dir, 'tokens.json');
  writeFileSync(tokensFile, JSON.stringify(users.map(({ user, token }) => ({ token, user, product: 'tests' }))));
  // Nothing listens there: sessions stay active (reconnecting) without any analysis work.
  streamUri = `rtmp://127.0.0.1:${await freePort()}/live/none`;
  cluster = await startCluster({
    dir,
    projectRoot: config.projectRoot,
    env: {
      ...process.env,
      CLICKHOUSE_DATABASE: 'emotions_kv_leader',
      AUTH_TOKENS_FILE: tokensFile,
      ALLOW_PRIVATE_STREAM_HOSTS: 'true',
      USER_MAX_ACTIVE_SESSIONS: String(PER_USER),
      STREAM_UNREACHABLE_SECONDS: '3600',
      // Clients retrying through a failover for a minute, four at a time per user.
      SESSION_CREATES_PER_MINUTE: '1000',
      LOG_LEVEL: 'info',
    },
  });
  nc = await connect({ servers: cluster.nats.url.split(','), maxReconnectAttempts: -1, reconnectTimeWait: 200 });
  jsm = await jetstreamManager(nc);
});

test.after(async () => {
  await nc?.close();
  await cluster?.stop();
});

test('kill -9 of the KV leader during a burst of creates: one session per Idempotency-Key, quotas exact, none unknown', async () => {
  const leader = await leaderOf(SESSIONS_STREAM);
  const node = cluster.nats.nodes.find((candidate) => candidate.name === leader);
  assert.ok(node, `the sessions bucket's leader ${leader} is one of ours`);
  await leadBothFrom(leader!);
  const quotasLed = (await leaderOf(`KV_${buckets.quotas}`)) === leader;
  const creates = users.flatMap(({ user, token }) =>
    Array.from({ length: PER_USER }, (_, i) => ({ user, token, key: `${user}-${i}-${randomBytes(4).toString('hex')}`, body: { name: `${user} ${i}`, streamUri } })),
  );
  const given = new Map<string, string>();
  const retried = new Set<string>();
  let answered = 0;
  let killedAt = 0;
  let answeredBeforeKill = 0;
  let firstAskedAfterKill: number | undefined;
  // The creates waiting for their answer, and those that were when the leader died.
  const inFlight = new Set<string>();
  let inFlightAtKill: string[] = [];
  let lastAnswerAt = 0;
  const kill = (async () => {
    await waitUntil('the first creates answered', async () => answered >= 2, 60_000);
    answeredBeforeKill = answered;
    // Its followers held for a moment first: the writes sent meanwhile reach them but wait for
    // their acknowledgement, so the kill loses the answers of writes that the new leader commits.
    const followers = cluster.nats.nodes.filter((other) => other !== node).map((other) => other.pid()!);
    for (const pid of followers) process.kill(pid, 'SIGSTOP');
    try {
      await sleep(HELD_MS);
      inFlightAtKill = [...inFlight];
      await node!.kill();
      killedAt = Date.now();
    } finally {
      for (const pid of followers) process.kill(pid, 'SIGCONT');
    }
  })();
  // Four creates at a time per user, one after another, so that the kill falls among them.
  const client = async (queue: typeof creates) => {
    for (let next = queue.shift(); next; next = queue.shift()) {
      // 429 too: a slot may be held a while by an attempt whose outcome its host could not know.
      inFlight.add(next.key);
      const reply = await answer([0, 429, 503], next.token, 'POST', '/v1/sessions', next.body, next.key);
      inFlight.delete(next.key);
      assert.is(reply.status, 201, `${next.key}: ${JSON.stringify(reply.body)}`);
      if (reply.retried) retried.add(next.key);
      given.set(next.key, reply.body._id);
      answered++;
      lastAnswerAt = Date.now();
      if (killedAt && reply.sentAt > killedAt) firstAskedAfterKill ??= lastAnswerAt - killedAt;
    }
  };
  const queues = users.map(({ user }) => creates.filter((create) => create.user === user));
  await Promise.all([kill, ...queues.flatMap((queue) => [client(queue), client(queue), client(queue), client(queue)])]);
  // The fault hit: creates were waiting on the leader when it died, and some had to be asked again.
  assert.ok(inFlightAtKill.length > 0, 'creates were in flight when the leader was killed');
  assert.ok(retried.size > 0, 'some create went unanswered by the first gateway and was asked again');
  await node!.start();
  await waitUntil('the restarted server to catch up', async () => (await allCurrent(SESSIONS_STREAM)) && (await allCurrent(KEYS_STREAM)), 60_000);

  assert.is(new Set(given.values()).size, creates.length, 'one session per key');
  const ask = (token: string, method: string, path: string, body?: unknown) =>
    answer([0, 503], token, method, path, body, body ? `${path}-${randomBytes(4).toString('hex')}` : undefined);
  for (const create of creates) {
    const again = await answer([0, 503], create.token, 'POST', '/v1/sessions', create.body, create.key);
    assert.is(again.body?._id, given.get(create.key), `${create.key} asked again: ${again.status} ${JSON.stringify(again.body)}`);
  }
  const inBucket = await sessionsInBucket();
  const known = new Set(given.values());
  const unknown = [...inBucket.values()].flat().filter((session) => !known.has(session.id));
  assert.equal(unknown, [], 'no session in the bucket that no client was given');
  for (const { user, token } of users) {
    const mine = creates.filter((create) => create.user === user).map((create) => given.get(create.key)).sort();
    assert.equal(inBucket.get(user)?.map((session) => session.id).sort(), mine, `${user}: the bucket holds the sessions given, no other`);
    assert.ok(inBucket.get(user)!.every((session) => session.state === 'active'));
    const listed = await ask(token, 'GET', '/v1/sessions?limit=100');
    assert.equal(listed.body.data.map((session: { _id: string }) => session._id).sort(), mine, `${user}: the list agrees`);
    // Every session counted once: the quota is full, and stopping one frees exactly one slot.
    const over = await ask(token, 'POST', '/v1/sessions', { name: 'over', streamUri });
    assert.is(over.body.code, 'quota_exceeded', `${user}: ${JSON.stringify(over.body)}`);
    await ask(token, 'POST', `/v1/sessions/${mine[0]}/stop`);
    // A read may come from a storage service whose copy of the record is a moment behind.
    await waitUntil('the stopped session finished', async () => (await ask(token, 'GET', `/v1/sessions/${mine[0]}`)).body.state === 'finished', 30_000);
    const freed = await ask(token, 'POST', '/v1/sessions', { name: 'freed', streamUri });
    assert.is(freed.status, 201, `${user}: a create once one was stopped: ${JSON.stringify(freed.body)}`);
    assert.is((await ask(token, 'POST', '/v1/sessions', { name: 'over again', streamUri })).body.code, 'quota_exceeded');
  }
  console.log(
    `  ${creates.length} creates, ${inFlightAtKill.length} in flight at the kill, ${retried.size} retried through the other gateway; ${leader} (sessions, idempotency${quotasLed ? ', quotas' : ''}) killed after ${answeredBeforeKill} were answered; ` +
      `the first create asked after the kill answered ${firstAskedAfterKill} ms after it, the last ${lastAnswerAt - killedAt} ms after it`,
  );
});

test.run();
