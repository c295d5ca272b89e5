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
  const budgets = new SessionBudgets({ budgetCores: 0.2, stopAfterSeconds: 60, log: pino({ level: 'silent' }), observe: (cores) => observed.push(cores), stop: () => assert.unreachable('stopped'), now: time.now });
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

test('a session far over its budget for a minute is stopped, once, with what it cost; one that dips back under it starts again; one beside it is left alone', () => {
  const time = clock();
  const stopped: { session: string; detail: string }[] = [];
  const budgets = new SessionBudgets({ budgetCores: 0.2, stopAfterSeconds: 60, log: pino({ level: 'silent' }), observe: () => {}, stop: (session, detail) => stopped.push({ session, detail }), now: time.now });
  const costs = new Map([['heavy', session(time)], ['dipping', session(time)], ['ordinary', session(time)]]);
  const run = (seconds: number, cores: Record<string, number>) => {
    for (let s = 0; s < seconds; s++) {
      time.advance(1000);
      for (const [id, cost] of costs) cost.add(cores[id]!);
      budgets.review(costs);
    }
  };
  // Measured after a window; then 0.7 cores is past three budgets (0.6), 0.5 twice over but not past.
  run(10, { heavy: 0.7, dipping: 0.7, ordinary: 0.5 });
  run(50, { heavy: 0.7, dipping: 0.7, ordinary: 0.5 });
  assert.equal(stopped, [], 'not before a minute past it');
  // A dip: the window's mean falls under three budgets for a while.
  run(8, { heavy: 0.7, dipping: 0.3, ordinary: 0.5 });
  run(10, { heavy: 0.7, dipping: 0.7, ordinary: 0.5 });
  assert.equal(stopped.map((s) => s.session), ['heavy']);
  assert.match(stopped[0]!.detail, /cost 0\.7 cores, over 3 times its budget of 0\.2, for 60 s/);
  run(20, { heavy: 0.7, dipping: 0.7, ordinary: 0.5 });
  assert.equal(stopped.map((s) => s.session), ['heavy'], 'told once while it ends');
  // Its window's mean is past three budgets again 8 s after the dip: a minute from then.
  run(40, { heavy: 0.7, dipping: 0.7, ordinary: 0.5 });
  assert.equal(stopped.map((s) => s.session), ['heavy', 'dipping'], 'the dipping one a minute after its dip');
  // Once gone from the host and back (taken over again, say), it is judged afresh.
  costs.delete('heavy');
  budgets.review(costs);
  costs.set('heavy', session(time));
  run(30, { heavy: 0.7, dipping: 0.7, ordinary: 0.5 });
  assert.equal(stopped.map((s) => s.session), ['heavy', 'dipping']);
});

test.run();
