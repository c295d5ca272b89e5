// What one user's flood of renames costs another user's reads and deletes, with two storage
// services sharing the session index consumer: bob's deep page of the session list (from
// ClickHouse, after waiting for his own changes) and bob's DELETE of a finished session, each
// timed one at a time, first alone, then while alice renames one session of hers as fast as
// the gateway lets her (SESSION_RENAMES_PER_MINUTE, the service's default unless given; past
// it her renames answer 429). Starts NATS, ClickHouse, two storage services, an actor host and
// the gateway; loads bob's sessions straight into the index; stops everything it started.
// Usage: node --import tsx ops/bench/list-under-renames.ts [requests per case] [renames in flight] [renames per minute] [refusal hold ms]
import { createClient } from '@clickhouse/client';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { readConfig } from '../../bus/index.ts';
import { freePort, launchService } from '../stack/index.ts';
import { startServiceStack } from '../support/service-stack.ts';
import type { Services } from '../support/services.ts';
import { loadSessions } from '../support/list-data.ts';
import { elapsedMs, fixed, percentile, printTable } from './lib/stats.ts';

const config = readConfig();
const [requests = 40, renamesInFlight = 8, renamesPerMinute = config.sessionRenamesPerMinute, refusalHoldMs = config.rateLimitRefusalHoldMs] = process.argv
  .slice(2)
  .map(Number);
const DATABASE = 'emotions_bench_renames';
const BOB_SESSIONS = 100_000;
const DEEP_OFFSET = 90_000;
// A closed local port: the sessions made through the API analyse nothing.
const STREAM = 'rtmp://127.0.0.1:9/live/bench-renames';

const dir = join(config.varDir, 'bench', `list-under-renames-${process.pid}`);

interface Timings {
  ms: number[];
  failed: number;
}

async function timed(count: number, request: () => Promise<number>): Promise<Timings> {
  const timings: Timings = { ms: [], failed: 0 };
  for (let i = 0; i < count; i++) {
    const started = performance.now();
    const status = await request();
    if (status >= 400) timings.failed++;
    else timings.ms.push(elapsedMs(started));
  }
  return timings;
}

async function finishedSession(services: Services, token: string, name: string): Promise<string> {
  const created = await services.api<{ _id: string }>('POST', '/v1/sessions', { body: { name, streamUri: STREAM }, token });
  if (created.status !== 201) throw new Error(`create answered ${created.status}: ${JSON.stringify(created.body)}`);
  const stopped = await services.api('POST', `/v1/sessions/${created.body._id}/stop`, { token });
  if (stopped.status !== 200) throw new Error(`stop answered ${stopped.status}`);
  return created.body._id;
}

/** Bob's two cases: a deep page of his list, and the DELETE of a session he just finished. */
async function bobsCases(services: Services): Promise<{ deepPage: Timings; remove: Timings }> {
  const { bob } = services.users;
  const deepPage = await timed(requests, async () => (await services.api('GET', `/v1/sessions?offset=${DEEP_OFFSET}&limit=10`, { token: bob.token })).status);
  const ids: string[] = [];
  for (let i = 0; i < requests; i++) ids.push(await finishedSession(services, bob.token, `bob ${i}`));
  let next = 0;
  const remove = await timed(requests, async () => (await services.api('DELETE', `/v1/sessions/${ids[next++]}`, { token: bob.token })).status);
  return { deepPage, remove };
}

interface AutocannonResult {
  requests: { total: number };
  duration: number;
  statusCodeStats?: Record<string, { count: number }>;
}
type Autocannon = (options: {
  url: string;
  method: string;
  body: string;
  headers: Record<string, string>;
  connections: number;
  duration: number;
  workers: number;
}) => Promise<AutocannonResult>;
const autocannon = createRequire(import.meta.url)('autocannon') as Autocannon;

/**
 * Alice renames one finished session with `renamesInFlight` connections for `seconds`, from a
 * thread of its own: bob's timings share no event loop with her requests.
 */
