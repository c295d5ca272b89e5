// The whole service as real processes (a storage service, actor hosts and a gateway), started
// against the NATS and ClickHouse already running (NATS_URL, CLICKHOUSE_URL in the environment).
// Used by the tests, the benchmarks and the fuzzing alike. Each caller gets its own users.
import { randomBytes } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { jetstreamManager } from '@nats-io/jetstream';
import { Kvm } from '@nats-io/kv';
import { connect } from '@nats-io/transport-node';
import { readConfig } from '../../bus/config.ts';
import type { SessionRecord } from '../../bus/contracts/session.ts';
import { call } from '../../bus/rpc.ts';
import { buckets, consumers, streams } from '../../bus/subjects.ts';
import { HttpClient, type HttpReply } from '../stack/http-client.ts';
import { waitUntil, type Service } from '../stack/process.ts';
import { freePort } from '../stack/ports.ts';
import { launchService, type Role } from '../stack/service-process.ts';

const config = readConfig();

export interface TestUser {
  user: string;
  product: string;
  token: string;
}

export interface Reply<T = any> {
  status: number;
  body: T;
  headers: HttpReply['headers'];
}

export interface Services {
  baseUrl: string;
  users: { alice: TestUser; bob: TestUser };
  hosts: Service[];
  storage: Service;
  gateway: Service;
  /** Base URLs of each process's /metrics, /livez and /readyz (METRICS_PORT). */
  metrics: { storage: string; gateway: string; hosts: string[] };
  /** The processes' logs and the tokens file. */
  logDir: string;
  /** Starts one more actor host (for failover tests). */
  startHost(env?: Record<string, string>): Promise<Service>;
  api<T = any>(method: string, path: string, options?: { body?: unknown; token?: string; raw?: string; headers?: Record<string, string> }): Promise<Reply<T>>;
  /** Polls the session as `token`'s user (alice's by default) until `predicate` holds, a minute by default: a stream's start on a loaded machine. */
  waitForSession(id: string, predicate: (session: any) => boolean, timeoutMs?: number, token?: string): Promise<any>;
  /** Waits until the storage writer has stored every row published before the call. */
  rowsStored(timeoutMs?: number): Promise<void>;
  stop(): Promise<void>;
}

const root = config.projectRoot;

