// One purge per session (actors/session/deletion.ts): concurrent DELETEs of a session run one
// purge, the others answer 404 or 409; a session being deleted cannot be renamed; the mutations
// the purge round issues are counted. One user's delete flood leaves another user's answers as they were.
import { connect } from '@nats-io/transport-node';
import { jetstream } from '@nats-io/jetstream';
import { Kvm } from '@nats-io/kv';
import { test } from '../../ops/support/uvu.ts';
import * as assert from 'uvu/assert';
import { startServices, type Services } from '../../ops/support/services.ts';
import { parsePrometheusText, total } from '../../ops/support/prometheus-text.ts';
import { waitUntil } from '../../ops/stack/process.ts';
import { ABANDONED_MS } from '../../actors/session/deletion.ts';
import { buckets } from '../../bus/subjects.ts';
import { httpRequest } from '../../ops/stack/http-client.ts';

const FLOOD = 30;
/** The tables a purge round deletes from (storage/purge/purge.ts): five of results, event_spans, sessions. */
const MUTATIONS_PER_PURGE = 7;
const PURGE_WINDOW_SECONDS = 3;
let services: Services;

test.before(async () => {
  services = await startServices({ name: 'sessions-delete', env: { STREAM_UNREACHABLE_SECONDS: '900', PURGE_WINDOW_SECONDS: String(PURGE_WINDOW_SECONDS) } });
});

test.after(async () => {
  await services?.stop();
});

const mutations = async () =>
  total(parsePrometheusText(await (await httpRequest(`${services.metrics.storage}/metrics`)).text), 'emo_purge_mutations_total') ?? 0;

/** The mutations once the purge round that takes the session has run, and one more window has passed. */
async function mutationsAfterRound(before: number): Promise<number> {
  // A round takes the session once the index holds its last change: seconds on a loaded machine.
  await waitUntil('the purge round', async () => (await mutations()) > before, 60_000);
  await new Promise((resolve) => setTimeout(resolve, 2 * PURGE_WINDOW_SECONDS * 1000));
  return mutations();
}

async function finishedSession(token: string, name: string): Promise<string> {
  const created = await services.api('POST', '/v1/sessions', { body: { name, streamUri: 'rtmp://127.0.0.1:9/live/x' }, token });
  assert.is(created.status, 201, JSON.stringify(created.body));
  assert.is((await services.api('POST', `/v1/sessions/${created.body._id}/stop`, { token })).status, 200);
  return created.body._id;
}

test('a flood of DELETEs of one session runs one purge; renames meanwhile are 409; the other user is unaffected', async () => {
  const { alice, bob } = services.users;
  const id = await finishedSession(alice.token, 'deleted');
  const kept = await finishedSession(bob.token, 'kept');
  const bobBefore = await services.api('GET', `/v1/sessions/${kept}`, { token: bob.token });
  const before = await mutations();

  const flood = Array.from({ length: FLOOD }, () => services.api('DELETE', `/v1/sessions/${id}`, { token: alice.token }));
  const rename = await services.api('PATCH', `/v1/sessions/${id}`, { body: { name: 'renamed meanwhile' }, token: alice.token });
  const bobDuring = await services.api('GET', `/v1/sessions/${kept}`, { token: bob.token });
  const statuses = (await Promise.all(flood)).map((reply) => reply.status);

  assert.is(statuses.filter((status) => status === 204).length, 1, statuses.join(' '));
  assert.ok(statuses.every((status) => [204, 404, 409].includes(status)), statuses.join(' '));
  assert.ok([409, 404].includes(rename.status), `rename: ${rename.status} ${JSON.stringify(rename.body)}`);
  if (rename.status === 409) assert.is(rename.body.code, 'being_deleted');
  assert.is((await services.api('GET', `/v1/sessions/${id}`, { token: alice.token })).status, 404);
  assert.is(await mutationsAfterRound(before), before + MUTATIONS_PER_PURGE, 'one purge');

  assert.is(bobDuring.status, 200);
  assert.equal(bobDuring.body, bobBefore.body);
  const bobAfter = await services.api('GET', `/v1/sessions/${kept}`, { token: bob.token });
  assert.equal(bobAfter.body, bobBefore.body);
  const beforeBob = await mutations();
  assert.is((await services.api('DELETE', `/v1/sessions/${kept}`, { token: bob.token })).status, 204);
  assert.is(await mutationsAfterRound(beforeBob), beforeBob + MUTATIONS_PER_PURGE, 'bob\'s purge, in a round of its own');
});

test('a deletion left half-way is finished by the service, not the client', async () => {
  const { alice, bob } = services.users;
  const id = await finishedSession(alice.token, 'left half-way');
  const kept = await finishedSession(bob.token, 'kept');
  const before = await mutations();
  // The state a deletion leaves when its purge failed and its request ran out of time (or its host died).
  const nc = await connect({ servers: process.env.NATS_URL });
  try {
    const kv = await new Kvm(jetstream(nc)).open(buckets.sessions);
    const entry = await kv.get(id);
    assert.ok(entry, 'the record');
    await kv.update(id, JSON.stringify({ ...entry.json<object>(), deletingSince: Date.now() - ABANDONED_MS }), entry.revision);
  } finally {
    await nc.close();
  }
  const again = await services.api('DELETE', `/v1/sessions/${id}`, { token: alice.token });
  assert.equal([again.status, again.body.code], [409, 'being_deleted']);
  const rename = await services.api('PATCH', `/v1/sessions/${id}`, { body: { name: 'renamed' }, token: alice.token });
  assert.equal([rename.status, rename.body.code], [409, 'being_deleted']);

  await waitUntil('the deletion finished by a host', async () =>
    (await services.api('GET', `/v1/sessions/${id}`, { token: alice.token })).status === 404, 60_000);
  assert.is(await mutationsAfterRound(before), before + MUTATIONS_PER_PURGE, 'one purge');
  assert.is((await services.api('GET', `/v1/sessions/${kept}`, { token: bob.token })).status, 200);
});

test.run();
