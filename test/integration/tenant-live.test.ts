// Live results per tenant: rows and worker states are published under their session's product
// and user (bus/subjects.ts), so an operator's NATS credential for one product, or for one
// user of it (bus/permissions.ts tenantPermissions; the recipe in docs/operations.md), receives
// that tenant's results and is refused another's. The service runs on a NATS server of this
// file's own, which has those credentials, with users of three tenants, one of whose id is no
// safe subject token.
import { test } from '../../ops/support/uvu.ts';
import * as assert from 'uvu/assert';
import { randomBytes } from 'node:crypto';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { connect, type Msg, type NatsConnection } from '@nats-io/transport-node';
import { readConfig } from '../../bus/config.ts';
import { busServers } from '../../bus/connection.ts';
import { call } from '../../bus/rpc.ts';
import { subjects, subjectToken, tenantOf } from '../../bus/subjects.ts';
import { startNats, type TenantUser } from '../../ops/stack/nats.ts';
import { freePort } from '../../ops/stack/ports.ts';
import { waitUntil, type Service } from '../../ops/stack/process.ts';
import { startServices, type Services } from '../../ops/support/services.ts';
import { allowedSubscription, refusedDelivery, refusedSubscription } from '../support/bus-refusals.ts';
import { httpRequest } from '../../ops/stack/http-client.ts';

const config = readConfig();
const dir = join(config.varDir, 'test', `tenant-live-${process.pid}`);
const suffix = randomBytes(4).toString('hex');
const people = {
  carol: { user: 'carol', product: 'acme', token: `carol-${suffix}` },
  dave: { user: 'dave@acme.example', product: 'acme', token: `dave-${suffix}` },
  erin: { user: 'erin', product: 'globex', token: `erin-${suffix}` },
};
type Person = keyof typeof people;
// One user's credential, and one of a whole product's.
const carolCredential: TenantUser = { user: 'carol-live', password: randomBytes(12).toString('hex'), tenant: tenantOf(people.carol) };
const acmeCredential: TenantUser = { user: 'acme-live', password: randomBytes(12).toString('hex'), tenant: subjectToken('acme') };

let nats: Service & { url: string };
let monitor: string;
let services: Services;
let admin: NatsConnection;
const tenants: NatsConnection[] = [];
const sessions = {} as Record<Person, string>;

/** What a tenant's connection received, by subject. */
function collect(nc: NatsConnection, subject: string): Msg[] {
  const received: Msg[] = [];
  nc.subscribe(subject, { callback: (error, msg) => void (error ? undefined : received.push(msg)) });
  return received;
}

const tenantConnection = async ({ user, password }: TenantUser) => {
  const nc = await connect({ servers: busServers(nats.url).servers, user, pass: password });
  tenants.push(nc);
  return nc;
};

test.before(async () => {
  mkdirSync(dir, { recursive: true });
  const monitorPort = await freePort();
  monitor = `http://127.0.0.1:${monitorPort}`;
  nats = await startNats({ dir: join(dir, 'nats'), port: await freePort(), monitorPort, tenants: [carolCredential, acmeCredential] });
  const tokensFile = join(dir, 'tokens.json');
  writeFileSync(tokensFile, JSON.stringify(Object.values(people)));
  services = await startServices({ name: 'tenant-live', env: { NATS_URL: nats.url, AUTH_TOKENS_FILE: tokensFile, STREAM_UNREACHABLE_SECONDS: '600' } });
  admin = await connect({ servers: nats.url });
});

test.after(async () => {
  await Promise.all([admin, ...tenants].map((nc) => nc?.close()));
  await services?.stop();
  await nats?.stop();
  rmSync(dir, { recursive: true, force: true });
});

async function createWithEvent(person: Person): Promise<string> {
  const { token } = people[person];
  // Nothing listens there: the session stays active while its worker retries.
  const created = await services.api('POST', '/v1/sessions', { body: { name: person, streamUri: `rtmp://127.0.0.1:${await freePort()}/live/none` }, token });
  assert.is(created.status, 201, JSON.stringify(created.body));
  const id = created.body._id as string;
  const source = await services.api('POST', `/v1/sessions/${id}/events`, { body: { name: 'door', format: 'text' }, token });
  assert.is(source.status, 201, JSON.stringify(source.body));
  const event = await services.api('POST', `/v1/sessions/${id}/events/${source.body.id}`, { body: { time: 1, data: `${person} came in` }, token });
  assert.is(event.status, 201, JSON.stringify(event.body));
  return id;
}

