// The heap a process spends on the session records' caches, at 100,000 sessions of the largest
// record the API allows (bus/session-record-size.ts), fed as the bucket's watch feeds them:
// before, caches bounded by count (100,000 whole records in the record cache and again in the
// index's listed changes); now, the record cache bounded by SESSION_RECORD_CACHE_BYTES of JSON
// and the listed changes by LISTED_CHANGES_BYTES of digests (storage/sessions/listed-changes.ts).
// Each variant runs in a process of its own. The count-bounded caches grow with every session
// (over 5 GB at 100,000; in one process with both, past Node's default heap limit, where it died): they are measured
// at BEFORE_MEASURED sessions and scaled, which their linear growth allows.
// Usage: node --import tsx ops/bench/records-memory.ts [sessions]
import { execFileSync } from 'node:child_process';
import { ByteBoundedCache, largestSessionRecord, newSessionId, readConfig, recordBytes, type SessionRecord } from '../../bus/index.ts';
import { ListedChanges } from '../../storage/index.ts';
import { fixed, printTable } from './lib/stats.ts';

const [mode, count = '100000'] = process.argv.slice(2);
const sessions = Number(mode === 'before' || mode === 'after' ? count : (mode ?? count));
const BEFORE_MEASURED = 10_000;

/** The JSON of each session's record as the watch delivers it: parsed on arrival, as SessionRecords does. */
function* deliveries(n: number): Generator<{ id: string; json: string }> {
  const template = largestSessionRecord();
  for (let i = 0; i < n; i++) {
    const id = newSessionId(Date.now() - (n - i) * 1000);
    yield { id, json: JSON.stringify({ ...template, id }) };
  }
}

function measure(variant: 'before' | 'after'): void {
  const gc = (globalThis as { gc?: () => void }).gc!;
  gc();
  const start = process.memoryUsage().heapUsed;
  const config = readConfig();
  let held: unknown[];
  if (variant === 'before') {
    const records = new Map<string, SessionRecord>();
    const listed = new Map<string, SessionRecord>();
    for (const { id, json } of deliveries(sessions)) {
      const record = JSON.parse(json) as SessionRecord;
      records.set(id, record);
      listed.set(id, record.state === 'finished' ? JSON.parse(json) : record);
      if (records.size > 100_000) records.delete(records.keys().next().value as string);
    }
    held = [records, listed];
  } else {
    const records = new ByteBoundedCache<SessionRecord>(config.sessionRecordCacheBytes);
    const listed = new ListedChanges();
    let delivery = 0;
    for (const { id, json } of deliveries(sessions)) {
      const record = JSON.parse(json) as SessionRecord;
      records.set(id, record, recordBytes(json));
      listed.needsRow(id, record, ++delivery, false);
    }
    held = [records, listed];
  }
  gc();
  const heapMb = (process.memoryUsage().heapUsed - start) / 1024 ** 2;
  console.log(JSON.stringify({ heapMb, held: held.length }));
}

if (mode === 'before' || mode === 'after') {
  measure(mode);
} else {
  const rows = (['before', 'after'] as const).map((variant) => {
    const measured = variant === 'before' ? Math.min(sessions, BEFORE_MEASURED) : sessions;
    const out = execFileSync(process.execPath, ['--expose-gc', '--import', 'tsx', import.meta.filename, variant, String(measured)], { encoding: 'utf8' });
    const { heapMb } = JSON.parse(out.trim().split('\n').at(-1)!) as { heapMb: number };
    const note = measured === sessions ? 'measured' : `measured at ${measured}, scaled`;
    return [variant, String(sessions), fixed((heapMb * sessions) / measured, 0), note];
  });
  printTable('Session record caches', ['caches', 'sessions of the largest record', 'heap held (MB)', ''], rows);
}
