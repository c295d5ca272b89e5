// A test file for the runner's own tests, never run by `npm test`: one test passes, one is skipped.
import { test } from 'uvu';

test('passes', () => {});
test.skip('skipped', () => {});

test.run();
