// Session ids tell their creation second, and so whether their record may have aged out of the
// bucket: a younger id missing from it is not looked up in the index. Row message ids tell apart
// the rows of one second made by two owners.
import { test } from '../../ops/support/uvu.ts';
import * as assert from 'uvu/assert';
import { mayBeArchived, newSessionId, rowMessageId, sessionCreatedAt } from '../../bus/ids.ts';

const WEEK = 7 * 86_400_000;

test('an id tells its creation second', () => {
  const now = Date.UTC(2026, 10, 29, 10, 0, 0, 789);
  assert.is(sessionCreatedAt(newSessionId(now)), now - 789);
});

test('only an id at least the records\' age old may be archived; nothing else is', () => {
  const now = Date.UTC(2026, 10, 29);
  assert.ok(mayBeArchived(newSessionId(now - WEEK), WEEK, now));
  assert.ok(mayBeArchived(newSessionId(now - 30 * 86_400_000), WEEK, now));
  assert.not.ok(mayBeArchived(newSessionId(now - WEEK + 1000), WEEK, now));
  assert.not.ok(mayBeArchived(newSessionId(now), WEEK, now));
  for (const id of ['', 'not-an-id', '0'.repeat(23), `${newSessionId(now - WEEK)}x`, newSessionId(now - WEEK).toUpperCase()]) {
    assert.not.ok(mayBeArchived(id, WEEK, now), id);
  }
});

test('a row message id names its session, kind and key, and the epoch of the owner that made it', () => {
  const session = newSessionId();
  assert.is(rowMessageId(session, 'audio', 12, 3), rowMessageId(session, 'audio', 12, 3));
  assert.is.not(rowMessageId(session, 'audio', 12, 2), rowMessageId(session, 'audio', 12, 3));
  assert.is.not(rowMessageId(session, 'audio', 12), rowMessageId(session, 'audio', 12, 0));
  assert.is.not(rowMessageId(session, 'audio', 12, 3), rowMessageId(session, 'video', 12, 3));
  assert.is.not(rowMessageId(session, 'audio', 12, 3), rowMessageId(session, 'audio', 13, 3));
});

test.run();
