// A lane's NATS server outlives its files, and what a file leaves in JetStream (session records,
// quota slots, rows, purges) is no later file's business: each file has users of its own. Yet
// every later file paid for it: each storage service and actor host replays every session
// record as it starts, and each test stack reads them all as it stops, so a lane's files grew
// costlier the further down the lane they ran (a stack's stop read 388 records after sixteen
// files, 0.3 s of CPU). Between files the lane's streams are deleted, so that each file finds
// the server as the lane's first file did, and its storage service makes them afresh.
import { jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';

/** Deletes every stream, key-value buckets included, on the server at `natsUrl`. */
export async function deleteStreams(natsUrl: string): Promise<void> {
  const nc = await connect({ servers: natsUrl });
  try {
    const jsm = await jetstreamManager(nc);
    const names: string[] = [];
    for await (const stream of jsm.streams.list()) names.push(stream.config.name);
    for (const name of names) await jsm.streams.delete(name);
  } finally {
    await nc.close();
  }
}
