// Timeline query latency on long sessions: audio features of a 12-hour session among 100 such
// sessions (4.32 M rows), and the emotions timeline of 12-hour sessions with two faces every
// second, through the query functions the API uses. Rows are generated inside ClickHouse
// (INSERT ... SELECT from numbers()), one part per million rows or so, as the writer leaves them.
import type { ClickHouseClient, QueryParams } from '@clickhouse/client';
import { EMOTION_KEYS, newSessionId, sessionDay } from '../../bus/index.ts';
import { audioFeatures, emotionsTimeline, literal, type Window } from '../../storage/index.ts';
import { startBenchStack, type BenchStack } from './lib/stack.ts';
import { cpuSecondsOf, elapsedMs, fixed, percentile, printTable } from './lib/stats.ts';

const SESSIONS = 100;
const SECONDS = 12 * 3600;
const FACES = 2;
const RUNS = 50;
const SERVER_RUNS = 20;
const AUDIO_TARGET_MS = 50;
const EMOTIONS_TARGET_MS = 100;

/** The session of generated row `number`, when each session has `perSession` consecutive rows. */
function sessionOf(ids: readonly string[], perSession: number): string {
  return `arrayElement(${literal(ids)}, toUInt32(intDiv(number, ${perSession}) + 1))`;
}

async function insertAudio(stack: BenchStack, ids: readonly string[]): Promise<void> {
  await stack.clickhouse.command({
    query: `INSERT INTO audio_seconds (session, second, frequency, intensity, voiced, speech, day)
      SELECT ${sessionOf(ids, SECONDS)}, toUInt32(number % ${SECONDS}),
        toFloat32(if(h % 4 = 0, 0, 80 + h % 220)), toFloat32(-12 - (h % 480) / 10),
        toFloat32(if(h % 4 = 0, 0, (h % 100) / 100)), toFloat32((intHash32(number) % 100) / 100),
        toDate(${literal(sessionDay(ids[0]!))})
      FROM (SELECT number, intHash64(number) AS h FROM numbers(${ids.length * SECONDS}))`,
  });
}

async function insertFaces(stack: BenchStack, ids: readonly string[]): Promise<void> {
  const day = `toDate(${literal(sessionDay(ids[0]!))})`;
  // The dominant emotion gets 0.55..0.95, the rest share what is left.
  const probabilities = EMOTION_KEYS.map((_, k) => `toFloat32(if(d = ${k}, p, (1 - p) / 6))`).join(', ');
  await stack.clickhouse.command({
    query: `INSERT INTO face_seconds (session, second, track, ${EMOTION_KEYS.join(', ')}, dominant, frames, day)
      SELECT ${sessionOf(ids, SECONDS * FACES)}, toUInt32(intDiv(number % ${SECONDS * FACES}, ${FACES})),
        toUInt32(number % ${FACES} + 1000 * intDiv(number % ${SECONDS * FACES}, 3600 * ${FACES})),
        ${probabilities}, arrayElement(${literal([...EMOTION_KEYS])}, d + 1), toUInt16(4), ${day}
      FROM (SELECT number, intHash64(intDiv(number, 20)) % 7 AS d, 0.55 + (intHash32(number) % 40) / 100 AS p
            FROM numbers(${ids.length * SECONDS * FACES}))`,
  });
  await stack.clickhouse.command({
    query: `INSERT INTO video_seconds (session, second, frames, faces, dropped, day)
      SELECT ${sessionOf(ids, SECONDS)}, toUInt32(number % ${SECONDS}), toUInt16(4), toUInt16(${FACES}), toUInt16(0), ${day}
      FROM numbers(${ids.length * SECONDS})`,
  });
}

async function activeParts(stack: BenchStack, table: string): Promise<number> {
  const result = await stack.clickhouse.query({
    query: `SELECT count() AS parts FROM system.parts WHERE active AND database = currentDatabase() AND table = ${literal(table)}`,
    format: 'JSONEachRow',
  });
  return Number((await result.json<{ parts: number }>())[0]!.parts);
}

