// The web dashboard in a real browser (Debian's Chromium, driven by playwright-core) against
// the real service and a live RTMP stream of a smiling face that speaks: sign in, an API error
// in words, a session created and watched live until its worker works and the charts fill,
// renamed, stopped (with its stop reason), shown at another granularity, the list's filters
// and pages, and a delete. Screenshots go to var/test/artifacts/dashboard/.
import { test } from '../../ops/support/uvu.ts';
import * as assert from 'uvu/assert';
import { mkdirSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import { join } from 'node:path';
import type { BrowserContext, Page } from 'playwright-core';
import { jetstream } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { RowPublisher } from '../../actors/rows.ts';
import { readConfig } from '../../bus/config.ts';
import { readOpsConfig } from '../../ops/ops-config.ts';
import type { VideoSecond } from '../../bus/contracts/rows.ts';
import { createLog } from '../../bus/log.ts';
import { waitUntil } from '../../ops/stack/process.ts';
import { WsClient } from '../../ops/support/ws-client.ts';
import { startServices, type Services } from '../../ops/support/services.ts';
import { clipsDir, mediaSeconds, settled, startStreamServer } from '../support/analysis.ts';
import { launchBrowser } from '../support/browser.ts';
import { makeClip, speak } from '../support/clips.ts';
import { publish, waitForStream, type Publisher } from '../../ops/support/streams/publish.ts';
import type { RtmpServer } from '../../ops/support/streams/rtmp-server.ts';
import { httpRequest } from '../../ops/stack/http-client.ts';

const config = readConfig();
const tooling = readOpsConfig();
const artifacts = join(config.varDir, 'test', 'artifacts', 'dashboard');
const profile = join(config.varDir, 'test', `chromium-profile-${process.pid}`);
const SENTENCE = 'What a great and wonderful day. I am so happy.';
/** Sessions made by the API beside the one the page makes, so the list has a second page. */
const EXTRA_SESSIONS = 10;

let services: Services;
let rtmp: RtmpServer;
let publisher: Publisher;
let browser: BrowserContext;
let page: Page;
let session: string;
/** Everything the page logged as an error or threw, and every answer it got of 400 or more. */
const consoleErrors: string[] = [];
const failedRequests: string[] = [];

test.before(async () => {
  const speech = await speak(SENTENCE, join(clipsDir, 'speech'));
  const seconds = Math.ceil(mediaSeconds(speech) + 3);
  const clip = await makeClip(
    {
      width: 640, height: 480, seconds, fps: 10,
      video: { type: 'images', images: [{ image: join(tooling.mediaDir, 'faces', 'happy.jpg'), seconds }] },
      audio: { type: 'wavs', parts: [{ wav: speech }, { silence: 3 }] },
    },
    clipsDir,
  );
  rtmp = await startStreamServer('dashboard');
  publisher = publish(clip, rtmp.url('face'));
  await waitForStream(rtmp.url('face'));
  services = await startServices({ name: 'dashboard' });
  rmSync(artifacts, { recursive: true, force: true });
  mkdirSync(artifacts, { recursive: true });
  browser = await launchBrowser(profile);
  page = browser.pages()[0] ?? (await browser.newPage());
  page.on('console', (message) => message.type() === 'error' && consoleErrors.push(message.text()));
  page.on('pageerror', (error) => consoleErrors.push(`uncaught: ${error.message}`));
  page.on('response', (response) => {
    if (response.status() >= 400) failedRequests.push(`${response.request().method()} ${new URL(response.url()).pathname} ${response.status()}`);
  });
  // Deleting asks for a confirmation first: the person says yes.
  page.on('dialog', (dialog) => dialog.accept());
});

test.after(async () => {
  await browser?.close();
  rmSync(profile, { recursive: true, force: true });
  await services?.stop();
  await publisher?.stop();
  await rtmp?.stop();
});

const shot = (name: string) => page.screenshot({ path: join(artifacts, `${name}.png`), fullPage: true });
const text = (selector: string) => page.locator(selector).first().textContent({ timeout: 1000 });
/** How many points a chart's uPlot instance holds, as the page records it after each draw. */
const points = async (chart: string) => Number(await page.locator(`[data-chart="${chart}"]`).getAttribute('data-points', { timeout: 1000 }));
const rows = (selector: string) => page.locator(`${selector} tbody tr`).count();

/** Waits until the first element matching `selector` reads `expected`. */
async function textIs(selector: string, expected: string, timeoutMs = 30_000): Promise<void> {
  let last: string | null = null;
  await waitUntil(`${selector} reading ${JSON.stringify(expected)}`, async () => (last = await text(selector)) === expected, timeoutMs)
    .catch((error: Error) => {
      throw new Error(`${error.message}; it reads ${JSON.stringify(last)}`);
    });
}

/** A GET of `path` exactly as written (a URL would resolve its dot segments first). */
function rawGet(path: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    request(`${services.baseUrl}${path}`, { path }, (response) => {
      let body = '';
      response.on('data', (chunk: Buffer) => (body += chunk.toString()));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, body }));
    }).on('error', reject).end();
  });
}

