// A deleted session's purge waits for the index to hold the changes made before its deletion,
// even one still being inserted. The index follower's insert of a rename is held in flight (a
// proxy in front of ClickHouse keeps it from the server) while the session is deleted: the
// rename's message is replaced in the bucket by the deletion, and if JetStream counted it as
// acknowledged, the purge round would remove the session's rows first and the late row would
// bring the deleted session back to its user's list for good. The round waits instead, as
// long as the insert is held; once it is let go, the session leaves the index and the list.
// Another user's session, renamed meanwhile, keeps its rename.
import type { Socket } from 'node:net';
import { jetstream } from '@nats-io/jetstream';
import { Kvm } from '@nats-io/kv';
import { connect } from '@nats-io/transport-node';
import { test } from '../../ops/support/uvu.ts';
import * as assert from 'uvu/assert';
import { readConfig } from '../../bus/config.ts';
import { buckets } from '../../bus/subjects.ts';
import { connectClickHouse, clickHouseServer, queryRows, type ClickHouseClient } from '../../storage/clickhouse/clickhouse.ts';
import { sql } from '../../storage/clickhouse/sql.ts';
import { waitUntil } from '../../ops/stack/process.ts';
import { startServices, type Services } from '../../ops/support/services.ts';
import { startTcpProxy, type TcpProxy } from '../support/tcp-proxy.ts';

const config = readConfig();
const PURGE_WINDOW_SECONDS = 2;

let services: Services;
let clickhouse: ClickHouseClient;
let proxy: TcpProxy;

/**
 * Holds the next insert into the session index, once armed, until released: all of it but its
 * last byte reaches the server, which waits for the rest (an insert is stored once whole), so
 * neither side gives up on the connection meanwhile.
 */
class IndexInsertHold {
  armed = false;
  held = 0;
  answered = 0;
  private releases: Array<() => void> = [];

  readonly pipe = (client: Socket, upstream: Socket) => {
    upstream.pipe(client);
    let holding: Buffer[] | undefined;
    client.on('data', (chunk: Buffer) => {
      if (holding) return void holding.push(chunk);
      if (this.armed && isIndexInsert(chunk)) {
        this.armed = false;
        this.held++;
        upstream.write(chunk.subarray(0, chunk.length - 1));
        holding = [chunk.subarray(chunk.length - 1)];
        upstream.once('data', () => this.answered++);
        this.releases.push(() => {
          for (const part of holding!) upstream.write(part);
          holding = undefined;
        });
        return;
      }
      upstream.write(chunk);
    });
  };

  release(): void {
    for (const release of this.releases.splice(0)) release();
  }
}

/** Whether the chunk begins an HTTP request whose query inserts into `sessions`. */
function isIndexInsert(chunk: Buffer): boolean {
  const line = chunk.subarray(0, chunk.indexOf('\r\n')).toString('latin1');
  if (!line.startsWith('POST ')) return false;
  const query = new URL(line.split(' ')[1]!, 'http://clickhouse').searchParams.get('query') ?? '';
  return /^INSERT INTO sessions\b/i.test(query.trim());
}

const hold = new IndexInsertHold();

test.before(async () => {
  const target = new URL(config.clickhouseUrl);
  proxy = await startTcpProxy({ host: target.hostname, port: Number(target.port) }, hold.pipe);
  services = await startServices({
    name: 'sessions-delete-late-index',
    env: { CLICKHOUSE_URL: `http://127.0.0.1:${proxy.port}`, PURGE_WINDOW_SECONDS: String(PURGE_WINDOW_SECONDS) },
  });
  clickhouse = connectClickHouse(clickHouseServer(config), config.clickhouseDatabase);
});

test.after(async () => {
  hold.release();
  await clickhouse?.close();
  await services?.stop();
  await proxy?.close();
});

/** The session's rows in the index, counted without FINAL, straight from the server. */
async function indexRows(id: string): Promise<number> {
  const [row] = await queryRows<{ rows: string }>(clickhouse, `SELECT count() AS rows FROM sessions WHERE id = ${sql`${id}`}`);
  return Number(row!.rows);
}

async function finishedSession(token: string, name: string): Promise<string> {
  const created = await services.api('POST', '/v1/sessions', { body: { name, streamUri: 'rtmp://127.0.0.1:9/live/late-index' }, token });
  assert.is(created.status, 201, JSON.stringify(created.body));
  assert.is((await services.api('POST', `/v1/sessions/${created.body._id}/stop`, { token })).status, 200);
  return created.body._id;
}

const listed = async (token: string) =>
  ((await services.api('GET', '/v1/sessions?limit=100', { token })).body.data as Array<{ _id: string; name: string }>);

test('a rename being indexed when its session is deleted does not bring the session back', async () => {
  const { alice, bob } = services.users;
  const id = await finishedSession(alice.token, 'deleted while indexed');
  const kept = await finishedSession(bob.token, 'kept');
  await waitUntil('both sessions indexed', async () => (await indexRows(id)) > 0 && (await indexRows(kept)) > 0, 30_000);

  hold.armed = true;
  assert.is((await services.api('PATCH', `/v1/sessions/${id}`, { body: { name: 'renamed on its way out' }, token: alice.token })).status, 200);
  await waitUntil('the rename\'s insert into the index held in flight', async () => hold.held === 1, 30_000);
  const deleted = await services.api('DELETE', `/v1/sessions/${id}`, { token: alice.token });
  assert.is(deleted.status, 204, JSON.stringify(deleted.body));
  assert.is((await services.api('GET', `/v1/sessions/${id}`, { token: alice.token })).status, 404, 'gone for its user at once');
  assert.not.ok((await listed(alice.token)).some((session) => session._id === id), 'not in its user\'s list');

  // Whether a round purges the session while the rename is held is JetStream's to decide (the
  // replaced message may or may not count as acknowledged yet): either way, nothing may be left.
  const purgedFirst = await waitUntil('a round to purge the session with the rename held', async () => (await indexRows(id)) === 0, 4 * PURGE_WINDOW_SECONDS * 1000)
    .then(() => true, () => false);
  assert.is(hold.answered, 0, 'the rename was held throughout');
  const renamed = await services.api('PATCH', `/v1/sessions/${kept}`, { body: { name: 'kept, renamed' }, token: bob.token });
  assert.is(renamed.status, 200);

  hold.release();
  await waitUntil('the held insert stored', async () => hold.answered === 1, 30_000);
  console.log(`  the purge round ran ${purgedFirst ? 'before the rename landed: its row came after the round' : 'once the rename was stored'}`);
  // Done once no row is left and no purge of the session waits: the late row, if it came after
  // the round, has queued the session again, and that round has run too.
  const nc = await connect({ servers: process.env.NATS_URL });
  try {
    const purges = await new Kvm(jetstream(nc)).open(buckets.purges);
    const waiting = async () => (await purges.get(`queued.${id}`))?.operation === 'PUT';
    await waitUntil('every row of the session gone from the index, no purge of it waiting', async () => (await indexRows(id)) === 0 && !(await waiting()), 60_000);
    assert.is((await purges.get(`purged.${id}`))?.operation, 'PUT', 'purged');
  } finally {
    await nc.close();
  }
  assert.not.ok((await listed(alice.token)).some((session) => session._id === id), 'not back in its user\'s list');
  await waitUntil('bob\'s rename listed', async () => (await listed(bob.token)).some((session) => session._id === kept && session.name === 'kept, renamed'), 30_000);
  assert.is((await services.api('GET', `/v1/sessions/${id}`, { token: alice.token })).status, 404);
});

test.run();
