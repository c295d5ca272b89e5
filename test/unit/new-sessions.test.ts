import { test } from '../support/uvu.ts';
import * as assert from 'uvu/assert';
import { NewSessions } from '../../actors/new-sessions.ts';

function clock(start = 1_000_000) {
  let now = start;
  return { now: () => now, advance: (ms: number) => (now += ms) };
}

test('at most `limit` sessions within one window; room comes back as each claim ages out', () => {
  const time = clock();
  const recent = new NewSessions(2, 10_000, time.now);
  assert.ok(recent.claim());
  time.advance(4000);
  assert.ok(recent.claim());
  assert.not.ok(recent.room());
  assert.is(recent.claim(), undefined);
  time.advance(5999);
  assert.not.ok(recent.room(), 'the first is 9.999 s old');
  time.advance(1);
  assert.ok(recent.room(), 'the first is 10 s old');
  assert.ok(recent.claim());
  assert.is(recent.claim(), undefined, 'the second is still recent');
});

test('a claim given back frees its room at once, and only its own', () => {
  const time = clock();
  const recent = new NewSessions(2, 10_000, time.now);
  const first = recent.claim()!;
  const second = recent.claim()!;
  first();
  assert.ok(recent.room());
  const third = recent.claim()!;
  assert.not.ok(recent.room());
  first();
  assert.not.ok(recent.room(), 'giving back twice frees nothing more');
  second();
  third();
  assert.ok(recent.claim() && recent.claim());
});

test('a claim given back after it aged out does not free a later one', () => {
  const time = clock();
  const recent = new NewSessions(1, 10_000, time.now);
  const old = recent.claim()!;
  time.advance(10_000);
  assert.ok(recent.claim());
  old();
  assert.not.ok(recent.room());
});

test.run();
