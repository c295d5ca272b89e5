// The shards of a cluster as a storage service needs them while one is lost: which shard holds
// a session's rows, and which shards answer. Every table of a session's rows is sharded by
// cityHash64(session), and a Distributed table picks a shard as ClickHouse's Cluster does: the
// key modulo the sum of the shards' weights is a slot, and the shards take the slots in their
// order, as many each as their weight.
import type { ClickHouseClient } from '@clickhouse/client';
import { SHARD_PROBE } from '../schema/migrations.ts';
import { sql } from '../clickhouse/sql.ts';

// Asked while a shard is lost: a shard that does not answer is left out, not waited for.
const skipping = { skip_unavailable_shards: 1 } as const;

export class Shards {
  constructor(
    private readonly client: ClickHouseClient,
    private readonly cluster: string,
  ) {}

  /** The shard number (system.clusters' shard_num) of each session's rows. */
  async of(sessions: string[], abort_signal?: AbortSignal): Promise<Map<string, number>> {
    const shards = await this.ask<{ shard: number; weight: number }>(sql`
      SELECT shard_num AS shard, any(shard_weight) AS weight FROM system.clusters
      WHERE cluster = ${this.cluster} GROUP BY shard_num ORDER BY shard_num`, abort_signal);
    const total = shards.reduce((sum, { weight }) => sum + Number(weight), 0);
    const slots = await this.ask<{ session: string; slot: number }>(
      sql`SELECT session, cityHash64(session) % ${total} AS slot FROM (SELECT arrayJoin(${sessions}) AS session)`, abort_signal);
    return new Map(slots.map(({ session, slot }) => {
      let left = Number(slot);
      return [session, Number(shards.find(({ weight }) => (left -= Number(weight)) < 0)?.shard)];
    }));
  }

  /** The shards of which some replica answers now. */
  async answering(abort_signal?: AbortSignal): Promise<Set<number>> {
    // Each node that answers lists its own shard as local.
    const rows = await this.ask<{ shard: number }>(
      `SELECT DISTINCT shard_num AS shard FROM ${SHARD_PROBE} WHERE ${sql`cluster = ${this.cluster}`} AND is_local`, abort_signal);
    return new Set(rows.map(({ shard }) => Number(shard)));
  }

  private async ask<T>(query: string, abort_signal?: AbortSignal): Promise<T[]> {
    const result = await this.client.query({ query, format: 'JSONEachRow', abort_signal, clickhouse_settings: skipping });
    return result.json<T>();
  }
}
