// A host takes at most HOST_ADMISSION_BURST sessions within its load window (10 s): a burst of
// creates is refused with 503 past that, before the host can know what its new sessions cost.
// Creates that made no session (a refused or repeated request) hold no room.
import { test } from '../support/uvu.ts';
import * as assert from 'uvu/assert';
import { waitUntil } from '../../ops/stack/process.ts';
import { startServices, type Services } from '../../ops/support/services.ts';

const STREAM = 'rtmp://127.0.0.1:9/live/x';
const BURST = 2;
/** actors/host-load.ts: the window the load signal judges. */
const WINDOW_MS = 10_000;
let services: Services;

test.before(async () => {
  services = await startServices({
    name: 'sessions-admission',
    env: { HOST_ADMISSION_BURST: String(BURST), HOST_CAPACITY: '16', STREAM_UNREACHABLE_SECONDS: '900' },
  });
});

test.after(async () => {
  await services?.stop();
});

const create = (name: string, headers?: Record<string, string>) =>
  services.api('POST', '/v1/sessions', { body: { name, streamUri: STREAM }, headers });
const count = async () => (await services.api('GET', '/v1/sessions?limit=100')).body.data.length;

test('a burst of creates: the first ones are taken, the next is refused at once, and taken once the first has aged out', async () => {
  const key = { 'Idempotency-Key': `admission-${Date.now()}` };
  const firstAt = Date.now();
  const first = await create('first', key);
  assert.is(first.status, 201, JSON.stringify(first.body));

  // Neither a repeat of the first nor a mismatched reuse of its key makes a session, so neither
  // holds room.
  const repeat = await create('first', key);
  assert.is(repeat.status, 201, JSON.stringify(repeat.body));
  assert.is(repeat.body._id, first.body._id);
  const mismatched = await create('other', key);
  assert.is(mismatched.status, 400, JSON.stringify(mismatched.body));

  const second = await create('second');
  assert.is(second.status, 201, JSON.stringify(second.body));

  const refused = await create('third');
  assert.is(refused.status, 503, JSON.stringify(refused.body));
  assert.equal([refused.body.status, refused.body.code], [503, 'overloaded']);
  assert.is(await count(), BURST, 'the refused request created nothing');

  let again = refused;
  await waitUntil('room for a new session', async () => {
    again = await create('third');
    return again.status !== 503;
  }, 2 * WINDOW_MS);
  const waited = Date.now() - firstAt;
  assert.is(again.status, 201, JSON.stringify(again.body));
  assert.ok(waited >= WINDOW_MS - 500, `taken ${waited} ms after the first: before the first aged out`);
  assert.is(await count(), BURST + 1);
});

test.run();
