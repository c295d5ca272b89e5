// A create retried with its Idempotency-Key when the session the key was claimed for has no
// record (actors/session/admission.ts): the earlier attempt failed, still runs, or sent a write a
// new leader of the bucket will make late. The retry makes that same session at once, in the
// slot the earlier attempt holds, instead of answering 503 until the claim is a minute old; the
// earlier attempt, if it goes on, returns the session the retry made, and one that fails after
// gives back neither the key nor the slot. Against a real NATS server, with the host's own
// buckets and admission.
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { test } from '../../ops/support/uvu.ts';
import * as assert from 'uvu/assert';
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import { Kvm, type KV } from '@nats-io/kv';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { admitSession, type AdmissionDeps, type Admitted } from '../../actors/session/admission.ts';
import { fingerprintOf, IdempotencyKeys } from '../../actors/session/idempotency.ts';
import { UserQuotas } from '../../actors/session/quotas.ts';
import { readConfig } from '../../bus/config.ts';
import type { CreateSessionRequest } from '../../bus/contracts/session.ts';
import { newSessionId } from '../../bus/ids.ts';
import { createLog } from '../../bus/log.ts';
import { SessionRecords } from '../../bus/session-records.ts';
import { buckets } from '../../bus/subjects.ts';
import { freePort } from '../../ops/stack/ports.ts';
import { startNats } from '../../ops/stack/nats.ts';
import { waitUntil, type Service } from '../../ops/stack/process.ts';
import { activeSessionRecord } from '../support/session-record.ts';

const config = readConfig();
const MAX_ACTIVE = 3;

let nats: Service;
let nc: NatsConnection;
let records: SessionRecords;
let quotas: UserQuotas;
let keys: IdempotencyKeys;
let quotaKv: KV;
/** What the next stream check waits for, if set: the attempt that makes it is held there. */
let holdNextCheck: Promise<string | undefined> | undefined;
let checksHeld = 0;

test.before(async () => {
  const port = await freePort();
  nats = await startNats({ dir: join(config.varDir, 'test', `create-retry-${process.pid}`, 'nats'), port });
  nc = await connect({ servers: `nats://127.0.0.1:${port}` });
  const js = jetstream(nc);
  records = await SessionRecords.open(js, createLog({ logLevel: 'silent', hostId: 'create-retry' }), 1);
  quotas = await UserQuotas.open(js, records, MAX_ACTIVE, 1);
  keys = await IdempotencyKeys.open(js, 3_600_000, 1);
  quotaKv = await new Kvm(nc).open(buckets.quotas);
});

test.after(async () => {
  records?.close();
  await nc?.close();
  await nats?.stop();
});

const deps = (): AdmissionDeps => ({
  records,
  quotas,
  keys,
  hostId: 'create-retry',
  sessionMaxSeconds: 3600,
  streamRefusal: async () => {
    const held = holdNextCheck;
    holdNextCheck = undefined;
    if (!held) return undefined;
    checksHeld++;
    return held;
  },
});

let users = 0;
/** A request of a user of its own, so that each case starts with an empty quota. */
function request(): CreateSessionRequest & { idempotencyKey: string } {
  const user = `create-retry-${++users}`;
  return { caller: { user, product: 'tests' }, body: { name: 'retried', streamUri: 'rtmp://127.0.0.1:9/live/x' }, idempotencyKey: `key-${users}` };
}

const admit = (create: CreateSessionRequest) => admitSession(deps(), create, Date.now() + 5000);

/** An attempt at `create` held at its stream check, after its claim and slot and before its write, until resumed with the check's answer. */
async function heldAttempt(create: CreateSessionRequest): Promise<{ outcome: Promise<Admitted>; resume(refusal?: string): void }> {
  let resume!: (refusal?: string) => void;
  holdNextCheck = new Promise((resolve) => (resume = resolve));
  const held = checksHeld;
  const outcome = admit(create);
  await waitUntil('the attempt held before its write', async () => checksHeld > held, 5000);
  return { outcome, resume };
}
const slotsKey = (user: string) => `user.${createHash('sha256').update(user).digest('hex')}`;
const slots = async (user: string) => ((await quotaKv.get(slotsKey(user)))?.json<Array<{ id: string }>>() ?? []).map((slot) => slot.id);
const code = (promise: Promise<unknown>) => promise.then(() => 'admitted', (error: { code?: string }) => error.code ?? String(error));

/**
 * What a first attempt at `create` leaves once it has sent its record write and not heard back
 * (the write lost with the bucket's leader, or on its way to the next one): the key claimed for
 * its session, the slot taken. Returns that session's id.
 */
async function attemptWithoutItsRecord(create: CreateSessionRequest & { idempotencyKey: string }): Promise<string> {
  const { user } = create.caller;
  const session = newSessionId(Date.now());
  assert.ok((await keys.claim(user, create.idempotencyKey, { session, fingerprint: fingerprintOf({ caller: create.caller, body: create.body }), at: Date.now() })).claimed);
  await quotas.admit(user, session, Date.now() + 5000);
  return session;
}

