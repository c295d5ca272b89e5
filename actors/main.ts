// Entry point of an actor host process.
import { readHostConfig } from '../bus/config.ts';
import { createLog } from '../bus/log.ts';
import { createRegistry, MetricsServer } from '../bus/metrics-server.ts';
import { logUnhandled, stopOnSignal } from '../bus/process-lifecycle.ts';
import { ActorHost } from './host.ts';
import { buildHostParts } from './host-parts.ts';
import { HostMetrics } from './metrics.ts';

const config = readHostConfig();
const log = createLog(config);
logUnhandled(log, 'actor host');
const registry = createRegistry();
const metrics = await MetricsServer.start(registry, config, log);
const host = await ActorHost.start(await buildHostParts(config, log, new HostMetrics(registry)));
metrics.markReady();
stopOnSignal(log, 'actor host', () => {
  metrics.markStopping();
  return host.stop();
});
