// One round of a user's creates against the slots the user holds (actors/session/quotas.ts): at
// most the quota in all, one slot per session however many of its creates ask, each slot kept as
// long as the create that needs it longest.
import { test } from '../../ops/support/uvu.ts';
import * as assert from 'uvu/assert';
import { admitInto, type Held } from '../../actors/session/quotas.ts';

const NOW = 1_800_000_000_000;
const LATE_WRITE_MS = 30_000;
const create = (session: string, deadline = NOW + 4000) => ({ session, deadline });
const ids = (creates: { session: string }[]) => creates.map((one) => one.session);

test('creates fit in the room left, in order; the rest are refused', () => {
  const held: Held[] = [{ id: 'a', at: NOW - 1000 }];
  const round = admitInto(held, [create('b'), create('c'), create('d')], 3, NOW);
  assert.equal(ids(round.admitted), ['b', 'c']);
  assert.equal(ids(round.refused), ['d']);
  assert.equal(round.written, [held[0], { id: 'b', at: NOW, until: NOW + 4000 + LATE_WRITE_MS }, { id: 'c', at: NOW, until: NOW + 4000 + LATE_WRITE_MS }]);
});

test("two creates of one session in a round take one slot, kept for the later's deadline", () => {
  const round = admitInto([{ id: 'a', at: NOW }], [create('x', NOW + 1000), create('y'), create('x', NOW + 5000)], 3, NOW);
  assert.equal(ids(round.admitted), ['x', 'y', 'x']);
  assert.equal(round.refused, []);
  assert.equal(round.written?.map((slot) => [slot.id, slot.until]), [['a', undefined], ['x', NOW + 5000 + LATE_WRITE_MS], ['y', NOW + 4000 + LATE_WRITE_MS]]);
});

test('a create whose session holds a slot is admitted with the quota full, and keeps the slot longer', () => {
  const held: Held[] = [
    { id: 'a', at: NOW },
    { id: 'x', at: NOW - 5000, until: NOW + 1000 },
  ];
  const round = admitInto(held, [create('x', NOW + 9000), create('z')], 2, NOW);
  assert.equal(ids(round.admitted), ['x']);
  assert.equal(ids(round.refused), ['z']);
  assert.equal(round.written, [held[0], { ...held[1], until: NOW + 9000 + LATE_WRITE_MS }]);
});

test('nothing to write when every create is refused, or its slot already lasts long enough', () => {
  const held: Held[] = [{ id: 'x', at: NOW, until: NOW + 60_000 }];
  assert.is(admitInto(held, [create('x'), create('y')], 1, NOW).written, undefined);
});

test.run();
