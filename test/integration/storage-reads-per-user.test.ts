// One user's slow reads cannot take ClickHouse from the others, at the default bounds: while
// user A keeps as many deep event pages in flight as the gateway lets it (each reads millions
// of events), the storage service runs at most STORAGE_READS_IN_FLIGHT_PER_USER of them and
// refuses the rest at once (429 with Retry-After), user B's reads are all answered 200, and the
// writer, on sockets of its own, keeps storing B's events meanwhile. Reads reach ClickHouse with
// its priority setting: A's, refused, below all of B's.
import { test } from '../../ops/support/uvu.ts';
import * as assert from 'uvu/assert';
import { readConfig } from '../../bus/config.ts';
import { sessionDay } from '../../bus/ids.ts';
import { freePort } from '../../ops/stack/ports.ts';
import { startServices, type Reply, type Services } from '../../ops/support/services.ts';
import { clickHouseServer, connectClickHouse, queryRows, type ClickHouseClient } from '../../storage/clickhouse/clickhouse.ts';
import { sql } from '../../storage/clickhouse/sql.ts';
import { FLOODER_READS, READS } from '../../storage/clickhouse/reads-in-flight.ts';

const config = readConfig();
const defaults = readConfig({});
// Enough that a page near the end of them takes ClickHouse a good while.
const EVENTS_OF_A = 1_000_000;

let services: Services;
let clickhouse: ClickHouseClient;
let streamUri: string;

test.before(async () => {
  services = await startServices({
    name: 'storage-reads-per-user',
    env: {
      STREAM_UNREACHABLE_SECONDS: '900',
      REQUESTS_IN_FLIGHT_PER_USER: String(defaults.requestsInFlightPerUser),
      CLICKHOUSE_READ_CONNECTIONS: String(defaults.clickhouseReadConnections),
      STORAGE_READS_IN_FLIGHT_PER_USER: String(defaults.storageReadsInFlightPerUser),
      // The test stack's user whose queries system.query_log keeps, with their settings.
      CLICKHOUSE_USER: 'logged',
    },
  });
  clickhouse = connectClickHouse(clickHouseServer(config), config.clickhouseDatabase);
  // Nothing listens there: a created session only keeps reconnecting.
  streamUri = `rtmp://127.0.0.1:${await freePort()}/live/none`;
});

test.after(async () => {
  await services?.stop();
  await clickhouse?.close();
});

const statuses = (replies: Reply[]) => {
  const counts: Record<number, number> = {};
  for (const reply of replies) counts[reply.status] = (counts[reply.status] ?? 0) + 1;
  return counts;
};

const count = async (query: string) => Number((await queryRows<{ n: number }>(clickhouse, query))[0]?.n ?? 0);

/** The ClickHouse priorities the user's reads naming `session` ran at (0, none given: the service's own queries). */
async function prioritiesOf(session: string): Promise<number[]> {
  await clickhouse.command({ query: 'SYSTEM FLUSH LOGS' });
  const rows = await queryRows<{ priority: number }>(
    clickhouse,
    sql`SELECT DISTINCT toUInt64OrZero(Settings.Values[indexOf(Settings.Names, 'priority')]) AS priority
        FROM system.query_log WHERE type = 1 AND user = 'logged' AND position(query, ${session}) > 0 AND priority > 0
        ORDER BY priority`,
  );
  return rows.map((row) => Number(row.priority));
}

test('the defaults leave room: a user\'s reads at once on a storage service are below its read sockets, and above a dashboard tab\'s', () => {
  assert.ok(defaults.storageReadsInFlightPerUser < defaults.clickhouseReadConnections);
  assert.ok(defaults.storageReadsInFlightPerUser >= 5);
});

