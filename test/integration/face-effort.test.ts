// A face thread that cannot keep up does less per frame, in two steps, before it drops more
// frames, says so, and goes back up to full effort, a step at a time, once it keeps up again
// (actors/face/face-effort.ts). The real
// service, one live stream of six faces analysed at 60 frames a second: more than one thread
// can analyse at full effort on any machine.
import { test } from '../support/uvu.ts';
import * as assert from 'uvu/assert';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { readConfig } from '../../bus/config.ts';
import { waitUntil } from '../../ops/stack/process.ts';
import { parsePrometheusText, total } from '../../ops/support/prometheus-text.ts';
import type { RtmpServer } from '../../ops/support/streams/rtmp-server.ts';
import { startServices, type Services } from '../../ops/support/services.ts';
import { clipsDir, startLiveSession, startStreamServer, stopSession, type LiveSession } from '../support/analysis.ts';
import { makeClip } from '../support/clips.ts';

const config = readConfig();
const NAME = 'face-effort';
/** Each lighter step lasts at least this long once the thread is calm (FACE_EFFORT_CALM_SECONDS). */
const CALM_SECONDS = 4;

let services: Services;
let rtmp: RtmpServer | undefined;
let live: LiveSession | undefined;
let clip: string;

test.before(async () => {
  clip = await makeClip(
    {
      width: 640, height: 426, seconds: 10, fps: 30,
      video: { type: 'images', images: [{ image: join(config.mediaDir, 'faces', 'faces.jpg'), seconds: 10 }] },
      audio: { type: 'silence' },
    },
    clipsDir,
  );
  services = await startServices({ name: NAME, env: { ANALYSIS_FPS: '60', FACE_EFFORT_CALM_SECONDS: String(CALM_SECONDS) } });
  rtmp = await startStreamServer(NAME);
});

test.after(async () => {
  await services?.stop();
  await live?.publisher.stop();
  await rtmp?.stop();
});

async function hostMetric(name: string): Promise<number> {
  const response = await fetch(`${services.metrics.hosts[0]}/metrics`);
  return total(parsePrometheusText(await response.text()), name) ?? 0;
}

const hostLog = () => readFileSync(join(config.varDir, 'test', 'services', `${NAME}-${process.pid}`, `${NAME}-host-1.log`), 'utf8');

test('an overloaded face thread reduces its effort in two steps, keeps analysing, and returns to full effort once calm', async () => {
  assert.is(await hostMetric('emo_face_effort_reduced'), 0, 'full effort at the start');
  live = await startLiveSession(services, rtmp!, NAME, clip);

  // Even the lightest step does not keep up with 60 frames a second of six faces.
  await waitUntil('the face thread two steps down', async () => (await hostMetric('emo_face_effort_reduced')) === 2, 60_000);
  assert.is(await hostMetric('emo_face_effort_reductions_total'), 2);
  assert.match(hostLog(), /"stepsBelowFull":1,"effort":\{"detectionWidth":480,"classifyEvery":2\}.*face analysis behind: reduced effort per frame/, 'the log says what effort');
  assert.match(hostLog(), /"stepsBelowFull":2,"effort":\{"detectionWidth":320,"classifyEvery":2\}.*face analysis behind: reduced effort per frame/);
  const analysed = await hostMetric('emo_frames_analysed_total');
  await waitUntil('frames analysed at the lightest step', async () => (await hostMetric('emo_frames_analysed_total')) > analysed + 20, 30_000);

  // Once its frames stop, the thread is calm: back up a step at a time (how long each step waits
  // for calm is the unit test's, on a fake clock).
  await stopSession(services, live.id);
  await waitUntil('the face thread one step down', async () => (await hostMetric('emo_face_effort_reduced')) === 1, 60_000);
  assert.match(hostLog(), /face analysis keeps up better: more effort per frame/);
  await waitUntil('the face thread back at full effort', async () => (await hostMetric('emo_face_effort_reduced')) === 0, 60_000);
  assert.match(hostLog(), /face analysis keeps up: full effort per frame again/);
});

test.run();
