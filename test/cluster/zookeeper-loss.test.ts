// The whole service on a cluster with two live sessions, losing ZooKeeper: first the ensemble's
// leader for 60 s (the other two elect a new one and ClickHouse moves to them), then all three
// for 60 s (the replicated tables go read-only; the writer retries while rows wait in ROWS).
// Through both, reads answer 200 or 503 within the client's timeout, and ROWS drains once the
// ensemble is back; at the end no row was set aside as dead and every second of media has its
// row. How long inserts stopped and how long ROWS took to drain are printed.
import { setTimeout as sleep } from 'node:timers/promises';
import { test } from '../support/uvu.ts';
import * as assert from 'uvu/assert';
import { consumers, streams } from '../../bus/subjects.ts';
import { queryRows } from '../../storage/clickhouse.ts';
import { waitUntil } from '../../ops/stack/process.ts';
import type { ZooKeeperMember } from '../../ops/stack/zookeeper-ensemble.ts';
import { ask } from '../../ops/stack/zookeeper.ts';
import { startLiveCluster, type LiveCluster, type Reads } from '../support/live-cluster.ts';

const LOSS_MS = 60_000;

let live: LiveCluster;

test.before(async () => {
  live = await startLiveCluster('zookeeper-loss');
});

test.after(async () => {
  await live?.stop();
});

/** The rows every storage service has inserted, from their metrics. */
async function rowsWritten(): Promise<number> {
  let sum = 0;
  for (const storage of live.cluster.storage) {
    const text = await (await fetch(`${storage.metricsUrl}/metrics`)).text();
    sum += Number(/^emo_rows_written_total (\d+)/m.exec(text)?.[1] ?? NaN);
  }
  return sum;
}

/** Samples the rows inserted twice a second until stopped; tells the longest time without one. */
function watchInserts(): { stop(): Promise<number> } {
  let longestStallMs = 0;
  let running = true;
  const loop = (async () => {
    let last = await rowsWritten();
    let lastInsertAt = Date.now();
    while (running) {
      await sleep(500);
      const now = await rowsWritten();
      if (now > last) lastInsertAt = Date.now();
      last = now;
      longestStallMs = Math.max(longestStallMs, Date.now() - lastInsertAt);
    }
  })();
  return {
    async stop() {
      running = false;
      await loop;
      return longestStallMs;
    },
  };
}

/** Waits until every row ROWS held when called has been written and acknowledged. */
async function drained(): Promise<void> {
  const { last_seq: backlogEnd } = (await live.jsm.streams.info(streams.rows)).state;
  await waitUntil('ROWS drained of what waited', async () => {
    const consumer = await live.jsm.consumers.info(streams.rows, consumers.writer);
    return consumer.ack_floor.stream_seq >= backlogEnd;
  }, 180_000);
}

/** Kills `lost` for 60 s under live sessions, starts them again and waits for ROWS to drain. */
async function lose(lost: ZooKeeperMember[], what: string): Promise<void> {
  const reads = live.watchReads();
  const inserts = watchInserts();
  await Promise.all(lost.map((member) => member.kill()));
  await sleep(LOSS_MS);
  const { num_pending: waiting } = await live.jsm.consumers.info(streams.rows, consumers.writer);
  await Promise.all(lost.map((member) => member.start()));
  const back = Date.now();
  await drained();
  const drainMs = Date.now() - back;
  const stallMs = await inserts.stop();
  assertReadsAnswered(await reads.stop(), what);
  console.log(`  ${what} for ${LOSS_MS / 1000} s: inserts stopped for ${(stallMs / 1000).toFixed(1)} s at most; ` +
    `${waiting} messages waiting in ROWS when it came back, drained ${(drainMs / 1000).toFixed(1)} s later`);
}

function assertReadsAnswered(reads: Reads, what: string): void {
  assert.equal([...reads.statuses].filter((status) => status !== 200 && status !== 503), [], `${what}: reads answered 200 or 503 in time, saw ${[...reads.statuses]}`);
  console.log(`  ${what}: reads answered ${[...reads.statuses].join(' and ')}; slowest ${reads.slowestMs} ms, longest run without a 200 ${reads.longestOutageMs} ms`);
}

async function modeOf(member: ZooKeeperMember): Promise<string | undefined> {
  return /Mode: (\w+)/.exec(await ask(member.port, 'srvr'))?.[1];
}

test('the ensemble\'s leader lost for 60 s: the others elect one, rows and reads go on; it rejoins', async () => {
  const { members } = live.cluster.clickhouse.zookeeper;
  const modes = await Promise.all(members.map(modeOf));
  const leader = members[modes.indexOf('leader')];
  assert.ok(leader, `one member leads: ${modes}`);
  await lose([leader!], `ZooKeeper leader ${leader!.name} lost`);
  assert.is(await modeOf(leader!), 'follower', 'the old leader rejoins as a follower');
});

test('the whole ensemble lost for 60 s: inserts wait, reads answer, ROWS drains once it is back', async () => {
  await lose(live.cluster.clickhouse.zookeeper.members, 'the whole ZooKeeper ensemble lost');
});

test('no row set aside as dead, and every second of media has its row', async () => {
  const { api, session, sessions, heard, jsm, clickhouse, cluster } = live;
  for (const { id } of sessions) {
    const stopped = await api(cluster.gateways[1]!.baseUrl, 'POST', `/v1/sessions/${id}/stop`);
    assert.is(stopped.status, 200, JSON.stringify(stopped.body));
  }
  await waitUntil('sessions finished', async () => (await Promise.all(sessions.map(({ id }) => session(id)))).every((s) => s?.state === 'finished'), 30_000);
  await waitUntil('the rows stream drained into ClickHouse', async () => {
    const consumer = await jsm.consumers.info(streams.rows, consumers.writer);
    return consumer.num_pending === 0 && consumer.num_ack_pending === 0;
  }, 60_000);
  assert.is((await jsm.streams.info(streams.deadRows)).state.messages, 0, 'no row dead-lettered');
  for (const { id } of sessions) {
    const media = (await session(id)).meta.mediaSeconds as number;
    // Every insert as stored, without FINAL: a retried batch stored twice shows as a second with
    // two rows. A read may go to a replica still fetching the newest parts from its partner: read
    // until every second heard live is there (what is still missing after 30 s is reported below).
    let rows: { second: number; n: number }[] = [];
    let seconds: number[] = [];
    let notStored: number[] = [];
    await waitUntil('every second heard live stored', async () => {
      rows = await queryRows(clickhouse, `SELECT second, count() AS n FROM audio_seconds WHERE session = '${id}' GROUP BY second ORDER BY second`);
      seconds = rows.map((row) => Number(row.second));
      notStored = [...heard.get(id)!].filter((second) => !seconds.includes(second));
      return notStored.length === 0;
    }, 30_000).catch(() => {});
    const twice = rows.filter((row) => Number(row.n) > 1).length;
    const gaps = seconds.slice(1).filter((second, i) => second - seconds[i]! > 1).length;
    console.log(`  session ${id}: ${media} s of media, rows for ${seconds.length} seconds (${twice} stored twice), ${gaps} gaps`);
    assert.equal(notStored, [], 'every second heard live is stored');
    assert.is(gaps, 0, 'a row for every second from the first to the last');
    // The media begins and ends in the middle of a second, each with its row.
    assert.ok(seconds.length - media >= -1 && seconds.length - media <= 2, `rows for ${seconds.length} seconds, ${media} s of media`);
  }
});

test.run();
