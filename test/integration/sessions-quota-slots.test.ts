// A stopped or deleted session gives its user's active-session slot back at once (actors/
// session/quotas.ts): after a user's quota's worth of sessions created and stopped, or created,
// stopped and deleted, the next create is 201, not a 429 for sessions that are gone.
import { randomUUID } from 'node:crypto';
import { test } from '../../ops/support/uvu.ts';
import * as assert from 'uvu/assert';
import { startServices, type Reply, type Services } from '../../ops/support/services.ts';

const QUOTA = 8;
const STREAM = 'rtmp://127.0.0.1:9/live/x';
let services: Services;

test.before(async () => {
  services = await startServices({ name: 'sessions-quota-slots', env: { USER_MAX_ACTIVE_SESSIONS: String(QUOTA) } });
});

test.after(async () => {
  await services?.stop();
});

const shown = (reply: Reply) => `${reply.status} ${JSON.stringify(reply.body)}`;

/**
 * A request asked again while a busy host answers 503 with Retry-After, as a client would; a
 * create carries an Idempotency-Key, so that a retry returns the session an attempt made.
 */
async function until(send: () => Promise<Reply>): Promise<Reply> {
  for (let attempt = 0; ; attempt++) {
    const reply = await send();
    if (reply.status !== 503 || attempt === 10) return reply;
    assert.ok(Number(reply.headers.get('retry-after')) >= 1, shown(reply));
  }
}

const create = (token: string, name: string) => {
  const key = randomUUID();
  return until(() => services.api('POST', '/v1/sessions', { body: { name, streamUri: STREAM }, token, headers: { 'Idempotency-Key': key } }));
};
const stop = (token: string, id: string) => until(() => services.api('POST', `/v1/sessions/${id}/stop`, { token }));

async function createAndStop(token: string, name: string): Promise<string> {
  const created = await create(token, name);
  assert.is(created.status, 201, shown(created));
  const stopped = await stop(token, created.body._id);
  assert.ok(stopped.status === 200 || (stopped.status === 400 && stopped.body.code === 'session_not_active'), shown(stopped));
  return created.body._id;
}

test(`${QUOTA} create-stop-delete cycles, then a create: 201`, async () => {
  const { token } = services.users.alice;
  for (let i = 0; i < QUOTA; i++) {
    const id = await createAndStop(token, `cycle ${i}`);
    const deleted = await until(() => services.api('DELETE', `/v1/sessions/${id}`, { token }));
    assert.is(deleted.status, 204, shown(deleted));
  }
  const next = await create(token, 'after the cycles');
  assert.is(next.status, 201, shown(next));
  await stop(token, next.body._id);
});

test(`${QUOTA} create-stop cycles, then a create: 201; the quota still holds for active ones`, async () => {
  const { token } = services.users.bob;
  for (let i = 0; i < QUOTA; i++) await createAndStop(token, `cycle ${i}`);
  const active: string[] = [];
  for (let i = 0; i < QUOTA; i++) {
    const created = await create(token, `active ${i}`);
    assert.is(created.status, 201, shown(created));
    active.push(created.body._id);
  }
  const refused = await create(token, 'one too many');
  assert.is(refused.status, 429, shown(refused));
  assert.is(refused.body.code, 'quota_exceeded');
  for (const id of active) await stop(token, id);
});

test.run();
