// One purge per session (actors/session/deletion.ts): concurrent DELETEs of a session run one
// purge, the others answer 404 or 409; a session being deleted cannot be renamed; the mutations
// issued are counted. One user's delete flood leaves another user's answers as they were.
import { test } from '../support/uvu.ts';
import * as assert from 'uvu/assert';
import { startServices, type Services } from '../../ops/support/services.ts';
import { parsePrometheusText, total } from '../../ops/support/prometheus-text.ts';

const FLOOD = 30;
/** The tables a purge deletes from (storage/purge.ts): six of results, event_spans, sessions. */
const MUTATIONS_PER_PURGE = 7;
let services: Services;

test.before(async () => {
  services = await startServices({ name: 'sessions-delete', env: { STREAM_UNREACHABLE_SECONDS: '900' } });
});

test.after(async () => {
  await services?.stop();
});

const mutations = async () =>
  total(parsePrometheusText(await (await fetch(`${services.metrics.storage}/metrics`)).text()), 'emo_purge_mutations_total') ?? 0;

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
  assert.is(await mutations(), before + MUTATIONS_PER_PURGE, 'one purge');

  assert.is(bobDuring.status, 200);
  assert.equal(bobDuring.body, bobBefore.body);
  const bobAfter = await services.api('GET', `/v1/sessions/${kept}`, { token: bob.token });
  assert.equal(bobAfter.body, bobBefore.body);
  assert.is((await services.api('DELETE', `/v1/sessions/${kept}`, { token: bob.token })).status, 204);
});

test.run();
