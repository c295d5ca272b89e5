// The runner's ClickHouse (ops/test.ts, or `npm run test:servers`) takes the setting that lets it
// delete merged-away parts as a run goes (ops/testing/clickhouse-parts.ts): without it a whole
// run's folder held some 30 s of files to remove at its end.
import { test } from '../../ops/support/uvu.ts';
import * as assert from 'uvu/assert';
import { httpRequest } from '../../ops/stack/http-client.ts';

test('the test ClickHouse keeps a merged-away part 20 s, not the default 8 minutes', async () => {
  const query = encodeURIComponent("SELECT value FROM system.merge_tree_settings WHERE name = 'old_parts_lifetime'");
  const reply = await httpRequest(`${process.env.CLICKHOUSE_URL}/?query=${query}`);
  assert.is(reply.status, 200, reply.text);
  assert.is(reply.text.trim(), '20');
});

test.run();
