import { test } from '../../ops/support/uvu.ts';
import * as assert from 'uvu/assert';
import { pino } from 'pino';
import { SessionBudgets } from '../../actors/session-budgets.ts';
import { SessionCost } from '../../actors/session-cost.ts';

const WINDOW_MS = 10_000;

function clock(start = 1_000_000) {
  let now = start;
  return { now: () => now, advance: (ms: number) => (now += ms) };
}

/** A session whose media flows from now on. */
function session(time: ReturnType<typeof clock>) {
  const cost = new SessionCost(WINDOW_MS, time.now);
  cost.working();
  return cost;
}

test('only the session over its budget is told so, and only once measured; it is within again well under it', () => {
  const time = clock();
  const observed: number[] = [];
  const budgets = new SessionBudgets({ budgetCores: 0.2, log: pino({ level: 'silent' }), observe: (cores) => observed.push(cores), now: time.now });
  const heavy = session(time);
  const light = session(time);
  const changes: boolean[] = [];
  heavy.watchBudget((over) => changes.push(over));
  const costs = new Map([['heavy', heavy], ['light', light]]);
  const run = (seconds: number, heavyCores: number) => {
    for (let s = 0; s < seconds; s++) {
      time.advance(1000);
      heavy.add(heavyCores);
      light.add(0.05);
      budgets.review(costs);
    }
  };
  run(9, 0.5);
  assert.not.ok(heavy.overBudget, 'not judged while warming up');
  run(2, 0.5);
  assert.ok(heavy.overBudget);
  assert.not.ok(light.overBudget, 'a light session beside it is left alone');
  run(12, 0.19);
  assert.ok(heavy.overBudget, 'just under the budget is not yet within: no flapping at the edge');
  run(12, 0.1);
  assert.not.ok(heavy.overBudget);
  assert.equal(changes, [true, false], 'told each change once');
  assert.ok(observed.length >= 4 && observed.every((cores) => cores >= 0), 'each measured session observed once a window');
});

test.run();
