// Work nobody waits for is dropped: a burst of heavy reads by one user that the gateway gives up
// on (503) is ended by ClickHouse at its deadline, cancelled or timed out, not run to its end,
// and leaves no query of theirs running soon after, so another user's reads are answered as
// usual. ClickHouse 18.16 runs a query on after its HTTP connection closes: only the storage
// service's own limit and KILL QUERY end it.
import { test } from '../../ops/support/uvu.ts';
import * as assert from 'uvu/assert';
import { readConfig } from '../../bus/config.ts';
import { connectClickHouse, clickHouseServer, queryRows, type ClickHouseClient } from '../../storage/clickhouse/clickhouse.ts';
import { sql } from '../../storage/clickhouse/sql.ts';
import { waitUntil } from '../../ops/stack/process.ts';
import { loadSessions } from '../../ops/support/list-data.ts';
import { startServices, type Services } from '../../ops/support/services.ts';

const config = readConfig();

const TIMEOUT_MS = 2000;
const BURST = 40;
const HEAVY_USER_SESSIONS = 1_000_000;

let services: Services;
let clickhouse: ClickHouseClient;

test.before(async () => {
  services = await startServices({
    name: 'abandoned-reads',
    // CLICKHOUSE_USER: the test stack's user whose queries system.query_log keeps, with how each ended.
    env: { BUS_REQUEST_TIMEOUT_MS: String(TIMEOUT_MS), CLICKHOUSE_USER: 'logged', HOST_CAPACITY: '64', STREAM_UNREACHABLE_SECONDS: '900' },
  });
  clickhouse = connectClickHouse(clickHouseServer(config), config.clickhouseDatabase);
  const { alice } = services.users;
  await loadSessions(clickhouse, {
    user: alice.user, count: HEAVY_USER_SESSIONS, newestMs: Date.now() - 60_000, spacingMs: 1000, active: 0,
  });
});

test.after(async () => {
  await clickhouse?.close();
  await services?.stop();
});

/** How many queries of `user` ClickHouse is running now (every read names its user or session). */
async function runningFor(user: string): Promise<number> {
  const [row] = await queryRows<{ n: number }>(
    clickhouse,
    sql`SELECT count() AS n FROM system.processes WHERE position(query, ${user}) > 0 AND position(query, 'system.') = 0`,
  );
  return Number(row?.n);
}

/** How ClickHouse ended each query of `user` since `sinceMs`: its exception's code, '' when it ran to its end. */
async function endingsFor(user: string, sinceMs: number): Promise<string[]> {
  await clickhouse.command({ query: 'SYSTEM FLUSH LOGS' });
  const rows = await queryRows<{ code: string }>(
    clickhouse,
    sql`SELECT extract(exception, '^Code: ([0-9]+)') AS code FROM system.query_log
        WHERE type >= 2 AND event_time >= toDateTime(${Math.floor(sinceMs / 1000)})
          AND position(query, ${user}) > 0 AND position(query, 'system.') = 0`,
  );
  return rows.map((row) => row.code);
}

const CANCELLED = '394';
const TIMEOUT_EXCEEDED = '159';
/** A killed query of 18.16 stops at its next check for it, which a big GROUP BY on a loaded machine may not reach for a few seconds. */
const GONE_WITHIN_MS = 10_000;

test('a burst of abandoned heavy reads is ended by ClickHouse at its deadline, and the other user is answered', async () => {
  const { alice, bob } = services.users;
  const created = await services.api('POST', '/v1/sessions', {
    body: { name: 'light', streamUri: 'rtmp://127.0.0.1:9/live/x' }, token: bob.token,
  });
  assert.is(created.status, 201, JSON.stringify(created.body));
  const bobList = () => services.api('GET', '/v1/sessions?limit=10', { token: bob.token });
  // Under load the index may take longer than this test's short deadline to list the new
  // session: the list answers 503 "catching up" until it does.
  await waitUntil('bob\'s new session listed', async () => (await bobList()).status === 200);

  // Deep pages of a million sessions: each reads the user's whole index.
  const burstAt = Date.now();
  let mostRunning = 0;
  let answered = false;
  const watching = (async () => {
    for (;;) {
      const running = await runningFor(alice.user);
      mostRunning = Math.max(mostRunning, running);
      if (answered && running === 0) return Date.now() - burstAt;
      if (Date.now() - burstAt > TIMEOUT_MS + GONE_WITHIN_MS) return Infinity;
    }
  })();
  const statuses = await Promise.all(Array.from({ length: BURST }, (_, i) =>
    services.api('GET', `/v1/sessions?limit=100&offset=${400_000 + i * 1000}`, { token: alice.token }).then((reply) => reply.status)));
  answered = true;
  const goneMs = await watching;
  // The storage service runs STORAGE_READS_IN_FLIGHT_PER_USER of them at once and refuses the
  // rest (429). Those it runs outlast the deadline (503), but some may beat it on a fast machine.
  const count = (status: number) => statuses.filter((each) => each === status).length;
  assert.is(count(503) + count(429) + count(200), BURST, `every heavy read abandoned, refused or answered: ${statuses}`);
  assert.ok(count(503) >= config.storageReadsInFlightPerUser / 2, `the gateway gave up on only ${count(503)} of ${BURST} heavy reads: ${statuses}`);
  assert.ok(mostRunning > 0, 'the heavy reads did run in ClickHouse');
  assert.ok(goneMs <= TIMEOUT_MS + GONE_WITHIN_MS, `queries of the abandoned reads still ran ${GONE_WITHIN_MS / 1000} s after their deadline`);

  // Gone is not enough: left to run, reads like these end by themselves within that wait.
  // ClickHouse is to have ended those the deadline caught, cancelled by KILL QUERY or past the
  // max_execution_time the storage service gave them. (With both taken out of the service,
  // ClickHouse ended none and this failed: the 8 heavy queries ran to their ends, 2.6 to 2.8 s
  // each.)
  const endings = await endingsFor(alice.user, burstAt);
  assert.ok(endings.some((code) => code === CANCELLED || code === TIMEOUT_EXCEEDED), `ClickHouse ended none of the abandoned reads' queries: ${endings}`);
  for (let i = 0; i < 5; i++) {
    const reply = await bobList();
    assert.is(reply.status, 200, JSON.stringify(reply.body));
    assert.equal(reply.body.data.map((s: { _id: string }) => s._id), [created.body._id]);
  }
});

test.run();
