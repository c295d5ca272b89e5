// A storage service of a cluster test's own: it writes to the cluster's tables through one
// address (a node, or a proxy in front of one), as the shipped user, beside the test's NATS.
import { freePort } from '../../ops/stack/ports.ts';
import type { ClickHouseCluster } from '../../ops/stack/clickhouse-cluster.ts';
import type { Service } from '../../ops/stack/process.ts';
import { launchService } from '../../ops/stack/service-process.ts';

export async function launchStorageOn(options: {
  id: string;
  projectRoot: string;
  logFile: string;
  natsUrl: string;
  cluster: ClickHouseCluster;
  /** Where every insert and read goes. */
  clickhouseUrl: string;
  database: string;
}): Promise<Service> {
  return await launchService({
    id: options.id,
    role: 'storage',
    projectRoot: options.projectRoot,
    logFile: options.logFile,
    metricsPort: await freePort(),
    env: {
      ...process.env,
      NATS_URL: options.natsUrl,
      ...options.cluster.serviceEnv,
      CLICKHOUSE_URL: options.clickhouseUrl,
      CLICKHOUSE_DATABASE: options.database,
      // ROWS, DEAD_ROWS and the buckets must fit this NATS's file store beside the other lanes'.
      ROWS_STREAM_MAX_BYTES: String(256 * 1024 ** 2),
      SESSIONS_BUCKET_MAX_BYTES: String(64 * 1024 ** 2),
    },
  });
}
