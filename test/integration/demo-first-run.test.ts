// `npm start`'s first run: the demo started by the very function npm start calls
// (ops/demo/demo.ts: the clip made from the face photos and espeak-ng, a loopback RTMP server,
// the clip published in real time, a session created through the REST API with the user's
// token), against this file's own service, and its printed link opened in a real browser
// (Debian's Chromium): the session's charts, transcript and sentiment fill, the API holds the
// same results, the list shows it, stopping the demo ends the session and its stream, and a
// later start stops a demo session an earlier one left active.
// Screenshots go to var/test/artifacts/demo-first-run/.
import { test } from '../../ops/support/uvu.ts';
import * as assert from 'uvu/assert';
import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import type { BrowserContext, Page } from 'playwright-core';
import { readConfig } from '../../bus/config.ts';
import { readOpsConfig } from '../../ops/ops-config.ts';
import { DEMO_SESSION_NAME, startDemo, type Demo } from '../../ops/demo/demo.ts';
import { freePort, portOpen } from '../../ops/stack/ports.ts';
import { waitUntil } from '../../ops/stack/process.ts';
import { startServices, type Services } from '../../ops/support/services.ts';
import { settled } from '../support/analysis.ts';
import { launchBrowser } from '../support/browser.ts';

const config = { ...readConfig(), ...readOpsConfig() };
const dir = join(config.varDir, 'test', `demo-first-run-${process.pid}`);
const profile = join(config.varDir, 'test', `chromium-profile-${process.pid}`);
const artifacts = join(config.varDir, 'test', 'artifacts', 'demo-first-run');

let services: Services;
let demo: Demo | undefined;
let browser: BrowserContext;
let page: Page;
const pageErrors: string[] = [];

test.before(async () => {
  services = await startServices({ name: 'demo-first-run' });
  demo = await startDemo({ baseUrl: services.baseUrl, token: services.users.alice.token, dir, config });
  rmSync(artifacts, { recursive: true, force: true });
  mkdirSync(artifacts, { recursive: true });
  browser = await launchBrowser(profile);
  page = browser.pages()[0] ?? (await browser.newPage());
  page.on('console', (message) => message.type() === 'error' && pageErrors.push(message.text()));
  page.on('pageerror', (error) => pageErrors.push(`uncaught: ${error.message}`));
});

test.after(async () => {
  await browser?.close();
  rmSync(profile, { recursive: true, force: true });
  await demo?.stop();
  await services?.stop();
  rmSync(dir, { recursive: true, force: true });
});

const shot = (name: string) => page.screenshot({ path: join(artifacts, `${name}.png`), fullPage: true });
const running = () => {
  assert.ok(demo, 'the demo runs');
  return demo;
};
/** How many points a chart holds, as the page records it after each draw. */
const points = async (chart: string) => Number(await page.locator(`[data-chart="${chart}"]`).getAttribute('data-points', { timeout: 1000 }));

async function pointsAtLeast(chart: string, count: number, timeoutMs = 60_000): Promise<void> {
  await waitUntil(`${count} points on the ${chart} chart`, async () => (await points(chart)) >= count, timeoutMs);
}

test('the demo session is created through the API, on its stream on a loopback RTMP server', async () => {
  const { session, streamUri, dashboardUrl } = running();
  assert.match(streamUri, /^rtmp:\/\/127\.0\.0\.1:\d+\/live\/demo$/);
  assert.is(dashboardUrl, `${services.baseUrl}/#/sessions/${session}`);
  const active = await services.api('GET', '/v1/sessions?state=active');
  assert.equal(active.body.data.map((listed: { _id: string; name: string }) => [listed._id, listed.name]), [[session, DEMO_SESSION_NAME]]);
  const record = (await services.api('GET', `/v1/sessions/${session}`)).body;
  assert.ok(streamUri.startsWith(record.sources[0].name), record.sources[0].name);
  assert.is(record.user, services.users.alice.user);
});