export async function startServices(options: { hosts?: number; env?: Record<string, string>; name: string }): Promise<Services> {
  const dir = join(config.varDir, 'test', 'services', `${options.name}-${process.pid}`);
  mkdirSync(dir, { recursive: true });
  const suffix = randomBytes(4).toString('hex');
  const users = {
    alice: { user: `alice-${suffix}`, product: 'tests', token: `alice-token-${suffix}` },
    bob: { user: `bob-${suffix}`, product: 'tests', token: `bob-token-${suffix}` },
  };
  const tokensFile = join(dir, 'tokens.json');
  writeFileSync(tokensFile, JSON.stringify(Object.values(users)));
  const port = await freePort();
  const baseEnv = {
    ...process.env,
    ALLOW_PRIVATE_STREAM_HOSTS: 'true',
    // Test files and benchmarks run many sessions and requests per user, created in bursts; the
    // quota and rate limit tests set their own.
    USER_MAX_ACTIVE_SESSIONS: '1000',
    RATE_LIMIT_REQUESTS: '100000000',
    REQUESTS_IN_FLIGHT_PER_USER: '100000',
    SESSION_CREATES_PER_MINUTE: '100000000',
    SESSION_DELETES_PER_MINUTE: '100000000',
    SESSION_RENAMES_PER_MINUTE: '100000000',
    EVENTS_PER_SECOND: '1000000000',
    EVENT_BYTES_PER_SECOND: '1000000000000',
    AUTH_TOKENS_FILE: tokensFile,
    ...options.env,
    LOG_LEVEL: 'info',
  };
  const bus = await connect({ servers: options.env?.NATS_URL ?? process.env.NATS_URL, maxReconnectAttempts: -1 });
  const metrics = { storage: '', gateway: '', hosts: [] as string[] };
  // Explicit metrics ports, so a test knows where each process answers.
  const launch = async (role: Role, id: string, logName: string, env: Record<string, string> = {}) => {
    const metricsPort = await freePort();
    const service = await launchService({ id, role, projectRoot: root, logFile: join(dir, `${logName}.log`), env: { ...baseEnv, ...env }, metricsPort });
    return { service, metricsUrl: `http://127.0.0.1:${metricsPort}` };
  };
  let hostCount = 0;
  const hosts: Service[] = [];
  const startHost = async (env: Record<string, string> = {}) => {
    // Placed by number, not by which host was ready first: hosts[0] is host-1.
    const index = hostCount++;
    const id = `${options.name}-host-${index + 1}`;
    const { service, metricsUrl } = await launch('host', id, id, env);
    hosts[index] = service;
    metrics.hosts[index] = metricsUrl;
    return service;
  };
  let gateway: Service | undefined;
  let storage: Service | undefined;
  const baseUrl = `http://127.0.0.1:${port}`;
  try {
    // The storage service first: it creates the schema and the ROWS stream the hosts write to.
    const started = await launch('storage', `${options.name}-storage`, 'storage');
    storage = started.service;
    metrics.storage = started.metricsUrl;
    // The hosts and the gateway need only the bus and the schema: they start side by side.
    const front = launch('gateway', `${options.name}-gateway`, 'gateway', { GATEWAY_PORT: String(port) }).then((started) => {
      gateway = started.service;
      metrics.gateway = started.metricsUrl;
    });
    const starts = await Promise.allSettled([front, ...Array.from({ length: options.hosts ?? 1 }, () => startHost())]);
    const failed = starts.find((start) => start.status === 'rejected');
    if (failed) throw failed.reason;
  } catch (error) {
    await Promise.all([gateway, storage, ...hosts].map((service) => service?.stop()));
    await bus.close();
    throw error;
  }

  const http = new HttpClient();
  const api: Services['api'] = async (method, path, request = {}) => {
    const headers: Record<string, string> = { ...request.headers };
    if (request.token !== '') headers.Authorization = `Bearer ${request.token ?? users.alice.token}`;
    let body: string | undefined = request.raw;
    if (request.body !== undefined) {
      body = JSON.stringify(request.body);
      headers['Content-Type'] ??= 'application/json';
    }
    const { status, headers: replyHeaders, text } = await http.request(baseUrl + path, { method, headers, body });
    let parsed: unknown = text;
    try {
      parsed = JSON.parse(text);
    } catch {
      // not JSON: the test sees the text
    }
    return { status, body: parsed as never, headers: replyHeaders };
  };

  const waitForSession: Services['waitForSession'] = async (id, predicate, timeoutMs = 60_000, token = users.alice.token) => {
    let last: unknown;
    try {
      await waitUntil(`session ${id}`, async () => {
        const reply = await api('GET', `/v1/sessions/${id}`, { token });
        last = reply.body;
        return reply.status === 200 && predicate(reply.body);
      }, timeoutMs);
    } catch (error) {
      throw new Error(`${(error as Error).message}; last seen: ${JSON.stringify(last)}`);
    }
    return last;
  };

  const rowsStored: Services['rowsStored'] = async (timeoutMs = 60_000) => {
    // Without the account check, which a bus still reconnecting after a NATS restart would fail
    // at once: the reads below are retried until it is back.
    const jsm = await jetstreamManager(bus, { checkAPI: false });
    let last = '';
    // The stream's last message when first asked: a live session publishes on meanwhile, so
    // the writer may never be idle, but it acknowledges every message up to this one.
    let through: number | undefined;
    try {
      await waitUntil('the writer to store every row', async () => {
        through ??= (await jsm.streams.info(streams.rows)).state.last_seq;
        // The writer acknowledges a message once its rows are in ClickHouse.
        const { num_pending, num_ack_pending, ack_floor } = await jsm.consumers.info(streams.rows, consumers.writer);
        last = `${num_pending} pending, ${num_ack_pending} not acknowledged, acknowledged through ${ack_floor.stream_seq} of ${through}`;
        return (num_pending === 0 && num_ack_pending === 0) || ack_floor.stream_seq >= through;
      }, timeoutMs);
    } catch (error) {
      throw new Error(`${(error as Error).message}: ${last}`);
    }
  };

  // Every session still active, whoever created it (test files run one after another, so it is
  // this file's or one an earlier file left): finished while a host of this file can serve the
  // stop, so that no host of a later file takes it over and goes on pulling a stream that is gone.
  const finishActiveSessions = async () => {
    const kv = await new Kvm(bus).open(buckets.sessions);
    for await (const key of await kv.keys()) {
      const entry = await kv.get(key);
      if (entry?.operation !== 'PUT') continue;
      const { id, user, product, state } = entry.json<SessionRecord>();
      if (state !== 'active') continue;
      await call(bus, 'sessions.stop', { caller: { user, product }, session: id }, 5000).catch(() => {});
    }
  };

  const stop = async () => {
    await finishActiveSessions().catch(() => {});
    await gateway?.stop();
    await Promise.all(hosts.map((host) => host.stop()));
    await storage?.stop();
    await bus.close();
    http.close();
  };

  return { baseUrl, users, hosts, storage: storage!, gateway: gateway!, metrics, logDir: dir, startHost, api, waitForSession, rowsStored, stop };
}
