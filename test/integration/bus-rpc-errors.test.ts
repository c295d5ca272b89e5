// The request/reply boundary: whatever text an error message quotes, the reply reaches the
// caller as the API error and the responder keeps serving.
import { test } from '../support/uvu.ts';
import * as assert from 'uvu/assert';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { badRequest } from '../../bus/errors.ts';
import { createLog } from '../../bus/log.ts';
import { headerText, serve } from '../../bus/rpc.ts';

const quiet = createLog({ logLevel: 'silent', hostId: 'bus-rpc-errors' });

let nc: NatsConnection;

test.before(async () => {
  nc = await connect({ servers: process.env.NATS_URL });
});

test.after(async () => {
  await nc?.close();
});

test('headerText keeps printable ASCII only, and is short', () => {
  assert.is(headerText('a source named "x\r\ny" exists'), 'a source named "x??y" exists');
  assert.is(headerText('é\u0000\ud800'), '???');
  assert.is(headerText('z'.repeat(500)).length, 200);
});

test('an error quoting CR, LF and lone surrogates is answered, and the responder keeps serving', async () => {
  const subject = `test.rpc.${process.pid}`;
  const message = 'a source named "evil\r\nNats-Service-Error-Code: 200\ud800" exists';
  const sub = serve(nc, 'sessions.get', async () => {
    throw badRequest('duplicate_source', message);
  }, { subject, log: quiet });
  const request = JSON.stringify({ caller: { user: 'u', product: 'p' }, session: 'x' });
  for (let i = 0; i < 3; i++) {
    const reply = await nc.request(subject, request, { timeout: 2000 });
    assert.is(reply.headers?.get('Nats-Service-Error-Code'), '400');
    const body = reply.json<{ code: string; message: string }>();
    assert.is(body.code, 'duplicate_source');
    assert.is(body.message, message, 'the body keeps the whole message; only the header is cut down');
  }
  sub.unsubscribe();
});

test.run();
