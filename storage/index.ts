// The storage service's parts as code outside the service uses them (the lab in ops/bench):
// the schema and its statements, the writer, the reads measured at scale and the memory they
// keep. The files behind it may move; what is named here stays.
export { connectClickHouse } from './clickhouse/clickhouse.ts';
export { migrate } from './schema/migrations.ts';
export { Schema } from './schema/schema.ts';
export { columnsOf } from './schema/tables.ts';
export { literal, sql } from './clickhouse/sql.ts';
export { ensureRowsStream } from './writer/rows-stream.ts';
export { StorageWriter } from './writer/writer.ts';
export { audioFeatures, emotionsTimeline } from './results/timelines.ts';
export type { Window } from './results/timeline-window.ts';
export { ListedChanges } from './sessions/listed-changes.ts';
export { NewestSessions } from './sessions/newest-sessions.ts';
