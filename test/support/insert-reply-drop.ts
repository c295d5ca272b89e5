// An HTTP proxy on loopback in front of one ClickHouse node that, when armed, lets an INSERT
// through and drops ClickHouse's answer: the server has finished the insert (it answers only
// then), the client sees its connection reset and never learns it. Everything else, and every
// INSERT once the drops armed are spent, passes untouched.
import { startTcpProxy } from './tcp-proxy.ts';

export interface DroppedReply {
  /** The status line ClickHouse answered with: "HTTP/1.1 200 OK" for an insert it committed. */
  status: string;
  /** The start of the request line, to say which table. */
  request: string;
}

export interface InsertReplyDrop {
  url: string;
  /** Drops the answers of the next `count` INSERTs whose request line matches `table`. */
  arm(count: number, table: string): void;
  dropped: DroppedReply[];
  close(): Promise<void>;
}

export async function startInsertReplyDrop(target: URL): Promise<InsertReplyDrop> {
  const dropped: DroppedReply[] = [];
  let armed = 0;
  let table = '';
  const proxy = await startTcpProxy({ host: target.hostname, port: Number(target.port) }, (client, upstream) => {
    // The request on this connection whose answer is to be dropped: requests on a kept-alive
    // connection come one after another, each answered before the next is sent.
    let doomed: string | undefined;
    client.on('data', (chunk: Buffer) => {
      const head = chunk.subarray(0, 512).toString('latin1');
      const line = /^POST (\S+)/.exec(head)?.[1];
      if (line !== undefined && armed > 0 && /query=INSERT/i.test(line) && decodeURIComponent(line).includes(table)) {
        armed--;
        doomed = line.slice(0, 200);
      }
      upstream.write(chunk);
    });
    upstream.on('data', (chunk: Buffer) => {
      if (doomed === undefined) return void client.write(chunk);
      dropped.push({ status: chunk.subarray(0, chunk.indexOf('\r\n')).toString('latin1'), request: doomed });
      client.resetAndDestroy();
      upstream.destroy();
    });
  });
  return {
    url: `http://127.0.0.1:${proxy.port}`,
    arm(count, which) {
      armed = count;
      table = which;
    },
    dropped,
    close: proxy.close,
  };
}
