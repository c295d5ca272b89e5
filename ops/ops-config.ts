// The tools' own settings (ops/: the local ClickHouse of `npm start`, asset setup, the demo,
// the benchmarks and the tests' media), read once where a tool starts; no service process reads
// them, the service's are bus/config.ts's. Both are listed in docs/configuration.md.
import { resolve } from 'node:path';
import { Environment, sharedSettings } from '../bus/config.ts';

export function readOpsConfig(env: NodeJS.ProcessEnv = process.env) {
  const read = new Environment(env);
  const { varDir } = sharedSettings(read);
  return {
    // Only for the local ClickHouse that `npm start` runs; clients use the HTTP URL.
    clickhouseTcpPort: read.number('CLICKHOUSE_TCP_PORT', 9000, 1),
    mediaDir: resolve(read.text('MEDIA_DIR', resolve(varDir, 'media'))),
    assetsMirror: read.optionalText('ASSETS_MIRROR'),
  } as const;
}

export type OpsConfig = ReturnType<typeof readOpsConfig>;
