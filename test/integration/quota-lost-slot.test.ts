// A user's quota entry that lost the slot of an active session still counts it, and gets the
// slot back. On a clustered bucket, nats-server before 2.9.21 may take two compare-and-set
// writes on one revision (nats-server#4320): the second drops the slot the first added, and the
// user could then hold one session more than allowed (cluster/kv-leader-loss met it once). Here
// the entry is written as that second write leaves it, on a real NATS server, and the quotas
// are told the records by a real watch, as a host's are.
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { test } from '../../ops/support/uvu.ts';
import * as assert from 'uvu/assert';
import { jetstream } from '@nats-io/jetstream';
import { Kvm } from '@nats-io/kv';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { UserQuotas } from '../../actors/session/quotas.ts';
import { readConfig } from '../../bus/config.ts';
import type { SessionRecord } from '../../bus/contracts/session.ts';
import { createLog } from '../../bus/log.ts';
import { SessionRecords } from '../../bus/session-records.ts';
import { buckets } from '../../bus/subjects.ts';
import { freePort } from '../../ops/stack/ports.ts';
import { startNats } from '../../ops/stack/nats.ts';
import { waitUntil, type Service } from '../../ops/stack/process.ts';
import { activeSessionRecord } from '../support/session-record.ts';

const config = readConfig();
const USER = 'quota-lost-slot';
const MAX_ACTIVE = 3;

let nats: Service;
let nc: NatsConnection;
let records: SessionRecords;
let quotas: UserQuotas;
/** The sessions the watch has told the quotas of. */
const observed = new Set<string>();

test.before(async () => {
  const port = await freePort();
  nats = await startNats({ dir: join(config.varDir, 'test', `quota-lost-slot-${process.pid}`, 'nats'), port });
  nc = await connect({ servers: `nats://127.0.0.1:${port}` });
  const js = jetstream(nc);
  records = await SessionRecords.open(js, createLog({ logLevel: 'silent', hostId: 'quota-lost-slot' }), 1);
  quotas = await UserQuotas.open(js, records, MAX_ACTIVE, 1);
  await records.watch((record) => {
    quotas.observe(record);
    observed.add(record.id);
  });
});

test.after(async () => {
  records?.close();
  await nc?.close();
  await nats?.stop();
});

/** A session admitted and created as a host does: its slot, then its record. */
async function created(): Promise<SessionRecord> {
  const record = activeSessionRecord(USER, 'slot');
  await quotas.admit(USER, record.id, Date.now() + 5000);
  await records.create(record);
  return record;
}

const refusal = (promise: Promise<void>) => promise.then(() => undefined, (error: { code?: string }) => error.code ?? String(error));

test('an active session whose slot the entry lost still counts, and gets its slot back', async () => {
  const [first, second] = [await created(), await created()];
  const kv = await new Kvm(nc).open(buckets.quotas);
  const key = `user.${createHash('sha256').update(USER).digest('hex')}`;
  const entry = async () => ((await kv.get(key))?.json<Array<{ id: string }>>() ?? []).map((slot) => slot.id).sort();
  assert.equal(await entry(), [first.id, second.id].sort(), 'both slots taken');
  // What a second write on the first's revision leaves: the entry without the second's slot.
  await kv.put(key, JSON.stringify([{ id: first.id, at: Date.now() }]));
  await waitUntil('the watch told the quotas of both sessions', async () => observed.has(first.id) && observed.has(second.id), 10_000);

  const third = activeSessionRecord(USER, 'slot');
  assert.is(await refusal(quotas.admit(USER, third.id, Date.now() + 5000)), undefined, 'the third session fits');
  assert.equal(await entry(), [first.id, second.id, third.id].sort(), 'the lost slot is back beside the new one');
  assert.is(await refusal(quotas.admit(USER, activeSessionRecord(USER, 'slot').id, Date.now() + 5000)), 'quota_exceeded', 'a fourth does not fit');
});

test.run();