async function renameFlood(services: Services, seconds: number): Promise<{ renames: number; ok: number; seconds: number }> {
  const { alice } = services.users;
  const id = await finishedSession(services, alice.token, 'renamed');
  const result = await autocannon({
    url: `${services.baseUrl}/v1/sessions/${id}`,
    method: 'PATCH',
    body: JSON.stringify({ name: 'renamed again' }),
    headers: { Authorization: `Bearer ${alice.token}`, 'Content-Type': 'application/json' },
    connections: renamesInFlight,
    duration: seconds,
    workers: 1,
  });
  return { renames: result.requests.total, ok: result.statusCodeStats?.['200']?.count ?? 0, seconds: result.duration };
}

const row = (name: string, timings: Timings) => [
  name,
  String(timings.ms.length),
  String(timings.failed),
  fixed(percentile(timings.ms, 50)),
  fixed(percentile(timings.ms, 95)),
  fixed(Math.max(...timings.ms)),
];

// Alice is a client the service lets in: the bounds on what she does at their defaults (the
// test harness's services raise them), her renames' at what is asked. Bob's creates and
// deletes stay unbounded: he makes more of them than a minute's budget.
const budgets = {
  RATE_LIMIT_REQUESTS: String(config.rateLimitRequests),
  REQUESTS_IN_FLIGHT_PER_USER: String(config.requestsInFlightPerUser),
  SESSION_RENAMES_PER_MINUTE: String(renamesPerMinute),
  RATE_LIMIT_REFUSAL_HOLD_MS: String(refusalHoldMs),
};
const stack = await startServiceStack({ name: 'bench-list-under-renames', dir, database: DATABASE, env: budgets });
const { services } = stack;
const second = await launchService({
  id: 'bench-list-under-renames-storage-2',
  role: 'storage',
  projectRoot: config.projectRoot,
  logFile: join(services.logDir, 'storage-2.log'),
  env: { ...process.env, ...stack.env, LOG_LEVEL: 'info' },
  metricsPort: await freePort(),
});
try {
  const clickhouse = createClient({ url: stack.clickhouseUrl, database: DATABASE });
  await loadSessions(clickhouse, { user: services.users.bob.user, count: BOB_SESSIONS, newestMs: Date.now() - 3_600_000, spacingMs: 60_000, active: 0 });
  await clickhouse.close();
  // Warm: the first requests start the processes' caches and ClickHouse's.
  await bobsCases(services);

  const aloneStarted = performance.now();
  const alone = await bobsCases(services);
  // Long enough for bob's cases however much slower they get, begun a second before them.
  const flooding = renameFlood(services, Math.ceil((4 * elapsedMs(aloneStarted)) / 1000) + 5);
  await sleep(1000);
  const during = await bobsCases(services);
  const flood = await flooding;

  console.log(`\nTwo storage services; bob has ${BOB_SESSIONS.toLocaleString('en')} sessions; ${requests} requests per case, one at a time.`);
  console.log(`alice's renames meanwhile: ${flood.renames} in ${fixed(flood.seconds)} s (${fixed(flood.renames / flood.seconds, 0)}/s, ${renamesInFlight} in flight), ${flood.ok} answered 200 (${fixed(flood.ok / flood.seconds)}/s; SESSION_RENAMES_PER_MINUTE ${renamesPerMinute}, RATE_LIMIT_REFUSAL_HOLD_MS ${refusalHoldMs})`);
  printTable('bob\'s requests (ms)', ['case', 'answered', 'failed', 'p50', 'p95', 'max'], [
    row(`deep page (offset ${DEEP_OFFSET.toLocaleString('en')}), alone`, alone.deepPage),
    row('deep page, during alice\'s renames', during.deepPage),
    row('DELETE of a finished session, alone', alone.remove),
    row('DELETE, during alice\'s renames', during.remove),
  ]);
} finally {
  await second.stop();
  await stack.stop();
  stack.removeFiles();
}
