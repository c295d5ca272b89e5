// uvu's `test`, except that a `before` hook that throws says what it threw. uvu itself drops
// that error (its runner returns from a `finally`) and counts the file's tests as not passed
// without a word, which once left a failed CI run with nothing to read. The line printed has
// uvu's own FAIL shape, so the test runner's summary names it.
import { test as uvuTest, type Callback } from 'uvu';

function reported(hook: Callback): Callback {
  return async (context) => {
    try {
      await hook(context);
    } catch (error) {
      const first = (error instanceof Error ? error.message : String(error)).split('\n')[0];
      console.error(`  FAIL  before the tests\n    ${first}`);
      console.error(error);
      throw error;
    }
  };
}

const before = Object.assign((hook: Callback) => uvuTest.before(reported(hook)), { each: uvuTest.before.each });

export const test: typeof uvuTest = new Proxy(uvuTest, {
  get: (target, key, receiver) => (key === 'before' ? before : Reflect.get(target, key, receiver)),
});

// A test file ends with process.exit() once nothing is left to run, rather than by Node's own
// teardown of the process's handles: in a run of the whole suite that teardown once spun a core
// for minutes after a file had printed its passed tests (Node 20, the main thread looping in
// Environment::CleanupHandles), and the file would have failed at its time limit. Exiting here
// keeps the exit code uvu set.
process.once('beforeExit', () => process.exit());
