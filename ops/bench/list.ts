// Reads at scale through the gateway: the session list of a user with a million sessions
// (beside ten users with 100,000 each, one with a few, and one whose million sessions are
// followed by a pause of 15 days before the newest), the custom events of a session
// with a million of them, and the transcript of a 12-hour session. Starts NATS, ClickHouse,
// the storage service, an actor host and the gateway; loads the rows straight into ClickHouse;
// measures each case one request at a time (p50/p95), then each under concurrent connections
// (autocannon: p50, p97.5 and p99); stops everything it started.
// Usage: node --import tsx ops/bench/list.ts [sequential requests] [connections] [seconds]
import { createClient } from '@clickhouse/client';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { readConfig } from '../../bus/index.ts';
import { startServiceStack } from '../support/service-stack.ts';
import { benchToken, stoppedSession } from './lib/bench-users.ts';
import { elapsedMs, fixed, percentile, printTable } from './lib/stats.ts';
import { loadEvents, loadSessions, loadTranscript } from '../support/list-data.ts';

const config = readConfig();

interface AutocannonResult {
  requests: { average: number };
  latency: { p50: number; p97_5: number; p99: number };
  non2xx: number;
  errors: number;
}
type Autocannon = (options: { url: string; connections: number; duration: number; headers?: Record<string, string> }) => Promise<AutocannonResult>;
const autocannon = createRequire(import.meta.url)('autocannon') as Autocannon;

const [sequential = 50, connections = 50, seconds = 5] = process.argv.slice(2).map(Number);
const DAY_MS = 86_400_000;
const JWT_SECRET = 'bench-list-secret';
const DATABASE = 'emotions_bench';

const dir = join(config.varDir, 'bench', `list-${process.pid}`);

const tokenFor = (user: string) => benchToken(JWT_SECRET, user);

interface Case {
  name: string;
  path: string;
  token: string;
}

/** One request at a time: the page it answers and the latencies. */
async function sequentially(baseUrl: string, target: Case) {
  const headers = { Authorization: `Bearer ${target.token}` };
  const first = await fetch(baseUrl + target.path, { headers });
  if (!first.ok) throw new Error(`${target.name}: ${first.status} ${await first.text()}`);
  const page = (await first.json()) as { data: unknown[]; hasMore: boolean };
  const times: number[] = [];
  for (let i = 0; i < sequential; i++) {
    const since = performance.now();
    await (await fetch(baseUrl + target.path, { headers })).arrayBuffer();
    times.push(elapsedMs(since));
  }
  return { page: `${page.data.length}${page.hasMore ? '+' : ''}`, p50: percentile(times, 50), p95: percentile(times, 95) };
}

async function concurrently(baseUrl: string, target: Case) {
  const result = await autocannon({ url: baseUrl + target.path, connections, duration: seconds, headers: { Authorization: `Bearer ${target.token}` } });
  // Requests still queued behind the last ones would slow the next case.
  await sleep(3000);
  return result;
}

async function timed(what: string, work: () => Promise<unknown>): Promise<void> {
  const since = performance.now();
  await work();
  console.log(`${what}: ${fixed(elapsedMs(since) / 1000)} s`);
}


