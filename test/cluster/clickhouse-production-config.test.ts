// The production ClickHouse cluster files (ops/production/clickhouse/) checked by their own
// servers: zoo.cfg starts a three-member ZooKeeper ensemble that elects a leader, and two
// clickhouse-servers with every config.d file, users.d and one node's macros each start, show
// the cluster of 2 shards x 2 replicas, reach that ensemble and answer a distributed query with
// the users and passwords shipped. Only what cannot be used on this machine is changed: host
// names (to loopback), ports (free ones) and the data folder.
import { test } from '../support/uvu.ts';
import * as assert from 'uvu/assert';
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { readConfig } from '../../bus/config.ts';
import { startClickHouse } from '../../ops/stack/clickhouse.ts';
import { freePort } from '../../ops/stack/ports.ts';
import type { Service } from '../../ops/stack/process.ts';
import { ask, startZooKeeper } from '../../ops/stack/zookeeper.ts';
import { connectClickHouse, queryRows } from '../../storage/clickhouse.ts';

const config = readConfig();
const production = join(config.projectRoot, 'ops', 'production', 'clickhouse');
const dir = join(config.varDir, 'test', `clickhouse-production-${process.pid}`);

const running: Service[] = [];
const zookeeperPorts: number[] = [];
let ok = false;

test.after(async () => {
  await Promise.all(running.map((service) => service.stop()));
  if (ok) rmSync(dir, { recursive: true, force: true });
});

test('zoo.cfg makes a three-member ensemble', async () => {
  const original = readFileSync(join(production, 'zoo.cfg'), 'utf8');
  const ports = await Promise.all([1, 2, 3].map(async () => ({ client: await freePort(), quorum: await freePort(), election: await freePort() })));
  const members = ports.map((port, i) => {
    const data = join(dir, `zookeeper-${i + 1}`, 'data');
    mkdirSync(data, { recursive: true });
    writeFileSync(join(data, 'myid'), `${i + 1}\n`);
    let text = original
      .replace(/^dataDir=.*$/m, `dataDir=${data}`)
      .replace(/^clientPort=.*$/m, `clientPort=${port.client}\nclientPortAddress=127.0.0.1`);
    ports.forEach((peer, n) => {
      text = text.replace(new RegExp(`^server\\.${n + 1}=zk-${n + 1}\\.internal:2888:3888$`, 'm'), `server.${n + 1}=127.0.0.1:${peer.quorum}:${peer.election}`);
    });
    assert.not.match(text, /\.internal/, 'every host replaced');
    return { dir: join(dir, `zookeeper-${i + 1}`), port: port.client, config: text };
  });
  running.push(...(await Promise.all(members.map((member) => startZooKeeper(member)))));
  const modes = await Promise.all(members.map(async (member) => /Mode: (\w+)/.exec(await ask(member.port, 'srvr'))?.[1]));
  assert.equal(modes.sort(), ['follower', 'follower', 'leader']);
  zookeeperPorts.push(...members.map((member) => member.port));
});

// Two nodes of different shards (ch-1-1, ch-2-1), each with every config.d file, users.d and its
// macros; the passwords in their environment as the systemd drop-in puts them there.
const PASSWORDS = { CLICKHOUSE_SERVICE_PASSWORD: 'service-secret', CLICKHOUSE_ANALYST_PASSWORD: 'analyst-secret', CLICKHOUSE_CLUSTER_PASSWORD: 'cluster-secret' };
const NODES = ['ch-1-1', 'ch-2-1'] as const;
const nodes: { name: string; url: string }[] = [];

