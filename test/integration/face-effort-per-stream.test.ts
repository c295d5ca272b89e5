// Face effort per stream (actors/face/face-effort.ts): three live streams load one host's face
// thread past what it keeps up with (and past one session's budget). The heavy one (six large
// faces) is lowered to the lightest step. Four people whose faces are 32 px wide in 1280x720
// (about 16 px boxes in the 640 px analysis frame, 12 px at 480: ops/bench/face-floor.ts) keep
// full effort and their count; four 48 px faces (18 px at 480, 12 px at 320) go to 480 px at
// most and keep their count. The stored video seconds say the effort of each stream's seconds.
import { test } from '../../ops/support/uvu.ts';
import * as assert from 'uvu/assert';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { loadAnalysisModels } from '../../actors/face/analysis-models.ts';
import { readConfig } from '../../bus/config.ts';
import { readOpsConfig } from '../../ops/ops-config.ts';
import { waitUntil } from '../../ops/stack/process.ts';
import { FOUR_FACES_FRAME, writeFourFaces } from '../../ops/support/four-faces.ts';
import type { RtmpServer } from '../../ops/support/streams/rtmp-server.ts';
import { startServices, type Services } from '../../ops/support/services.ts';
import { clickHouseServer, connectClickHouse, queryRows, type ClickHouseClient } from '../../storage/clickhouse/clickhouse.ts';
import { sql } from '../../storage/clickhouse/sql.ts';
import { clipsDir, settled, startLiveSession, startStreamServer, stopSession, type LiveSession } from '../support/analysis.ts';
import { makeClip } from '../support/clips.ts';

const config = readConfig();
const tooling = readOpsConfig();
const NAME = 'face-effort-per-stream';
/** Intervals of the emotions timeline read back. */
const INTERVAL = 5;

let services: Services;
let rtmp: RtmpServer | undefined;
let clickhouse: ClickHouseClient;
const live: LiveSession[] = [];

async function fourFaces(faceWidth: number): Promise<string> {
  const dir = join(clipsDir, 'four-faces');
  mkdirSync(dir, { recursive: true });
  const path = join(dir, `four-faces-${faceWidth}px-${process.pid}.png`);
  const { faces: models } = await loadAnalysisModels(config.modelsDir);
  await writeFourFaces(models.detector, faceWidth, path, tooling.mediaDir, config.ffmpegPath);
  return path;
}

async function clipOf(image: string, width: number, height: number): Promise<string> {
  return makeClip(
    { width, height, seconds: 10, fps: 30, video: { type: 'images', images: [{ image, seconds: 10 }] }, audio: { type: 'silence' } },
    clipsDir,
  );
}

interface StoredSeconds {
  seconds: number;
  maxEffort: number;
  reduced: number;
  /** Seconds analysed below full effort in which all four people were seen in one frame. */
  reducedWithAll: number;
}

async function storedSeconds(session: string): Promise<StoredSeconds> {
  const [row] = await queryRows<StoredSeconds>(
    clickhouse,
    `SELECT count() AS seconds, max(effort) AS maxEffort, countIf(effort > 0) AS reduced, countIf(effort > 0 AND faces >= 4) AS reducedWithAll
     FROM video_seconds FINAL WHERE ${sql`session = ${session}`}`,
  );
  return { seconds: Number(row!.seconds), maxEffort: Number(row!.maxEffort), reduced: Number(row!.reduced), reducedWithAll: Number(row!.reducedWithAll) };
}

test.before(async () => {
  services = await startServices({
    name: NAME,
    // A long calm: no stream steps back up while the test watches the load.
    env: { ANALYSIS_FPS: '30', FACE_EFFORT_CALM_SECONDS: '600' },
  });
  rtmp = await startStreamServer(NAME);
  clickhouse = connectClickHouse(clickHouseServer(config), config.clickhouseDatabase);
});

test.after(async () => {
  await services?.stop();
  for (const session of live) await session.publisher.stop();
  await rtmp?.stop();
  await clickhouse?.close();
});

test('the heavy stream is lowered; 48 px faces keep 480 px and their count; 32 px faces keep full effort and theirs', async () => {
  const { width, height } = FOUR_FACES_FRAME;
  const clips = {
    small: await clipOf(await fourFaces(48), width, height),
    smaller: await clipOf(await fourFaces(32), width, height),
    heavy: await clipOf(join(tooling.mediaDir, 'faces', 'faces.jpg'), 640, 426),
  };
  // All at once: once the thread is saturated (every stream at its floor) the host takes no new session.
  live.push(...(await Promise.all((['small', 'smaller', 'heavy'] as const).map((name) => startLiveSession(services, rtmp!, `${NAME}-${name}`, clips[name])))));
  const [smallSession, smallerSession, heavySession] = live.map((session) => session.id) as [string, string, string];

  await waitUntil('the heavy stream at the lightest step', async () => (await storedSeconds(heavySession)).maxEffort === 2, 120_000);
  // Three more intervals under load.
  const loaded = (await storedSeconds(smallSession)).seconds;
  await waitUntil('three intervals more analysed', async () => (await storedSeconds(smallSession)).seconds >= loaded + 3 * INTERVAL, 120_000);
  for (const session of live) await stopSession(services, session.id);
  await services.rowsStored();

  const [smallRows, smallerRows, heavyRows] = (await Promise.all(live.map((session) => storedSeconds(session.id)))) as [StoredSeconds, StoredSeconds, StoredSeconds];
  const facts = JSON.stringify({ small: smallRows, smaller: smallerRows, heavy: heavyRows });
  assert.is(heavyRows.maxEffort, 2, facts);
  assert.ok(smallRows.maxEffort <= 1, `the 48 px faces never went to 320 px: ${facts}`);
  assert.is(smallerRows.maxEffort, 0, `the 32 px faces are too small for 480 px: never lowered, every second says full effort: ${facts}`);
  assert.is(smallerRows.reduced, 0, facts);
  if (smallRows.reduced > 0) {
    assert.ok(smallRows.reducedWithAll >= 0.9 * smallRows.reduced, `at 480 px all four people are seen in a frame of nearly every second: ${facts}`);
  }

  // The API: no interval of the small faces' stream loses a person, and only the lowered
  // streams' intervals say they were analysed with reduced effort.
  for (const [session, people] of [[smallSession, 4], [smallerSession, 4]] as const) {
    const { timeline } = await settled(services, `/v1/sessions/${session}/emotions/timeline?granularity=${INTERVAL}`);
    const whole = timeline.slice(1, -1) as { start: number; detectedFaces: number; reducedEffortSeconds?: number }[];
    assert.ok(whole.length >= 3, JSON.stringify(timeline));
    for (const entry of whole) assert.ok(entry.detectedFaces >= people, `every person counted in ${JSON.stringify(entry)}`);
    if (session === smallerSession) assert.not.ok(timeline.some((entry: object) => 'reducedEffortSeconds' in entry), JSON.stringify(timeline));
  }
  const heavy = await settled(services, `/v1/sessions/${heavySession}/emotions/timeline?granularity=${INTERVAL}`);
  assert.ok(heavy.timeline.some((entry: { reducedEffortSeconds?: number }) => (entry.reducedEffortSeconds ?? 0) > 0), JSON.stringify(heavy.timeline));
});

test.run();
