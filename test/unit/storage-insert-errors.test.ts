// Which ClickHouse failures are the data's (set aside) and which a shard's (retried, or a 503).
import { test } from '../../ops/support/uvu.ts';
import * as assert from 'uvu/assert';
import { isDataError, isShardUnreachable } from '../../storage/clickhouse/insert-errors.ts';

const failure = (message: string) => new Error(message);

test('a shard lost in the middle of its answer is unreachable, not bad data', () => {
  const lost = failure('Code: 32, e.displayText() = DB::Exception: Attempt to read after eof: while receiving packet from 127.0.0.1:20259, e.what() = DB::Exception');
  assert.ok(isShardUnreachable(lost));
  assert.not.ok(isDataError(lost));
});

test('a truncated insert body is bad data', () => {
  const truncated = failure('Code: 32, e.displayText() = DB::Exception: Attempt to read after eof: (at row 3)');
  assert.ok(isDataError(truncated));
  assert.not.ok(isShardUnreachable(truncated));
});

test('every replica of a shard tried, or a network error, is unreachable', () => {
  for (const code of [209, 210, 279]) assert.ok(isShardUnreachable(failure(`Code: ${code}, e.displayText() = DB::Exception: x`)), String(code));
  assert.not.ok(isShardUnreachable(failure('Code: 27, e.displayText() = DB::Exception: Cannot parse input')));
});

test.run();
