// A real stream, watched live: a happy face and a 220 Hz tone published over RTMP, analysed by
// a session, its live channels followed over the WebSocket API at 1 s. Then the analysts'
// queries of the documentation run against the rows it left in ClickHouse.
import { test } from '../../ops/support/uvu.ts';
import * as assert from 'uvu/assert';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { readConfig } from '../../bus/config.ts';
import { readOpsConfig } from '../../ops/ops-config.ts';
import { connectClickHouse, queryRows, clickHouseServer } from '../../storage/clickhouse/clickhouse.ts';
import { sql } from '../../storage/clickhouse/sql.ts';
import { analystQueries } from '../../ops/support/analyst-queries.ts';
import { WsClient, type PushedEvent } from '../../ops/support/ws-client.ts';
import { makeClip } from '../support/clips.ts';
import { freePort } from '../../ops/stack/ports.ts';
import { publish, waitForStream, type Publisher } from '../../ops/support/streams/publish.ts';
import { startRtmpServer, type RtmpServer } from '../../ops/support/streams/rtmp-server.ts';
import { startServices, type Services } from '../../ops/support/services.ts';

const config = readConfig();
const tooling = readOpsConfig();

const TONE_HZ = 220;
let services: Services;
let rtmp: RtmpServer;
let publisher: Publisher;
let client: WsClient;
let session: string;

test.before(async () => {
  const clip = await makeClip(
    {
      width: 640, height: 480, seconds: 10, fps: 10,
      video: { type: 'images', images: [{ image: join(tooling.mediaDir, 'faces', 'happy.jpg'), seconds: 10 }] },
      audio: { type: 'tones', tones: [{ hz: TONE_HZ, seconds: 10 }] },
    },
    join(config.varDir, 'test', 'clips'),
  );
  rtmp = await startRtmpServer({ dir: join(config.varDir, 'test', 'streams', `ws-live-${process.pid}`), rtmpPort: await freePort(), rtmpsPort: await freePort() });
  publisher = publish(clip, rtmp.url('happy'));
  await waitForStream(rtmp.url('happy'));
  services = await startServices({ name: 'ws-live' });
});

test.after(async () => {
  client?.close();
  await services?.stop();
  await publisher?.stop();
  await rtmp?.stop();
});

/** The events of one subscription, in order, until `count` arrived. */
async function collect(id: string, count: number, timeoutMs: number): Promise<PushedEvent[]> {
  const events: PushedEvent[] = [];
  while (events.length < count) events.push(await client.nextEvent(([sub]) => sub === id, timeoutMs));
  return events;
}

test('a running session delivers emotion counts and audio features every second', async () => {
  client = await WsClient.connect(`${services.baseUrl.replace('http', 'ws')}/ws/v1`, services.users.alice.token);
  const created = await services.api('POST', '/v1/sessions', { body: { name: 'live happy', streamUri: rtmp.url('happy') } });
  assert.is(created.status, 201, JSON.stringify(created.body));
  session = created.body._id;
  const state = await client.subscribe('session_worker_state', `${session}:1s`);
  const counts = await client.subscribe('session_emotions_counts', `${session}:1s`);
  const intensities = await client.subscribe('session_emotions_intensities', `${session}:1s`);
  const audio = await client.subscribe('session_audio_features', `${session}:1s`);

  const states: string[] = [];
  while (!states.includes('working')) states.push((await client.nextEvent(([sub]) => sub === state, 60_000))[3].state);

  // The first period may be partial; the next ones are the steady state. Messages go out on the
  // period's ticks only, and a second's rows that reach the gateway just after a tick wait for
  // the next one: that message covers two periods. So each message covers whole periods, and
  // the seconds the messages cover follow one another without a hole. (How promptly they come
  // depends on the machine: ops/bench/ws-fanout.ts measures it.)
  const countEvents = (await collect(counts, 8, 60_000)).slice(1);
  const spans = countEvents.map(([, , , payload]) => `${payload.from}-${payload.to}`);
  const seen = `seconds covered: ${spans.join(', ')}`;
  assert.ok(countEvents.every(([, , , payload]) => Number.isInteger(payload.to - payload.from) && payload.to - payload.from >= 1), seen);
  assert.ok(countEvents.slice(1).every(([, , , payload], i) => payload.from === (countEvents[i] as PushedEvent)[3].to), seen);
  for (const [, , type, payload] of countEvents) {
    assert.is(type, 'session_emotions_counts');
    const entries = Object.entries(payload.emotions as Record<string, number>);
    assert.is(entries.length, 7);
    const [top] = entries.sort((a, b) => b[1] - a[1]);
    assert.is(top?.[0], 'exaltation', JSON.stringify(payload));
    assert.ok(payload.faceSeconds >= 1 && payload.tracks >= 1);
    assert.ok(payload.to > payload.from);
  }

  const [, , , mean] = (await collect(intensities, 2, 10_000))[1] as PushedEvent;
  const strongest = Object.entries(mean.emotions as Record<string, number>).sort((a, b) => b[1] - a[1])[0];
  assert.is(strongest?.[0], 'exaltation');

  const audioEvents = (await collect(audio, 4, 30_000)).slice(1);
  for (const [, , type, payload] of audioEvents) {
    assert.is(type, 'session_audio_features');
    assert.ok(Math.abs(payload.frequency - TONE_HZ) < TONE_HZ * 0.05, `frequency ${payload.frequency}`);
    assert.ok(payload.intensity < -6 && payload.intensity > -40, `intensity ${payload.intensity}`);
    // A steady tone: its pitch does not move, and it is not speech.
    assert.ok(payload.pitchVariability >= 0 && payload.pitchVariability < 0.3, JSON.stringify(payload));
    assert.is(payload.speechSeconds, 0, JSON.stringify(payload));
    assert.is(payload.pauseRatio, undefined, JSON.stringify(payload));
  }
});

