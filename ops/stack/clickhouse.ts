// A local ClickHouse server, started without systemd from a generated config: loopback only,
// data and logs under the given folder.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { httpRequest } from './http-client.ts';
import { startService, waitUntil, type Service } from './process.ts';

export interface ClickHouseOptions {
  dir: string;
  httpPort: number;
  tcpPort: number;
  /** Makes it one node of a replicated, sharded cluster; absent, a server on its own. */
  cluster?: ClusterMembership;
  /** Files merged over the generated config (its config.d), by name: e.g. production's, checked. */
  configFiles?: Record<string, string>;
  /** Files merged over the generated users.xml (its users.d), by name. */
  userFiles?: Record<string, string>;
  /** The server's environment, for the `from_env` of those files. */
  env?: NodeJS.ProcessEnv;
  /** A cgroup's folder to start in (cgroups.ts), so that all it sends can be cut off. */
  cgroupDir?: string;
}

export interface ClusterMembership {
  /** The name in remote_servers that `ON CLUSTER` and Distributed tables use. */
  name: string;
  /** Each shard's replicas, by native (TCP) port, all on loopback. */
  shards: number[][];
  /** This node's place: the {shard} and {replica} macros of the replicated tables' paths. */
  shard: string;
  replica: string;
  /** Where replicas fetch parts from this node. */
  interserverPort: number;
  /** The ZooKeeper ensemble's members: a server talks to any one of them and moves on when it is lost. */
  zookeeper: { host: string; port: number }[];
}

export async function startClickHouse(options: ClickHouseOptions): Promise<Service & { url: string }> {
  const data = join(options.dir, 'data');
  for (const sub of ['', 'tmp', 'user_files', 'format_schemas']) mkdirSync(join(data, sub), { recursive: true });
  const configFile = join(options.dir, 'config.xml');
  writeFileSync(configFile, serverConfig(options, data));
  writeFileSync(join(options.dir, 'users.xml'), USERS);
  for (const [folder, files] of [['config.d', options.configFiles], ['users.d', options.userFiles]] as const) {
    if (!files) continue;
    mkdirSync(join(options.dir, folder), { recursive: true });
    for (const [name, text] of Object.entries(files)) writeFileSync(join(options.dir, folder, name), text);
  }
  const service = startService('clickhouse', 'clickhouse-server', [`--config-file=${configFile}`], {
    logFile: join(options.dir, 'stdout.log'),
    cwd: options.dir,
    env: options.env,
    cgroupDir: options.cgroupDir,
  });
  const url = `http://127.0.0.1:${options.httpPort}`;
  const ready = async () => (await httpRequest(`${url}/ping`)).status === 200;
  await Promise.race([
    waitUntil('clickhouse-server', ready, 60_000),
    service.exited.then((code) => {
      throw new Error(`clickhouse-server exited (${code}); see ${join(options.dir, 'server.err.log')}`);
    }),
  ]);
  return { ...service, url };
}

function serverConfig(options: ClickHouseOptions, data: string): string {
  return `<?xml version="1.0"?>
<yandex>
  <logger>
    <level>warning</level>
    <log>${join(options.dir, 'server.log')}</log>
    <errorlog>${join(options.dir, 'server.err.log')}</errorlog>
    <size>100M</size>
    <count>2</count>
  </logger>
  <listen_host>127.0.0.1</listen_host>
  <http_port>${options.httpPort}</http_port>
  <tcp_port>${options.tcpPort}</tcp_port>
  <path>${data}/</path>
  <tmp_path>${data}/tmp/</tmp_path>
  <user_files_path>${data}/user_files/</user_files_path>
  <format_schema_path>${data}/format_schemas/</format_schema_path>
  <users_config>users.xml</users_config>
  <default_profile>default</default_profile>
  <default_database>default</default_database>
  <mark_cache_size>536870912</mark_cache_size>
  <max_concurrent_queries>200</max_concurrent_queries>
  <!-- The config.xml ClickHouse ships (production's base) says 3 s; without it, 10 s. An idle
       client connection holds a stopping server that long, and a stop gave up and killed it
       after 5 s; @clickhouse/client drops idle sockets after 2.5 s, before the server does. -->
  <keep_alive_timeout>3</keep_alive_timeout>
  <timezone>UTC</timezone>
${options.cluster ? clusterConfig(options.cluster) : ''}</yandex>
`;
}

// The nodes query each other as production's do: as the user `cluster` of the shipped users.d,
// its password in the server's environment (clickhouse-cluster.ts gives both).
const REMOTE_USER = '<user>cluster</user><password from_env="CLICKHOUSE_CLUSTER_PASSWORD"/>';

// internal_replication: a Distributed table writes each row to one replica of its shard and
// the Replicated table copies it to the others (writing to both would store it twice).
function clusterConfig(cluster: ClusterMembership): string {
  const shards = cluster.shards.map((ports) => `      <shard>
        <internal_replication>true</internal_replication>
${ports.map((port) => `        <replica><host>127.0.0.1</host><port>${port}</port>${REMOTE_USER}</replica>`).join('\n')}
      </shard>`).join('\n');
  return `  <interserver_http_host>127.0.0.1</interserver_http_host>
  <interserver_http_port>${cluster.interserverPort}</interserver_http_port>
  <remote_servers>
    <${cluster.name}>
${shards}
    </${cluster.name}>
  </remote_servers>
  <macros>
    <shard>${cluster.shard}</shard>
    <replica>${cluster.replica}</replica>
  </macros>
  <zookeeper>
${cluster.zookeeper.map((member) => `    <node><host>${member.host}</host><port>${member.port}</port></node>`).join('\n')}
    <!-- A killed node's session, which marks its replicas active, lapses this soon; until then
         the node started again waits to take its replicas back (30 s by default). -->
    <session_timeout_ms>10000</session_timeout_ms>
  </zookeeper>
  <distributed_ddl>
    <path>/clickhouse/task_queue/ddl</path>
  </distributed_ddl>
  <merge_tree>
    <!-- A replica that could not start, its node's old session still marking it active, tries
         again this often (60 s by default): a node back from a crash has its tables writable,
         and runs ON CLUSTER DDL, soon after that session lapses. -->
    <zookeeper_session_expiration_check_period>2</zookeeper_session_expiration_check_period>
  </merge_tree>
`;
}

const USERS = `<?xml version="1.0"?>
<yandex>
  <profiles>
    <default>
      <max_memory_usage>4000000000</max_memory_usage>
      <load_balancing>random</load_balancing>
    </default>
    <logged>
      <profile>default</profile>
      <log_queries>1</log_queries>
    </logged>
  </profiles>
  <users>
    <default>
      <password></password>
      <networks><ip>127.0.0.1</ip><ip>::1</ip></networks>
      <profile>default</profile>
      <quota>default</quota>
    </default>
    <!-- default, its queries kept in system.query_log: for tests that check how ClickHouse
         ended a query (cancelled, timed out, finished), not only that it is gone. -->
    <logged>
      <password></password>
      <networks><ip>127.0.0.1</ip><ip>::1</ip></networks>
      <profile>logged</profile>
      <quota>default</quota>
    </logged>
  </users>
  <quotas><default><interval><duration>3600</duration><queries>0</queries><errors>0</errors><result_rows>0</result_rows><read_rows>0</read_rows><execution_time>0</execution_time></interval></default></quotas>
</yandex>
`;