async function pointsAtLeast(chart: string, count: number, timeoutMs = 60_000): Promise<void> {
  await waitUntil(`${count} points on the ${chart} chart`, async () => (await points(chart)) >= count, timeoutMs);
}

test('the gateway serves the page and its files to anyone, with a strict policy, and nothing else', async () => {
  const index = await httpRequest(`${services.baseUrl}/`);
  assert.is(index.status, 200);
  assert.is(index.headers.get('content-type'), 'text/html; charset=utf-8');
  assert.match(index.headers.get('content-security-policy') ?? '', /default-src 'self'.*script-src 'self'/);
  assert.is(index.headers.get('cache-control'), 'no-cache');
  assert.match(index.text, /<script type="module" src="\/dashboard\/main.js">/);
  assert.is((await httpRequest(`${services.baseUrl}/`, { headers: { 'If-None-Match': index.headers.get('etag') ?? '' } })).status, 304);
  const head = await httpRequest(`${services.baseUrl}/vendor/uPlot.esm.js`, { method: 'HEAD' });
  assert.is(head.status, 200);
  assert.is(head.headers.get('content-type'), 'text/javascript; charset=utf-8');
  assert.is((await httpRequest(`${services.baseUrl}/vendor/uPlot.min.css`)).headers.get('content-type'), 'text/css; charset=utf-8');
  for (const path of ['/dashboard/nothing.js', '/vendor/../package.json', '/dashboard/%2e%2e/%2e%2e/package.json', '/vendor/..%2f..%2fpackage.json']) {
    const missing = await rawGet(path);
    assert.is(missing.status, 404, path);
    assert.is(JSON.parse(missing.body).code, 'not_found', path);
  }
  // The API still wants its token.
  assert.is((await httpRequest(`${services.baseUrl}/v1/sessions`)).status, 401);
});

test('signs in with a token, after refusing a wrong one in words', async () => {
  const probe = await WsClient.open(`${services.baseUrl.replace('http', 'ws')}/ws/v1`);
  const refused = await probe.request('auth:token', { token: 'not-a-token' });
  probe.close();
  assert.is(refused.status, 401);
  await page.goto(`${services.baseUrl}/`);
  await page.fill('input[name="token"]', 'not-a-token');
  await page.click('form.sign-in button[type="submit"]');
  await textIs('#notice .notice-text', (refused.body as { message: string }).message);
  await page.fill('input[name="token"]', services.users.alice.token);
  await page.click('form.sign-in button[type="submit"]');
  await page.locator('table.sessions').waitFor();
  assert.is(await page.locator('#user').textContent(), services.users.alice.user);
  assert.is(await page.evaluate('sessionStorage.getItem("emotion-stream.token")'), services.users.alice.token);
  assert.is(await page.evaluate('localStorage.length'), 0);
  // The tab keeps the token across a reload.
  await page.reload();
  await page.locator('table.sessions').waitFor();
  assert.is(await page.locator('#user').textContent(), services.users.alice.user);
  await shot('01-signed-in');
});

