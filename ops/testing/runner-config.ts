// The test runner's own settings (ops/test.ts), read once when it starts; the service's are
// bus/config.ts's. Both are listed in docs/configuration.md.
import { availableParallelism } from 'node:os';
import { Environment } from '../../bus/config.ts';

export function readRunnerConfig(env: NodeJS.ProcessEnv = process.env) {
  const read = new Environment(env);
  // Lanes that take a file whenever they are free: two a core, since most of a file's time is
  // spent waiting on servers and live streams (with services started from bundles a file spends
  // about a third of its time on a core).
  const steadyLanes = 2 * availableParallelism();
  return {
    // Lanes of integration files side by side: the steady ones and one more, which like any lane
    // past them starts a file only while the cores have room (cpu-room.ts).
    lanes: read.wholeNumber('TEST_LANES', steadyLanes + 1, 1),
    steadyLanes,
    // A test file running longer than this has hung: it is stopped and fails.
    fileLimitSeconds: read.number('TEST_FILE_LIMIT_SECONDS', 600, 1),
    // Cluster files side by side in the cluster stage, each on clusters of its own, beside the
    // result checks on one more: most of their time is spent waiting out a fault.
    clusterLanes: read.wholeNumber('TEST_CLUSTER_LANES', 2, 1),
  } as const;
}
