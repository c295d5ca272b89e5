// Removing finished sessions' stored rows, from every table that holds rows of one session.
// ClickHouse 18.16 removes rows only by ALTER TABLE ... DELETE: a mutation, which rewrites the
// parts holding them in the background, so the rows of many sessions go in one mutation per
// table (a purge round, storage/purge/purge-rounds.ts). Each condition names the table's partition
// key, so a ClickHouse that prunes partitions rewrites only the sessions' months.
//
// On a cluster the local tables are changed (a Distributed table takes no mutation), on one
// replica of each shard, which ZooKeeper carries to the others: a replica that is down runs it
// once back, and meanwhile its partner answers for it. When the nodes this service knows do not
// reach every shard, ON CLUSTER: a node that is down runs it from the DDL queue once back.
//
// session_spans is left alone: it holds one aggregate per user (first and last creation time,
// a count of its sessions), no row of any session, and only sizes the windows a list reads; a deleted
// session leaves it a little wider and a little denser than the user's sessions are.
import type { ClickHouseClient } from '@clickhouse/client';
import type { JetStreamManager } from '@nats-io/jetstream';
import { setTimeout as sleep } from 'node:timers/promises';
import type { SessionRecord } from '../../bus/contracts/session.ts';
import { unavailable } from '../../bus/errors.ts';
import { sessionDay } from '../../bus/ids.ts';
import { ROW_KINDS, streams, subjects } from '../../bus/subjects.ts';
import { DDL_TIMED_OUT, DDL_WAIT_SECONDS, queryRows } from '../clickhouse/clickhouse.ts';
import type { ClusterNodes } from '../schema/cluster-nodes.ts';
import { clickhouseCode } from '../clickhouse/insert-errors.ts';
import type { Schema, TableAlter } from '../schema/schema.ts';
import { literal, sql, type SqlValue } from '../clickhouse/sql.ts';
import { tableOf } from '../schema/tables.ts';

// A stopped worker still flushes its last seconds (and waiting transcripts) onto ROWS.
const SETTLE_MS = 2000;
// The reply must still reach the caller before its wait ends.
const REPLY_MARGIN_MS = 300;
const POLL_MS = 100;

/** What a purge needs of a session: its id and creation time, which name its rows' partitions. */
export type PurgedSession = Pick<SessionRecord, 'id' | 'createdAt'>;

/** Each table with rows of the sessions, and the condition that picks them all. */
function sessionRows(sessions: PurgedSession[]): { table: string; where: string }[] {
  const list = (values: SqlValue[]) => `(${[...new Set(values)].map(literal).join(', ')})`;
  const ids = list(sessions.map(({ id }) => id));
  const byDay = `day IN ${list(sessions.map(({ id }) => sessionDay(id)))} AND session IN ${ids}`;
  const results = ROW_KINDS.map(tableOf);
  // The index: every revision shares the creation second, `created`, its partition key.
  const created = `(${[...new Set(sessions.map(({ createdAt }) => Math.floor(createdAt / 1000)))].map((second) => `toDateTime(${literal(second)})`).join(', ')})`;
  return [
    ...[...results, 'event_spans'].map((table) => ({ table, where: byDay })),
    { table: 'sessions', where: `created IN ${created} AND id IN ${ids}` },
  ];
}

/**
 * Waits until every row of the session has left ROWS (a work queue: a message goes when the
 * writer acknowledges it, after ClickHouse has it), then deletes the session's rows and waits
 * for the mutations until just before `deadline`. A mutation still running then finishes on
 * its own. Refused (503, nothing deleted) if the rows do not arrive in time.
 */
export async function purgeSession(
  clickhouse: ClickHouseClient,
  jsm: JetStreamManager,
  record: SessionRecord,
  deadline: number,
  schema: Schema,
  cluster?: ClusterNodes,
  countMutations?: (count: number) => void,
): Promise<void> {
  await awaitRowsStored(jsm, record, deadline);
  await deleteSessionRows(clickhouse, schema, record, deadline - REPLY_MARGIN_MS, cluster, countMutations);
}

/**
 * Waits until the stopped session's last rows have left ROWS, so that a purge issued after
 * this finds every row it is to delete. Refused (503) if they do not arrive before `deadline`.
 */
export async function awaitRowsStored(jsm: JetStreamManager, record: SessionRecord, deadline: number): Promise<void> {
  if (!(await waitFor(() => rowsSettled(jsm, record.id, record.finishedAt ?? 0), deadline - REPLY_MARGIN_MS))) {
    throw unavailable('rows of this session are still on their way to storage; nothing was deleted, retry shortly');
  }
}

