// Every statement the project runs or documents, on ClickHouse 18.16 (the test server, one
// server or a cluster) and on a current release (26.x, embedded by chdb), with the same results: the migrations, the writer's
// inserts, the session index, every timeline, list, events and transcript read, a session's
// deletion, and each analyst query of docs/analysts.md.
import { mkdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { test } from '../../ops/support/uvu.ts';
import * as assert from 'uvu/assert';
import { readConfig } from '../../bus/config.ts';
import { EMOTION_KEYS, type AudioSecond, type CustomEvent, type FaceSecond, type SpeechSegment, type VideoSecond } from '../../bus/contracts/rows.ts';
import type { SessionRecord } from '../../bus/contracts/session.ts';
import { newId, newSessionId } from '../../bus/ids.ts';
import type { RowKind } from '../../bus/subjects.ts';
import { analystQueries } from '../../ops/support/analyst-queries.ts';
import { clickHouseServer, connectClickHouse, queryRows, type ClickHouseClient } from '../../storage/clickhouse/clickhouse.ts';
import { listEvents } from '../../storage/results/events.ts';
import { ClusterNodes } from '../../storage/schema/cluster-nodes.ts';
import { migrate, SHARD_PROBE } from '../../storage/schema/migrations.ts';
import { deleteSessionRows } from '../../storage/purge/purge.ts';
import { Schema } from '../../storage/schema/schema.ts';
import { indexRow, indexSessions, listSessions } from '../../storage/sessions/sessions-index.ts';
import { columnsOf, tableOf } from '../../storage/schema/tables.ts';
import { audioFeatures, emotionTotals, emotionsTimeline, sentimentTimeline } from '../../storage/results/timelines.ts';
import { listSpeechSegments } from '../../storage/results/speech-segments.ts';
import { currentClickHouse, type CurrentClickHouse } from '../support/chdb-client.ts';

const config = readConfig();
const database = `emotions_versions_${process.pid}`;
const dir = join(config.varDir, 'test', `chdb-${process.pid}`);
const USER = `versions-${process.pid}`;
const DAY_MS = 86_400_000;

let old: ClickHouseClient;
let current: CurrentClickHouse;
const engines = () => [old, current.client];

/** Runs `read` on both engines and asserts the same answer; returns it. */
async function same<T>(what: string, read: (client: ClickHouseClient) => Promise<T>): Promise<T> {
  const [a, b] = await Promise.all(engines().map(read));
  assert.equal(normalised(b), normalised(a), `${what}: ClickHouse ${current.version} differs from 18.16`);
  return a as T;
}

// Float32 columns come back as the nearest double on one engine and as its shortest decimal on
// the other: compare at Float32 precision.
function normalised(value: unknown): unknown {
  if (typeof value === 'number') return Number.isInteger(value) ? value : Number(Math.fround(value).toPrecision(6));
  if (Array.isArray(value)) return value.map(normalised);
  if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, normalised(v)]));
  return value;
}

async function insertRows(kind: RowKind, rows: unknown[]): Promise<void> {
  for (const client of engines()) {
    await client.insert({ table: tableOf(kind), values: rows.map((row) => columnsOf(kind, row)), format: 'JSONEachRow' });
  }
}

function record(createdAt: number, overrides: Partial<SessionRecord> = {}): SessionRecord {
  return {
    id: newSessionId(createdAt),
    name: `session ${createdAt}`,
    type: 'live_analysis',
    state: 'finished',
    createdAt,
    finishedAt: createdAt + 600_000,
    stopReason: 'user_request',
    user: USER,
    product: 'tests',
    streamUri: 'rtmp://example.com/live/x',
    sensors: [],
    expiresAt: createdAt + 3_600_000,
    healthCheckAt: createdAt,
    workerState: 'finished',
    mediaSeconds: 600,
    ...overrides,
  };
}

const now = Date.now();
const sessions = Array.from({ length: 30 }, (_, i) => record(now - (30 - i) * DAY_MS / 3, i % 7 === 0 ? { state: 'active', finishedAt: undefined, stopReason: undefined, workerState: 'working' } : {}));
const analysed = sessions[sessions.length - 2]!;