test("user A's deep pages hold at most its share of the read sockets: the rest are refused with 429, B's reads answer 200 and B's events are stored meanwhile", async () => {
  const { alice, bob } = services.users;
  const create = async (token: string) => {
    const created = await services.api('POST', '/v1/sessions', { token, body: { name: 'reads', streamUri } });
    assert.is(created.status, 201, JSON.stringify(created.body));
    return created.body._id as string;
  };
  const [heavy, light] = await Promise.all([create(alice.token), create(bob.token)]);

  // A's session holds millions of events, made by ClickHouse itself.
  await clickhouse.command({
    query: `INSERT INTO custom_events (session, id, source, user, time, text, value, day)
            SELECT ${sql`${heavy}`}, toString(number), 'sensor', ${sql`${alice.user}`}, number / 100, NULL, toFloat64(number), toDate(${sql`${sessionDay(heavy)}`})
            FROM system.numbers LIMIT ${EVENTS_OF_A}`,
    clickhouse_settings: { max_insert_block_size: '1048576' },
  });
  const deepPage = `/v1/sessions/${heavy}/events?limit=100&offset=${EVENTS_OF_A - 50}`;
  const started = performance.now();
  const alone = await services.api('GET', deepPage, { token: alice.token });
  console.log(`one deep page alone: ${alone.status} in ${Math.round(performance.now() - started)} ms`);

  const source = await services.api('POST', `/v1/sessions/${light}/events`, { token: bob.token, body: { name: 'sensor', format: 'scalar' } });
  assert.is(source.status, 201, JSON.stringify(source.body));

  // A: as many deep pages at once as the gateway lets one user have, again and again.
  let flooding = true;
  let inFlightOfA = 0;
  const answersOfA: Reply[] = [];
  const floodA = Promise.all(Array.from({ length: defaults.requestsInFlightPerUser }, async () => {
    while (flooding) {
      inFlightOfA++;
      let answer: Reply;
      try {
        answer = await services.api('GET', deepPage, { token: alice.token });
      } finally {
        inFlightOfA--;
      }
      answersOfA.push(answer);
      // Refused at once: a pause, so that the test machine's cores go to the reads, not to refusals.
      if (answer.status === 429) await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }));

  // B meanwhile: a timeline, a page of events and the list, and events stored one batch at a time.
  const answersOfB: Reply[] = [];
  let storedWhileAReads = 0;
  const rounds = 8;
  try {
    for (let round = 0; round < rounds; round++) {
      answersOfB.push(...await Promise.all([
        services.api('GET', `/v1/sessions/${light}/emotions/timeline?granularity=5`, { token: bob.token }),
        services.api('GET', `/v1/sessions/${light}/events?limit=10`, { token: bob.token }),
        services.api('GET', '/v1/sessions?limit=5', { token: bob.token }),
      ]));
      const added = await services.api('POST', `/v1/sessions/${light}/events/${source.body.id}`, {
        token: bob.token,
        body: [{ time: round, data: round }],
      });
      assert.is(added.status, 201, JSON.stringify(added.body));
      const where = sql`session = ${light} AND time = ${round}`;
      for (let tries = 0; (await count(`SELECT count() AS n FROM custom_events WHERE ${where}`)) === 0; tries++) {
        assert.ok(tries < 300, `B's event ${round} stored`);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      if (inFlightOfA > 0) storedWhileAReads++;
    }
  } finally {
    flooding = false;
    await floodA;
  }

  const seenA = statuses(answersOfA);
  console.log(`A's deep pages: ${JSON.stringify(seenA)}; B's reads: ${JSON.stringify(statuses(answersOfB))}; B's events stored while A read: ${storedWhileAReads} of ${rounds}`);
  assert.equal(statuses(answersOfB), { 200: answersOfB.length }, "every read of B's answered");
  assert.ok(storedWhileAReads >= rounds - 1, `B's events were stored while A's reads were in flight (${storedWhileAReads} of ${rounds})`);
  const byStorage = answersOfA.filter((reply) => reply.status === 429 && /storage service/.test(reply.body.message));
  assert.ok(byStorage.length >= 1, `the storage service refused some of A's reads: ${JSON.stringify(seenA)}`);
  assert.is(byStorage[0]!.body.code, 'rate_limited');
  assert.is(byStorage[0]!.headers.get('retry-after'), '1');
  // Answered, refused, or given up at the deadline (503): nothing else.
  assert.equal(Object.keys(seenA).filter((status) => !['200', '429', '503'].includes(status)), [], JSON.stringify(seenA));

  // Each read's queries carry its ClickHouse priority: A's, once refused, below B's. (The
  // service's own queries that name the session, such as the index following its changes, carry
  // none: they neither wait nor hold anyone back.)
  assert.equal(await prioritiesOf(heavy), [READS, FLOODER_READS], "A's reads' priorities: its first before any refusal, then a flooder's");
  assert.equal(await prioritiesOf(light), [READS], "B's reads' priorities");
});

test.run();
