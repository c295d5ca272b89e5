// What every process shares, as code outside the service uses it (the lab in ops/bench): the
// configuration, the connection and log, ids, subjects, the rows' and sessions' contracts and
// the bounds on them. The files behind it may move; what is named here stays.
export { readConfig, type Config } from './config.ts';
export { connectBus } from './connection.ts';
export { createLog } from './log.ts';
export { newSessionId, sessionDay } from './ids.ts';
export { buckets, consumers, streams, subjects, tenantOf } from './subjects.ts';
export { EMOTION_KEYS, type AudioSecond, type EmotionKey, type FaceSecond } from './contracts/rows.ts';
export type { SessionRecord } from './contracts/session.ts';
export { MAX_EVENTS_PER_REQUEST } from './contracts/events.ts';
export { largestSessionRecord, recordBytes } from './session-record-size.ts';
export { ByteBoundedCache } from './byte-bounded-cache.ts';
