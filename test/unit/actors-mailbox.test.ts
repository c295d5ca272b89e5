import { test } from '../../ops/support/uvu.ts';
import * as assert from 'uvu/assert';
import { Actor } from '../../actors/actor.ts';
import { createLog } from '../../bus/log.ts';
import { readConfig } from '../../bus/config.ts';

const config = readConfig();
const log = createLog(config);

class Recorder extends Actor<{ n: number; delay: number; fail?: boolean }> {
  readonly handled: number[] = [];
  inFlight = 0;
  maxInFlight = 0;
  constructor() {
    super(log.child({ test: 'mailbox' }, { level: 'silent' }));
  }
  protected async handle(message: { n: number; delay: number; fail?: boolean }) {
    this.inFlight++;
    this.maxInFlight = Math.max(this.maxInFlight, this.inFlight);
    await new Promise((resolve) => setTimeout(resolve, message.delay));
    this.inFlight--;
    if (message.fail) throw new Error('handler failed');
    this.handled.push(message.n);
  }
}

test('messages are handled one at a time, in the order sent', async () => {
  const actor = new Recorder();
  [30, 1, 15, 0, 5].forEach((delay, n) => actor.send({ n, delay }));
  await actor.settled();
  assert.equal(actor.handled, [0, 1, 2, 3, 4]);
  assert.is(actor.maxInFlight, 1);
});

test('a failing handler does not stop the mailbox', async () => {
  const actor = new Recorder();
  actor.send({ n: 0, delay: 1 });
  actor.send({ n: 1, delay: 1, fail: true });
  actor.send({ n: 2, delay: 1 });
  await actor.settled();
  assert.equal(actor.handled, [0, 2]);
});

test('messages sent while draining are handled in the same drain', async () => {
  const actor = new Recorder();
  actor.send({ n: 0, delay: 10 });
  setTimeout(() => actor.send({ n: 1, delay: 1 }), 2);
  await new Promise((resolve) => setTimeout(resolve, 5));
  await actor.settled();
  assert.equal(actor.handled, [0, 1]);
});

test.run();