/** Deletes one session's rows: deleteRowsOf for a batch of one. */
export async function deleteSessionRows(
  clickhouse: ClickHouseClient,
  schema: Schema,
  record: PurgedSession,
  until: number,
  cluster?: ClusterNodes,
  countMutations?: (count: number) => void,
): Promise<void> {
  await deleteRowsOf(clickhouse, schema, [record], until, cluster, countMutations);
}

/**
 * Deletes the sessions' rows from every table, one mutation per table whatever their number,
 * and waits for the mutations until `until`, after which one still running finishes on its
 * own. Refused (503) on a cluster when some rows are still there by then: the deletion is on
 * its way to every replica, and asking again is safe.
 */
export async function deleteRowsOf(
  clickhouse: ClickHouseClient,
  schema: Schema,
  sessions: PurgedSession[],
  until: number,
  cluster?: ClusterNodes,
  countMutations?: (count: number) => void,
): Promise<void> {
  const deletions = sessionRows(sessions).map(({ table, where }) => schema.deleteWhere(table, where));
  countMutations?.(deletions.length);
  if (!schema.cluster) {
    for (const deletion of deletions) await clickhouse.command({ query: schema.onEveryNode(deletion) });
    await waitFor(async () => (await mutationsRunning(clickhouse, sessions)) === 0, until);
    return;
  }
  if (!(await cluster?.alterEachShard(deletions))) await deleteOnEveryNode(clickhouse, schema, deletions, until);
  // A replica runs the mutations once it has read them from ZooKeeper (or, ON CLUSTER, from its
  // DDL queue: a node slow to read it, or lost until its partner takes over once the lost one's
  // ZooKeeper session lapses): done when no row is left where reads go.
  if (!(await waitFor(async () => (await rowsLeft(clickhouse, sessions)) === 0, until))) {
    throw unavailable('the rows of this session are still being deleted; retry shortly');
  }
}

/**
 * All tables at once ON CLUSTER, each waiting for every node until shortly before `until`, or
 * for at most DDL_WAIT_SECONDS; a node that has not run them by then runs them from the queue.
 */
async function deleteOnEveryNode(clickhouse: ClickHouseClient, schema: Schema, deletions: TableAlter[], until: number): Promise<void> {
  const seconds = Math.min(DDL_WAIT_SECONDS, Math.max(1, Math.floor((until - Date.now()) / 1000) - 1));
  await Promise.all(deletions.map(async (deletion) => {
    try {
      await clickhouse.command({ query: schema.onEveryNode(deletion), clickhouse_settings: { distributed_ddl_task_timeout: String(seconds) } });
    } catch (error) {
      if (clickhouseCode(error) !== DDL_TIMED_OUT) throw error;
    }
  }));
}

async function rowsLeft(clickhouse: ClickHouseClient, sessions: PurgedSession[]): Promise<number> {
  const counts = await Promise.all(sessionRows(sessions).map(async ({ table, where }) =>
    Number((await queryRows<{ n: number }>(clickhouse, `SELECT count() AS n FROM ${table} WHERE ${where}`))[0]?.n ?? 0)));
  return counts.reduce((sum, count) => sum + count, 0);
}

/**
 * Whether every row of the session stopped at `finishedAt` has left ROWS: its worker has had
 * the time to flush its last seconds, and the writer has acknowledged them all.
 */
export async function rowsSettled(jsm: JetStreamManager, session: string, finishedAt: number): Promise<boolean> {
  return Date.now() >= finishedAt + SETTLE_MS && (await rowsOnTheWay(jsm, session)) === 0;
}

async function rowsOnTheWay(jsm: JetStreamManager, session: string): Promise<number> {
  const info = await jsm.streams.info(streams.rows, { subjects_filter: subjects.rowsOfSession(session) });
  return Object.values(info.state.subjects ?? {}).reduce((sum, count) => sum + count, 0);
}

async function mutationsRunning(clickhouse: ClickHouseClient, sessions: PurgedSession[]): Promise<number> {
  const [row] = await queryRows<{ running: number }>(clickhouse, sql`SELECT count() AS running FROM system.mutations
    WHERE database = currentDatabase() AND is_done = 0 AND position(command, ${sessions[0]?.id ?? ''}) > 0`);
  return Number(row?.running ?? 0);
}

/** Polls `condition` until it holds (true) or `until` passes (false). */
async function waitFor(condition: () => Promise<boolean>, until: number): Promise<boolean> {
  for (;;) {
    if (await condition()) return true;
    if (Date.now() + POLL_MS > until) return false;
    await sleep(POLL_MS);
  }
}
