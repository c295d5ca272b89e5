// Least privilege on the bus: each kind of process connects as its own NATS user
// (bus/permissions.ts), and the server refuses it what the kind must not do. The gateway,
// facing the internet, reads no session record (they hold the streams' keys), answers no
// operation and publishes no row; hosts and storage services answer only their own operations.
import { test } from '../../ops/support/uvu.ts';
import * as assert from 'uvu/assert';
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import { Kvm } from '@nats-io/kv';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { readConfig } from '../../bus/config.ts';
import { busServers, connectBus } from '../../bus/connection.ts';
import { createLog } from '../../bus/log.ts';
import { operations } from '../../bus/operations.ts';
import { type BusUser } from '../../bus/permissions.ts';
import { buckets, streams, subjects, tenantOf } from '../../bus/subjects.ts';
import { localPasswords, withCredential } from '../../ops/stack/bus-credentials.ts';
import { allowedSubscription, refusedDelivery, refusedRequest, refusedSubscription } from '../support/bus-refusals.ts';

const config = readConfig();
const quiet = createLog({ logLevel: 'silent', hostId: 'bus-permissions' });
const connections: NatsConnection[] = [];

async function connectAs(user: BusUser): Promise<NatsConnection> {
  const nc = await connectBus(`bus-permissions ${user}`, withCredential(config.natsUrl, user, localPasswords()[user]), quiet, { user });
  connections.push(nc);
  return nc;
}

test.after(async () => {
  await Promise.all(connections.map((nc) => nc.close()));
});

const refusedPublish = async (nc: NatsConnection, subject: string) => {
  const admin = await connectBus('bus-permissions admin', config.natsUrl, quiet);
  connections.push(admin);
  await refusedDelivery(nc, admin, subject);
};

const session = 'feedfacefeedfacefeedface';

test('the gateway cannot read a session record, nor any bucket or stream', async () => {
  const nc = await connectAs('gateway');
  const js = jetstream(nc);
  await refusedRequest(new Kvm(js).open(buckets.sessions).then((kv) => kv.get(session)), 'opening the sessions bucket');
  await refusedRequest(new Kvm(js).open(buckets.sessions, { bindOnly: true }).then((kv) => kv.get(session)), 'reading a key of the sessions bucket');
  await refusedRequest(jetstreamManager(nc, { checkAPI: false }).then((jsm) => jsm.streams.info(streams.rows)), 'the ROWS stream\'s info');
  await refusedSubscription(nc, `$KV.${buckets.sessions}.>`);
  await refusedSubscription(nc, '_INBOX.>');
  await refusedSubscription(nc, '_INBOX.host.>');
});

test('the gateway cannot answer as an actor host or a storage service, nor publish rows', async () => {
  const nc = await connectAs('gateway');
  await refusedSubscription(nc, subjects.create, 'hosts');
  await refusedSubscription(nc, operations['sessions.get'].subject, 'api');
  await refusedSubscription(nc, operations['sessions.list'].subject, 'api');
  await refusedSubscription(nc, subjects.apiWildcard);
  await refusedPublish(nc, subjects.row(session, tenantOf({ product: 'tests', user: 'someone' }), 'face'));
  await refusedPublish(nc, subjects.workerState(session, tenantOf({ product: 'tests', user: 'someone' })));
  // What it is for: following live results.
  await allowedSubscription(nc, subjects.rowsOfSession(session));
  await allowedSubscription(nc, subjects.workerState(session));
});

test('an actor host answers its own operations only, and cannot purge or read the purge queue', async () => {
  const nc = await connectAs('host');
  await allowedSubscription(nc, subjects.create, 'hosts');
  await allowedSubscription(nc, operations['sessions.update'].subject, 'api');
  await refusedSubscription(nc, operations['sessions.list'].subject, 'api');
  await refusedSubscription(nc, operations['sessions.purge'].subject, 'api');
  await refusedSubscription(nc, '_INBOX.gateway.>');
  await refusedRequest(new Kvm(jetstream(nc)).open(buckets.purges, { bindOnly: true }).then((kv) => kv.get(session)), 'reading the purge queue');
  await refusedPublish(nc, subjects.deadRow('face'));
});

test('a storage service answers its own operations only, and cannot write a session record', async () => {
  const nc = await connectAs('storage');
  await allowedSubscription(nc, operations['sessions.list'].subject, 'api');
  await refusedSubscription(nc, subjects.create, 'hosts');
  await refusedSubscription(nc, operations['sessions.get'].subject, 'api');
  await refusedPublish(nc, `$KV.${buckets.sessions}.${session}`);
  await refusedPublish(nc, subjects.row(session, tenantOf({ product: 'tests', user: 'someone' }), 'face'));
  await refusedRequest(new Kvm(jetstream(nc)).open(buckets.quotas, { bindOnly: true }).then((kv) => kv.get('someone')), 'reading the quotas');
});

test('a wrong password is refused', async () => {
  const error = await connect({ servers: busServers(config.natsUrl).servers, user: 'gateway', pass: 'guessed' }).then(
    (nc) => (connections.push(nc), undefined),
    (caught: unknown) => caught,
  );
  assert.ok(error instanceof Error && /authorization/i.test(error.message), `refused: ${String(error)}`);
});

test.run();
