// What one session record costs to read over NATS, two ways: a bus request answered by a
// responder that holds the record in memory (what the gateway does today, the actor host
// answering), and a direct get from the KV bucket (the NATS server answering). Both sides run in
// this process, so its CPU per read is the caller's alone for a direct get and the caller's plus
// the responder's for a request.
//   node --import tsx ops/bench/record-read.ts [seconds] [concurrent reads]
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { jetstream } from '@nats-io/jetstream';
import { Kvm } from '@nats-io/kv';
import { connect } from '@nats-io/transport-node';
import { readConfig } from '../../bus/index.ts';
import { freePort, startNats } from '../stack/index.ts';

const config = readConfig();
const [seconds = 5, concurrency = 50] = process.argv.slice(2).map(Number);
const dir = join(config.varDir, 'bench', `record-read-${process.pid}`);
const port = await freePort();
const nats = await startNats({ dir, port });
const url = `nats://127.0.0.1:${port}`;
const caller = await connect({ servers: url, noAsyncTraces: true });
const responder = await connect({ servers: url });
try {
  const now = Date.now();
  const record = JSON.stringify({
    id: '6b09f006084c46e40a7c476e', user: 'alice', product: 'bench', name: 'a session', type: 'live_analysis',
    streamUri: 'rtmp://streams.example.com/live/one', state: 'active', createdAt: now, healthCheckAt: now,
    expiresAt: now + 3_600_000, sensors: [], mediaSeconds: 12.5, workerState: 'analysing', owner: 'host-1',
  });
  responder.subscribe('bench.record', { callback: (_, msg) => void msg.respond(record) });
  const kv = await new Kvm(jetstream(caller)).create('bench', { replicas: 1 });
  await kv.put('record', record);

  const run = async (name: string, read: () => Promise<unknown>) => {
    const end = Date.now() + seconds * 1000;
    let reads = 0;
    const cpu = process.cpuUsage();
    await Promise.all(Array.from({ length: concurrency }, async () => {
      while (Date.now() < end) {
        await read();
        reads++;
      }
    }));
    const used = process.cpuUsage(cpu);
    return { way: name, 'reads/s': Math.round(reads / seconds), 'CPU us/read': Math.round((used.user + used.system) / reads) };
  };
  const results = [];
  // Twice each, alternated: the first run of each warms it up.
  for (let round = 0; round < 2; round++) {
    results.push(await run('bus request (caller + responder)', async () => JSON.parse((await caller.request('bench.record', '{}', { timeout: 5000 })).string())));
    results.push(await run('KV direct get (caller only)', async () => (await kv.get('record'))!.json()));
  }
  console.table(results);
} finally {
  await caller.close();
  await responder.close();
  await nats.stop();
  rmSync(dir, { recursive: true, force: true });
}
