// The size of the session lists' memory (storage/sessions/newest-sessions.ts) and how fast it fills: 100,000
// users of a few sessions each, 10,000 users of a full share each (SESSION_LIST_MEMORY_PER_USER),
// and one user with 1,000,000 sessions, fed as the bucket's watch feeds it at start-up.
// Usage: node --expose-gc --import tsx ops/bench/list-memory.ts [users of a few] [a few] [users of a full share]
import { newSessionId, readConfig, type SessionRecord } from '../../bus/index.ts';
import { NewestSessions } from '../../storage/index.ts';
import { elapsedMs, fixed, printTable } from './lib/stats.ts';

const [users = 100_000, few = 5, full = 10_000] = process.argv.slice(2).map(Number);
const perUser = readConfig().sessionListMemoryPerUser;
const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) throw new Error('run with node --expose-gc');

const heapMb = () => {
  gc();
  return process.memoryUsage().heapUsed / 1024 ** 2;
};

function record(user: string, createdAt: number, i: number): SessionRecord {
  return {
    id: newSessionId(createdAt),
    name: `session number ${i}`,
    type: 'live_analysis',
    state: 'finished',
    createdAt,
    finishedAt: createdAt + 3_600_000,
    user,
    product: 'bench',
    streamUri: 'rtmp://stream.example.com/live/a-stream-key',
    sensors: [],
    expiresAt: createdAt + 43_200_000,
    healthCheckAt: createdAt + 3_600_000,
    workerState: 'stopped',
    stopReason: 'client',
    mediaSeconds: 3600,
  };
}

/** Heap and time to put `sessions(user)` sessions of each of `count` users. */
function fill(name: string, count: number, sessions: number) {
  const before = heapMb();
  const memory = new NewestSessions(perUser);
  const since = performance.now();
  let revision = 0;
  for (let u = 0; u < count; u++) {
    const user = `${name}-${u}`;
    for (let i = 0; i < sessions; i++) memory.put(record(user, 1_700_000_000_000 + i * 60_000, i), ++revision);
  }
  const ms = elapsedMs(since);
  const mb = heapMb() - before;
  return { memory, row: [name, String(count), String(sessions), fixed(mb, 0), fixed((mb * 1024 ** 2) / (count * Math.min(sessions, perUser)), 0), fixed(ms / 1000, 1), fixed(revision / (ms / 1000), 0)] };
}

const rows = [];
rows.push(fill('few', users, few).row);
rows.push(fill('full', full, perUser).row);
rows.push(fill('one', 1, 1_000_000).row);
printTable(`Session list memory, ${perUser} kept per user (heap after gc)`, ['users', 'count', 'sessions each', 'heap MB', 'bytes per kept session', 'fill s', 'puts/s'], rows);
