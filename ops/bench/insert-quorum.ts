// What insert_quorum = 2 would cost the storage writer on a 2 x 2 cluster: the time of an insert
// of one batch (audio rows through the Distributed table, with the service's cluster settings)
// without and with it, batches one after another as one writer sends them; without it, how long
// a batch is on one replica only; two writers at once;
// then the same insert with one replica of a shard stopped.
//   node --import tsx ops/bench/insert-quorum.ts [batches] [rows per batch]
import { join } from 'node:path';
import { rmSync } from 'node:fs';
import { newSessionId, readConfig } from '../../bus/index.ts';
import { startClickHouseCluster } from '../stack/index.ts';
import { columnsOf, connectClickHouse } from '../../storage/index.ts';
import { createAudioTable } from './lib/audio-table.ts';
import { elapsedMs, fixed, markdownTable, percentile } from './lib/stats.ts';

const config = readConfig();
const BATCHES = Number(process.argv[2] ?? 100);
const ROWS = Number(process.argv[3] ?? 500);
const DATABASE = 'quorum_bench';

const dir = join(config.varDir, 'bench', `insert-quorum-${process.pid}`);
const cluster = await startClickHouseCluster({ dir, name: 'emo', shards: 2, replicas: 2 });
const server = { url: cluster.urls.join(','), username: 'default', password: '', cluster: cluster.name };
const client = connectClickHouse(server, null);
try {
  await createAudioTable(client, DATABASE, cluster.name);

  const sessions = Array.from({ length: 10 }, () => newSessionId());
  let next = 0;
  const batch = () => Array.from({ length: ROWS }, (_, i) => {
    const session = sessions[i % sessions.length]!;
    return columnsOf('audio', { session, second: next++, frequency: 120, intensity: -20, voiced: 1, speech: 1 });
  });
  const insert = async (quorum: number) => {
    const started = performance.now();
    await client.insert({
      table: `${DATABASE}.audio_seconds`, values: batch(), format: 'JSONEachRow',
      clickhouse_settings: quorum ? { insert_quorum: String(quorum), insert_quorum_timeout: 60_000 } : {},
    });
    return elapsedMs(started);
  };

  const rows: string[][] = [];
  // Alternating, so that both see the machine's other load alike.
  const times: Record<number, number[]> = { 0: [], 2: [] };
  for (let i = 0; i < 5; i++) await insert(0);
  for (let i = 0; i < BATCHES; i++) for (const quorum of [0, 2]) times[quorum]!.push(await insert(quorum));
  for (const quorum of [0, 2]) {
    const ms = times[quorum]!;
    rows.push([quorum ? 'insert_quorum = 2' : 'no quorum', String(ms.length), fixed(percentile(ms, 50)), fixed(percentile(ms, 95)), fixed(Math.max(...ms))]);
  }
  console.log(`${BATCHES} batches of ${ROWS} rows each way, 2 shards x 2 replicas on one machine\n`);
  console.log(markdownTable(['insert', 'batches', 'p50 ms', 'p95 ms', 'max ms'], rows));

  // Without the quorum, how long an acknowledged batch is on one replica only: from the insert's
  // return until every node's local table holds as many rows as it would with both copies.
  const nodes = cluster.urls.map((url) => connectClickHouse({ url, username: 'default', password: '' }, DATABASE));
  const local = async () => (await Promise.all(nodes.map(async (node) =>
    Number((await (await node.query({ query: 'SELECT count() AS n FROM audio_seconds_local', format: 'JSONEachRow' })).json<{ n: number }>())[0]!.n))));
  const alone: number[] = [];
  for (let i = 0; i < 20; i++) {
    await insert(0);
    const returned = performance.now();
    for (;;) {
      const [a, b, c, d] = await local();
      if (a === b && c === d) break;
    }
    alone.push(elapsedMs(returned));
  }
  await Promise.all(nodes.map((node) => node.close()));
  console.log(`\nan acknowledged batch on one replica only, no quorum: p50 ${fixed(percentile(alone, 50))} ms, max ${fixed(Math.max(...alone))} ms (20 batches)`);

  // Two writers at once, as two storage services are: 18.16 takes one quorum insert per shard
  // at a time and refuses the other until the first has its quorum.
  for (const quorum of [0, 2]) {
    let refused = 0;
    for (let i = 0; i < 20; i++) {
      const outcomes = await Promise.allSettled([insert(quorum), insert(quorum)]);
      refused += outcomes.filter((outcome) => outcome.status === 'rejected').length;
    }
    console.log(`\ntwo writers at once, 20 pairs, ${quorum ? 'insert_quorum = 2' : 'no quorum'}: ${refused} of 40 inserts refused`);
  }

  // A replica of shard 1 lost: an insert with the quorum cannot complete there.
  await cluster.nodes[1]!.stop();
  for (const quorum of [0, 2]) {
    const started = performance.now();
    const outcome = await insert(quorum).then(() => 'stored', (error: Error) => `refused: ${error.message.split('\n')[0]}`);
    console.log(`\none replica of shard 1 stopped, ${quorum ? 'insert_quorum = 2' : 'no quorum'}: ${outcome} (${fixed(elapsedMs(started))} ms)`);
  }
} finally {
  await client.close();
  await cluster.stop();
  rmSync(dir, { recursive: true, force: true });
}
