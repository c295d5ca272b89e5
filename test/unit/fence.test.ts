// The fence against a stale owner (storage/writer/fence.ts): which rows of an older epoch are refused.
import * as assert from 'uvu/assert';
import type { SessionRecord } from '../../bus/contracts/session.ts';
import { epochOf, fenced } from '../../storage/writer/fence.ts';
import { test } from '../../ops/support/uvu.ts';

const createdAt = 1_700_000_000_000;
const record = (epoch?: number, epochStartedAt?: number) => ({ createdAt, epoch, epochStartedAt }) as SessionRecord;
// Taken over 20.5 s into the session: the new owner's seconds start at 20.
const takenOver = record(1, createdAt + 20_500);

test('an older epoch is refused from the second the current one began, kept before it', () => {
  assert.not.ok(fenced(takenOver, 0, 'audio', { second: 19 }));
  assert.ok(fenced(takenOver, 0, 'audio', { second: 20 }));
  assert.ok(fenced(takenOver, 0, 'video', { second: 35 }));
  assert.ok(fenced(takenOver, 0, 'face', { second: 21, track: 3 }));
  assert.not.ok(fenced(takenOver, 0, 'speech', { start: 19.9 }));
  assert.ok(fenced(takenOver, 0, 'speech', { start: 20.1 }));
});

test('the current epoch, rows without one and sessions never taken over pass', () => {
  assert.not.ok(fenced(takenOver, 1, 'audio', { second: 30 }));
  assert.not.ok(fenced(takenOver, 2, 'audio', { second: 30 }));
  assert.not.ok(fenced(takenOver, undefined, 'audio', { second: 30 }));
  assert.not.ok(fenced(record(), 0, 'audio', { second: 30 }));
  assert.not.ok(fenced(undefined, 0, 'audio', { second: 30 }));
});

test('the epoch header: a whole number or nothing', () => {
  assert.is(epochOf('3'), 3);
  assert.is(epochOf(undefined), undefined);
  assert.is(epochOf(''), undefined);
  assert.is(epochOf('-1'), undefined);
  assert.is(epochOf('1e3'), undefined);
});

test.run();
