// A server of a local cluster that can be lost like a machine (SIGKILL: nothing flushed,
// nothing said to the others) and started again on the same data, to rejoin. One that crashes
// (a fault, an abort, an error exit) is started again at once, as systemd's Restart=on-failure
// would in production: a crash must cost its seconds, not the cluster. One killed from outside
// (kill -9, kill) stays down, so what its loss does can be watched.
import type { Service } from './process.ts';

export interface ClusterNode {
  name: string;
  /** Starts it; resolves once it answers. */
  start(): Promise<void>;
  kill(): Promise<void>;
  stop(): Promise<void>;
  /** The running process's, if it runs. */
  pid(): number | undefined;
}

const KILLED_FROM_OUTSIDE = new Set<unknown>(['SIGKILL', 'SIGTERM', 'SIGINT']);

/** `launch` starts the server on its data and resolves once it answers. Every exit the node
 *  did not ask for is reported on stderr. */
export function clusterNode(name: string, launch: () => Promise<Service>): ClusterNode {
  const report = (message: string) => console.error(message);
  let service: Service | undefined;
  // Whether it should be running: a restart that ends after a stop or kill is undone.
  let wanted = false;
  // A start in progress, which a stop waits for: nothing may outlive the stack.
  let starting: Promise<void> | undefined;

  const launchAndWatch = async (): Promise<void> => {
    const started = await launch();
    if (!wanted) return started.stop();
    service = started;
    void started.exited.then((end) => {
      if (service !== started) return;
      service = undefined;
      if (KILLED_FROM_OUTSIDE.has(end)) return report(`${name} was killed (${end}); it stays down`);
      report(`${name} crashed (${end}); starting it again`);
      run().catch((error: Error) => report(`${name} did not start again: ${error.message}`));
    });
  };
  const run = (): Promise<void> => (starting ??= launchAndWatch().finally(() => (starting = undefined)));

  /** No longer wanted: returns the running process, once any start in progress has ended. */
  const release = async (): Promise<Service | undefined> => {
    wanted = false;
    await starting?.catch(() => {});
    const current = service;
    service = undefined;
    return current;
  };

  return {
    name,
    async start() {
      wanted = true;
      if (!service) await run();
    },
    async stop() {
      await (await release())?.stop();
    },
    async kill() {
      const current = await release();
      if (!current) return;
      // The whole process group, as stop() does: a server's forked helpers die with it.
      process.kill(-current.pid, 'SIGKILL');
      await current.stop();
    },
    pid: () => service?.pid,
  };
}
