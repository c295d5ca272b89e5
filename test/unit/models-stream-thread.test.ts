// The one model-thread helper (actors/models/stream-thread.ts), on a body without a model:
// streams and calls, a failed call, and the one way a thread fails and comes back.
import { test } from '../../ops/support/uvu.ts';
import * as assert from 'uvu/assert';
import { StreamThread } from '../../actors/models/stream-thread.ts';
import type { EchoReply, EchoRequest } from '../support/echo-thread.ts';

const body = new URL('../support/echo-thread.ts', import.meta.url);
const ask = (type: EchoRequest['type'], text: string) => (stream: number): EchoRequest => ({ type, stream, text });

test('a call is answered with its own reply; a stream gets every reply, then closes', async () => {
  const thread = new StreamThread<EchoRequest, EchoReply>('echo', body, undefined);
  try {
    await thread.start();
    const [first, second] = await Promise.all([thread.call(ask('echo', 'one')), thread.call(ask('echo', 'two'))]);
    assert.is(first.text, 'one');
    assert.is(second.text, 'two');
    const heard: string[] = [];
    const stream = thread.open((reply) => heard.push(reply.text), (error) => assert.unreachable(error.message));
    for (const text of ['a', 'b', 'c']) stream.send(ask('echo', text)(stream.id));
    await stream.close();
    assert.equal(heard, ['a', 'b', 'c']);
  } finally {
    await thread.close();
  }
});

test('a call the body fails rejects with its error, and the thread goes on', async () => {
  const thread = new StreamThread<EchoRequest, EchoReply>('echo', body, undefined);
  try {
    await thread.start();
    await thread.call(ask('fail', 'no model for this')).then(
      () => assert.unreachable('the call should fail'),
      (error: Error) => assert.is(error.message, 'no model for this'),
    );
    assert.is((await thread.call(ask('echo', 'still here'))).text, 'still here');
  } finally {
    await thread.close();
  }
});

test('a thread that dies fails its streams and calls, and the next one starts a fresh thread', async () => {
  const thread = new StreamThread<EchoRequest, EchoReply>('echo', body, undefined);
  try {
    await thread.start();
    let streamFailure: Error | undefined;
    const stream = thread.open(() => {}, (error) => (streamFailure = error));
    await thread.call(ask('exit', '')).then(
      () => assert.unreachable('the call should fail'),
      (error: Error) => assert.is(error.message, 'the echo thread exited with code 3'),
    );
    assert.is(streamFailure?.message, 'the echo thread exited with code 3');
    await stream.close();
    assert.is((await thread.call(ask('echo', 'again'))).text, 'again');
  } finally {
    await thread.close();
  }
});

test('a thread that cannot start fails the calls that were to start it, rather than leaving them waiting', async () => {
  const thread = new StreamThread<EchoRequest, EchoReply>('echo', new URL('../support/no-such-thread.ts', import.meta.url), undefined);
  try {
    // Bounded only so that a call left waiting fails this test instead of hanging the file.
    let hung: NodeJS.Timeout | undefined;
    const waiting = new Promise<never>((_, reject) => (hung = setTimeout(() => reject(new Error('the call was left waiting')), 30_000)));
    const outcome = await Promise.race([thread.call(ask('echo', 'one')).then(() => 'answered', (error: Error) => error.message), waiting]);
    clearTimeout(hung);
    assert.not.equal(outcome, 'answered');
    assert.match(outcome, 'no-such-thread');
  } finally {
    await thread.close();
  }
});

test.run();