const sessionsIn = (messages: Msg[]) => new Set(messages.map((msg) => msg.subject.split('.')[2]));

test('each process is connected as the NATS user of its kind', async () => {
  const { connections } = JSON.parse((await httpRequest(`${monitor}/connz?auth=1&limit=1024`)).text) as { connections: { name?: string; authorized_user?: string }[] };
  const userOf = (prefix: string) => new Set(connections.filter((c) => c.name?.startsWith(prefix)).map((c) => c.authorized_user));
  assert.equal(userOf('gateway '), new Set(['gateway']));
  assert.equal(userOf('actor-host '), new Set(['host']));
  assert.equal(userOf('storage '), new Set(['storage']));
});

test('a user\'s credential receives that user\'s rows and worker states, a product\'s every user\'s of it, none another\'s', async () => {
  const [carolLive, acmeLive] = [await tenantConnection(carolCredential), await tenantConnection(acmeCredential)];
  const carolRows = collect(carolLive, subjects.rowsOfTenant(carolCredential.tenant));
  const carolStates = collect(carolLive, subjects.liveOfTenant(carolCredential.tenant));
  const acmeRows = collect(acmeLive, subjects.rowsOfTenant(acmeCredential.tenant));
  const everyRow = collect(admin, subjects.rowsAll);
  await Promise.all([carolLive.flush(), acmeLive.flush(), admin.flush()]);

  for (const person of Object.keys(people) as Person[]) sessions[person] = await createWithEvent(person);
  // Every event row is out once the admin, who may read them all, has seen the three.
  await waitUntil('the three event rows', async () => sessionsIn(everyRow).size === 3, 20_000);
  await waitUntil('carol\'s row and worker state', async () => carolRows.length > 0 && carolStates.length > 0, 10_000);
  await Promise.all([carolLive.flush(), acmeLive.flush()]);

  assert.equal([...sessionsIn(carolRows)], [sessions.carol]);
  assert.equal([...sessionsIn(carolStates)], [sessions.carol]);
  assert.equal(new Set(sessionsIn(acmeRows)), new Set([sessions.carol, sessions.dave]));
  // Dave's id is no subject token: it is there as its hash.
  assert.ok(everyRow.some((msg) => msg.subject === subjects.row(sessions.dave, `acme.${subjectToken(people.dave.user)}`, 'event')));
  assert.match(subjectToken(people.dave.user), /^~[0-9a-f]{32}$/);
});

test('a caller outside the service (an operator\'s tool, connected without a user) is answered', async () => {
  const { user, product } = people.carol;
  const found = await call(admin, 'sessions.get', { caller: { user, product }, session: sessions.carol }, 5000);
  assert.is(found._id, sessions.carol);
});

test('a tenant\'s credential is refused another tenant\'s subjects, and publishes nothing', async () => {
  const [carolLive, acmeLive] = [await tenantConnection(carolCredential), await tenantConnection(acmeCredential)];
  const dave = tenantOf(people.dave);
  const erin = tenantOf(people.erin);
  await allowedSubscription(carolLive, subjects.row(sessions.carol, tenantOf(people.carol), 'event'));
  await refusedSubscription(carolLive, subjects.rowsOfTenant(dave));
  await refusedSubscription(carolLive, subjects.liveOfTenant(dave));
  await refusedSubscription(carolLive, subjects.row(sessions.dave, dave, 'event'));
  await refusedSubscription(carolLive, subjects.rowsOfSession(sessions.carol));
  await refusedSubscription(carolLive, subjects.rowsAll);
  await refusedSubscription(acmeLive, subjects.rowsOfTenant(erin));
  await refusedSubscription(acmeLive, subjects.workerState(sessions.erin, erin));
  await refusedSubscription(acmeLive, subjects.workerStateAll);
  await refusedDelivery(carolLive, admin, subjects.row(sessions.carol, tenantOf(people.carol), 'event'));
});

test.run();
