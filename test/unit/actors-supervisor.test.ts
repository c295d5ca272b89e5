import { test } from '../../ops/support/uvu.ts';
import * as assert from 'uvu/assert';
import { Supervisor, type Child, type Clock, type SupervisorOptions } from '../../actors/supervisor.ts';

/** A clock whose time moves only when the supervisor sleeps; it keeps every sleep asked of it. */
function fakeClock(): Clock & { sleeps: number[]; advance(ms: number): void } {
  let now = 0;
  const sleeps: number[] = [];
  return {
    sleeps,
    now: () => now,
    advance: (ms) => void (now += ms),
    sleep: async (ms) => {
      sleeps.push(ms);
      now += ms;
    },
  };
}

/** Children that end at once, crashing while `crash` says so for their run number. */
function children(crash: (run: number) => boolean) {
  let runs = 0;
  const stops: number[] = [];
  const start = (): Child => {
    const run = runs++;
    return {
      done: crash(run) ? Promise.reject(new Error(`crash ${run}`)) : Promise.resolve(),
      stop: async (graceMs) => void stops.push(graceMs),
    };
  };
  return { runs: () => runs, stops, start };
}

const policy = (clock: Clock): SupervisorOptions => ({ intensity: 3, periodMs: 10_000, backoffMs: 20, maxBackoffMs: 50, shutdownMs: 700, clock });

test('a crashed child is restarted until it ends normally', async () => {
  const { runs, start } = children((run) => run < 2);
  const restarts: number[] = [];
  const supervisor = new Supervisor(start, { ...policy(fakeClock()), onRestart: (_e, n) => restarts.push(n) });
  await supervisor.done;
  assert.is(runs(), 3);
  assert.equal(restarts, [1, 2]);
  assert.is(supervisor.restarts, 2);
});

test('backoff doubles between restarts, up to its maximum', async () => {
  const clock = fakeClock();
  await new Supervisor(children((run) => run < 3).start, policy(clock)).done;
  assert.equal(clock.sleeps, [20, 40, 50]);
});

test('too many crashes within the period escalate with the last error', async () => {
  const { runs, start } = children(() => true);
  const supervisor = new Supervisor(start, policy(fakeClock()));
  await supervisor.done.then(
    () => assert.unreachable('should have escalated'),
    (error: Error) => assert.is(error.message, 'crash 3'),
  );
  assert.is(runs(), 4);
});

test('crashes older than the period no longer count, nor lengthen the backoff', async () => {
  const clock = fakeClock();
  // Each crash comes a period after the one before: never more than one recent crash.
  const start = children((run) => {
    clock.advance(10_001);
    return run < 6;
  }).start;
  const supervisor = new Supervisor(start, policy(clock));
  await supervisor.done;
  assert.is(supervisor.restarts, 6);
  assert.equal(clock.sleeps, [20, 20, 20, 20, 20, 20]);
});

test('stop ends the running child with the shutdown timeout, and the supervisor resolves', async () => {
  let stoppedWith: number | undefined;
  let end!: () => void;
  const supervisor = new Supervisor(
    () => ({
      done: new Promise<void>((resolve) => (end = resolve)),
      stop: async (graceMs) => {
        stoppedWith = graceMs;
        end();
      },
    }),
    policy(fakeClock()),
  );
  await supervisor.stop();
  await supervisor.done;
  assert.is(stoppedWith, 700);
});

test('a stop during the backoff restarts nothing', async () => {
  let runs = 0;
  const waiting: { resolve(): void }[] = [];
  const clock: Clock = {
    now: () => 0,
    sleep: (_ms, signal) => new Promise((resolve) => {
      waiting.push({ resolve });
      signal.addEventListener('abort', () => resolve());
    }),
  };
  const supervisor = new Supervisor(() => {
    runs++;
    return { done: Promise.reject(new Error('crash')), stop: async () => {} };
  }, policy(clock));
  while (waiting.length === 0) await new Promise((resolve) => setImmediate(resolve));
  await supervisor.stop();
  assert.is(runs, 1);
});

test('a child that throws while starting counts as a crash', async () => {
  let calls = 0;
  const supervisor = new Supervisor(() => {
    calls++;
    throw new Error('cannot start');
  }, policy(fakeClock()));
  await supervisor.done.then(
    () => assert.unreachable('should escalate'),
    (error: Error) => assert.is(error.message, 'cannot start'),
  );
  assert.is(calls, 4);
});

test.run();
