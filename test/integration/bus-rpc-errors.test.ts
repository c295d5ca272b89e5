// The request/reply boundary: whatever text an error message quotes, the reply reaches the
// caller as the API error and the responder keeps serving; a request nobody waits for any more
// is not started.
import { test } from '../../ops/support/uvu.ts';
import * as assert from 'uvu/assert';
import { connect, headers, type NatsConnection } from '@nats-io/transport-node';
import { badRequest } from '../../bus/errors.ts';
import { createLog } from '../../bus/log.ts';
import { operations } from '../../bus/operations.ts';
import { call, headerText, serve } from '../../bus/rpc.ts';

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

test('a request that reaches the responder after its deadline is not started, and answered 503 with Retry-After', async () => {
  // On the operation's own subject, so that `call` reaches it: no service runs in this file.
  const subject = operations['sessions.get'].subject;
  const started: number[] = [];
  const answered: number[] = [];
  const sub = serve(nc, 'sessions.get', async (_request, { deadline }) => {
    started.push(deadline);
    throw badRequest('invalid_query', 'answered');
  }, { log: quiet, observe: (_operation, side, _seconds, status) => void (side === 'responder' && answered.push(status)) });
  const request = JSON.stringify({ caller: { user: 'u', product: 'p' }, session: 'x' });
  // As a request that waited behind others arrives: its caller's deadline is already past.
  const late = headers();
  late.set('Emo-Timeout-Ms', '5000');
  late.set('Emo-Deadline', String(Date.now() - 1));
  const lateReply = await nc.request(subject, request, { timeout: 1000, headers: late });
  assert.is(lateReply.headers?.get('Nats-Service-Error-Code'), '503', 'the host decides: 503, not the caller\'s timeout');
  assert.ok(lateReply.json<{ retryAfterSeconds: number }>().retryAfterSeconds >= 1, 'with when to retry');
  assert.equal(started, [], 'the handler never ran');
  assert.equal(answered, [503], 'counted as its caller saw it');
  // In time: started, and told its deadline, never later than the caller's wait.
  const before = Date.now();
  const reply = await call(nc, 'sessions.get', { caller: { user: 'u', product: 'p' }, session: 'x' }, 2000)
    .then(() => 'ok', (error: { status: number }) => error.status);
  assert.is(reply, 400);
  assert.is(started.length, 1);
  assert.ok(started[0]! > before && started[0]! <= Date.now() + 2000, `deadline ${started[0]! - before} ms after sending`);
  sub.unsubscribe();
});

test.run();
