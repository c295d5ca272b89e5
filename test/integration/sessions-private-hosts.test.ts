// With ALLOW_PRIVATE_STREAM_HOSTS off (the production setting), a stream on a loopback,
// private or link-local address is refused at creation: the service must not be a way into
// the network it runs in.
import { test } from '../../ops/support/uvu.ts';
import * as assert from 'uvu/assert';
import { startServices, type Services } from '../../ops/support/services.ts';

let services: Services;

test.before(async () => {
  services = await startServices({ name: 'sessions-private-hosts', env: { ALLOW_PRIVATE_STREAM_HOSTS: 'false' } });
});

test.after(async () => {
  await services?.stop();
});

const count = async () => (await services.api('GET', '/v1/sessions?limit=100')).body.data.length;

test('a stream on a private or loopback host is 400 naming body.streamUri, and nothing is created', async () => {
  const before = await count();
  for (const streamUri of [
    'rtmp://127.0.0.1:9/live/x',
    'rtmp://localhost:9/live/x',
    'rtmps://127.1.2.3/live/x',
    'rtsp://10.1.2.3/cam',
    'rtsp://172.16.0.1/cam',
    'rtmp://192.168.1.10/live/x',
    'rtmp://169.254.169.254/latest/meta-data',
    'rtmp://0.0.0.0/live/x',
    'rtmp://[::1]:9/live/x',
    'rtmp://[::ffff:127.0.0.1]/live/x',
    'rtmp://[fd00::1]/live/x',
    'rtmp://[fe80::1]/live/x',
    'rtmp://2130706433/live/x',
    'rtmp://0x7f000001/live/x',
  ]) {
    const reply = await services.api('POST', '/v1/sessions', { body: { name: 'x', streamUri } });
    assert.is(reply.status, 400, `${streamUri}: ${JSON.stringify(reply.body)}`);
    assert.equal(Object.keys(reply.body).sort(), ['code', 'details', 'error', 'message', 'status']);
    assert.is(reply.body.error, true);
    assert.is(reply.body.status, 400);
    assert.match(reply.body.message, /body\.streamUri/);
    assert.is(reply.body.details[0].field, 'body.streamUri');
  }
  assert.is(await count(), before);
});

test('a name that does not resolve is 400 naming body.streamUri', async () => {
  const reply = await services.api('POST', '/v1/sessions', { body: { name: 'x', streamUri: 'rtmp://no-such-host.invalid/live/x' } });
  assert.is(reply.status, 400, JSON.stringify(reply.body));
  assert.match(reply.body.message, /body\.streamUri/);
});

test.run();
