// The time a host counts against another's heartbeat: only time the bucket could take writes.
import { test } from '../../ops/support/uvu.ts';
import * as assert from 'uvu/assert';
import { LeaseClock } from '../../actors/session/lease-clock.ts';

function clockWith(up: () => boolean) {
  return new LeaseClock(async () => {
    if (!up()) throw new Error('no leader');
  });
}

test('counts from the first successful probe while the bucket stays writable', async () => {
  const clock = clockWith(() => true);
  assert.is(await clock.writableFor(() => 1000), 0);
  assert.is(await clock.writableFor(() => 4000), 3000);
  assert.is(await clock.writableFor(() => 9500), 8500);
});

test('a failed probe stops the clock; it starts again from zero', async () => {
  let up = true;
  const clock = clockWith(() => up);
  await clock.writableFor(() => 0);
  assert.is(await clock.writableFor(() => 10_000), 10_000);
  up = false;
  assert.is(await clock.writableFor(() => 11_000), 0);
  assert.is(await clock.writableFor(() => 15_000), 0);
  up = true;
  assert.is(await clock.writableFor(() => 16_000), 0);
  assert.is(await clock.writableFor(() => 19_000), 3000);
});

test.run();
