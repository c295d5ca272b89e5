// The storage service: owns ClickHouse. It brings the schema up to date, drains the ROWS
// stream into the tables (the writer), keeps the session index following the sessions bucket,
// and answers every read of stored results over the bus,
// so that a query never waits behind inference on an actor host; it also removes the rows of
// a session being deleted. Run as many as you like:
// they share the writer's and the index's durable consumers and the `api` queue group.
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import type { NatsConnection, Subscription } from '@nats-io/transport-node';
import type { Logger } from '../bus/log.ts';
import { SessionRecords, type WatchFollower } from '../bus/session-records.ts';
import { serveArchivedSession } from './api/archived.ts';
import { serveEventList } from './api/events.ts';
import { serveSessionPurge } from './api/purge.ts';
import { serveResults } from './api/results.ts';
import { serveSessionList } from './api/sessions.ts';
import { connectClickHouse, type ClickHouseServer } from './clickhouse/clickhouse.ts';
import { closePools, connectPools, type ClickHousePools, type PoolSizes } from './clickhouse/clickhouse-pools.ts';
import { ClusterNodes } from './schema/cluster-nodes.ts';
import { ensureDeadLetterStream } from './writer/dead-letter.ts';
import type { StorageMetrics } from './metrics.ts';
import { SessionArchive } from './sessions/archive.ts';
import { IndexProgress } from './sessions/index-progress.ts';
import { migrate } from './schema/migrations.ts';
import { NewestSessions } from './sessions/newest-sessions.ts';
import { Schema } from './schema/schema.ts';
import { SessionLists } from './sessions/session-lists.ts';
import { ReadsInFlight } from './clickhouse/reads-in-flight.ts';
import { Shards } from './results/shards.ts';
import { ensureRowsStream } from './writer/rows-stream.ts';
import { PurgeLease } from './purge/purge-lease.ts';
import type { PurgedSession } from './purge/purge.ts';
import { PurgeQueue } from './purge/purge-queue.ts';
import { PurgeRounds } from './purge/purge-rounds.ts';
import { IndexInserts } from './sessions/index-inserts.ts';
import { OwnChanges } from './sessions/own-changes.ts';
import { SessionIndexFollower } from './sessions/session-index-follower.ts';
import { UnindexedChanges } from './sessions/unindexed-changes.ts';
import { StorageWriter, type WriterOptions } from './writer/writer.ts';

export interface StorageOptions {
  id: string;
  clickhouse: ClickHouseServer;
  database: string;
  /** Whether this process drains ROWS into ClickHouse (off: it only answers reads), and how. */
  writer: Omit<WriterOptions, 'largestMessageBytes'> | undefined;
  /** ClickHouse sockets by purpose. */
  connections: PoolSizes;
  /** Reads one user may have being answered at once here; below `connections.reads`. */
  readsInFlightPerUser: number;
  /** How much ROWS may hold while ClickHouse is away (when this service creates it). */
  rowsStreamMaxBytes: number;
  /** How many NATS servers keep the streams and buckets this service creates. */
  natsReplicas: number;
  /** The longest a session runs: how far back a list of active sessions looks. */
  sessionMaxSeconds: number;
  /** The newest sessions of each user kept in memory for the session lists. */
  sessionListMemoryPerUser: number;
  /** The sessions of all users kept in memory, at most. */
  sessionListMemoryTotal: number;
  /** Deleted sessions' rows leave ClickHouse in rounds: one every window, of up to a batch of sessions. */
  purge: { windowSeconds: number; batchSessions: number; queueMaxBytes: number };
  /** The session records' bucket bounds and cache (bus/session-records.ts). */
  sessionRecords: { bucketMaxBytes: number; maxAgeSeconds: number; cacheBytes: number };
  /** Where bus requests and the writer are measured (the process's /metrics). */
  metrics?: StorageMetrics;
}

export class StorageService {
  private readonly subscriptions: Subscription[] = [];

  private constructor(
    private readonly nc: NatsConnection,
    private readonly pools: ClickHousePools,
    private readonly records: SessionRecords,
    private readonly writer: StorageWriter | undefined,
    private readonly index: SessionIndexFollower | undefined,
    private readonly progress: IndexProgress,
    private readonly cluster: ClusterNodes | undefined,
    private readonly purges: PurgeRounds | undefined,
  ) {}