test('clickhouse-server starts on the config.d files, users.d and a node macros, and shows the cluster', async () => {
  assert.is(zookeeperPorts.length, 3, 'the ensemble runs');
  // Every replica's native port, the two that do not run too: their connections are refused.
  const tcpPorts: Record<string, number> = {};
  for (const name of ['ch-1-1', 'ch-1-2', 'ch-2-1', 'ch-2-2']) tcpPorts[name] = await freePort();
  for (const name of NODES) {
    const interserverPort = await freePort();
    const localise = (text: string) => text
      .replace(/<host>(ch-\d-\d)\.internal<\/host><port>9000<\/port>/g, (_, node: string) => `<host>127.0.0.1</host><port>${tcpPorts[node]}</port>`)
      .replace(/<host>zk-(\d)\.internal<\/host><port>2181<\/port>/g, (_, n: string) => `<host>127.0.0.1</host><port>${zookeeperPorts[Number(n) - 1]}</port>`)
      // Its own free port, on loopback only.
      .replace('<listen_host>0.0.0.0</listen_host>', '<listen_host>127.0.0.1</listen_host>')
      .replace('<interserver_http_port>9009</interserver_http_port>', `<interserver_http_port>${interserverPort}</interserver_http_port>`);
    const files: Record<string, string> = {};
    for (const file of readdirSync(join(production, 'config.d'))) files[file] = localise(readFileSync(join(production, 'config.d', file), 'utf8'));
    files['macros.xml'] = readFileSync(join(production, 'macros', `${name}.xml`), 'utf8');
    // Where the analysts' queries are logged: Debian's config.xml has it, the generated one not.
    files['query-log.xml'] = '<yandex><query_log><database>system</database><table>query_log</table></query_log></yandex>';
    assert.not.match(Object.values(files).join(''), /\.internal|>9009<|>9000</, 'every host and port replaced');
    const users: Record<string, string> = {};
    for (const file of readdirSync(join(production, 'users.d'))) users[file] = readFileSync(join(production, 'users.d', file), 'utf8');
    const server = await startClickHouse({
      dir: join(dir, name), httpPort: await freePort(), tcpPort: tcpPorts[name]!, configFiles: files, userFiles: users, env: { ...process.env, ...PASSWORDS },
    });
    running.push(server);
    nodes.push({ name, url: server.url });
  }
  const client = connectClickHouse({ url: nodes[0]!.url, username: 'emo', password: PASSWORDS.CLICKHOUSE_SERVICE_PASSWORD }, null);
  try {
    const clusters = await queryRows<{ shard: number; replica: number }>(client,
      `SELECT shard_num AS shard, replica_num AS replica FROM system.clusters WHERE cluster = 'emo' ORDER BY shard, replica`);
    assert.equal(clusters.map((row) => [Number(row.shard), Number(row.replica)]), [[1, 1], [1, 2], [2, 1], [2, 2]]);
    const macros = await queryRows<{ macro: string; substitution: string }>(client, 'SELECT macro, substitution FROM system.macros ORDER BY macro');
    assert.equal(macros.map((row) => `${row.macro}=${row.substitution}`), ['replica=ch-1-1', 'shard=1']);
    const znodes = await queryRows<{ name: string }>(client, `SELECT name FROM system.zookeeper WHERE path = '/'`);
    assert.ok(znodes.some((row) => row.name === 'zookeeper'), 'it reaches the ensemble');
  } finally {
    await client.close();
  }
});

/** One statement over HTTP as a user, with no setting of its own (an analyst may change none). */
async function run(url: string, user: string, password: string, query: string): Promise<{ status: number; text: string }> {
  const response = await fetch(`${url}/?${new URLSearchParams({ user, password })}`, { method: 'POST', body: query });
  return { status: response.status, text: (await response.text()).trim() };
}

test('the service writes, an analyst reads across both shards and writes nothing, the nodes ask each other as `cluster`', async () => {
  assert.is(nodes.length, 2, 'both nodes run');
  const service = (url: string, query: string) => run(url, 'emo', PASSWORDS.CLICKHOUSE_SERVICE_PASSWORD, query);
  const analyst = (query: string) => run(nodes[0]!.url, 'analyst', PASSWORDS.CLICKHOUSE_ANALYST_PASSWORD, query);
  for (const [i, node] of nodes.entries()) {
    for (const query of [
      'CREATE DATABASE IF NOT EXISTS production',
      'CREATE TABLE production.numbers_local (n UInt32) ENGINE = MergeTree() ORDER BY n',
      `INSERT INTO production.numbers_local SELECT number + ${i * 100} FROM system.numbers LIMIT ${10 + i}`,
      `CREATE TABLE production.numbers AS production.numbers_local ENGINE = Distributed(emo, production, numbers_local)`,
    ]) {
      const done = await service(node.url, query);
      assert.is(done.status, 200, `${node.name}: ${query}: ${done.text}`);
    }
  }

  const read = await analyst('SELECT count() FROM production.numbers');
  assert.is(read.status, 200, read.text);
  assert.is(read.text, '21', 'the rows of both shards');

  const write = await analyst('INSERT INTO production.numbers_local VALUES (7)');
  assert.is(write.status, 500, write.text);
  assert.match(write.text, /readonly/i);
  const setting = await run(nodes[0]!.url, 'analyst', PASSWORDS.CLICKHOUSE_ANALYST_PASSWORD, 'SET max_memory_usage = 0');
  assert.match(setting.text, /readonly/i, 'a limit cannot be lifted');
  assert.is((await run(nodes[0]!.url, 'analyst', 'wrong', 'SELECT 1')).status, 401, 'a wrong password is refused');
  assert.is((await service(nodes[0]!.url, 'SELECT count() FROM production.numbers_local')).text, '10', 'the refused write changed nothing');

  // The other shard's part of the analyst's read ran there as `cluster`, for the analyst.
  await service(nodes[1]!.url, 'SYSTEM FLUSH LOGS');
  const remote = await service(nodes[1]!.url,
    `SELECT user, initial_user FROM system.query_log WHERE type = 2 AND is_initial_query = 0 AND query LIKE '%numbers_local%' FORMAT TSV`);
  assert.equal(remote.text.split('\n'), ['cluster\tanalyst']);
  ok = true;
});

test.run();