test.before(async () => {
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  old = connectClickHouse(clickHouseServer(config), database);
  current = currentClickHouse(dir, database);
  const admin = connectClickHouse(clickHouseServer(config), null);
  const cluster = ClusterNodes.connect(clickHouseServer(config));
  try {
    await migrate(admin, database, cluster);
  } finally {
    await Promise.all([admin.close(), cluster?.close()]);
  }
  await migrate(current.client, database);

  // The index: each session as created, and a rename of some, as the hosts write it.
  for (const client of engines()) {
    for (const [i, session] of sessions.entries()) {
      await indexSessions(client, [indexRow(session, 1)]);
      if (i % 4 === 0) await indexSessions(client, [indexRow({ ...session, name: `renamed ${i}` }, 2)]);
    }
  }
  // One analysed session: two minutes of every kind of row.
  const id = analysed.id;
  const seconds = Array.from({ length: 120 }, (_, second) => second);
  await insertRows('audio', seconds.map((second): AudioSecond => ({
    session: id, second, frequency: second % 3 ? 110 + second : 0, intensity: -20 - (second % 10), voiced: (second % 5) / 5, speech: (second % 4) / 4,
    ...(second % 5 ? { voicedFrames: 6 * (second % 5), semitoneSum: 6 * (second % 5) * (second % 7), semitoneSquares: 6 * (second % 5) * ((second % 7) ** 2 + 1) } : {}),
    ...(second % 4 ? { speechSeconds: 0.2 * (second % 4), speechStart: second + 0.1, speechEnd: second + 0.1 + 0.25 * (second % 4) } : {}),
  })));
  await insertRows('video', seconds.map((second): VideoSecond => ({ session: id, second, frames: 4, faces: second % 3, dropped: second % 2 })));
  await insertRows('face', seconds.flatMap((second) => [1, 2].slice(0, (second % 3) || 1).map((track): FaceSecond => {
    const probabilities = EMOTION_KEYS.map((_, k) => (k === (second + track) % 7 ? 0.4 : 0.1));
    return { session: id, second, track, probabilities, dominant: EMOTION_KEYS[(second + track) % 7]!, frames: 4 };
  })));
  await insertRows('speech', Array.from({ length: 20 }, (_, i): SpeechSegment => ({
    session: id, start: i * 6 + 0.25, end: i * 6 + 4.5, text: `segment ${i}, it's "quoted"`, positive: 0.2, neutral: 0.7, negative: 0.1, compound: (i % 5) / 5 - 0.4,
  })));
  await insertRows('event', Array.from({ length: 50 }, (_, i): CustomEvent => ({
    id: newId(), session: id, source: i % 2 ? 'heart' : 'notes', user: USER, type: 'sensor_report', time: i * 2.5, data: i % 2 ? 60 + i : `note ${i}`,
  })));
});

test.after(async () => {
  await old?.command({ query: `DROP DATABASE IF EXISTS ${database}` }).catch(() => {});
  await old?.close();
  current?.close();
  rmSync(dir, { recursive: true, force: true });
});

test('the schema is the same on both', async () => {
  // On a cluster each table is a Distributed one over its `_local` twin, by design: the tables
  // queries name, and their columns, are what must match. The shard probe exists on a cluster only.
  const engine = config.clickhouseCluster ? '' : ', engine';
  const ours = (table: string) => `database = '${database}' AND NOT endsWith(${table}, '_local') AND ${table} != '${SHARD_PROBE}'`;
  const tables = await same('tables', (client) => queryRows<{ name: string }>(client, `SELECT name${engine} FROM system.tables WHERE ${ours('name')} ORDER BY name`));
  assert.ok(tables.length >= 10, JSON.stringify(tables));
  await same('columns', (client) =>
    queryRows(client, `SELECT table, name, type FROM system.columns WHERE ${ours('table')} ORDER BY table, name`));
});