  static async start(nc: NatsConnection, options: StorageOptions, log: Logger): Promise<StorageService> {
    if (options.readsInFlightPerUser >= options.connections.reads) {
      throw new Error(
        `STORAGE_READS_IN_FLIGHT_PER_USER (${options.readsInFlightPerUser}) must be below CLICKHOUSE_READ_CONNECTIONS (${options.connections.reads}): one user's reads must leave sockets for the others`,
      );
    }
    const cluster = ClusterNodes.connect(options.clickhouse);
    const admin = connectClickHouse(options.clickhouse, null);
    try {
      await migrate(admin, options.database, cluster);
    } catch (error) {
      await cluster?.close();
      throw error;
    } finally {
      await admin.close();
    }
    const js = jetstream(nc);
    const jsm = await jetstreamManager(nc);
    await ensureRowsStream(jsm, { maxBytes: options.rowsStreamMaxBytes, replicas: options.natsReplicas });
    await ensureDeadLetterStream(jsm, options.natsReplicas);
    const pools = connectPools(options.clickhouse, options.database, options.connections, log);
    const records = await SessionRecords.open(js, log, {
      replicas: options.natsReplicas,
      cacheBytes: options.sessionRecords.cacheBytes,
      bucket: { maxBytes: options.sessionRecords.bucketMaxBytes, maxAgeMs: options.sessionRecords.maxAgeSeconds * 1000 },
    });
    const purgeQueue = await PurgeQueue.open(js, jsm, { replicas: options.natsReplicas, maxBytes: options.purge.queueMaxBytes });
    options.metrics?.watchPurgeQueue(() => purgeQueue.length(), log);
    const newest = new NewestSessions(options.sessionListMemoryPerUser, options.sessionListMemoryTotal);
    const unindexed = new UnindexedChanges();
    await records.watch(undefined, bothFollow(newest, unindexed));
    const shards = options.clickhouse.cluster ? new Shards(pools.reads, options.clickhouse.cluster) : undefined;
    const writer = options.writer && new StorageWriter(js, pools.writer, log.child({ component: 'writer' }), {
      ...options.writer,
      largestMessageBytes: nc.info?.max_payload ?? 0,
      deleted: (session) => records.deletedLately(session),
      record: (session) => records.peek(session)?.record,
    });
    await writer?.start();
    if (writer) options.metrics?.watchWriter(writer, jsm, log);
    // The session index is kept by the services that write: their follower of the consumer, and
    // their lists, which store their user's changes when the consumer is slow to.
    const deleting = (session: string) => records.deletedLately(session) || records.peek(session)?.record.deletingSince !== undefined;
    const purgeAgain = async (sessions: PurgedSession[]) => {
      for (const session of sessions) await purgeQueue.again(session);
    };
    const indexLog = log.child({ component: 'session-index' });
    const inserts = writer && new IndexInserts(pools.index, deleting, purgeAgain, indexLog);
    const own = inserts && new OwnChanges(records, inserts, indexLog, options.metrics?.sessionLists.ownRows);
    const progress = new IndexProgress(jsm, pools.reads, unindexed, log.child({ component: 'index-progress' }), own || undefined);
    progress.start();
    const index = inserts && await SessionIndexFollower.start(js, jsm, inserts, indexLog);
    const schema = new Schema(options.database, cluster?.name);
    // Purge rounds are run by the services that write, like the index.
    const purges = writer && new PurgeRounds(purgeQueue, () => progress.acknowledgedThrough(), new PurgeLease(purgeQueue.kv, options.id), jsm, pools.index, schema, cluster, {
      windowMs: options.purge.windowSeconds * 1000,
      batchSessions: options.purge.batchSessions,
      countMutations: options.metrics?.purgeMutations,
    }, log.child({ component: 'purge' }));
    purges?.start();
    const observe = options.metrics?.bus;
    const inFlight = new ReadsInFlight(options.readsInFlightPerUser);
    const lists = new SessionLists(newest, records, progress, pools.reads, inFlight, options.sessionListMemoryPerUser, log, options.metrics?.sessionLists);
    const service = new StorageService(nc, pools, records, writer, index, progress, cluster, purges);
    const archive = new SessionArchive(pools.reads, records, purgeQueue, options.sessionRecords.maxAgeSeconds * 1000);
    service.subscriptions.push(
      ...serveResults(nc, archive, pools.reads, shards, inFlight, log, observe),
      serveSessionList(nc, records, lists, options.sessionMaxSeconds, log, observe),
      serveEventList(nc, archive, pools.reads, inFlight, log, observe),
      serveSessionPurge(nc, records, purgeQueue, archive, log, observe),
      serveArchivedSession(nc, archive, inFlight, log, observe),
    );
    log.info({ writer: options.writer }, 'storage service ready');
    return service;
  }

  async stop(): Promise<void> {
    for (const subscription of this.subscriptions) subscription.unsubscribe();
    await this.writer?.stop();
    await this.index?.stop();
    await this.purges?.stop();
    await this.progress.stop();
    this.records.close();
    await this.nc.drain();
    await closePools(this.pools);
    await this.cluster?.close();
  }
}

/** One watch told to both: the newest sessions and the changes the index may not hold yet. */
function bothFollow(first: WatchFollower, second: WatchFollower): WatchFollower {
  return {
    restarted: () => (first.restarted(), second.restarted()),
    put: (record, revision) => (first.put(record, revision), second.put(record, revision)),
    deleted: (id, revision) => (first.deleted(id, revision), second.deleted(id, revision)),
  };
}
