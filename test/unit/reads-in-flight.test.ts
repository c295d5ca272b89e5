// Each user's reads at once (storage/clickhouse/reads-in-flight.ts): bounded, and ranked for
// ClickHouse: a lately refused user's below everyone else's.
import { test } from '../../ops/support/uvu.ts';
import * as assert from 'uvu/assert';
import { FLOODER_READS, READS, ReadsInFlight } from '../../storage/clickhouse/reads-in-flight.ts';

/** Starts a read of `user` that holds its place until released; resolves its priority once it has one. */
function holdRead(reads: ReadsInFlight, user: string) {
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  let priority!: number;
  const done = reads.run(user, async (given) => {
    priority = given;
    await released;
  });
  return { priority: () => priority, release: async () => { release(); await done; } };
}

const priorityOfOne = (reads: ReadsInFlight, user: string) => reads.run(user, async (priority) => priority);
const statusOfOne = (reads: ReadsInFlight, user: string) =>
  priorityOfOne(reads, user).then(() => 200, (error: { status?: number }) => error.status);

test('a user\'s reads at once all rank as everyone\'s, however many', async () => {
  const reads = new ReadsInFlight(3);
  const held = [holdRead(reads, 'a'), holdRead(reads, 'a'), holdRead(reads, 'a')];
  assert.equal(held.map((read) => read.priority()), [READS, READS, READS]);
  assert.is(await priorityOfOne(reads, 'b'), READS, 'another user\'s read');
  for (const read of held) await read.release();
});

test('past the bound a read is refused, and the user\'s reads rank last until FLOODER_FOR_MS after its last refusal', async () => {
  let now = 1_000_000;
  const reads = new ReadsInFlight(2, () => now);
  const held = [holdRead(reads, 'a'), holdRead(reads, 'a')];
  assert.is(await statusOfOne(reads, 'a'), 429);
  for (const read of held) await read.release();
  assert.is(await priorityOfOne(reads, 'a'), FLOODER_READS, 'alone, but refused a moment ago');
  assert.is(await priorityOfOne(reads, 'b'), READS, 'the other user is not ranked down');
  now += 9_999;
  assert.is(await priorityOfOne(reads, 'a'), FLOODER_READS);
  now += 1;
  assert.is(await priorityOfOne(reads, 'a'), READS, '10 s after the last refusal');
});

test('a refusal renews the user\'s last rank; refusals of others lapse on their own', async () => {
  let now = 0;
  const reads = new ReadsInFlight(1, () => now);
  const refuse = async (user: string) => {
    const held = holdRead(reads, user);
    assert.is(await statusOfOne(reads, user), 429);
    await held.release();
  };
  await refuse('a');
  now = 5_000;
  await refuse('b');
  await refuse('a');
  now = 12_000;
  assert.is(await priorityOfOne(reads, 'a'), FLOODER_READS, 'refused again at 5 s');
  assert.is(await priorityOfOne(reads, 'b'), FLOODER_READS);
  now = 15_000;
  assert.is(await priorityOfOne(reads, 'a'), READS);
  assert.is(await priorityOfOne(reads, 'b'), READS);
});

test.run();