test('timelines at several granularities, totals and the sentiment', async () => {
  for (const granularity of [1, 5, 60]) {
    const window = { session: analysed.id, granularity, start: 0, end: 125 };
    const audio = await same(`audio features @${granularity}`, (client) => audioFeatures(client, window));
    assert.ok(audio.length > 0);
    assert.ok(audio.some((e) => e.pitchVariability !== undefined && e.pauseRatio !== undefined && e.speakingRate !== undefined), JSON.stringify(audio));
    await same(`emotions @${granularity}`, (client) => emotionsTimeline(client, window));
    await same(`sentiment @${granularity}`, (client) => sentimentTimeline(client, window));
  }
  await same('a window inside', (client) => emotionsTimeline(client, { session: analysed.id, granularity: 7, start: 13, end: 50 }));
  const totals = await same('totals', (client) => emotionTotals(client, analysed.id));
  assert.ok(Object.values(totals).some((value) => value > 0));
});

test('transcript and events pages', async () => {
  for (const query of [{ start: 0, limit: 5, offset: 0 }, { start: 30, end: 90, limit: 100, offset: 3 }]) {
    const page = await same(`transcript ${JSON.stringify(query)}`, (client) => listSpeechSegments(client, { session: analysed.id, ...query }));
    assert.ok(page.data.length > 0);
  }
  for (const query of [
    { order: 'asc' as const, limit: 10, offset: 0 },
    { order: 'desc' as const, limit: 7, offset: 20 },
    { source: 'heart', from: 10, to: 80, order: 'asc' as const, limit: 100, offset: 0 },
  ]) {
    const page = await same(`events ${JSON.stringify(query)}`, (client) => listEvents(client, analysed.id, query));
    assert.ok(page.data.length > 0);
  }
});

test('session list pages: newest first, filters, offsets, date windows', async () => {
  const base = { user: USER, activeSinceMs: now - 40 * DAY_MS };
  for (const filter of [
    { limit: 10, offset: 0 },
    { limit: 4, offset: 9 },
    { limit: 5, offset: 22 },
    { limit: 10, offset: 25, type: 'live_analysis' as const },
    { limit: 100, offset: 0, state: 'active' as const },
    { limit: 5, offset: 0, state: 'finished' as const, type: 'live_analysis' as const },
    { limit: 10, offset: 0, fromMs: now - 6 * DAY_MS, toMs: now - 2 * DAY_MS },
  ]) {
    const page = await same(`list ${JSON.stringify(filter)}`, (client) => listSessions(client, { ...base, ...filter }));
    assert.ok(page.records.length > 0, JSON.stringify(filter));
  }
});

test("the analyst queries of docs/analysts.md", async () => {
  const queries = analystQueries(readFileSync(join(config.projectRoot, 'docs/analysts.md'), 'utf8'), { SESSION: analysed.id, USER });
  assert.ok(queries.length >= 4, `${queries.length} queries found`);
  // On a cluster an analyst sets distributed_product_mode = 'global', as docs/analysts.md says: a
  // subquery of the session index then reaches every shard of the results.
  const analyst = config.clickhouseCluster ? { distributed_product_mode: 'global' as const } : {};
  for (const { title, sql } of queries) {
    const rows = await same(title, async (client) =>
      (await client.query({ query: sql, format: 'JSONEachRow', clickhouse_settings: analyst })).json<Record<string, unknown>>());
    assert.ok(rows.length > 0, `${title}: no rows`);
  }
});

test("a session's deletion removes its rows on both", async () => {
  // The old engine may be a cluster (CLICKHOUSE_CLUSTER): its deletions go to the local tables.
  const schemas = [new Schema(database, config.clickhouseCluster), new Schema(database)];
  for (const [i, client] of engines().entries()) await deleteSessionRows(client, schemas[i]!, analysed, Date.now() + 90_000);
  for (const table of ['audio_seconds', 'video_seconds', 'face_seconds', 'speech_segments', 'custom_events']) {
    const count = async (client: ClickHouseClient) => {
      for (let attempt = 0; attempt < 100; attempt++) {
        const [row] = await queryRows<{ n: number }>(client, `SELECT count() AS n FROM ${table} WHERE session = '${analysed.id}'`);
        if (Number(row?.n) === 0) return 0;
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      return -1;
    };
    assert.equal(await Promise.all(engines().map(count)), [0, 0], table);
  }
});

test.run();
