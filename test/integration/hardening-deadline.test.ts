// A create that the host cannot finish before the gateway stops waiting writes nothing: the
// client's 503 means "nothing was made". Here the gateway waits no longer than the host's
// safety margin, so every create must be refused before it touches the session store.
import { test } from '../../ops/support/uvu.ts';
import * as assert from 'uvu/assert';
import { startServices, type Services } from '../../ops/support/services.ts';

let services: Services;

test.before(async () => {
  services = await startServices({ name: 'hardening-deadline', env: { BUS_REQUEST_TIMEOUT_MS: '900' } });
});

test.after(async () => {
  await services?.stop();
});

test('a create answered 503 for lack of time leaves no session behind', async () => {
  const reply = await services.api('POST', '/v1/sessions', { body: { name: 'late', streamUri: 'rtmp://127.0.0.1:9/live/x' } });
  assert.is(reply.status, 503, JSON.stringify(reply.body));
  const list = await services.api('GET', '/v1/sessions?limit=100');
  assert.is(list.status, 200);
  assert.equal(list.body.data, []);
});

test.run();
