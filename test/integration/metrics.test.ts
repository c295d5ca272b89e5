// Metrics, liveness and readiness of the real processes: a session on a live stream (a happy
// face and a spoken sentence) and a few REST calls, then each process's /metrics read back:
// frames analysed, inference per model, rows published and written, REST requests by route
// pattern and status, bus requests on both sides. And a process that cannot reach NATS yet
// is alive but not ready.
import { test } from '../../ops/support/uvu.ts';
import * as assert from 'uvu/assert';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { readConfig } from '../../bus/config.ts';
import { readOpsConfig } from '../../ops/ops-config.ts';
import { freePort } from '../../ops/stack/ports.ts';
import { startService, waitUntil } from '../../ops/stack/process.ts';
import { serviceArgs } from '../../ops/stack/service-process.ts';
import { startServices, type Services } from '../../ops/support/services.ts';
import { clipsDir, mediaSeconds, runFor, startLiveSession, startStreamServer, stopSession, type LiveSession } from '../support/analysis.ts';
import { makeClip, speak } from '../support/clips.ts';
import { parsePrometheusText, select, total, type Sample } from '../../ops/support/prometheus-text.ts';
import type { RtmpServer } from '../../ops/support/streams/rtmp-server.ts';
import { httpRequest } from '../../ops/stack/http-client.ts';

const config = readConfig();
const tooling = readOpsConfig();
const MISSING = '0'.repeat(24);
const SESSION_ROUTE = '/v1/sessions/:sessionId';

let services: Services;
let rtmp: RtmpServer | undefined;
let live: LiveSession | undefined;
let clip: string;

test.before(async () => {
  const sentence = await speak('What a great and wonderful day. I am so happy.', join(clipsDir, 'speech'));
  const seconds = Math.ceil(mediaSeconds(sentence) + 2);
  clip = await makeClip(
    {
      width: 640, height: 480, seconds, fps: 10,
      video: { type: 'images', images: [{ image: join(tooling.mediaDir, 'faces', 'happy.jpg'), seconds }] },
      audio: { type: 'wavs', parts: [{ wav: sentence }, { silence: 2 }] },
    },
    clipsDir,
  );
  services = await startServices({ name: 'metrics' });
  rtmp = await startStreamServer('metrics');
});

test.after(async () => {
  await services?.stop();
  await live?.publisher.stop();
  await rtmp?.stop();
});

async function scrape(base: string): Promise<Sample[]> {
  const response = await httpRequest(`${base}/metrics`);
  assert.is(response.status, 200);
  return parsePrometheusText(response.text);
}

/** Scrapes until `check` holds for the samples (counters move as rows and seconds complete). */
async function scrapeUntil(base: string, what: string, check: (samples: Sample[]) => boolean, timeoutMs = 30_000): Promise<Sample[]> {
  let samples: Sample[] = [];
  await waitUntil(what, async () => check((samples = await scrape(base))), timeoutMs).catch((error: Error) => {
    throw new Error(`${error.message}; last scrape: ${samples.filter((s) => s.name.startsWith('emo_')).map((s) => `${s.name}${JSON.stringify(s.labels)} ${s.value}`).join('\n')}`);
  });
  return samples;
}

const status = async (url: string) => (await httpRequest(url)).status;
const count = (samples: Sample[], name: string, labels: Record<string, string> = {}) => total(samples, name, labels) ?? 0;

test('every process is alive and ready once it serves', async () => {
  for (const base of [services.metrics.gateway, services.metrics.storage, ...services.metrics.hosts]) {
    assert.is(await status(`${base}/livez`), 200, base);
    assert.is(await status(`${base}/readyz`), 200, base);
    const samples = await scrape(base);
    assert.ok(count(samples, 'process_cpu_user_seconds_total') > 0, 'process metrics');
    assert.ok(select(samples, 'nodejs_eventloop_lag_seconds').length > 0, 'event loop metrics');
  }
});

