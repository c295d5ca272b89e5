// Custom events ingestion through the REST API: batches of 1000 events posted by a few
// concurrent clients for a while, each acknowledged (201) only once JetStream holds it; then
// how long the storage writer takes until ClickHouse lists every one. Starts NATS,
// ClickHouse, one actor host and the gateway, and stops all of them.
// The storage delays are counted from the end of the posting.
// Usage: node --import tsx ops/bench/events.ts [seconds=15] [concurrency=8]
import { createClient } from '@clickhouse/client';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { MAX_EVENTS_PER_REQUEST, readConfig } from '../../bus/index.ts';
import { sql } from '../../storage/index.ts';
import { startServiceStack } from '../support/service-stack.ts';
import { percentile } from './lib/stats.ts';

const config = readConfig();

const [seconds = 15, concurrency = 8] = process.argv.slice(2).map(Number);
const dir = join(config.varDir, 'bench', `events-${process.pid}`);
const DATABASE = 'emotions_bench';

const stack = await startServiceStack({ name: 'bench-events', dir, database: DATABASE, env: { STREAM_UNREACHABLE_SECONDS: '3600' } });
try {
  const { services } = stack;

  // A closed local port: the session stays active, with nothing to analyse beside the bench.
  const created = await services.api('POST', '/v1/sessions', { body: { name: 'events bench', streamUri: 'rtmp://127.0.0.1:9/live/bench' } });
  const session = created.body._id as string;
  const source = (await services.api('POST', `/v1/sessions/${session}/events`, { body: { name: 'bench', format: 'scalar' } })).body;
  const url = `${services.baseUrl}/v1/sessions/${session}/events/${source.id}`;
  const headers = { Authorization: `Bearer ${services.users.alice.token}`, 'Content-Type': 'application/json' };
  const batch = (n: number) =>
    JSON.stringify(Array.from({ length: MAX_EVENTS_PER_REQUEST }, (_, i) => ({ time: n + i / MAX_EVENTS_PER_REQUEST, data: Math.sin(n + i) })));

  let accepted = 0;
  let failed = 0;
  let next = 0;
  const latencies: number[] = [];
  const post = async (stopAt: number, record: boolean) => {
    while (Date.now() < stopAt) {
      const body = batch(next++);
      const sent = performance.now();
      const response = await fetch(url, { method: 'POST', headers, body });
      await response.arrayBuffer();
      if (!record) continue;
      if (response.status === 201) {
        accepted += MAX_EVENTS_PER_REQUEST;
        latencies.push(performance.now() - sent);
      } else failed++;
    }
  };

  await Promise.all(Array.from({ length: concurrency }, () => post(Date.now() + 2000, false)));
  const warmedUp = next;
  const begin = performance.now();
  await Promise.all(Array.from({ length: concurrency }, () => post(Date.now() + seconds * 1000, true)));
  const elapsed = (performance.now() - begin) / 1000;

  // Every accepted event must reach ClickHouse.
  const expected = next * MAX_EVENTS_PER_REQUEST;
  const drainStart = performance.now();
  const reader = createClient({ url: stack.clickhouseUrl, database: DATABASE, compression: { request: false, response: false } });
  let stored = 0;
  let mostStoredAfter = NaN;
  while (stored < expected && performance.now() - drainStart < 300_000) {
    await sleep(250);
    const result = await reader.query({ query: sql`SELECT count() AS n FROM custom_events WHERE session = ${session}`, format: 'JSONEachRow' });
    stored = Number((await result.json<{ n: string }>())[0]?.n ?? 0);
    if (Number.isNaN(mostStoredAfter) && stored >= expected * 0.99) mostStoredAfter = (performance.now() - drainStart) / 1000;
  }
  await reader.close();
  const drainSeconds = (performance.now() - drainStart) / 1000;

  console.log(`events bench: ${concurrency} concurrent clients, batches of ${MAX_EVENTS_PER_REQUEST}, ${seconds} s after ${warmedUp} warm-up batches`);
  console.table([{
    'events/s (201)': Math.round(accepted / elapsed),
    'requests/s': Math.round(latencies.length / elapsed),
    'p50 ms': Math.round(percentile(latencies, 50)),
    'p99 ms': Math.round(percentile(latencies, 99)),
    failed,
    'all stored': stored >= expected ? 'yes' : `no (${expected} expected)`,
    '99 % stored after (s)': mostStoredAfter.toFixed(1),
    'all stored after (s)': drainSeconds.toFixed(1),
  }]);
} finally {
  await stack.stop();
  stack.removeFiles();
}
await sleep(10);
process.exit(0);
