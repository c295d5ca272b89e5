// The stack launcher as code outside the service uses it (the lab in ops/bench): NATS and
// ClickHouse on free loopback ports, and the service's processes started and waited for.
export { startClickHouse } from './clickhouse.ts';
export { startClickHouseCluster } from './clickhouse-cluster.ts';
export { startCluster } from './cluster.ts';
export { startNats } from './nats.ts';
export { freePort, portOpen } from './ports.ts';
export { startService, waitUntil, type Service } from './process.ts';
export { launchService, type ServiceProcess } from './service-process.ts';
