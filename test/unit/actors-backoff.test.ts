import { test } from '../../ops/support/uvu.ts';
import * as assert from 'uvu/assert';
import { backoffMs } from '../../actors/backoff.ts';

const retries = (count: number) => [...Array(count).keys()];

test('the first retry waits the base, each next one twice as long, up to the maximum', () => {
  const waits = retries(7).map((retry) => backoffMs(retry, { baseMs: 500, maxMs: 10_000 }));
  assert.equal(waits, [500, 1000, 2000, 4000, 8000, 10_000, 10_000]);
});

test('a maximum between two doublings is the wait once doubling passes it', () => {
  assert.equal(retries(4).map((retry) => backoffMs(retry, { baseMs: 20, maxMs: 50 })), [20, 40, 50, 50]);
});

test('however many retries, the wait stays the maximum', () => {
  assert.is(backoffMs(5000, { baseMs: 500, maxMs: 10_000 }), 10_000);
});

test.run();
