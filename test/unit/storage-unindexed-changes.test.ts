// The changes each user's list must find in the session index: per user, one a session, its
// latest; gone once the index shows it, once the consumer has acknowledged past it, or once the
// session is deleted; and the watch's position, which a list waits for.
import { test } from '../../ops/support/uvu.ts';
import * as assert from 'uvu/assert';
import type { SessionRecord } from '../../bus/contracts/session.ts';
import { newSessionId } from '../../bus/ids.ts';
import { UnindexedChanges } from '../../storage/sessions/unindexed-changes.ts';

const created = 1_800_000_000_000;

function session(user: string, name = 'a'): SessionRecord {
  return {
    id: newSessionId(created), name, type: 'live_analysis', state: 'active', createdAt: created, user, product: 'p',
    streamUri: 'rtmp://example.com/live/x', sensors: [], expiresAt: created + 1000, healthCheckAt: created,
    workerState: 'working', mediaSeconds: 0,
  };
}

const held = (changes: UnindexedChanges, user: string) => changes.of(user).map(({ id, revision, listed }) => [id, revision, listed.name]);

test('each user holds only their own sessions\' latest changes', () => {
  const changes = new UnindexedChanges();
  const [a1, a2, b1] = [session('a'), session('a'), session('b')];
  changes.put(a1, 1);
  changes.put(b1, 2);
  changes.put(a2, 3);
  changes.put({ ...a1, name: 'renamed' }, 4);
  assert.equal(held(changes, 'a'), [[a1.id, 4, 'renamed'], [a2.id, 3, 'a']]);
  assert.equal(held(changes, 'b'), [[b1.id, 2, 'a']]);
  assert.equal(held(changes, 'c'), []);
  assert.is(changes.revision, 4);
  assert.is(changes.size, 3);
});

test('a change leaves once the index shows it as of its revision or later, not earlier', () => {
  const changes = new UnindexedChanges();
  const a = session('a');
  changes.put(a, 5);
  changes.put({ ...a, name: 'b' }, 7);
  changes.indexed(a.id, 5);
  assert.ok(changes.holds(a.id), 'the rename after the row found is still to come');
  changes.indexed(a.id, 7);
  assert.not.ok(changes.holds(a.id));
  assert.equal(held(changes, 'a'), []);
});

test('acknowledged through a revision: every change up to it leaves, whoever\'s', () => {
  const changes = new UnindexedChanges();
  const [a, b, c] = [session('a'), session('b'), session('c')];
  changes.put(a, 1);
  changes.put(b, 2);
  changes.put(c, 3);
  changes.indexedThrough(2);
  assert.equal([changes.holds(a.id), changes.holds(b.id), changes.holds(c.id)], [false, false, true]);
  assert.is(changes.size, 1);
});

test('a session deleted, or taken by a deletion, holds nothing: it gets no row', () => {
  const changes = new UnindexedChanges();
  const [a, b] = [session('a'), session('a')];
  changes.put(a, 1);
  changes.put(b, 2);
  changes.put({ ...a, state: 'finished', deletingSince: created }, 3);
  changes.deleted(b.id, 4);
  assert.equal(held(changes, 'a'), []);
  assert.is(changes.revision, 4);
});

test('a watch that starts over keeps what it held and replays from the start', async () => {
  const changes = new UnindexedChanges();
  const a = session('a');
  changes.put(a, 9);
  changes.restarted();
  assert.is(changes.revision, 0);
  assert.ok(changes.holds(a.id));
  const reached = changes.reached(9, Date.now() + 10_000);
  changes.put(a, 9);
  assert.ok(await reached);
});

test('a wait for the watch ends when it delivers the revision, or at its deadline', async () => {
  const changes = new UnindexedChanges();
  assert.ok(await changes.reached(0, Date.now()), 'already there');
  const later = changes.reached(3, Date.now() + 10_000);
  const never = changes.reached(10, Date.now() + 20);
  changes.put(session('a'), 2);
  changes.deleted(newSessionId(created), 3);
  assert.ok(await later);
  assert.not.ok(await never);
});

test.run();
