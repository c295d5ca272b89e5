// The production ClickHouse files (ops/production/clickhouse/) run on one machine: a ZooKeeper
// ensemble from zoo.cfg and the four nodes, each on Debian's own config.xml and users.xml (as
// the package installs them) with every config.d file, users.d and its own macros, the users'
// passwords in its environment as the systemd drop-in puts them there. Only what cannot be used
// here is changed: host names (to loopback), ports (free ones) and the data and log folders.
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import * as assert from 'uvu/assert';
import { freePort } from '../../ops/stack/ports.ts';
import { startService, waitUntil, type Service } from '../../ops/stack/process.ts';
import { startZooKeeper, type ZooKeeper } from '../../ops/stack/zookeeper.ts';
import { httpRequest } from '../../ops/stack/http-client.ts';

export const PRODUCTION = join(import.meta.dirname, '..', '..', 'ops', 'production', 'clickhouse');
// What Debian's clickhouse-server package installs, which the production files are merged over.
const DEBIAN = '/etc/clickhouse-server';

export const NODES = ['ch-1-1', 'ch-1-2', 'ch-2-1', 'ch-2-2'] as const;
export type NodeName = (typeof NODES)[number];

/** What /etc/clickhouse-server/users.env holds on every node. */
export const PASSWORDS = {
  CLICKHOUSE_SERVICE_PASSWORD: 'service-secret',
  CLICKHOUSE_ANALYST_PASSWORD: 'analyst-secret',
  CLICKHOUSE_CLUSTER_PASSWORD: 'cluster-secret',
};

export interface ProductionNode {
  name: NodeName;
  shard: number;
  url: string;
  server: Service;
}

/** The three members of zoo.cfg, each with its myid, on free loopback ports. */
export async function startProductionZooKeeper(dir: string): Promise<ZooKeeper[]> {
  const original = readFileSync(join(PRODUCTION, 'zoo.cfg'), 'utf8');
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
  return Promise.all(members.map((member) => startZooKeeper(member)));
}

/** The four nodes, started at once, on the ensemble whose client ports are given. */
export async function startProductionNodes(dir: string, zookeeperPorts: number[]): Promise<ProductionNode[]> {
  const ports = Object.fromEntries(await Promise.all(NODES.map(async (name) =>
    [name, { http: await freePort(), tcp: await freePort(), interserver: await freePort() }] as const)));
  const localise = (text: string, name: NodeName) => text
    .replace(/<host>(ch-\d-\d)\.internal<\/host><port>9000<\/port>/g, (_, node: NodeName) => `<host>127.0.0.1</host><port>${ports[node]!.tcp}</port>`)
    .replace(/<host>zk-(\d)\.internal<\/host><port>2181<\/port>/g, (_, n: string) => `<host>127.0.0.1</host><port>${zookeeperPorts[Number(n) - 1]}</port>`)
    .replace('<listen_host>0.0.0.0</listen_host>', '<listen_host>127.0.0.1</listen_host>')
    .replace('<interserver_http_port>9009</interserver_http_port>', `<interserver_http_port>${ports[name]!.interserver}</interserver_http_port>`);
  const users: Record<string, string> = {};
  for (const file of readdirSync(join(PRODUCTION, 'users.d'))) users[file] = readFileSync(join(PRODUCTION, 'users.d', file), 'utf8');
  return Promise.all(NODES.map(async (name) => {
    const files: Record<string, string> = {};
    for (const file of readdirSync(join(PRODUCTION, 'config.d'))) files[file] = localise(readFileSync(join(PRODUCTION, 'config.d', file), 'utf8'), name);
    // The name its partner fetches its parts by: in production the node's own private name,
    // here loopback, where it listens.
    const macros = readFileSync(join(PRODUCTION, 'macros', `${name}.xml`), 'utf8');
    const ownName = `<interserver_http_host>${name}.internal</interserver_http_host>`;
    assert.ok(macros.includes(ownName), `${name}'s macros name the node itself for its partner`);
    files['macros.xml'] = macros.replace(ownName, '<interserver_http_host>127.0.0.1</interserver_http_host>');
    assert.not.match(Object.values(files).join(''), /\.internal|>9009<|>9000</, 'every host and port replaced');
    const server = await startNode(join(dir, name), ports[name]!, files, users);
    return { name, shard: Number(name[3]), url: `http://127.0.0.1:${ports[name]!.http}`, server };
  }));
}

/** clickhouse-server on Debian's config.xml and users.xml, its data, logs and ports its own. */
async function startNode(dir: string, ports: { http: number; tcp: number }, configFiles: Record<string, string>, userFiles: Record<string, string>): Promise<Service> {
  const config = readFileSync(join(DEBIAN, 'config.xml'), 'utf8')
    .replaceAll('/var/lib/clickhouse/', `${join(dir, 'data')}/`)
    .replaceAll('/var/log/clickhouse-server/', `${dir}/`)
    .replace('<http_port>8123</http_port>', `<http_port>${ports.http}</http_port>`)
    .replace('<tcp_port>9000</tcp_port>', `<tcp_port>${ports.tcp}</tcp_port>`);
  assert.not.match(config, /\/var\/lib\/clickhouse|\/var\/log\/clickhouse|>8123<|<tcp_port>9000</, 'Debian\'s folders and ports replaced');
  for (const sub of ['tmp', 'user_files', 'format_schemas']) mkdirSync(join(dir, 'data', sub), { recursive: true });
  writeFileSync(join(dir, 'config.xml'), config);
  writeFileSync(join(dir, 'users.xml'), readFileSync(join(DEBIAN, 'users.xml'), 'utf8'));
  for (const [folder, files] of [['config.d', configFiles], ['users.d', userFiles]] as const) {
    mkdirSync(join(dir, folder), { recursive: true });
    for (const [file, text] of Object.entries(files)) writeFileSync(join(dir, folder, file), text);
  }
  const server = startService('clickhouse', 'clickhouse-server', [`--config-file=${join(dir, 'config.xml')}`], {
    logFile: join(dir, 'stdout.log'), cwd: dir, env: { ...process.env, ...PASSWORDS },
  });
  const ready = async () => (await httpRequest(`http://127.0.0.1:${ports.http}/ping`)).status === 200;
  await Promise.race([
    waitUntil('clickhouse-server', ready, 60_000),
    server.exited.then((code) => {
      throw new Error(`clickhouse-server exited (${code}); see ${join(dir, 'clickhouse-server.err.log')}`);
    }),
  ]);
  return server;
}

/** One statement over HTTP as a user, with no setting of its own (an analyst may change none). */
export async function runAs(url: string, user: string, password: string, query: string): Promise<{ status: number; text: string }> {
  const response = await httpRequest(`${url}/?${new URLSearchParams({ user, password })}`, { method: 'POST', body: query });
  return { status: response.status, text: response.text.trim() };
}
