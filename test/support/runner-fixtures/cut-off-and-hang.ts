// A test file for the runner's own tests, never run by `npm test`: it cuts off a port (the rule
// tagged as the runner says) and hangs, so that the runner kills it at its time limit and no
// exit handler of its own removes the rule.
import { test } from 'uvu';
import { cutOff } from '../partition.ts';

test('cut off, then hang', async () => {
  cutOff([Number(process.env.CUT_OFF_PORT)], []);
  setInterval(() => {}, 1000);
  await new Promise(() => {});
});

test.run();
