// The audio rows' table alone, as the service's schema lays it out on a cluster (the local
// replicated table and the Distributed one over it): what the storage benchmarks insert into.
import type { ClickHouseClient } from '@clickhouse/client';
import { Schema } from '../../../storage/index.ts';

export async function createAudioTable(client: ClickHouseClient, database: string, cluster: string): Promise<void> {
  const schema = new Schema(database, cluster);
  for (const query of [schema.createDatabase(), ...schema.createTable({
    name: 'audio_seconds',
    columns: 'session String, second UInt32, frequency Float32, intensity Float32, voiced Float32, speech Float32, voiced_frames UInt16, semitone_sum Float64, semitone_squares Float64, speech_seconds Float64, speech_start Float64, speech_end Float64, day Date',
    engine: 'ReplacingMergeTree()',
    keys: 'PARTITION BY toYYYYMM(day) ORDER BY (session, second)',
    shardBy: 'cityHash64(session)',
  })]) await client.command({ query });
}
