// One user's reads while another floods ClickHouse: user B reads a page of its own session's
// events, one request at a time, first alone, then while user A keeps as many deep pages of a
// million events in flight as the gateway lets it (the storage service runs 8 of them at once and
// refuses the rest, 429, which A retries after 50 ms). A also floods alone for a while, to show
// what it gets when nobody else reads. Starts NATS, ClickHouse and the service; loads the rows
// straight into ClickHouse; prints B's p50/p95 both ways and A's answers per second; stops
// everything it started.
// Usage: node --import tsx ops/bench/reads-under-flood.ts [B's requests each way]
import { createClient } from '@clickhouse/client';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { readConfig } from '../../bus/index.ts';
import { startServiceStack } from '../support/service-stack.ts';
import type { Services } from '../support/services.ts';
import { loadEvents } from '../support/list-data.ts';
import { benchToken, stoppedSession } from './lib/bench-users.ts';
import { elapsedMs, fixed, percentile, printTable } from './lib/stats.ts';

const config = readConfig();
const [requests = 40] = process.argv.slice(2).map(Number);
const JWT_SECRET = 'bench-flood-secret';
const DATABASE = 'emotions_bench';
const EVENTS_OF_A = 1_000_000;
const EVENTS_OF_B = 200_000;

const dir = join(config.varDir, 'bench', `reads-under-flood-${process.pid}`);
const tokenFor = (user: string) => benchToken(JWT_SECRET, user);

/** B's page, `requests` times one after another: its latencies and statuses. */
async function timesOf(services: Services, path: string, token: string) {
  const times: number[] = [];
  const statuses: Record<number, number> = {};
  for (let i = 0; i < requests; i++) {
    const since = performance.now();
    const reply = await services.api('GET', path, { token });
    times.push(elapsedMs(since));
    statuses[reply.status] = (statuses[reply.status] ?? 0) + 1;
  }
  return { p50: percentile(times, 50), p95: percentile(times, 95), statuses };
}

const stack = await startServiceStack({ name: 'bench-flood', dir, database: DATABASE, env: { AUTH_JWT_SECRET: JWT_SECRET } });
const clickhouse = createClient({ url: stack.clickhouseUrl, database: DATABASE, compression: { request: false, response: false } });
try {
  const { services } = stack;
  const [tokenA, tokenB] = await Promise.all([tokenFor('bench-flooder'), tokenFor('bench-reader')]);
  const a = await stoppedSession(services, tokenA);
  const b = await stoppedSession(services, tokenB);
  await loadEvents(clickhouse, { ...a, user: 'bench-flooder', count: EVENTS_OF_A, seconds: 43_200 });
  await loadEvents(clickhouse, { ...b, user: 'bench-reader', count: EVENTS_OF_B, seconds: 43_200 });
  const pageOfB = `/v1/sessions/${b.session}/events?limit=100&offset=${EVENTS_OF_B / 2}`;
  const deepPageOfA = `/v1/sessions/${a.session}/events?limit=100&offset=${EVENTS_OF_A - 50}`;

  /** A's flood while `during` runs: A's answers per second, by status. */
  const flooding = async <T>(during: () => Promise<T>) => {
    let on = true;
    const answers: Record<number, number> = {};
    const startedAt = performance.now();
    const flood = Promise.all(Array.from({ length: config.requestsInFlightPerUser }, async () => {
      while (on) {
        const reply = await services.api('GET', deepPageOfA, { token: tokenA });
        answers[reply.status] = (answers[reply.status] ?? 0) + 1;
        if (reply.status === 429) await sleep(50);
      }
    }));
    const result = await during();
    on = false;
    await flood;
    const seconds = elapsedMs(startedAt) / 1000;
    const perSecond = Object.fromEntries(Object.entries(answers).map(([status, n]) => [status, fixed(n / seconds)]));
    return { result, perSecond };
  };

  const alone = await timesOf(services, pageOfB, tokenB);
  const aAlone = await flooding(() => sleep(10_000));
  const withB = await flooding(async () => {
    await sleep(1000);
    return timesOf(services, pageOfB, tokenB);
  });
  const flooded = withB.result;

  printTable(`B's page of ${EVENTS_OF_B.toLocaleString('en')} events at offset ${EVENTS_OF_B / 2}, ${requests} requests each way (ms)`,
    ['B reads', 'p50', 'p95', "B's answers"],
    [
      ['alone', fixed(alone.p50), fixed(alone.p95), JSON.stringify(alone.statuses)],
      ['while A floods', fixed(flooded.p50), fixed(flooded.p95), JSON.stringify(flooded.statuses)],
    ]);
  console.log(`A's deep pages per second, by status: alone for 10 s ${JSON.stringify(aAlone.perSecond)}; while B reads ${JSON.stringify(withB.perSecond)}`);
} finally {
  await clickhouse.close();
  await stack.stop();
  stack.removeFiles();
}
await sleep(10);
process.exit(0);
