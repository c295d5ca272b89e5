// Per-connection message rate, per-user connection counts, sockets not signed in per address,
// and subscription keys.
import { test } from '../../ops/support/uvu.ts';
import * as assert from 'uvu/assert';
import { Counts } from '../../gateway/counts.ts';
import { MessageRate } from '../../gateway/ws/limits.ts';
import { NotSignedIn } from '../../gateway/ws/not-signed-in.ts';
import { deliveryHead, encodeDelivery } from '../../gateway/ws/delivery.ts';
import { parseKey } from '../../gateway/ws/protocol.ts';

test('message rate: a minute of allowance at once, then refilled over time', () => {
  const start = 1_000_000;
  const rate = new MessageRate(600, start);
  let taken = 0;
  while (rate.take(start)) taken++;
  assert.is(taken, 600);
  assert.is(rate.take(start + 50), false, 'half a token is not enough');
  assert.is(rate.take(start + 100), true, 'one token back after 100 ms at 600 a minute');
  assert.is(rate.take(start + 100), false);
  let afterMinute = 0;
  while (rate.take(start + 120_000)) afterMinute++;
  assert.is(afterMinute, 600, 'never more than a minute of allowance');
});

test('connections: counted per key, released on close', () => {
  const users = new Counts(2);
  assert.ok(users.acquire('a'));
  assert.ok(users.acquire('a'));
  assert.not.ok(users.acquire('a'));
  assert.ok(users.acquire('b'), 'other users are counted apart');
  users.release('a');
  assert.ok(users.acquire('a'));
  users.release('b');
  users.release('b');
  assert.ok(users.acquire('b') && users.acquire('b'), 'extra releases do not raise the limit');
  assert.not.ok(users.acquire('b'));
});

test('sockets not signed in: at the bound the oldest of the address makes way; a released one is never evicted', () => {
  const evicted: string[] = [];
  const waiting = new NotSignedIn(2);
  const admit = (address: string, name: string) => waiting.admit(address, () => evicted.push(name));
  admit('a', 'a1');
  const signedIn = admit('a', 'a2');
  admit('b', 'b1');
  admit('a', 'a3');
  assert.equal(evicted, ['a1'], 'only the oldest of that address');
  signedIn();
  signedIn();
  admit('a', 'a4');
  assert.equal(evicted, ['a1'], 'a released place is free, and released once');
  admit('a', 'a5');
  assert.equal(evicted, ['a1', 'a3']);
});

test('keys and event frames', () => {
  assert.equal(parseKey('65f0c0de0123456789abcdef:10m'), { session: '65f0c0de0123456789abcdef', frequency: '10m' });
  const frame = deliveryHead('sub"1') + encodeDelivery(42, 'session_custom_events', { events: [] }).tail.toString();
  assert.equal(JSON.parse(frame), ['sub"1', 42, 'session_custom_events', { events: [] }]);
});

test.run();