test('a live session and REST calls show in the metrics of each process', async () => {
  live = await startLiveSession(services, rtmp!, 'metrics', clip);
  const host = services.metrics.hosts[0]!;
  const working = await scrape(host);
  assert.is(count(working, 'emo_sessions_active'), 1);
  assert.is(count(working, 'emo_sessions_worker_state', { state: 'working' }), 1);
  assert.is(count(working, 'emo_sessions_worker_state', { state: 'reconnecting' }), 0);

  assert.is((await services.api('GET', `/v1/sessions/${live.id}`)).status, 200);
  assert.is((await services.api('GET', `/v1/sessions/${MISSING}`)).status, 404);
  assert.is((await services.api('GET', '/v1/sessions')).status, 200);
  assert.is((await services.api('GET', '/v1/sessions', { token: 'wrong' })).status, 401);
  await runFor(services, live.id, 8);

  // The host's first segment loads the transcriber's model (1-2 s on a quiet machine,
  // half a minute and more with a core kept busy by other work): waited for, not timed.
  const hostSamples = await scrapeUntil(host, 'the host analysing and transcribing', (samples) =>
    count(samples, 'emo_frames_analysed_total') > 0 &&
    ['face_detector', 'expressions', 'voice_activity', 'speech'].every((model) =>
      count(samples, 'emo_inference_duration_seconds_count', { model }) > 0) &&
    count(samples, 'emo_rows_published_total') > 0,
  120_000);
  assert.ok(count(hostSamples, 'emo_frames_dropped_total') >= 0);
  assert.is(count(hostSamples, 'emo_speech_segments_dropped_total'), 0);
  // Every segment transcribed first waited for the thread; one session's speech waits for no other.
  const speechWaits = count(hostSamples, 'emo_speech_wait_seconds_count');
  assert.ok(speechWaits >= count(hostSamples, 'emo_inference_duration_seconds_count', { model: 'speech' }), `${speechWaits} waits`);
  assert.is(count(hostSamples, 'emo_speech_wait_seconds_bucket', { le: '+Inf' }), speechWaits);
  // Each transcription's CPU time, by the model that made it: a segment takes tenths of a second.
  const transcriptionCpu = hostSamples.filter((sample) => sample.name === 'emo_transcription_cpu_seconds_total');
  assert.ok(transcriptionCpu.every((sample) => ['tiny', 'base'].includes(sample.labels.model!)), 'by model');
  assert.ok(count(hostSamples, 'emo_transcription_cpu_seconds_total') > 0, 'transcription CPU counted');
  // Whether the host kept up depends on the machine; the gauge says one or the other.
  assert.ok([0, 1].includes(count(hostSamples, 'emo_host_behind')), 'emo_host_behind is 0 or 1');
  assert.is(count(hostSamples, 'emo_row_publishes_refused_total'), 0);
  assert.is(count(hostSamples, 'emo_row_messages_dropped_total'), 0);
  const faceSeconds = count(hostSamples, 'emo_inference_duration_seconds_sum', { model: 'face_detector' });
  assert.ok(faceSeconds > 0, `face detection took ${faceSeconds} s in all`);
  assert.ok(count(hostSamples, 'emo_bus_request_duration_seconds_count', { operation: 'sessions.get', side: 'responder', status: '200' }) >= 1);
  assert.ok(count(hostSamples, 'emo_bus_request_duration_seconds_count', { operation: 'sessions.create', side: 'responder', status: '200' }) === 1);

  const storageSamples = await scrapeUntil(services.metrics.storage, 'rows written', (samples) => count(samples, 'emo_rows_written_total') > 0);
  assert.is(count(storageSamples, 'emo_rows_dead_lettered_total'), 0);
  const pending = total(storageSamples, 'emo_rows_pending_messages');
  assert.ok(pending !== undefined && pending >= 0, `ROWS pending: ${pending}`);
  const lag = total(storageSamples, 'emo_writer_lag_seconds');
  assert.ok(lag !== undefined && lag >= 0, `writer lag: ${lag} s`);
  assert.ok(count(storageSamples, 'emo_bus_request_duration_seconds_count', { operation: 'sessions.list', side: 'responder', status: '200' }) >= 1);

  const gateway = await scrape(services.metrics.gateway);
  const requests = (labels: Record<string, string>) => count(gateway, 'emo_http_requests_total', labels);
  assert.ok(requests({ method: 'GET', route: SESSION_ROUTE, status: '200' }) >= 1);
  assert.is(requests({ method: 'GET', route: SESSION_ROUTE, status: '404' }), 1);
  assert.ok(requests({ method: 'POST', route: '/v1/sessions', status: '201' }) === 1);
  assert.ok(requests({ route: 'unmatched', status: '401' }) >= 1, 'refused before routing');
  assert.ok(gateway.every((s) => !s.name.startsWith('emo_http') || !JSON.stringify(s.labels).includes(live!.id)), 'no session id in a label');
  assert.is(
    count(gateway, 'emo_http_request_duration_seconds_count', { route: SESSION_ROUTE }),
    requests({ route: SESSION_ROUTE }),
    'every request timed',
  );
  assert.ok(count(gateway, 'emo_bus_request_duration_seconds_count', { operation: 'sessions.get', side: 'caller', status: '404' }) === 1);
  assert.ok(count(gateway, 'emo_bus_request_duration_seconds_bucket', { operation: 'sessions.get', side: 'caller', status: '200', le: '+Inf' }) >= 1);
  assert.is(count(gateway, 'emo_websocket_connections'), 0);

  // What docs/operations.md documents and the sample dashboard charts is what the processes serve.
  const base = (name: string) => name.replace(/_(bucket|count|sum)$/, '');
  const served = new Set([...hostSamples, ...storageSamples, ...gateway].map((s) => base(s.name)));
  const namesIn = (text: string) => new Set([...text.matchAll(/\b((?:emo|process|nodejs)_[a-z0-9_]+)/g)].map(([, name]) => base(name!)));
  const operations = readFileSync(join(config.projectRoot, 'docs/operations.md'), 'utf8');
  const section = /## Operations: metrics and health\n([\s\S]*?)\n## /.exec(operations)?.[1] ?? '';
  const documented = [...namesIn(section)].filter((name) => name.startsWith('emo_'));
  assert.equal(documented.filter((name) => !served.has(name)), [], 'documented but not served');
  assert.equal([...served].filter((name) => name.startsWith('emo_') && !documented.includes(name)), [], 'served but not documented');
  const charted = namesIn(readFileSync(join(config.projectRoot, 'ops/production/grafana-dashboard.json'), 'utf8'));
  assert.equal([...charted].filter((name) => !served.has(name)), [], 'charted but not served');

  await stopSession(services, live.id);
  await scrapeUntil(host, 'the session gone from the host', (samples) => count(samples, 'emo_sessions_active') === 0);
});

test('a process that cannot reach NATS yet is alive but not ready', async () => {
  const port = await freePort();
  const gateway = startService('metrics-unready-gateway', process.execPath, await serviceArgs(config.projectRoot, 'gateway'), {
    env: { ...process.env, AUTH_JWT_SECRET: 'unused', NATS_URL: `nats://127.0.0.1:${await freePort()}`, PORT: String(await freePort()), METRICS_PORT: String(port), HOST_ID: 'metrics-unready' },
    cwd: config.projectRoot,
  });
  try {
    const base = `http://127.0.0.1:${port}`;
    await waitUntil('the metrics endpoint', async () => (await status(`${base}/livez`)) === 200, 30_000);
    assert.is(await status(`${base}/readyz`), 503);
  } finally {
    await gateway.stop();
  }
});

test.run();
