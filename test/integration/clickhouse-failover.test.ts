// A comma-separated CLICKHOUSE_URL: requests move on from a server that cannot be reached (refused,
// or dropping the connection mid-request) to the next and are sent again there; an error the
// server answers with is the caller's and moves nothing.
import { test } from '../../ops/support/uvu.ts';
import * as assert from 'uvu/assert';
import { createClient } from '@clickhouse/client';
import { createServer, type Server } from 'node:net';
import { readConfig } from '../../bus/config.ts';
import { freePort } from '../../ops/stack/ports.ts';
import { failoverClient, isConnectionError } from '../../storage/clickhouse/clickhouse-failover.ts';
import { connectClickHouse, queryRows } from '../../storage/clickhouse/clickhouse.ts';

const config = readConfig();
const real = config.clickhouseUrl.split(',')[0]!;
const server = { username: config.clickhouseUser, password: config.clickhousePassword };

let dropping: Server;
let droppingUrl: string;
let refusedUrl: string;

test.before(async () => {
  // Accepts, reads the request, and closes without an answer: "socket hang up".
  dropping = createServer((socket) => socket.once('data', () => socket.destroy()));
  await new Promise<void>((resolve) => dropping.listen(0, '127.0.0.1', resolve));
  droppingUrl = `http://127.0.0.1:${(dropping.address() as { port: number }).port}`;
  refusedUrl = `http://127.0.0.1:${await freePort()}`;
});

test.after(() => new Promise<void>((resolve) => dropping.close(() => resolve())));

const one = async (client: ReturnType<typeof connectClickHouse>) => Number((await queryRows<{ n: number }>(client, 'SELECT 1 AS n'))[0]?.n);

test('a refused server and one that drops the connection are passed over; the request is sent again', async () => {
  const client = connectClickHouse({ ...server, url: `${refusedUrl},${droppingUrl},${real}` }, null);
  try {
    assert.is(await one(client), 1);
    assert.is(await one(client), 1, 'the server that answered stays the current one');
  } finally {
    await client.close();
  }
});

test('an error the server answers with moves nothing; every server unreachable fails the request', async () => {
  const moves: string[] = [];
  const clients = [real, refusedUrl].map((url) => createClient({ url, ...server }));
  const client = failoverClient(clients, (from, to) => moves.push(`${from}->${to}`));
  try {
    await client.query({ query: 'SELEKT 1' }).then(
      () => assert.unreachable('a syntax error'),
      (error: Error) => assert.match(error.message, /Syntax error/),
    );
    assert.equal(moves, []);
  } finally {
    await client.close();
  }
  const unreachable = connectClickHouse({ ...server, url: `${refusedUrl},${droppingUrl}` }, null);
  try {
    await one(unreachable).then(() => assert.unreachable('no server'), (error) => assert.ok(isConnectionError(error), String(error)));
  } finally {
    await unreachable.close();
  }
});

test('connection errors are told from answers', () => {
  assert.ok(isConnectionError(Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:1'), { code: 'ECONNREFUSED' })));
  assert.ok(isConnectionError(Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' })));
  assert.ok(isConnectionError(new Error('socket hang up')));
  assert.ok(isConnectionError(new Error('Timeout error.')));
  assert.not.ok(isConnectionError(new Error('Code: 62, e.displayText() = DB::Exception: Syntax error')));
  assert.not.ok(isConnectionError(undefined));
});

test.run();
