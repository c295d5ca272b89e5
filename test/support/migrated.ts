// The lane's database laid out as a storage service lays it out (on a cluster too), for tests
// that read and write ClickHouse without starting a service.
import type { Config } from '../../bus/config.ts';
import { clickHouseServer, connectClickHouse, type ClickHouseClient } from '../../storage/clickhouse/clickhouse.ts';
import { ClusterNodes } from '../../storage/schema/cluster-nodes.ts';
import { migrate } from '../../storage/schema/migrations.ts';

/** Migrates the configured database and returns a client of it. */
export async function migratedDatabase(config: Config): Promise<ClickHouseClient> {
  const admin = connectClickHouse(clickHouseServer(config), null);
  const cluster = ClusterNodes.connect(clickHouseServer(config));
  try {
    await migrate(admin, config.clickhouseDatabase, cluster);
  } finally {
    await Promise.all([admin.close(), cluster?.close()]);
  }
  return connectClickHouse(clickHouseServer(config), config.clickhouseDatabase);
}
