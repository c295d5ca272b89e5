// A server of a local cluster that can be lost like a machine (SIGKILL: nothing flushed,
// nothing said to the others) and started again on the same data, to rejoin.
import type { Service } from './process.ts';

export interface ClusterNode {
  name: string;
  /** Starts it; resolves once it answers. */
  start(): Promise<void>;
  kill(): Promise<void>;
  stop(): Promise<void>;
  /** Resolves when the running process exits. */
  exited(): Promise<unknown>;
}

/** `launch` starts the server on its data and resolves once it answers. */
export function clusterNode(name: string, launch: () => Promise<Service>): ClusterNode {
  let service: Service | undefined;
  return {
    name,
    async start() {
      service ??= await launch();
    },
    async stop() {
      await service?.stop();
      service = undefined;
    },
    async kill() {
      if (!service) return;
      // The whole process group, as stop() does: a server's forked helpers die with it.
      process.kill(-service.pid, 'SIGKILL');
      await service.stop();
      service = undefined;
    },
    exited: () => service?.exited ?? Promise.resolve(null),
  };
}