test('a retry of a create whose record was never written makes that session at once, in its slot', async () => {
  const create = request();
  const { user } = create.caller;
  const session = await attemptWithoutItsRecord(create);
  const retried = await admit(create);
  assert.is(retried.record.id, session, 'the session the key was claimed for');
  assert.ok(retried.created);
  assert.is((await records.fresh(session))?.record.state, 'active');
  assert.equal(await slots(user), [session], 'one slot, the one the first attempt took');
  const again = await admit(create);
  assert.equal([again.record.id, again.created], [session, false]);
});

test('the first attempt, still running, returns the session its retry made', async () => {
  const create = request();
  const first = await heldAttempt(create);
  const retried = await admit(create);
  assert.ok(retried.created);
  first.resume();
  const late = await first.outcome;
  assert.equal([late.record.id, late.created], [retried.record.id, false], 'the same session, made once');
  assert.equal(await slots(create.caller.user), [retried.record.id]);
});

test('a first attempt that fails after its retry took the key over gives back neither the key nor the slot', async () => {
  const create = request();
  const first = await heldAttempt(create);
  const retried = await admit(create);
  first.resume('refused for this case');
  assert.is(await code(first.outcome), 'invalid_body', 'the first attempt failed');
  assert.equal(await slots(create.caller.user), [retried.record.id], 'the slot of the session made stays');
  const again = await admit(create);
  assert.equal([again.record.id, again.created], [retried.record.id, false], 'the key still names it');
});

test("a retry that took the key over and fails before its write keeps the key: the next retry finds the session the first attempt's late write made", async () => {
  const create = request();
  const { user } = create.caller;
  const session = await attemptWithoutItsRecord(create);
  const retry = await heldAttempt(create);
  retry.resume('refused for this case');
  assert.is(await code(retry.outcome), 'invalid_body', 'the retry failed before its write');
  await records.create({ ...activeSessionRecord(user, 'retried'), id: session });
  const next = await admit(create);
  assert.equal([next.record.id, next.created], [session, false], 'the key still names the session made');
  assert.equal(await slots(user), [session], 'in its one slot');
});

test('a retry of a create whose session was made and deleted since makes a new one', async () => {
  const create = request();
  const made = await admit(create);
  const latest = await records.fresh(made.record.id);
  assert.ok(await records.remove(made.record.id, latest!.revision));
  const retried = await admit(create);
  assert.ok(retried.created);
  assert.is.not(retried.record.id, made.record.id);
  assert.equal(await slots(create.caller.user), [retried.record.id], "the deleted session's slot pruned");
});

test('a create refused before its write gives back its key and its slot', async () => {
  const create = request();
  holdNextCheck = Promise.resolve('refused for this case');
  assert.is(await code(admit(create)), 'invalid_body');
  assert.equal(await slots(create.caller.user), []);
  const next = await admit(create);
  assert.ok(next.created, 'the key is free for the retry');
});

test('a slot whose write went unconfirmed is dropped when it appears late, unless its session was made meanwhile', async () => {
  const { user } = request().caller;
  const [lost, made] = [newSessionId(Date.now()), newSessionId(Date.now() + 1)];
  const deadline = Date.now() + 5000;
  await quotas.release(user, lost, deadline, { unsure: true });
  await quotas.release(user, made, deadline, { unsure: true });
  // A retry wrote one's record; then a new leader makes both slots' writes late.
  await records.create({ ...activeSessionRecord(user, 'made by a retry'), id: made });
  const lateWrite = async (ids: string[]) => {
    const entry = await quotaKv.get(slotsKey(user));
    const held = entry?.operation === 'PUT' ? entry.json<object[]>() : [];
    const slots = [...held, ...ids.map((id) => ({ id, at: Date.now(), until: deadline + 30_000 }))];
    // By revision: a check that dropped a slot meanwhile is not undone here.
    if (entry) await quotaKv.update(slotsKey(user), JSON.stringify(slots), entry.revision);
    else await quotaKv.create(slotsKey(user), JSON.stringify(slots));
  };
  await lateWrite([lost, made]);
  // Each time the lost slot is dropped, the entry has been checked; three rounds of it span
  // more than one check of the other slot, which stays.
  for (let round = 1; round <= 3; round++) {
    await waitUntil(`the slot without a session dropped (round ${round})`, async () => !(await slots(user)).includes(lost), 5000);
    assert.equal(await slots(user), [made], `round ${round}`);
    if (round < 3) await lateWrite([lost]);
  }
});

test("a failed attempt's release leaves the slot that a retry of it took over, its record not yet written", async () => {
  const { user } = request().caller;
  const session = newSessionId(Date.now());
  const first = Date.now() + 2000;
  await quotas.admit(user, session, first);
  // The retry, with the same key and a later deadline, holds the slot now.
  await quotas.admit(user, session, first + 3000);
  await quotas.release(user, session, first);
  assert.equal(await slots(user), [session]);
});

// Last: it removes the keys' bucket.
test("a create refused before its write while the keys' bucket does not answer still gives back its slot", async () => {
  const create = request();
  const attempt = await heldAttempt(create);
  assert.equal((await slots(create.caller.user)).length, 1, 'its slot taken');
  await (await jetstreamManager(nc)).streams.delete(`KV_${buckets.idempotency}`);
  attempt.resume('refused for this case');
  assert.is(await code(attempt.outcome), 'invalid_body');
  assert.equal(await slots(create.caller.user), [], 'the slot given back all the same');
});

test.run();
