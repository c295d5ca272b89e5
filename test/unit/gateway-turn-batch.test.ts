// Bus requests of one round of I/O are sent together in the loop's check phase, in one run.
import { test } from '../../ops/support/uvu.ts';
import * as assert from 'uvu/assert';
import { TurnBatch } from '../../gateway/turn-batch.ts';

test('sends nothing at once, then every send of the round in one synchronous run', async () => {
  const batch = new TurnBatch();
  const sent: string[] = [];
  let sentBeforeAnyMicrotask: string[] = [];
  const replies = ['a', 'b', 'c'].map((name, i) =>
    batch.run(async () => {
      sent.push(name);
      // What nats.js does: it writes its queue at the next microtask checkpoint.
      if (i === 0) queueMicrotask(() => (sentBeforeAnyMicrotask = [...sent]));
      return name.toUpperCase();
    }),
  );
  assert.equal(sent, [], 'not sent while the round goes on');
  await Promise.resolve();
  assert.equal(sent, [], 'not sent at the round\'s microtask checkpoint either');
  assert.equal(await Promise.all(replies), ['A', 'B', 'C']);
  assert.equal(sentBeforeAnyMicrotask, ['a', 'b', 'c'], 'all three queued before the first write');
});

test('a failed send rejects its own caller only', async () => {
  const batch = new TurnBatch();
  const failing = batch.run(async () => {
    throw new Error('no responders');
  });
  const fine = batch.run(async () => 'ok');
  const failure = await failing.then(() => undefined, (error: Error) => error.message);
  assert.is(failure, 'no responders');
  assert.is(await fine, 'ok');
});

test('a send that throws at once rejects its own caller, and the rest of the round is sent', async () => {
  const batch = new TurnBatch();
  const throwing = batch.run((): Promise<string> => {
    throw new Error('bad subject');
  });
  const fine = batch.run(async () => 'ok');
  const failure = await throwing.then(() => undefined, (error: Error) => error.message);
  assert.is(failure, 'bad subject');
  assert.is(await fine, 'ok');
});

test('a send made while a round is sent waits for the next round', async () => {
  const batch = new TurnBatch();
  const order: string[] = [];
  const later = new Promise<string>((resolve) => {
    void batch.run(async () => {
      order.push('first');
      void batch.run(async () => void order.push('second')).then(() => resolve('done'));
    });
  });
  setImmediate(() => order.push('between'));
  assert.is(await later, 'done');
  assert.equal(order, ['first', 'between', 'second']);
});

test.run();