test("an API error is shown in the API's words", async () => {
  const body = { name: 'bad', streamUri: 'http://127.0.0.1/live/x' };
  const refused = await services.api('POST', '/v1/sessions', { body });
  assert.is(refused.status, 400);
  await page.fill('form.create input[name="name"]', body.name);
  await page.fill('form.create input[name="streamUri"]', body.streamUri);
  await page.click('form.create button[type="submit"]');
  assert.is(refused.body.message, 'body.streamUri: protocol must be one of rtmp, rtmps, rtsp, got http');
  await textIs('#notice .notice-text', refused.body.message);
  await shot('02-api-error');
});

test('creates a session and watches it live: the worker works, the charts fill', async () => {
  await page.fill('form.create input[name="name"]', 'dashboard live');
  await page.fill('form.create input[name="streamUri"]', rtmp.url('face'));
  await page.click('form.create button[type="submit"]');
  await page.waitForURL(/#\/sessions\/[0-9a-f]+$/);
  session = decodeURIComponent(new URL(page.url()).hash.split('/')[2] ?? '');
  assert.is((await services.api('GET', `/v1/sessions/${session}`)).body.name, 'dashboard live');
  await textIs('.facts .worker', 'working', 60_000);

  // A client's sensor event, sent beside the page, arrives on the same time axis.
  const source = await services.api('POST', `/v1/sessions/${session}/events`, { body: { name: 'heart-rate', format: 'scalar' } });
  assert.is(source.status, 201);
  const now = (await services.api('GET', `/v1/sessions/${session}`)).body.duration as number;
  assert.is((await services.api('POST', `/v1/sessions/${session}/events/${source.body.id}`, { body: { time: now, data: 72 } })).status, 201);

  for (const chart of ['emotions', 'faces', 'pitch', 'level']) await pointsAtLeast(chart, 5);
  await pointsAtLeast('events', 1, 30_000);
  assert.is(await text('.event-list tbody td:nth-child(2)'), 'heart-rate');
  assert.is(await text('.event-list tbody td:nth-child(3)'), '72');
  // The spoken sentence, transcribed, with its sentiment: the session joins the looping clip
  // anywhere, so its first segment may be the end of a sentence, neutral; a whole one follows
  // within a loop or two.
  await page.locator('.transcript tbody tr').first().waitFor({ timeout: 60_000 });
  await pointsAtLeast('sentiment', 1);
  const positive = page.locator('.transcript tbody .tone', { hasText: 'positive' }).first();
  await positive.waitFor({ timeout: 60_000 }).catch(async () => {
    throw new Error(`no positive segment; tones: ${(await page.locator('.transcript tbody .tone').allTextContents()).join(', ')}`);
  });
  // The cursor near the latest second: the emotions chart's legend reads its data there, and
  // the smile dominates.
  const plot = await page.locator('[data-chart="emotions"] .u-over').boundingBox();
  assert.ok(plot);
  await page.mouse.move(plot.x + plot.width * 0.95, plot.y + plot.height / 2);
  const series = page.locator('[data-chart="emotions"] .u-legend .u-series');
  const legend: [string | null, number][] = [];
  for (let i = 1; i < (await series.count()); i++) {
    legend.push([await series.nth(i).locator('.u-label').textContent(), parseFloat((await series.nth(i).locator('.u-value').textContent()) ?? '')]);
  }
  const top = [...legend].sort((a, b) => b[1] - a[1])[0];
  assert.is(top?.[0], 'exaltation', JSON.stringify(legend));
  assert.ok((top?.[1] ?? 0) > 50, JSON.stringify(legend));
  await shot('03-live');
});

test('a session opened while it runs shows what was stored before, then goes on live', async () => {
  // Ten analysed seconds at least, so several are stored well before the page opens again.
  await pointsAtLeast('emotions', 10);
  const running = (await services.api('GET', `/v1/sessions/${session}`)).body.duration as number;
  await page.reload();
  await textIs('.facts .worker', 'working');
  await pointsAtLeast('emotions', 1);
  // The cursor at the very start: the nearest point is one of the stored seconds, long before
  // the page was opened again.
  const plot = await page.locator('[data-chart="emotions"] .u-over').boundingBox();
  assert.ok(plot);
  await page.mouse.move(plot.x + 1, plot.y + plot.height / 2);
  const [minutes, seconds] = ((await text('[data-chart="emotions"] .u-legend .u-series .u-value')) ?? '').split(':').map(Number);
  const first = (minutes ?? NaN) * 60 + (seconds ?? NaN);
  assert.ok(first < running - 5, `first point at ${first} s, page opened at ${running} s`);
  const before = await points('emotions');
  await pointsAtLeast('emotions', before + 2, 10_000);
});

test('renames the session, stops it and shows the stop reason', async () => {
  await page.click('button.rename-start');
  await page.fill('form.rename input[name="name"]', 'dashboard renamed');
  await page.click('form.rename button[type="submit"]');
  await textIs('h1.name', 'dashboard renamed');
  assert.is((await services.api('GET', `/v1/sessions/${session}`)).body.name, 'dashboard renamed');
  await page.click('.session-head button.stop');
  await textIs('.facts .state', 'finished');
  assert.is(await page.locator('.stop-reason').textContent(), 'stopped by the client');
  assert.ok(await page.locator('form.granularity').isVisible());
  const stopped = (await services.api('GET', `/v1/sessions/${session}`)).body;
  assert.is(stopped.state, 'finished');
  assert.is(stopped.meta.stopReason, 'client');
  await shot('04-stopped');
});

test('shows the finished session at another granularity, as the API reads it', async () => {
  const timeline = await settled(services, `/v1/sessions/${session}/emotions/timeline?granularity=10`, (body) => body.timeline.length >= 1);
  const audio = await settled(services, `/v1/sessions/${session}/audio/features?granularity=10`);
  await page.fill('form.granularity input[name="granularity"]', '10');
  await page.click('form.granularity button[type="submit"]');
  await textIs('.results-head .mode', 'Stored results in 10-second intervals');
  // The charts hold what the API answers at 10 s, no more (the live seconds are gone).
  await waitUntil('the 10-second timelines on the charts', async () =>
    (await points('emotions')) === timeline.timeline.length && (await points('level')) === audio.timeline.length);
  assert.ok((await rows('.transcript')) >= 1);
  assert.is(await rows('.event-list'), 1);
  await shot('05-granularity-10s');
});

test('an interval whose faces were read with reduced effort is marked on the faces chart and said under it', async () => {
  // A video second as a loaded host publishes it (face-effort.ts), stored as any row is. (The
  // session's own seconds may be reduced too, on a loaded machine: the page sums what the API says.)
  const nc = await connect({ servers: process.env.NATS_URL });
  const quiet = createLog(config).child({ component: 'dashboard-test' });
  quiet.level = 'silent';
  const row: VideoSecond = { session, second: 0, frames: 4, faces: 1, dropped: 0, effort: 1 };
  await new RowPublisher(jetstream(nc), quiet).publishDurably(session, 'video', [row], 'reduced-0');
  await nc.drain();
  const path = `/v1/sessions/${session}/emotions/timeline?granularity=10`;
  const { timeline } = await settled(services, path, (body) => (body.timeline[0]?.reducedEffortSeconds ?? 0) >= 1);
  const reduced = timeline.reduce((sum: number, entry: { reducedEffortSeconds?: number }) => sum + (entry.reducedEffortSeconds ?? 0), 0);
  await page.click('form.granularity button[type="submit"]');
  await textIs('.effort-note', `Analysis reduced in ${reduced} s: the host was loaded and read these faces on a smaller picture, so small faces may be missing there.`);
  assert.match((await text('[data-chart="faces"] .u-legend')) ?? '', /analysis reduced/);
  await shot('06-analysis-reduced');
});

test('the list: state and date filters, pages', async () => {
  // Sessions on a stream that does not exist, stopped at once: they only fill the list.
  for (let i = 0; i < EXTRA_SESSIONS; i++) {
    const created = await services.api('POST', '/v1/sessions', { body: { name: `filler ${i}`, streamUri: rtmp.url('nothing') } });
    assert.is(created.status, 201);
    assert.is((await services.api('POST', `/v1/sessions/${created.body._id}/stop`)).status, 200);
  }
  await page.click('.crumbs a');
  await page.locator('table.sessions').waitFor();
  const names = () => page.locator('table.sessions tbody a.name').allTextContents();
  await textIs('.pager .range', '1-10');
  assert.is(await rows('table.sessions'), 10);
  assert.ok(await page.locator('button.next').isEnabled());
  assert.ok(!(await page.locator('button.previous').isEnabled()));
  await page.click('button.next');
  await textIs('.pager .range', '11-11');
  assert.equal(await names(), ['dashboard renamed']);
  assert.ok(!(await page.locator('button.next').isEnabled()));
  await page.click('button.previous');
  await textIs('.pager .range', '1-10');

  await page.selectOption('select[name="state"]', 'active');
  await page.locator('.empty').waitFor({ state: 'visible' });
  assert.equal(await names(), []);
  await page.selectOption('select[name="state"]', 'finished');
  await textIs('.pager .range', '1-10');

  // Days are the browser's own: today holds every session, tomorrow none.
  const day = (offset: number) => page.evaluate((days) => {
    const date = new Date();
    date.setDate(date.getDate() + days);
    return `${date.getFullYear()}-${String(date.getMonth() + 1).padStart(2, '0')}-${String(date.getDate()).padStart(2, '0')}`;
  }, offset);
  await page.fill('input[name="from"]', await day(1));
  await page.locator('.empty').waitFor({ state: 'visible' });
  assert.is(await rows('table.sessions'), 0);
  await page.fill('input[name="from"]', await day(0));
  await page.fill('input[name="to"]', await day(0));
  await page.selectOption('select[name="limit"]', '25');
  await textIs('.pager .range', '1-11');
  await shot('06-list');
});

test('deletes the finished session', async () => {
  await page.click(`table.sessions tbody a[href="#/sessions/${session}"]`);
  await textIs('h1.name', 'dashboard renamed');
  await page.click('.session-head button.delete');
  await page.locator('table.sessions').waitFor();
  await textIs('#notice .notice-text', 'The session "dashboard renamed" was deleted.');
  assert.is((await services.api('GET', `/v1/sessions/${session}`)).status, 404);
  await textIs('.pager .range', '1-10');
  assert.not.ok((await page.locator('table.sessions tbody a.name').allTextContents()).includes('dashboard renamed'));
  await shot('07-deleted');
});

test('signs out: the token is forgotten', async () => {
  await page.click('#sign-out');
  await page.locator('form.sign-in').waitFor();
  assert.is(await page.evaluate('sessionStorage.length'), 0);
  await page.reload();
  await page.locator('form.sign-in').waitFor();
});

test('the page logged no error but the refused create it was shown', async () => {
  assert.equal(failedRequests, ['POST /v1/sessions 400']);
  assert.equal(consoleErrors, ['Failed to load resource: the server responded with a status of 400 (Bad Request)']);
});

test.run();
