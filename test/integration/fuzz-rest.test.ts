// Property-based fuzzing of every REST route against the running service (ops/fuzz/rest.ts):
// hostile ids, query strings, headers and bodies. On a failure fast-check prints the seed, the
// path and the case; ops/fuzz/run.ts runs the long campaign.
import { test } from '../../ops/support/uvu.ts';
import fc from 'fast-check';
import { checkRestCase, restCase } from '../../ops/fuzz/rest.ts';
import { FUZZ_ENV, FuzzTarget } from '../../ops/fuzz/target.ts';
import { startServices, type Services } from '../../ops/support/services.ts';

const RUNS = 700;

let services: Services;
let target: FuzzTarget;

test.before(async () => {
  services = await startServices({ name: 'fuzz-rest', env: FUZZ_ENV });
  target = await FuzzTarget.prepare(services);
});

test.after(async () => {
  await services?.stop();
});

test(`${RUNS} hostile REST requests: no 5xx but 503, every process alive, a refused request changes nothing`, async () => {
  await fc.assert(fc.asyncProperty(restCase(target), (testCase) => checkRestCase(target, testCase)), { numRuns: RUNS, includeErrorInReport: true });
});

test.run();
