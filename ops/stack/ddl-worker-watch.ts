// ClickHouse 18.16 ends a server's DDL worker for good on a ZooKeeper error it did not expect.
// Two replicas of a shard running one ALTER from the ON CLUSTER queue can cause one: each asks
// whether the shard has run it, then takes the shard's lock; when the other ran it and let go
// between the two, the second runs it again and, marking the shard done, finds the first's mark.
// The server goes on answering, but every later ON CLUSTER statement waits for it until it is
// restarted. A local cluster's node is restarted then, as a production watchdog should
// (docs/operations.md, "A server whose DDL worker stopped").
import { open, stat } from 'node:fs/promises';
import type { ClusterNode } from './cluster-node.ts';

const STOPPED = /<Error> DDLWorker: Unexpected/;
const POLL_MS = 1000;

/** Watches `errorLog` from its current end; restarts `node` whenever its DDL worker stops. */
export function restartOnStoppedDdlWorker(node: ClusterNode, errorLog: string, report: (message: string) => void): { stop(): void } {
  let offset = -1;
  let stopped = false;
  const check = async () => {
    const size = await stat(errorLog).then((found) => found.size, () => 0);
    if (offset < 0 || size < offset) offset = size;
    if (size === offset) return;
    const file = await open(errorLog);
    try {
      const { buffer, bytesRead } = await file.read(Buffer.alloc(size - offset), 0, size - offset, offset);
      // Whole lines only: a line still being written is read again, whole, at the next poll.
      const complete = buffer.subarray(0, bytesRead).lastIndexOf('\n') + 1;
      offset += complete;
      const line = buffer.subarray(0, complete).toString('utf8').split('\n').find((each) => STOPPED.test(each));
      if (!line || stopped || node.pid() === undefined) return;
      report(`${node.name}'s DDL worker stopped (${line.slice(line.indexOf('DDLWorker'), 200)}); restarting it`);
      await node.stop();
      if (stopped) return;
      await node.start();
      report(`${node.name} restarted: its DDL worker runs again`);
    } finally {
      await file.close();
    }
  };
  const loop = async () => {
    while (!stopped) {
      await check().catch((error: Error) => report(`watching ${node.name}'s DDL worker: ${error.message}`));
      await new Promise((resolve) => setTimeout(resolve, POLL_MS).unref());
    }
  };
  void loop();
  return { stop: () => void (stopped = true) };
}
