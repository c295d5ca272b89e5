// parse(): typed values out of untrusted input, or a 400 whose message and details name every
// offending field.
import { test } from '../../ops/support/uvu.ts';
import * as assert from 'uvu/assert';
import { CreateSessionBody, ListSessionsQuery, UpdateSessionBody } from '../../bus/contracts/session.ts';
import { EventInput } from '../../bus/contracts/events.ts';
import { ServiceError } from '../../bus/errors.ts';
import { parse } from '../../bus/validate.ts';

const STREAM = 'rtmp://example.com/live/x';

function rejection(run: () => unknown): ServiceError {
  try {
    run();
  } catch (error) {
    assert.instance(error, ServiceError);
    return error as ServiceError;
  }
  throw new assert.Assertion({ message: 'expected a 400', generated: false, operator: 'throws', expects: 'throw', actual: 'none' });
}

const fields = (error: ServiceError) => (error.details ?? []).map((d) => d.field);

test('a valid body comes back typed and equal', () => {
  assert.equal(parse(CreateSessionBody, { name: 'a', streamUri: STREAM }, 'body'), { name: 'a', streamUri: STREAM });
});

test('a missing field is named as required, in the message and the details', () => {
  const error = rejection(() => parse(CreateSessionBody, { name: 'a' }, 'body'));
  assert.is(error.status, 400);
  assert.is(error.code, 'invalid_body');
  assert.equal(fields(error), ['body.streamUri']);
  assert.is(error.message, 'body.streamUri: is required');
});

test('no input at all names every required field', () => {
  assert.equal(fields(rejection(() => parse(CreateSessionBody, undefined, 'body'))).sort(), ['body.name', 'body.streamUri']);
  assert.equal(fields(rejection(() => parse(CreateSessionBody, null, 'body'))).sort(), ['body.name', 'body.streamUri']);
});

test('an extra field is named as not accepted', () => {
  const error = rejection(() => parse(CreateSessionBody, { name: 'a', streamUri: STREAM, owner: 'x' }, 'body'));
  assert.equal(error.details, [{ field: 'body.owner', message: 'is not an accepted field' }]);
  assert.match(error.message, /^body\.owner: /);
});

test('a mistyped or too long string names the field and the length', () => {
  const mistyped = rejection(() => parse(CreateSessionBody, { name: 5, streamUri: STREAM }, 'body'));
  assert.equal(fields(mistyped), ['body.name']);
  assert.match(mistyped.message, /body\.name: must be a string of 1 to 256 characters/);
  const long = rejection(() => parse(UpdateSessionBody, { name: 'x'.repeat(257) }, 'body'));
  assert.equal(long.details, [{ field: 'body.name', message: 'must be a string of 1 to 256 characters without control characters or lone surrogates' }]);
  assert.equal(parse(UpdateSessionBody, { name: 'x'.repeat(256) }, 'body'), { name: 'x'.repeat(256) });
});

test('several bad fields are all named, once each', () => {
  const error = rejection(() => parse(CreateSessionBody, { name: '', streamUri: 7, extra: true }, 'body'));
  assert.equal(fields(error).sort(), ['body.extra', 'body.name', 'body.streamUri']);
  for (const field of fields(error)) assert.ok(error.message.includes(`${field}:`), error.message);
});

test('query strings: defaults are filled, numbers converted, ranges and enums named', () => {
  assert.equal(parse(ListSessionsQuery, {}, 'query', { convert: true }), { limit: 10, offset: 0 });
  assert.equal(parse(ListSessionsQuery, { limit: '100', offset: '7', state: 'active' }, 'query', { convert: true }), {
    limit: 100, offset: 7, state: 'active',
  });
  const limit = rejection(() => parse(ListSessionsQuery, { limit: '101' }, 'query', { convert: true }));
  assert.is(limit.code, 'invalid_query');
  assert.equal(limit.details, [{ field: 'query.limit', message: 'must be an integer >= 1 and <= 100' }]);
  const offset = rejection(() => parse(ListSessionsQuery, { offset: '-1' }, 'query', { convert: true }));
  assert.equal(offset.details, [{ field: 'query.offset', message: 'must be an integer >= 0 and <= 1000000000' }]);
  const state = rejection(() => parse(ListSessionsQuery, { state: 'paused' }, 'query', { convert: true }));
  assert.equal(state.details, [{ field: 'query.state', message: 'must be one of active, finished' }]);
  const from = rejection(() => parse(ListSessionsQuery, { from: 'yesterday' }, 'query', { convert: true }));
  assert.equal(fields(from), ['query.from']);
  assert.match(from.message, /ISO 8601/);
});

test('query strings: a fraction is not an integer', () => {
  for (const limit of ['1.5', '1e1']) {
    const error = rejection(() => parse(ListSessionsQuery, { limit }, 'query', { convert: true }));
    assert.equal(fields(error), ['query.limit'], `limit=${limit}`);
  }
});

test('numbers: out of range and wrong types name the field', () => {
  const negative = rejection(() => parse(EventInput, { time: -1, data: 1 }, 'body'));
  assert.equal(negative.details, [{ field: 'body.time', message: 'must be a finite number >= 0 and <= 1000000000' }]);
  const union = rejection(() => parse(EventInput, { time: 0, data: { x: 1 } }, 'body'));
  assert.equal(fields(union), ['body.data']);
});

test('the input is never changed, even when defaults are filled', () => {
  const input = { state: 'active' };
  parse(ListSessionsQuery, input, 'query', { convert: true });
  assert.equal(input, { state: 'active' });
  const bad = { name: 'a', streamUri: STREAM, extra: 1 };
  rejection(() => parse(CreateSessionBody, bad, 'body'));
  assert.equal(bad, { name: 'a', streamUri: STREAM, extra: 1 });
});

test('input nested deeper than any contract is a 400, not a stack overflow', () => {
  let deep: unknown = 1;
  for (let i = 0; i < 5000; i++) deep = { name: deep };
  try {
    parse(UpdateSessionBody, deep, 'body');
    assert.unreachable('deep input was accepted');
  } catch (error) {
    assert.instance(error, ServiceError);
    assert.is((error as ServiceError).status, 400);
    assert.equal((error as ServiceError).details, [{ field: 'body', message: 'is nested more than 32 levels deep' }]);
  }
});

test.run();