/** The client, remembering the SQL of every query made through it. */
function recordingQueries(client: ClickHouseClient): { client: ClickHouseClient; take: () => string[] } {
  let statements: string[] = [];
  const recording = new Proxy(client, {
    get(target, property, receiver) {
      if (property !== 'query') return Reflect.get(target, property, receiver);
      return (params: QueryParams) => {
        statements.push(params.query);
        return target.query(params);
      };
    },
  });
  return {
    client: recording,
    take: () => {
      const taken = statements;
      statements = [];
      return taken;
    },
  };
}

/** Median time ClickHouse itself reports for a statement (its JSON output's statistics). */
async function serverMs(client: ClickHouseClient, statement: string): Promise<number> {
  const elapsed: number[] = [];
  for (let i = 0; i < SERVER_RUNS; i++) {
    const result = await client.query({ query: statement, format: 'JSON' });
    elapsed.push(1000 * ((await result.json()).statistics?.elapsed ?? NaN));
  }
  return percentile(elapsed, 50);
}

async function latencies(run: () => Promise<unknown[]>): Promise<{ ms: number[]; entries: number }> {
  const entries = (await run()).length; // warm-up: first read of the marks and columns
  const ms: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const started = performance.now();
    await run();
    ms.push(elapsedMs(started));
  }
  return { ms, entries };
}

const stack = await startBenchStack('queries', false);
try {
  const audioIds = Array.from({ length: SESSIONS }, () => newSessionId());
  const faceIds = Array.from({ length: SESSIONS }, () => newSessionId());
  const audioLoad = await cpuSecondsOf(() => insertAudio(stack, audioIds));
  const faceLoad = await cpuSecondsOf(() => insertFaces(stack, faceIds));
  console.log(
    `loaded ${SESSIONS} x ${SECONDS} audio rows in ${fixed(audioLoad.wallSeconds)} s; ` +
      `${SESSIONS} x ${SECONDS * FACES} face rows + ${SESSIONS} x ${SECONDS} video rows in ${fixed(faceLoad.wallSeconds)} s; ` +
      `active parts: audio ${await activeParts(stack, 'audio_seconds')}, face ${await activeParts(stack, 'face_seconds')}, video ${await activeParts(stack, 'video_seconds')}`,
  );

  const window = (session: string, granularity: number): Window => ({ session, granularity, start: 0, end: SECONDS });
  const middle = Math.floor(SESSIONS / 2);
  const rows: string[][] = [];
  const recorder = recordingQueries(stack.clickhouse);
  const measure = async (name: string, granularity: number, targetMs: number, run: () => Promise<unknown[]>) => {
    const { ms, entries } = await latencies(run);
    const p95 = percentile(ms, 95);
    const statements = [...new Set(recorder.take())];
    const server: number[] = [];
    for (const statement of statements) server.push(await serverMs(stack.clickhouse, statement));
    rows.push([
      name,
      String(granularity),
      String(entries),
      fixed(percentile(ms, 50)),
      fixed(p95),
      fixed(Math.max(...ms)),
      server.map((value) => fixed(value)).join(' + '),
      `< ${targetMs} ms: ${p95 < targetMs ? 'met' : `missed by ${fixed(p95 - targetMs)} ms`}`,
    ]);
  };
  for (const granularity of [5, 60, 3600]) {
    await measure('audio features', granularity, AUDIO_TARGET_MS, () => audioFeatures(recorder.client, window(audioIds[middle]!, granularity)));
  }
  for (const granularity of [5, 60, 3600]) {
    await measure(`emotions (${FACES} faces)`, granularity, EMOTIONS_TARGET_MS, () =>
      emotionsTimeline(recorder.client, window(faceIds[middle]!, granularity)),
    );
  }
  printTable(
    `Timeline queries over a whole 12-hour session (${RUNS} runs each after one warm-up; ${SESSIONS} sessions per table; ClickHouse 18.16, FINAL)`,
    ['query', 'granularity s', 'entries', 'p50 ms', 'p95 ms', 'max ms', 'of which in ClickHouse, p50 ms per statement', 'target'],
    rows,
  );
} finally {
  await stack.stop();
}
