// A face thread that cannot keep up does less for the stream that costs it most, in two steps,
// before it drops more frames, says so per stream, and the stream's stored seconds say the
// effort they were analysed at (actors/face/face-effort.ts). The real service, one live stream
// of six faces analysed at 60 frames a second: more than one thread can analyse at full effort
// on any machine. Its faces are large enough to be found at 320 px, so nothing holds it at a
// heavier step. Stepping back up once calm is the unit test's (test/unit/face-effort.test.ts):
// here the only stream is the load.
import { test } from '../../ops/support/uvu.ts';
import * as assert from 'uvu/assert';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { readConfig } from '../../bus/config.ts';
import { readOpsConfig } from '../../ops/ops-config.ts';
import { waitUntil } from '../../ops/stack/process.ts';
import { parsePrometheusText, total } from '../../ops/support/prometheus-text.ts';
import type { RtmpServer } from '../../ops/support/streams/rtmp-server.ts';
import { startServices, type Services } from '../../ops/support/services.ts';
import { clipsDir, settled, startLiveSession, startStreamServer, stopSession, type LiveSession } from '../support/analysis.ts';
import { makeClip } from '../support/clips.ts';
import { httpRequest } from '../../ops/stack/http-client.ts';

const config = readConfig();
const tooling = readOpsConfig();
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
      video: { type: 'images', images: [{ image: join(tooling.mediaDir, 'faces', 'faces.jpg'), seconds: 10 }] },
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
  const response = await httpRequest(`${services.metrics.hosts[0]}/metrics`);
  return total(parsePrometheusText(response.text), name) ?? 0;
}

const hostLog = () => readFileSync(join(config.varDir, 'test', 'services', `${NAME}-${process.pid}`, `${NAME}-host-1.log`), 'utf8');

test('an overloaded face thread lowers its stream in two steps, keeps analysing, and the stored seconds say so', async () => {
  assert.is(await hostMetric('emo_face_streams_reduced'), 0, 'full effort at the start');
  live = await startLiveSession(services, rtmp!, NAME, clip);

  // Even the lightest step does not keep up with 60 frames a second of six faces.
  await waitUntil('the stream two steps down', async () => (await hostMetric('emo_face_effort_reductions_total')) === 2, 60_000);
  assert.is(await hostMetric('emo_face_streams_reduced'), 1, 'one stream below full effort');
  // The log says which stream and what effort; its line may reach the file a moment after the metric moved.
  const session = `"session":"${live.id}"`;
  const logged = (step: string, pattern: RegExp) => waitUntil(`the host's log to tell ${step}`, async () => pattern.test(hostLog()), 10_000);
  await logged('step 1', new RegExp(`${session},"stepsBelowFull":1,"effort":\\{"detectionWidth":480,"classifyEvery":2\\}.*face analysis behind: reduced effort for a stream`));
  await logged('step 2', new RegExp(`${session},"stepsBelowFull":2,"effort":\\{"detectionWidth":320,"classifyEvery":2\\}.*face analysis behind: reduced effort for a stream`));
  const analysed = await hostMetric('emo_frames_analysed_total');
  await waitUntil('frames analysed at the lightest step', async () => (await hostMetric('emo_frames_analysed_total')) > analysed + 20, 30_000);
  // The two steps may come a second apart (a stream this heavy is also over its session budget,
  // which lowers it a step a second): it runs until five reduced seconds are stored.
  const storedReduced = async () => {
    const reply = await services.api('GET', `/v1/sessions/${live!.id}/emotions/timeline?granularity=10`);
    return (reply.body.timeline ?? []).reduce((sum: number, entry: { reducedEffortSeconds?: number }) => sum + (entry.reducedEffortSeconds ?? 0), 0);
  };
  await waitUntil('five seconds stored as analysed below full effort', async () => (await storedReduced()) >= 5, 60_000);

  // A stream that ends leaves the count of reduced streams.
  await stopSession(services, live.id);
  await waitUntil('no stream below full effort', async () => (await hostMetric('emo_face_streams_reduced')) === 0, 60_000);
  // The log is written a moment after the metric.
  const backToFull = new RegExp(`${session},"msg":"face analysis at full effort for a stream again"`);
  await waitUntil('the log line of the stream back at full effort', async () => backToFull.test(hostLog()), 10_000);
  const { timeline } = await settled(services, `/v1/sessions/${live.id}/emotions/timeline?granularity=10`);
  const reduced = timeline.reduce((sum: number, entry: { reducedEffortSeconds?: number }) => sum + (entry.reducedEffortSeconds ?? 0), 0);
  assert.ok(reduced >= 5, `the seconds analysed below full effort are stored as such: ${JSON.stringify(timeline)}`);
});

test.run();
