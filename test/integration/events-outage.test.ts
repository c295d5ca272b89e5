// A 201 for events is a promise: they are stored even when ClickHouse is down at the time.
// This file runs its own NATS and ClickHouse, so stopping them disturbs no other test; that
// ClickHouse merges nothing, so an event stored twice is still there to be counted
// (test/support/copies.ts).
import { test } from '../../ops/support/uvu.ts';
import * as assert from 'uvu/assert';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { readConfig } from '../../bus/config.ts';
import { startClickHouse } from '../../ops/stack/clickhouse.ts';
import { startNats } from '../../ops/stack/nats.ts';
import type { Service } from '../../ops/stack/process.ts';
import { freePort } from '../../ops/stack/ports.ts';
import { startServices, type Services } from '../../ops/support/services.ts';
import { connectClickHouse } from '../../storage/clickhouse/clickhouse.ts';
import { assertNoMerges, NO_MERGES, storedTwice } from '../support/copies.ts';

const config = readConfig();

const dir = join(config.varDir, 'test', `events-outage-${process.pid}`);
let nats: Service & { url: string };
let clickhouse: Service & { url: string };
let clickhouseOptions: Parameters<typeof startClickHouse>[0];
let services: Services;

test.before(async () => {
  clickhouseOptions = { dir: join(dir, 'clickhouse'), httpPort: await freePort(), tcpPort: await freePort(), configFiles: NO_MERGES };
  nats = await startNats({ dir: join(dir, 'nats'), port: await freePort(), maxFileStore: '512MB' });
  clickhouse = await startClickHouse(clickhouseOptions);
  services = await startServices({
    name: 'events-outage',
    env: {
      NATS_URL: nats.url,
      CLICKHOUSE_URL: clickhouse.url,
      STREAM_UNREACHABLE_SECONDS: '600',
      WRITER_FLUSH_MS: '200',
      ROWS_STREAM_MAX_BYTES: String(64 * 1024 * 1024),
      // The buckets too must fit this NATS's 512 MB of file store.
      SESSIONS_BUCKET_MAX_BYTES: String(64 * 1024 * 1024),
    },
  });
});

test.after(async () => {
  await services?.stop();
  await clickhouse?.stop();
  await nats?.stop();
  rmSync(dir, { recursive: true, force: true });
});

async function listed(session: string): Promise<number[]> {
  const times: number[] = [];
  for (let offset = 0; ; offset += 100) {
    const page = await services.api('GET', `/v1/sessions/${session}/events?limit=100&offset=${offset}`);
    if (page.status !== 200) throw new Error(`list answered ${page.status}: ${JSON.stringify(page.body)}`);
    times.push(...page.body.data.map((e: { time: number }) => e.time));
    if (!page.body.hasMore) return times;
  }
}

async function waitForListed(session: string, count: number, timeoutMs: number): Promise<number[]> {
  const deadline = Date.now() + timeoutMs;
  let last: number[] = [];
  while (Date.now() < deadline) {
    last = await listed(session).catch(() => last);
    if (last.length >= count) return last;
    await sleep(500);
  }
  return last;
}

test('events accepted while ClickHouse is down are all listed once it is back', async () => {
  const created = await services.api('POST', '/v1/sessions', {
    body: { name: 'outage', streamUri: `rtmp://127.0.0.1:${await freePort()}/live/none` },
  });
  assert.is(created.status, 201, JSON.stringify(created.body));
  const session = created.body._id;
  const source = await services.api('POST', `/v1/sessions/${session}/events`, { body: { name: 'meter', format: 'scalar' } });
  assert.is(source.status, 201);
  const post = (times: number[]) =>
    services.api('POST', `/v1/sessions/${session}/events/${source.body.id}`, { body: times.map((time) => ({ time, data: time * 10 })) });

  assert.is((await post([1, 2, 3])).status, 201);
  assert.equal(await waitForListed(session, 3, 20_000), [1, 2, 3]);

  await clickhouse.stop();
  const during = [[4, 5], [6], [7, 8, 9]];
  for (const times of during) assert.is((await post(times)).status, 201, 'accepted while ClickHouse is down');
  await sleep(1500); // the writer tries, fails and keeps the rows

  clickhouse = await startClickHouse(clickhouseOptions);
  assert.equal(await waitForListed(session, 9, 60_000), [1, 2, 3, 4, 5, 6, 7, 8, 9]);
  // Counted in the table, not through the API, which reads with FINAL; once every row is
  // acknowledged, so that none is left to come back after its ack_wait.
  await services.rowsStored();
  const stored = connectClickHouse({ url: clickhouse.url, username: 'default', password: '' }, config.clickhouseDatabase);
  try {
    await assertNoMerges(stored);
    assert.equal(await storedTwice(stored, 'custom_events', ['time', 'id'], session), [], 'each event stored once');
  } finally {
    await stored.close();
  }
});

test.run();
