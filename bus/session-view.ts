// From the session record the hosts keep to the session object clients see (spec 2.1).
import { SESSION_SCHEMA_VERSION, type Session, type SessionRecord } from './contracts/session.ts';
import { parseStreamUri } from './stream-uri.ts';

/** The record without anything secret (stream credentials) or internal (owner): safe to index. */
export type PublicRecord = Omit<SessionRecord, 'streamUri' | 'owner'> & { streamName: string };

// Records are never changed in place (a change is a new record), so each one's public form is
// made once: parsing the stream URI was most of the cost of showing a session, and a list
// shows the same records again and again.
const publicForms = new WeakMap<SessionRecord, PublicRecord>();

export function publicRecord(record: SessionRecord): PublicRecord {
  let form = publicForms.get(record);
  if (!form) {
    const { streamUri, owner: _owner, ...rest } = record;
    form = { ...rest, streamName: parseStreamUri(streamUri).display };
    publicForms.set(record, form);
  }
  return form;
}

const iso = (ms: number) => new Date(ms).toISOString();

export function presentSession(record: PublicRecord, now: number = Date.now()): Session {
  const protocol = record.streamName.slice(0, record.streamName.indexOf(':')) as 'rtmp' | 'rtmps' | 'rtsp';
  const end = record.finishedAt ?? now;
  return {
    _id: record.id,
    name: record.name,
    type: record.type,
    state: record.state,
    timestamp: iso(record.createdAt),
    duration: Math.max(0, Math.round((end - record.createdAt) / 10) / 100),
    config: { removeMedia: true },
    sources: [
      { id: 'stream', name: record.streamName, type: 'stream', device: protocol },
      ...record.sensors,
    ],
    meta: {
      expires: iso(record.expiresAt),
      healthCheck: iso(record.healthCheckAt),
      workerState: record.workerState,
      ...(record.stopReason ? { stopReason: record.stopReason } : {}),
      ...(record.failure ? { failure: record.failure } : {}),
      mediaSeconds: Math.round(record.mediaSeconds * 100) / 100,
      ...(record.cpuCores !== undefined ? { cpuCores: Math.round(record.cpuCores * 1000) / 1000 } : {}),
    },
    product: record.product,
    user: record.user,
    version: SESSION_SCHEMA_VERSION,
  };
}

/** Seconds from the session's start to its end, or to now while it is active. */
export function elapsedSeconds(record: Pick<SessionRecord, 'createdAt' | 'finishedAt'>, now: number = Date.now()): number {
  return Math.max(0, ((record.finishedAt ?? now) - record.createdAt) / 1000);
}
