// The session lists' memory: what it answers after a deletion, a restarted watch, a horizon
// from either source, with nothing kept, and past its total.
import { test } from '../../ops/support/uvu.ts';
import * as assert from 'uvu/assert';
import type { SessionRecord } from '../../bus/contracts/session.ts';
import { newSessionId } from '../../bus/ids.ts';
import { publicRecord } from '../../bus/session-view.ts';
import { NewestSessions } from '../../storage/sessions/newest-sessions.ts';
import type { SessionListFilter } from '../../storage/sessions/sessions-index.ts';

const START = 1_800_000_000_000;

const ids = new Map<string, string>();

/** The i-th session of `user`, one second after the one before; the same id each time asked. */
function record(user: string, i: number): SessionRecord {
  const createdAt = START + i * 1000;
  const key = `${user} ${i}`;
  if (!ids.has(key)) ids.set(key, newSessionId(createdAt));
  return {
    id: ids.get(key)!, name: `s${i}`, type: 'live_analysis', state: 'finished', createdAt, user,
    product: 'tests', streamUri: 'rtmp://example.com/live/x', sensors: [], expiresAt: createdAt + 1000,
    healthCheckAt: createdAt, workerState: 'stopped', mediaSeconds: 0,
  };
}

const first = (user: string, limit: number, offset = 0): SessionListFilter => ({ user, limit, offset, activeSinceMs: 0 });
const names = (page: ReturnType<NewestSessions['page']>) => page && { names: page.records.map((r) => r.name), hasMore: page.hasMore };

test('a user is answered for only once seeded; a deleted session leaves the list', () => {
  const memory = new NewestSessions(10);
  for (let i = 0; i < 3; i++) memory.put(record('ann', i), i + 1);
  assert.is(memory.page(first('ann', 10)), undefined, 'not seeded yet');
  memory.seed('ann', [], true);
  assert.equal(names(memory.page(first('ann', 2))), { names: ['s2', 's1'], hasMore: true });
  memory.deleted(record('ann', 2).id, 4);
  assert.equal(names(memory.page(first('ann', 10))), { names: ['s1', 's0'], hasMore: false });
  assert.is(memory.revision, 4);
  assert.is(memory.page(first('bob', 10)), undefined, 'another user is not answered for');
});

test('past the horizon, nothing: from the bucket\'s newest kept, or from the table\'s', () => {
  const memory = new NewestSessions(3);
  for (let i = 0; i < 5; i++) memory.put(record('ann', i), i + 1);
  memory.seed('ann', [], true);
  assert.equal(names(memory.page(first('ann', 2))), { names: ['s4', 's3'], hasMore: true });
  assert.is(memory.page(first('ann', 3)), undefined, 'the session after the page was dropped');
  const table = new NewestSessions(10);
  table.put(record('ann', 9), 1);
  table.seed('ann', [5, 4].map((i) => publicRecord(record('ann', i))), false);
  assert.equal(names(table.page(first('ann', 1))), { names: ['s9'], hasMore: true });
  assert.is(table.page(first('ann', 2)), undefined, 'the table had more below s4');
});

test('active sessions are kept below the horizon: a list of them is answered whole once the table\'s are in', () => {
  const memory = new NewestSessions(2);
  const active = { ...record('ann', 0), state: 'active' as const, workerState: 'working' as const };
  memory.put(active, 1);
  for (let i = 1; i < 5; i++) memory.put(record('ann', i), i + 1);
  memory.seed('ann', [], true);
  const actives = { ...first('ann', 10), state: 'active' as const };
  assert.is(memory.page(actives), undefined, 'the table\'s active sessions are not in yet');
  memory.seedActives('ann', [], 0);
  assert.equal(names(memory.page(actives)), { names: ['s0'], hasMore: false });
  assert.is(memory.page({ ...actives, activeSinceMs: active.createdAt + 1 })?.records.length, 0, 'created before the look-back');
  memory.put({ ...active, state: 'finished', workerState: 'stopped' }, 6);
  assert.equal(names(memory.page(actives)), { names: [], hasMore: false });
  assert.is(memory.page(first('ann', 3)), undefined, 'finished below the horizon: not kept');
});

test('a restarted watch forgets everything; with none kept, no page is answered', () => {
  const memory = new NewestSessions(10);
  memory.put(record('ann', 0), 1);
  memory.seed('ann', [], true);
  memory.restarted();
  assert.is(memory.revision, 0);
  assert.is(memory.page(first('ann', 10)), undefined);
  const none = new NewestSessions(0);
  none.put(record('ann', 0), 1);
  none.seed('ann', [], true);
  assert.is(none.page(first('ann', 10)), undefined);
});

test('past its total, the users listed least lately are forgotten whole; a seed read before is not taken', () => {
  const memory = new NewestSessions(10, 6);
  let revision = 0;
  for (const user of ['ann', 'bob']) {
    for (let i = 0; i < 3; i++) memory.put(record(user, i), ++revision);
    memory.seed(user, [], true);
  }
  assert.is(memory.size, 6);
  // Ann listed last: Bob is the first to go when Cy comes.
  assert.ok(memory.page(first('ann', 10)));
  memory.put(record('cy', 0), ++revision);
  assert.is(memory.size, 4);
  assert.is(memory.page(first('bob', 10)), undefined, 'Bob forgotten: ClickHouse answers him');
  assert.equal(names(memory.page(first('ann', 10))), { names: ['s2', 's1', 's0'], hasMore: false });

  // Bob's seed starts; Ann, listed since, makes new sessions that push him out again before it
  // ends: it is not taken.
  const mark = memory.mark('bob');
  memory.put(record('bob', 3), ++revision);
  assert.ok(memory.page(first('ann', 10)));
  for (let i = 3; i < 6; i++) memory.put(record('ann', i), ++revision);
  assert.is(memory.size, 6);
  assert.ok(memory.forgottenSince('bob', mark));
  assert.equal(names(memory.page(first('ann', 3))), { names: ['s5', 's4', 's3'], hasMore: true });
  // A seed that was not overtaken is taken, and answers.
  const again = memory.mark('bob');
  memory.seed('bob', [0, 1, 2].map((i) => publicRecord(record('bob', i))), true);
  assert.not.ok(memory.forgottenSince('bob', again));
  assert.equal(names(memory.page(first('bob', 2))), { names: ['s2', 's1'], hasMore: true });
  assert.ok(memory.size <= 6, `${memory.size} kept`);
});

test.run();
