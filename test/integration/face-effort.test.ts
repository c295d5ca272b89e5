// A face thread that cannot keep up does less per frame before it drops more frames, says so,
// and goes back to full effort once it keeps up again (actors/face/face-effort.ts). The real
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
/** actors/face/face-effort.ts: reduced effort lasts at least this long once the thread is calm. */
const STAY_REDUCED_MS = 20_000;

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
  services = await startServices({ name: NAME, env: { ANALYSIS_FPS: '60' } });
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

test('an overloaded face thread reduces its effort, keeps analysing, and returns to full effort once calm', async () => {
  assert.is(await hostMetric('emo_face_effort_reduced'), 0, 'full effort at the start');
  live = await startLiveSession(services, rtmp!, NAME, clip);

  await waitUntil('the face thread at reduced effort', async () => (await hostMetric('emo_face_effort_reduced')) === 1, 60_000);
  assert.ok((await hostMetric('emo_face_effort_reductions_total')) >= 1);
  assert.match(hostLog(), /face analysis behind: reduced effort per frame/);
  assert.match(hostLog(), /"detectionWidth":480,"classifyEvery":2/, 'the log says what effort');
  const analysed = await hostMetric('emo_frames_analysed_total');
  await waitUntil('frames analysed at reduced effort', async () => (await hostMetric('emo_frames_analysed_total')) > analysed + 20, 30_000);

  // The thread is overloaded until its frames stop, after this: its calm cannot start earlier
  // (the second before its first calm review counts, hence the 1.5 s).
  const stoppingAt = Date.now();
  await stopSession(services, live.id);
  await waitUntil('the face thread back at full effort', async () => (await hostMetric('emo_face_effort_reduced')) === 0, STAY_REDUCED_MS + 30_000);
  const waited = Date.now() - stoppingAt;
  assert.ok(waited >= STAY_REDUCED_MS - 1500, `back ${waited} ms after the stop: it waits for 20 s of calm`);
  assert.match(hostLog(), /face analysis keeps up: full effort per frame again/);
});

test.run();
