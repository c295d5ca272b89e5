// A cluster with no free slot answers 503 at once, and takes sessions again as soon as one ends.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { waitUntil } from '../../ops/stack/process.ts';
import { startServices, type Services } from '../../ops/support/services.ts';

const STREAM = 'rtmp://127.0.0.1:9/live/x';
let services: Services;

test.before(async () => {
  services = await startServices({ name: 'sessions-capacity', env: { HOST_CAPACITY: '1', STREAM_UNREACHABLE_SECONDS: '900' } });
});

test.after(async () => {
  await services?.stop();
});

const create = (name: string) => services.api('POST', '/v1/sessions', { body: { name, streamUri: STREAM } });
const count = async () => (await services.api('GET', '/v1/sessions?limit=100')).body.data.length;

test('a full cluster answers 503 at once; a stop frees the slot', async () => {
  const first = await create('first');
  assert.is(first.status, 201, JSON.stringify(first.body));

  const started = Date.now();
  const refused = await create('second');
  const elapsed = Date.now() - started;
  assert.is(refused.status, 503, JSON.stringify(refused.body));
  assert.equal(Object.keys(refused.body).sort(), ['code', 'error', 'message', 'status']);
  assert.equal([refused.body.error, refused.body.status, refused.body.code], [true, 503, 'overloaded']);
  // At once: not after the bus request timeout (5 s).
  assert.ok(elapsed < 2000, `503 took ${elapsed} ms`);
  assert.is(await count(), 1, 'the refused request created nothing');

  const stopped = await services.api('POST', `/v1/sessions/${first.body._id}/stop`);
  assert.is(stopped.status, 200);
  let again = refused;
  await waitUntil('a free slot', async () => {
    again = await create('third');
    return again.status !== 503;
  }, 15_000);
  assert.is(again.status, 201, JSON.stringify(again.body));
  assert.is(again.body.state, 'active');
  assert.is(await count(), 2);
});

test.run();