const stack = await startServiceStack({ name: 'bench-list', dir, database: DATABASE, env: { AUTH_JWT_SECRET: JWT_SECRET } });
const clickhouse = createClient({ url: stack.clickhouseUrl, database: DATABASE, compression: { request: false, response: false } });
try {
  const { services } = stack;

  const now = Date.now();
  const big = { user: 'bench-big', count: 1_000_000, newestMs: now - 60_000, spacingMs: Math.floor((29 * DAY_MS) / 1_000_000), active: 8 };
  await timed('1,000,000 sessions of one user', () => loadSessions(clickhouse, big));
  await timed('10 users x 100,000 sessions', async () => {
    for (let i = 0; i < 10; i++) {
      await loadSessions(clickhouse, { user: `bench-other-${i}`, count: 100_000, newestMs: now - i * 1000, spacingMs: 25_000, active: 2 });
    }
  });
  await loadSessions(clickhouse, { user: 'bench-small', count: 20, newestMs: now, spacingMs: DAY_MS, active: 1 });
  // Windows sized by the average density find next to nothing in the 15 days before the newest.
  const paused = { user: 'bench-paused', count: 1_000_000, newestMs: now - 15 * DAY_MS, spacingMs: big.spacingMs, active: 0 };
  await timed('1,000,000 sessions, then 15 days later one more', async () => {
    await loadSessions(clickhouse, paused);
    await loadSessions(clickhouse, { ...paused, count: 1, newestMs: now - 60_000, active: 1 });
  });

  const reader = await tokenFor('bench-reader');
  const { session, source } = await stoppedSession(services, reader);
  await timed('1,000,000 events of one session', () =>
    loadEvents(clickhouse, { session, user: 'bench-reader', source, count: 1_000_000, seconds: 43_200 }));
  await timed('a 12-hour transcript', () => loadTranscript(clickhouse, { session, seconds: 43_200, everySeconds: 3 }));

  const bigToken = await tokenFor(big.user);
  const dayEnd = new Date(now - 10 * DAY_MS);
  const day = `from=${new Date(dayEnd.getTime() - DAY_MS).toISOString()}&to=${dayEnd.toISOString()}`;
  const cases: Case[] = [
    { name: '1M: first page', path: '/v1/sessions', token: bigToken },
    { name: '1M: first page, limit=100', path: '/v1/sessions?limit=100', token: bigToken },
    { name: '1M: state=active', path: '/v1/sessions?state=active', token: bigToken },
    { name: '1M: state=finished, limit=100', path: '/v1/sessions?state=finished&limit=100', token: bigToken },
    { name: '1M: type=live_analysis', path: '/v1/sessions?type=live_analysis', token: bigToken },
    { name: '1M: offset=10000', path: '/v1/sessions?offset=10000', token: bigToken },
    { name: '1M: offset=100000', path: '/v1/sessions?offset=100000', token: bigToken },
    { name: '1M: one day, first page', path: `/v1/sessions?${day}`, token: bigToken },
    { name: '1M: one day, offset=30000', path: `/v1/sessions?${day}&offset=30000`, token: bigToken },
    { name: '1M after a pause: first page', path: '/v1/sessions', token: await tokenFor(paused.user) },
    { name: '1M after a pause: limit=100', path: '/v1/sessions?limit=100', token: await tokenFor(paused.user) },
    { name: '1M after a pause: offset=10000', path: '/v1/sessions?offset=10000', token: await tokenFor(paused.user) },
    { name: '100k user: first page', path: '/v1/sessions', token: await tokenFor('bench-other-3') },
    { name: '20-session user: first page', path: '/v1/sessions', token: await tokenFor('bench-small') },
    { name: '1M events: first page', path: `/v1/sessions/${session}/events`, token: reader },
    { name: '1M events: first page, desc', path: `/v1/sessions/${session}/events?order=desc&limit=100`, token: reader },
    { name: '12 h transcript: first page', path: `/v1/sessions/${session}/audio/transcription`, token: reader },
  ];
  console.log(`\n${sequential} sequential requests per case, then ${connections} connections for ${seconds} s`);
  // All the sequential runs first: a concurrent run leaves the servers busy for a while.
  const alone = [];
  for (const target of cases) alone.push(await sequentially(services.baseUrl, target));
  const rows = [];
  for (const [i, target] of cases.entries()) {
    const loaded = await concurrently(services.baseUrl, target);
    const { page, p50, p95 } = alone[i]!;
    rows.push([target.name, page, fixed(p50), fixed(p95), fixed(loaded.requests.average, 0),
      String(loaded.latency.p50), String(loaded.latency.p97_5), String(loaded.latency.p99), String(loaded.non2xx + loaded.errors)]);
  }
  printTable('Reads at scale (times in ms)', ['case', 'page', 'seq p50', 'seq p95', `req/s @${connections}`, `p50 @${connections}`, `p97.5 @${connections}`, `p99 @${connections}`, 'failures'], rows);
  // Who answered the session lists: the newest sessions in memory, or ClickHouse.
  const scraped = await (await fetch(`${services.metrics.storage}/metrics`)).text();
  console.log(scraped.split('\n').filter((line) => line.startsWith('emo_session_list_pages_total')).join('\n'));
} finally {
  await clickhouse.close();
  await stack.stop();
  stack.removeFiles();
}
// Requests the bench itself made may keep sockets open; everything it started is stopped.
await sleep(10);
process.exit(0);