test('the printed link, signed in with the token, shows the demo live: emotions, faces, voice, transcript and sentiment', async () => {
  await page.goto(running().dashboardUrl);
  await page.fill('input[name="token"]', services.users.alice.token);
  await page.click('form.sign-in button[type="submit"]');
  await page.locator('h1.name', { hasText: DEMO_SESSION_NAME }).waitFor({ timeout: 10_000 });
  await page.locator('.facts .worker', { hasText: 'working' }).waitFor({ timeout: 60_000 });
  for (const chart of ['emotions', 'faces', 'pitch', 'level']) await pointsAtLeast(chart, 5);
  await pointsAtLeast('sentiment', 1);
  // Sentences in both tones follow each other in the clip's first scenes: the transcript shows
  // words, and both tones, within one loop of it.
  const tones = () => page.locator('.transcript tbody .tone').allTextContents();
  await waitUntil('a positive and a negative sentence in the transcript', async () => {
    const seen = await tones();
    return seen.includes('positive') && seen.includes('negative');
  }, 90_000).catch(async (error: Error) => {
    throw new Error(`${error.message}; tones: ${(await tones()).join(', ')}`);
  });
  const texts = await page.locator('.transcript tbody td:nth-child(2)').allTextContents();
  assert.ok(texts.every((text) => /[a-z]{2}/i.test(text)), JSON.stringify(texts));
  await shot('01-demo-session');
});

test('the API holds the same: a timeline with a face in every interval, several expressions over one loop, the transcript', async () => {
  const { session } = running();
  const timeline = await settled(services, `/v1/sessions/${session}/emotions/timeline?granularity=5`, (body) => body.timeline.length >= 3);
  assert.ok(timeline.timeline.every((entry: { detectedFaces: number }) => entry.detectedFaces >= 1), JSON.stringify(timeline.timeline));
  // Over one loop of the clip every scene's photo has been shown: the face-seconds each
  // expression dominated are spread over more than one.
  const loop = await services.waitForSession(session, (record) => record.meta.mediaSeconds >= running().clipSeconds, 120_000);
  const emotions = await settled(services, `/v1/sessions/${session}/emotions`, (body) => Object.values(body.emotions).some((seconds) => (seconds as number) > 0));
  const shown = Object.entries(emotions.emotions as Record<string, number>).filter(([, seconds]) => seconds > 0);
  assert.ok(shown.length >= 3, `after ${loop.meta.mediaSeconds} s: ${JSON.stringify(emotions.emotions)}`);
  const transcript = await settled(services, `/v1/sessions/${session}/audio/transcription`, (body) => body.data.length >= 2);
  assert.ok(transcript.data.every((segment: { text: string }) => /[a-z]{2}/i.test(segment.text)), JSON.stringify(transcript.data));
});

test('the dashboard lists the demo session, linked to its view', async () => {
  await page.click('.crumbs a');
  const link = page.locator('table.sessions tbody a.name', { hasText: DEMO_SESSION_NAME });
  await link.waitFor({ timeout: 10_000 });
  assert.is(await link.getAttribute('href'), `#/sessions/${running().session}`);
  await shot('02-list');
});

test('stopping the demo stops its session and its stream server', async () => {
  const { session, streamUri, stop } = running();
  await stop();
  demo = undefined;
  const record = (await services.api('GET', `/v1/sessions/${session}`)).body;
  assert.is(record.state, 'finished');
  assert.is(record.meta.stopReason, 'client');
  assert.not.ok(await portOpen(Number(new URL(streamUri).port)));
});

test('a start after one that never stopped its demo (a crash, a kill -9) stops that demo session first', async () => {
  // Its stream server went with it: a port nothing listens on.
  const streamUri = `rtmp://127.0.0.1:${await freePort()}/live/demo`;
  const leftOver = await services.api('POST', '/v1/sessions', { body: { name: DEMO_SESSION_NAME, streamUri } });
  assert.is(leftOver.status, 201);
  const next = await startDemo({ baseUrl: services.baseUrl, token: services.users.alice.token, dir: join(dir, 'next'), config });
  try {
    const earlier = (await services.api('GET', `/v1/sessions/${leftOver.body._id}`)).body;
    assert.is(earlier.state, 'finished');
    assert.is(earlier.meta.stopReason, 'client');
    const active = await services.api('GET', '/v1/sessions?state=active');
    assert.equal(active.body.data.map((listed: { _id: string }) => listed._id), [next.session]);
  } finally {
    await next.stop();
  }
});

test('the page logged no error', () => {
  assert.equal(pageErrors, []);
});

test.run();
