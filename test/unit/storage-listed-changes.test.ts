// Which changes the session index stores: a change a list shows, never a heartbeat after a row
// this service wrote, and a row whenever another service may have written since.
import { test } from '../../ops/support/uvu.ts';
import * as assert from 'uvu/assert';
import type { SessionRecord } from '../../bus/contracts/session.ts';
import { newSessionId } from '../../bus/ids.ts';
import { ListedChanges } from '../../storage/sessions/listed-changes.ts';

const created = 1_800_000_000_000;
const id = newSessionId(created);
const session: SessionRecord = {
  id, name: 'a', type: 'live_analysis', state: 'active', createdAt: created, user: 'u', product: 'p',
  streamUri: 'rtmp://example.com/live/x', sensors: [], expiresAt: created + 1000, healthCheckAt: created,
  workerState: 'working', mediaSeconds: 0,
};
const heartbeat = (record: SessionRecord, n: number) => ({ ...record, healthCheckAt: created + n, mediaSeconds: n });

test('a heartbeat after a row this service wrote adds none; a rename, a stop and the final media count do', () => {
  const listed = new ListedChanges();
  assert.ok(listed.needsRow(id, session, 1, false), 'the create');
  assert.not.ok(listed.needsRow(id, heartbeat(session, 1), 2, false), 'a heartbeat');
  const renamed = { ...heartbeat(session, 2), name: 'b' };
  assert.ok(listed.needsRow(id, renamed, 3, false), 'a rename');
  const stopped = { ...renamed, state: 'finished' as const, workerState: 'stopped' as const, stopReason: 'client' as const };
  assert.ok(listed.needsRow(id, stopped, 4, false), 'the stop');
  assert.ok(listed.needsRow(id, { ...stopped, mediaSeconds: 9 }, 5, false), 'the final media count');
  assert.not.ok(listed.needsRow(id, { ...stopped, mediaSeconds: 9, deletingSince: created + 10 }, 6, false), 'taken by a deletion');
  assert.not.ok(listed.needsRow(id, undefined, 7, false), 'deleted');
});

test('after a delivery to another service, or a redelivery, the change is written again', () => {
  const listed = new ListedChanges();
  assert.ok(listed.needsRow(id, session, 1, false));
  // Delivery 2 went elsewhere (a rename, say, and 3 renamed it back): this one cannot tell.
  assert.ok(listed.needsRow(id, heartbeat(session, 3), 4, false), 'after a gap');
  assert.not.ok(listed.needsRow(id, heartbeat(session, 4), 5, false), 'then a heartbeat again adds none');
  assert.ok(listed.needsRow(id, heartbeat(session, 5), 6, true), 'a redelivery');
  assert.ok(listed.needsRow(id, heartbeat(session, 6), 7, false), 'and what follows it');
});

test.run();
