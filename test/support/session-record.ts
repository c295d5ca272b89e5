// A session record as a host writes it for a session that is working, for tests that write the
// sessions bucket directly: its stream is never pulled (port 9, nothing listens).
import type { SessionRecord } from '../../bus/contracts/session.ts';
import { newSessionId } from '../../bus/ids.ts';

export function activeSessionRecord(user: string, name: string, owner = 'host-a'): SessionRecord {
  const now = Date.now();
  return {
    id: newSessionId(now), name, type: 'live_analysis', state: 'active', createdAt: now,
    user, product: 'tests', streamUri: 'rtmp://127.0.0.1:9/live/none', sensors: [], owner,
    expiresAt: now + 3_600_000, healthCheckAt: now, workerState: 'working', mediaSeconds: 0,
  };
}
