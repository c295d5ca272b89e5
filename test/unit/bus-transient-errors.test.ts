// isTransient(): which failures are a dependency's (503, the caller may retry) and which are
// ours or the caller's (kept as they are, so that bugs are not dressed as load).
import { test } from '../../ops/support/uvu.ts';
import * as assert from 'uvu/assert';
import { errors } from '@nats-io/transport-node';
import { JetStreamApiError } from '@nats-io/jetstream';
import { ServiceError, isTransient } from '../../bus/errors.ts';

const systemError = (code: string) => Object.assign(new Error(`connect ${code} 127.0.0.1:4222`), { code });
const noResponders = () => new errors.RequestError('no responders: $JS.API.INFO', { cause: new errors.NoRespondersError('$JS.API.INFO') });

test('unreachable servers and requests nobody answered are transient', () => {
  for (const code of ['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'EAI_AGAIN']) assert.ok(isTransient(systemError(code)), code);
  assert.ok(isTransient(new errors.TimeoutError()));
  assert.ok(isTransient(new errors.ClosedConnectionError()));
  assert.ok(isTransient(noResponders()));
});

test('JetStream answering that it is temporarily unavailable is transient', () => {
  // What a KV write got while the bucket's leader was elected again after its server was killed.
  assert.ok(isTransient(new JetStreamApiError({ code: 503, err_code: 10008, description: 'JetStream system temporarily unavailable' })));
});

test('a wrapper is transient when what it wraps is', () => {
  // What JetStream throws when no server answers its API yet (a cluster still electing).
  assert.ok(isTransient(new Error('jetstream is not enabled', { cause: noResponders() })));
  assert.not.ok(isTransient(new Error('wrapped', { cause: new TypeError('x is undefined') })));
});

test('an account without JetStream, bugs and answers to the caller are not', () => {
  const notEnabled = new JetStreamApiError({ code: 503, err_code: 10039, description: 'jetstream not enabled for account' });
  assert.not.ok(isTransient(notEnabled));
  assert.not.ok(isTransient(new Error('jetstream not enabled for account', { cause: notEnabled })));
  assert.not.ok(isTransient(new TypeError("Cannot read properties of undefined (reading 'id')")));
  assert.not.ok(isTransient(new ServiceError(404, 'not_found', 'session not found')));
  assert.not.ok(isTransient(new errors.PermissionViolationError('permissions violation for publish to "emo.x"', 'publish', 'emo.x')));
  for (const value of ['ECONNREFUSED', undefined, null, { code: 'ECONNREFUSED' }]) assert.not.ok(isTransient(value), String(value));
});

test.run();