test("the analysts' queries run on the session's rows", async () => {
  const source = await services.api('POST', `/v1/sessions/${session}/events`, { body: { name: 'heart-rate', format: 'scalar' } });
  assert.is(source.status, 201);
  const now = (await services.api('GET', `/v1/sessions/${session}`)).body.duration as number;
  const second = Math.max(1, Math.floor(now) - 3);
  const posted = await services.api('POST', `/v1/sessions/${session}/events/${source.body.id}`, {
    body: [{ time: second + 0.25, data: 72 }, { time: second + 0.75, data: 80 }],
  });
  assert.is(posted.status, 201);
  const user = services.users.alice.user;
  // The queries of the analysts' documentation, word for word but for the bound values.
  const [analystSessionsSummary, analystEmotionsPerMinute, analystVoicePer10s, analystSpeech, analystEventsWithFaces] =
    analystQueries(readFileSync(join(config.projectRoot, 'docs/analysts.md'), 'utf8'), { SESSION: session, USER: user }).map((query) => query.sql);
  const clickhouse = connectClickHouse(clickHouseServer(config), config.clickhouseDatabase);
  try {
    // Rows reach ClickHouse through the writer: wait until the events are in.
    const deadline = Date.now() + 20_000;
    while ((await queryRows<{ n: number }>(clickhouse, sql`SELECT count() AS n FROM custom_events FINAL WHERE session = ${session}`))[0]?.n !== 2) {
      assert.ok(Date.now() < deadline, 'events stored');
      await new Promise((resolve) => setTimeout(resolve, 250));
    }

    const summary = await queryRows<any>(clickhouse, analystSessionsSummary!);
    const mine = summary.find((row) => row.id === session);
    assert.ok(mine, JSON.stringify(summary));
    assert.is(mine.name, 'live happy');
    assert.ok(Number(mine.face_seconds) >= 5 && Number(mine.audio_seconds) >= 5, JSON.stringify(mine));
    assert.is(mine.top_emotion, 'exaltation');
    assert.is(Number(mine.segments), 0, 'a tone has no speech');
    assert.is(Number(mine.events), 2);

    const timeline = await queryRows<any>(clickhouse, analystEmotionsPerMinute!);
    assert.ok(timeline.length >= 1);
    assert.ok(Number(timeline[0].exaltation_share) > 0.5, JSON.stringify(timeline[0]));

    const voice = await queryRows<any>(clickhouse, analystVoicePer10s!);
    assert.ok(voice.some((row) => Math.abs(Number(row.frequency_hz) - TONE_HZ) < 11), JSON.stringify(voice));

    const speech = await queryRows<any>(clickhouse, analystSpeech!);
    assert.equal(speech, []);

    // The face rows of those seconds may still be on their way to ClickHouse.
    let joined: any[] = [];
    const facesDeadline = Date.now() + 20_000;
    for (;;) {
      joined = await queryRows<any>(clickhouse, analystEventsWithFaces!);
      if (joined.every((row) => Number(row.face_seconds) >= 1) || Date.now() > facesDeadline) break;
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
    assert.equal(joined.map((row) => [Number(row.second), Number(row.value)]), [[second, 72], [second, 80]]);
    assert.ok(joined.every((row) => Number(row.face_seconds) >= 1 && Number(row.exaltation) > 0.5), JSON.stringify(joined));
    assert.ok(joined.every((row) => typeof row.at === 'string' && row.at.length === 19), JSON.stringify(joined));
  } finally {
    await clickhouse.close();
  }
});

test.run();
