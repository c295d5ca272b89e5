// The storage service's parts as code outside the service uses them (the lab in ops/bench):
// the schema and its statements, the writer, the reads measured at scale and the memory they
// keep. The files behind it may move; what is named here stays.
export { connectClickHouse } from './clickhouse.ts';
export { migrate } from './migrations.ts';
export { Schema } from './schema.ts';
export { columnsOf } from './tables.ts';
export { literal, sql } from './sql.ts';
export { ensureRowsStream } from './rows-stream.ts';
export { StorageWriter } from './writer.ts';
export { audioFeatures, emotionsTimeline } from './timelines.ts';
export type { Window } from './timeline-window.ts';
export { ListedChanges } from './listed-changes.ts';
export { NewestSessions } from './newest-sessions.ts';
