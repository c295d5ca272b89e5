// How many acknowledged rows a replica's lost disk takes with it, without and with
// insert_quorum = 2. On a shard of two replicas a writer inserts batches one after another into
// the first replica, as the storage writer does; at a random moment right after a batch was
// acknowledged the first replica's server is killed (kill -9) and its data folder removed, as a
// disk that dies. What its partner holds a while later is what survived; acknowledged rows it
// lacks are lost. Each trial runs on a fresh cluster.
//   node --import tsx ops/bench/replica-disk-loss.ts [trials per setting] [rows per batch]
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { newSessionId, readConfig } from '../../bus/index.ts';
import { startClickHouseCluster } from '../stack/index.ts';
import { columnsOf, connectClickHouse } from '../../storage/index.ts';
import { createAudioTable } from './lib/audio-table.ts';
import { fixed, markdownTable } from './lib/stats.ts';

const config = readConfig();
const TRIALS = Number(process.argv[2] ?? 5);
const ROWS = Number(process.argv[3] ?? 500);
const DATABASE = 'disk_loss_bench';
// How long the partner is given to fetch what it can once the first replica is gone.
const SETTLE_MS = 10_000;

interface Trial {
  acknowledged: number;
  survived: number;
}

async function trial(quorum: number, n: number): Promise<Trial> {
  const dir = join(config.varDir, 'bench', `replica-disk-loss-${process.pid}-${quorum}-${n}`);
  const cluster = await startClickHouseCluster({ dir, name: 'emo', shards: 1, replicas: 2 });
  const [first, second] = cluster.nodes;
  const onFirst = connectClickHouse({ url: first!.url, username: 'default', password: '' }, null);
  const onSecond = connectClickHouse({ url: second!.url, username: 'default', password: '' }, null);
  try {
    await createAudioTable(onFirst, DATABASE, cluster.name);

    const session = newSessionId();
    let next = 0;
    let acknowledged = 0;
    // Batches for a random 2-4 s, then the disk goes right after the last acknowledgement.
    const until = performance.now() + 2000 + Math.random() * 2000;
    while (performance.now() < until) {
      const values = Array.from({ length: ROWS }, () => columnsOf('audio', { session, second: next++, frequency: 120, intensity: -20, voiced: 1, speech: 1 }));
      await onFirst.insert({
        table: `${DATABASE}.audio_seconds_local`, values, format: 'JSONEachRow',
        clickhouse_settings: quorum ? { insert_quorum: String(quorum), insert_quorum_timeout: 60_000 } : {},
      });
      acknowledged += ROWS;
    }
    // Its connections closed first: a kept-alive socket reset by the kill would end this process.
    await onFirst.close();
    await first!.kill();
    rmSync(join(dir, first!.name, 'data'), { recursive: true, force: true });
    await sleep(SETTLE_MS);
    const [row] = await (await onSecond.query({ query: `SELECT count() AS n FROM ${DATABASE}.audio_seconds_local`, format: 'JSONEachRow' })).json<{ n: number }>();
    const result = { acknowledged, survived: Number(row!.n) };
    console.log(`${quorum ? 'insert_quorum = 2' : 'no quorum'}, trial ${n + 1}: ${result.acknowledged} rows acknowledged, ${result.survived} on the partner`);
    return result;
  } finally {
    await onFirst.close();
    await onSecond.close();
    await cluster.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

const rows: string[][] = [];
for (const quorum of [0, 2]) {
  const trials: Trial[] = [];
  for (let n = 0; n < TRIALS; n++) trials.push(await trial(quorum, n));
  const lost = trials.map((each) => each.acknowledged - each.survived);
  rows.push([
    quorum ? 'insert_quorum = 2' : 'no quorum',
    String(trials.length),
    fixed(trials.reduce((sum, each) => sum + each.acknowledged, 0) / trials.length / ROWS, 0),
    lost.join(', '),
    String(lost.filter((each) => each > 0).length),
  ]);
}
console.log(`\nthe first replica's disk lost right after an acknowledged batch of ${ROWS} rows; its partner counted ${SETTLE_MS / 1000} s later\n`);
console.log(markdownTable(['insert', 'trials', 'batches acknowledged (mean)', 'acknowledged rows lost, each trial', 'trials losing rows'], rows));
