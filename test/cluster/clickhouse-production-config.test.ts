// The production ClickHouse cluster files (ops/production/clickhouse/) checked by their own
// servers: zoo.cfg starts a three-member ZooKeeper ensemble that elects a leader, and a
// clickhouse-server with every config.d file and one node's macros starts, shows the cluster
// of 2 shards x 2 replicas and reaches that ensemble. Only what cannot be used on this machine
// is changed: host names (to loopback), ports (free ones) and the data folder.
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

test('clickhouse-server starts on the config.d files and a node macros, and shows the cluster', async () => {
  assert.is(zookeeperPorts.length, 3, 'the ensemble runs');
  const files: Record<string, string> = {};
  const interserverPort = await freePort();
  const localise = (text: string) => text
    .replace(/ch-\d-\d\.internal/g, '127.0.0.1')
    .replace(/<host>zk-(\d)\.internal<\/host><port>2181<\/port>/g, (_, n: string) => `<host>127.0.0.1</host><port>${zookeeperPorts[Number(n) - 1]}</port>`)
    // Its own free port, on loopback only.
    .replace('<listen_host>0.0.0.0</listen_host>', '<listen_host>127.0.0.1</listen_host>')
    .replace('<interserver_http_port>9009</interserver_http_port>', `<interserver_http_port>${interserverPort}</interserver_http_port>`);
  for (const name of readdirSync(join(production, 'config.d'))) files[name] = localise(readFileSync(join(production, 'config.d', name), 'utf8'));
  files['macros.xml'] = readFileSync(join(production, 'macros', 'ch-1-2.xml'), 'utf8');
  assert.not.match(Object.values(files).join(''), /\.internal|>9009</, 'every host and port replaced');
  const server = await startClickHouse({ dir: join(dir, 'clickhouse'), httpPort: await freePort(), tcpPort: await freePort(), configFiles: files });
  running.push(server);
  const client = connectClickHouse({ url: server.url, username: 'default', password: '' }, null);
  try {
    const clusters = await queryRows<{ shard: number; replica: number }>(client,
      `SELECT shard_num AS shard, replica_num AS replica FROM system.clusters WHERE cluster = 'emo' ORDER BY shard, replica`);
    assert.equal(clusters.map((row) => [Number(row.shard), Number(row.replica)]), [[1, 1], [1, 2], [2, 1], [2, 2]]);
    const macros = await queryRows<{ macro: string; substitution: string }>(client, 'SELECT macro, substitution FROM system.macros ORDER BY macro');
    assert.equal(macros.map((row) => `${row.macro}=${row.substitution}`), ['replica=ch-1-2', 'shard=1']);
    const znodes = await queryRows<{ name: string }>(client, `SELECT name FROM system.zookeeper WHERE path = '/'`);
    assert.ok(znodes.some((row) => row.name === 'zookeeper'), 'it reaches the ensemble');
  } finally {
    await client.close();
  }
  ok = true;
});

test.run();
