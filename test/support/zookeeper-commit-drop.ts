// A proxy on loopback between one ClickHouse server and a ZooKeeper member that, when armed, cuts
// the connection at the moment a replicated table commits an insert: the multi-request that
// registers the new part (it creates the replication log's next `log-` entry) is either dropped
// before ZooKeeper sees it, or passed and its answer dropped. Either way the server loses its
// connection with the commit's outcome unknown to it, which is what a ZooKeeper member's crash
// or a network cut at that moment does, but every time and at that exact request.
//
// ZooKeeper's wire format: every packet is a 4-byte big-endian length and its body. The first
// packet each way is the session's handshake; after it a request begins (xid, type) and a reply
// (xid, zxid, err). A multi-request is type 14.
import { startTcpProxy } from './tcp-proxy.ts';

const MULTI = 14;
const LOG_ENTRY = Buffer.from('/log/log-');

/** `request`: ZooKeeper never sees the commit. `reply`: ZooKeeper applies it; its answer is lost. */
export type CommitDrop = 'request' | 'reply';

export interface DroppedCommit {
  drop: CommitDrop;
  /** The replicated table whose part it registered. */
  table: string;
}

export interface ZooKeeperCommitDrop {
  host: string;
  port: number;
  /** Cuts the next commit of a part of `table` the way `drop` says. */
  arm(drop: CommitDrop, table: string): void;
  dropped: DroppedCommit[];
  close(): Promise<void>;
}

/** Splits a stream into ZooKeeper packets, body without the length. */
function packets(onPacket: (packet: Buffer, frame: Buffer) => void): (chunk: Buffer) => void {
  let pending: Buffer = Buffer.alloc(0);
  return (chunk) => {
    pending = pending.length ? Buffer.concat([pending, chunk]) : chunk;
    while (pending.length >= 4) {
      const length = pending.readInt32BE(0);
      if (pending.length < 4 + length) break;
      const frame = pending.subarray(0, 4 + length);
      pending = pending.subarray(4 + length);
      onPacket(frame.subarray(4), frame);
    }
  };
}

export async function startZooKeeperCommitDrop(member: { host: string; port: number }): Promise<ZooKeeperCommitDrop> {
  const dropped: DroppedCommit[] = [];
  let armed: { drop: CommitDrop; table: string; path: Buffer } | undefined;
  const proxy = await startTcpProxy(member, (client, upstream) => {
    const cut = (drop: CommitDrop, table: string) => {
      dropped.push({ drop, table });
      client.resetAndDestroy();
      upstream.destroy();
    };
    const handshaken = { request: false, reply: false };
    // The xid of the commit whose answer is to be dropped.
    let doomed: { xid: number; table: string } | undefined;
    client.on('data', packets((packet, frame) => {
      if (client.destroyed) return;
      if (!handshaken.request) {
        handshaken.request = true;
        return void upstream.write(frame);
      }
      const commit = armed && packet.readInt32BE(4) === MULTI && packet.includes(LOG_ENTRY) && packet.includes(armed.path);
      if (commit) {
        const { drop, table } = armed!;
        armed = undefined;
        if (drop === 'request') return cut(drop, table);
        doomed = { xid: packet.readInt32BE(0), table };
      }
      upstream.write(frame);
    }));
    upstream.on('data', packets((packet, frame) => {
      if (client.destroyed) return;
      if (!handshaken.reply) {
        handshaken.reply = true;
        return void client.write(frame);
      }
      if (doomed && packet.readInt32BE(0) === doomed.xid) return cut('reply', doomed.table);
      client.write(frame);
    }));
  });
  return {
    host: '127.0.0.1',
    port: proxy.port,
    arm(drop, table) {
      armed = { drop, table, path: Buffer.from(`/${table}/`) };
    },
    dropped,
    close: proxy.close,
  };
}
