// The largest session record the API's limits allow, and the caches' bound in bytes
// (bus/session-record-size.ts, bus/byte-bounded-cache.ts).
import { test } from '../../ops/support/uvu.ts';
import * as assert from 'uvu/assert';
import { Value } from '@sinclair/typebox/value';
import { ByteBoundedCache } from '../../bus/byte-bounded-cache.ts';
import { CreateSessionBody, SessionRecord } from '../../bus/contracts/session.ts';
import { RegisterSourceBody } from '../../bus/contracts/events.ts';
import { LARGEST_SESSION_RECORD_BYTES, largestSessionRecord, recordBytes } from '../../bus/session-record-size.ts';
import { parseStreamUri } from '../../bus/stream-uri.ts';

test('the largest record is one the API accepts, and its JSON is at most LARGEST_SESSION_RECORD_BYTES, within a KiB', () => {
  const record = largestSessionRecord();
  assert.ok(Value.Check(SessionRecord, record), 'a valid record');
  assert.ok(Value.Check(CreateSessionBody, { name: record.name, streamUri: record.streamUri }), 'its create body');
  parseStreamUri(record.streamUri);
  for (const source of record.sensors) assert.ok(Value.Check(RegisterSourceBody, { name: source.name, format: source.format }), 'its sources');
  const bytes = recordBytes(JSON.stringify(record));
  assert.ok(bytes <= LARGEST_SESSION_RECORD_BYTES, `${bytes} bytes`);
  assert.ok(bytes > LARGEST_SESSION_RECORD_BYTES - 1024, `${bytes} bytes: the bound is not loose`);
});

test('a name one character longer, or a 33rd source, is refused', () => {
  const record = largestSessionRecord();
  assert.not.ok(Value.Check(CreateSessionBody, { name: `${record.name}x`, streamUri: record.streamUri }));
  assert.not.ok(Value.Check(CreateSessionBody, { name: record.name, streamUri: `${record.streamUri}x` }));
});

test('the cache holds at most its bytes, dropping the least recently used', () => {
  const cache = new ByteBoundedCache<string>(100);
  for (const key of ['a', 'b', 'c']) cache.set(key, key, 30);
  assert.is(cache.get('a'), 'a', 'a is now the most recently used');
  cache.set('d', 'd', 30);
  assert.equal([cache.peek('a'), cache.peek('b'), cache.peek('c'), cache.peek('d')], ['a', undefined, 'c', 'd']);
  assert.is(cache.bytes, 90);
  cache.set('c', 'c', 60);
  assert.ok(cache.bytes <= 100, `${cache.bytes}`);
  assert.is(cache.peek('c'), 'c', 'the newest stays');
  cache.set('huge', 'huge', 500);
  assert.is(cache.bytes, 0, 'an entry over the bound is not held');
});

test.run();
