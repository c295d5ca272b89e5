import { test } from '../support/uvu.ts';
import * as assert from 'uvu/assert';
import { Supervisor, type Child } from '../../actors/supervisor.ts';

const quick = { intensity: 3, periodMs: 10_000, backoffMs: 5, maxBackoffMs: 20 };

/** A child that runs for `ms` and then ends, crashing if `crash` says so for its run number. */
function children(crash: (run: number) => boolean, ms = 5) {
  const runs: number[] = [];
  const start = (): Child => {
    const run = runs.length;
    runs.push(Date.now());
    let finish!: () => void;
    let timer: NodeJS.Timeout | undefined;
    const done = new Promise<void>((resolve, reject) => {
      finish = resolve;
      timer = setTimeout(() => (crash(run) ? reject(new Error(`crash ${run}`)) : resolve()), ms);
    });
    // A stopped child's timer must not hold the test process open.
    const stop = async () => {
      clearTimeout(timer);
      finish();
    };
    return { done, stop };
  };
  return { runs, start };
}

test('a crashed child is restarted until it ends normally', async () => {
  const { runs, start } = children((run) => run < 2);
  const restarts: number[] = [];
  const supervisor = new Supervisor(start, { ...quick, onRestart: (_e, n) => restarts.push(n) });
  await supervisor.done;
  assert.is(runs.length, 3);
  assert.equal(restarts, [1, 2]);
  assert.is(supervisor.restarts, 2);
});

test('backoff doubles between restarts', async () => {
  const { runs, start } = children((run) => run < 3, 1);
  await new Supervisor(start, { ...quick, backoffMs: 20, maxBackoffMs: 1000 }).done;
  const gaps = runs.slice(1).map((at, i) => at - (runs[i] as number));
  assert.ok((gaps[2] as number) >= 70, `third gap ${gaps[2]} ms should be at least ~80 ms`);
  assert.ok((gaps[2] as number) > (gaps[0] as number), `gaps should grow: ${gaps}`);
});

test('too many crashes within the period escalate with the last error', async () => {
  const { runs, start } = children(() => true);
  const supervisor = new Supervisor(start, quick);
  try {
    await supervisor.done;
    assert.unreachable('should have escalated');
  } catch (error) {
    assert.instance(error, Error);
    assert.is((error as Error).message, 'crash 3');
  }
  assert.is(runs.length, quick.intensity + 1);
});

test('stop ends the running child and resolves', async () => {
  const { runs, start } = children(() => false, 60_000);
  const supervisor = new Supervisor(start, quick);
  await new Promise((resolve) => setTimeout(resolve, 10));
  await supervisor.stop();
  await supervisor.done;
  assert.is(runs.length, 1);
});

test('a child that throws while starting counts as a crash', async () => {
  let calls = 0;
  const supervisor = new Supervisor(() => {
    calls++;
    throw new Error('cannot start');
  }, quick);
  await supervisor.done.then(
    () => assert.unreachable('should escalate'),
    (error: Error) => assert.is(error.message, 'cannot start'),
  );
  assert.is(calls, quick.intensity + 1);
});

test.run();
