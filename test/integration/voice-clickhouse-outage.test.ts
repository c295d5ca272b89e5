// ClickHouse going away while a stream is analysed: rows wait in JetStream and reach
// ClickHouse once it is back, every second once. This file runs its own ClickHouse (and a
// service instance pointed at it) so that stopping it disturbs nothing else; that server merges
// nothing, so a second stored twice is still there to be counted (test/support/copies.ts).
import { test } from '../../ops/support/uvu.ts';
import * as assert from 'uvu/assert';
import { createClient, type ClickHouseClient } from '@clickhouse/client';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { readConfig } from '../../bus/config.ts';
import { startClickHouse, type ClickHouseOptions } from '../../ops/stack/clickhouse.ts';
import type { Service } from '../../ops/stack/process.ts';
import { sql } from '../../storage/clickhouse/sql.ts';
import { makeClip, type ClipSpec } from '../support/clips.ts';
import { assertNoMerges, NO_MERGES, storedTwice } from '../support/copies.ts';
import { freePort } from '../../ops/stack/ports.ts';
import { startServices, type Services } from '../../ops/support/services.ts';
import type { RtmpServer } from '../../ops/support/streams/rtmp-server.ts';
import {
  clipsDir,
  runFor,
  startLiveSession,
  startStreamServer,
  stopSession,
  type LiveSession,
} from '../support/analysis.ts';

const config = readConfig();

const OUTAGE_MS = 10_000;

const toneClip: ClipSpec = {
  width: 640, height: 360, seconds: 20, fps: 10,
  video: { type: 'color', color: 'darkslategray' },
  audio: { type: 'tones', tones: [{ hz: 200, seconds: 10 }, { hz: 400, seconds: 10 }] },
};

let clickhouseOptions: ClickHouseOptions;
let clickhouse: Service | undefined;
let client: ClickHouseClient;
let services: Services | undefined;
let rtmp: RtmpServer | undefined;
let stream: LiveSession | undefined;
/** The server's data and logs are kept only when the test failed. */
let passed = false;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

test.before(async () => {
  const clip = await makeClip(toneClip, clipsDir);
  clickhouseOptions = {
    dir: join(config.varDir, 'test', `voice-outage-clickhouse-${process.pid}`),
    httpPort: await freePort(),
    tcpPort: await freePort(),
    configFiles: NO_MERGES,
  };
  const started = await startClickHouse(clickhouseOptions);
  clickhouse = started;
  client = createClient({
    url: started.url,
    database: config.clickhouseDatabase,
    compression: { request: false, response: false },
    clickhouse_settings: { output_format_json_quote_64bit_integers: 0 },
  });
  services = await startServices({ name: 'voice-outage', env: { CLICKHOUSE_URL: started.url } });
  rtmp = await startStreamServer('voice-outage');
  stream = await startLiveSession(services, rtmp, 'outage', clip);
});

test.after(async () => {
  await services?.stop();
  await stream?.publisher.stop();
  await rtmp?.stop();
  await client?.close();
  await clickhouse?.stop();
  if (passed) rmSync(clickhouseOptions.dir, { recursive: true, force: true });
});

interface Coverage {
  /** Distinct seconds stored, however many times each. */
  seconds: number;
  first: number;
  last: number;
}

async function coverage(session: string): Promise<Coverage> {
  const result = await client.query({
    query: sql`SELECT uniqExact(second) AS seconds, min(second) AS first, max(second) AS last
            FROM audio_seconds WHERE session = ${session}`,
    format: 'JSONEachRow',
  });
  const [row] = await result.json<{ seconds: number; first: number; last: number }>();
  return { seconds: Number(row?.seconds), first: Number(row?.first), last: Number(row?.last) };
}

test('ClickHouse down for 10 s while a stream runs: no second lost, none twice', async () => {
  const { id } = stream!;
  const api = services!;
  await runFor(api, id, 20);
  await assertNoMerges(client);
  const before = await coverage(id);
  assert.ok(before.seconds >= 10, `rows before the outage: ${JSON.stringify(before)}`);

  await clickhouse!.stop();
  const outageStart = Date.now();
  const unavailable = await api.api('GET', `/v1/sessions/${id}/audio/features?granularity=5`);
  assert.ok(unavailable.status >= 500, `results while ClickHouse is down: ${unavailable.status}`);
  await sleep(OUTAGE_MS - (Date.now() - outageStart));
  clickhouse = await startClickHouse(clickhouseOptions);
  const outageEnd = (await api.api('GET', `/v1/sessions/${id}`)).body.duration;

  await runFor(api, id, outageEnd + 8);
  const finished = await stopSession(api, id);
  const lastSecond = Math.floor(finished.duration);

  // Drained: every second from the first to the stop is in; then, with every row acknowledged
  // (none left to come back after its ack_wait), each second is stored once.
  const deadline = Date.now() + 30_000;
  let after = await coverage(id);
  while (Date.now() < deadline && !(after.last >= lastSecond - 1 && after.seconds === after.last - after.first + 1)) {
    await sleep(1000);
    after = await coverage(id);
  }
  const summary = JSON.stringify({ before, after, outageEnd, lastSecond });
  assert.ok(after.first <= before.first, summary);
  assert.ok(after.last >= lastSecond - 1, `rows up to the stop: ${summary}`);
  assert.is(after.seconds, after.last - after.first + 1, `no second missing: ${summary}`);
  await api.rowsStored();
  assert.equal(await storedTwice(client, 'audio_seconds', ['second'], id), [], `each second stored once: ${summary}`);

  const reply = await api.api('GET', `/v1/sessions/${id}/audio/features?granularity=5`);
  assert.is(reply.status, 200, JSON.stringify(reply.body));
  assert.ok(reply.body.timeline.length >= Math.floor((after.last - after.first) / 5), JSON.stringify(reply.body));
  passed = true;
});

test.run();
