// Property-based fuzzing of the WebSocket API against the running service (ops/fuzz/ws.ts):
// hostile messages before and after authentication, hostile upgrade requests reset by the
// client. On a failure fast-check prints the seed, the path and the case.
import { test } from '../../ops/support/uvu.ts';
import fc from 'fast-check';
import { FUZZ_ENV, FuzzTarget } from '../../ops/fuzz/target.ts';
import { checkWsCase, wsCase } from '../../ops/fuzz/ws.ts';
import { startServices, type Services } from '../../ops/support/services.ts';

const RUNS = 300;

let services: Services;
let target: FuzzTarget;

test.before(async () => {
  services = await startServices({ name: 'fuzz-ws', env: FUZZ_ENV });
  target = await FuzzTarget.prepare(services);
});

test.after(async () => {
  await services?.stop();
});

test(`${RUNS} hostile WebSocket cases: no 5xx reply but 503, protocol close codes only, every process alive`, async () => {
  await fc.assert(fc.asyncProperty(wsCase(target), (testCase) => checkWsCase(target, testCase)), { numRuns: RUNS, includeErrorInReport: true });
});

test.run();
