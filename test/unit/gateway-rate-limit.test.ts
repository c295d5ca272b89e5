import { test } from '../../ops/support/uvu.ts';
import * as assert from 'uvu/assert';
import { budgetHeaders, RateLimit } from '../../gateway/rate-limit.ts';

test('a key spends its budget, is refused past it, and other keys keep theirs', async () => {
  const limit = new RateLimit(2, 60);
  const first = await limit.take('a');
  assert.equal([first.allowed, first.remaining, first.limit, first.windowSeconds], [true, 1, 2, 60]);
  assert.ok(first.resetSeconds >= 59 && first.resetSeconds <= 60, String(first.resetSeconds));
  assert.equal([(await limit.take('a')).allowed, (await limit.take('a')).allowed], [true, false]);
  const refused = await limit.take('a');
  assert.equal([refused.allowed, refused.remaining], [false, 0]);
  assert.equal([(await limit.take('b')).allowed, (await limit.take('b')).remaining], [true, 0]);
});

test('a request may spend several points; more than a whole window spends the whole window', async () => {
  const limit = new RateLimit(1000, 1);
  assert.equal([(await limit.take('a', 600)).remaining, (await limit.take('a', 600)).allowed], [400, false]);
  const whole = await limit.take('b', 5000);
  assert.equal([whole.allowed, whole.remaining], [true, 0]);
  assert.is((await limit.take('b')).allowed, false);
});

test('the headers of an answer, with Retry-After only on a refusal', async () => {
  const limit = new RateLimit(1, 10);
  const allowed = budgetHeaders(await limit.take('k'));
  assert.is(allowed['RateLimit-Limit'], '1');
  assert.is(allowed['RateLimit-Remaining'], '0');
  assert.is(allowed['RateLimit-Policy'], '1;w=10');
  assert.is(allowed['Retry-After'], undefined);
  const refused = budgetHeaders(await limit.take('k'));
  assert.ok(Number(refused['Retry-After']) >= 1 && Number(refused['Retry-After']) <= 10, refused['Retry-After']);
  assert.is(refused['RateLimit-Reset'], refused['Retry-After']);
});

test.run();
