// An example live consumer: prints every result row of one session as it is published, and
// its worker state changes, straight from NATS (core subscriptions; nothing is acknowledged or
// taken from the stream that feeds ClickHouse).
//
//   NATS_URL=nats://127.0.0.1:4222 node --import tsx ops/live-subscriber.ts <sessionId>
//
// Rows arrive on emo.rows.<session>.<product>.<user>.<kind> (kinds: audio, face, video, speech,
// event), each message a JSON array of rows of that kind; worker states on
// emo.live.<session>.<product>.<user>.worker_state as {session, state, at}.
import { connect } from '@nats-io/transport-node';
import { readConfig } from '../bus/config.ts';
import { SESSION_ID } from '../bus/ids.ts';
import { subjects } from '../bus/subjects.ts';

const config = readConfig();

const session = process.argv[2] ?? '';
if (!SESSION_ID.test(session)) {
  console.error('usage: node --import tsx ops/live-subscriber.ts <sessionId>  (24 hex characters)');
  process.exit(2);
}

const nc = await connect({ servers: config.natsUrl.split(','), name: `live-subscriber ${session}`, maxReconnectAttempts: -1 });
console.error(`listening to session ${session} on ${config.natsUrl}; Ctrl-C to stop`);

const print = (subject: string, kind: string, payload: unknown) =>
  console.log(JSON.stringify({ at: new Date().toISOString(), subject, kind, payload }));

for (const subject of [subjects.rowsOfSession(session), subjects.workerState(session)]) {
  nc.subscribe(subject, {
    callback: (error, msg) => {
      if (error) return console.error(`subscription to ${subject} failed: ${error.message}`);
      const kind = msg.subject.slice(msg.subject.lastIndexOf('.') + 1);
      let data: unknown;
      try {
        data = msg.json();
      } catch {
        return console.error(`${msg.subject}: not JSON; skipped`);
      }
      for (const row of Array.isArray(data) ? data : [data]) print(msg.subject, kind, row);
    },
  });
}

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => void nc.drain().finally(() => process.exit(0)));
}
