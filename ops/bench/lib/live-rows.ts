// How late the live rows of sessions arrive, as a live consumer sees them: a plain NATS
// subscription to emo.rows.> (the subjects a dashboard or an analytics consumer reads), each row
// stamped on arrival. A row describes a stretch of media that ended at a known moment: a
// per-second row (audio, video, face) with `second` s ends at createdAt + (s + 1) s, a speech
// segment at createdAt + `end`, both on the host's clock, which is this machine's.
import type { NatsConnection, Subscription } from '@nats-io/transport-node';
import { subjects } from '../../../bus/index.ts';

export const LATENCY_KINDS = ['audio', 'video', 'face', 'speech'] as const;
export type LatencyKind = (typeof LATENCY_KINDS)[number];

interface Arrival {
  at: number;
  kind: LatencyKind;
  latencyMs: number;
}

export class LiveRows {
  private readonly createdAt = new Map<string, number>();
  private readonly arrivals: Arrival[] = [];
  /** Faces per analysed second (video rows' `faces`), with their arrival time. */
  private readonly faces: { at: number; faces: number }[] = [];
  private readonly subscription: Subscription;

  constructor(nc: NatsConnection) {
    this.subscription = nc.subscribe(subjects.rowsAll, {
      callback: (error, msg) => {
        if (!error) this.receive(msg.subject, msg.string(), Date.now());
      },
    });
  }

  /** Rows of this session count from now on; `createdAt` is its `timestamp` in ms. */
  follow(session: string, createdAt: number): void {
    this.createdAt.set(session, createdAt);
  }

  /** Latencies in seconds per kind, of the rows that arrived between the two times (Date.now()). */
  latencies(from: number, to: number): Record<LatencyKind, number[]> {
    const byKind = Object.fromEntries(LATENCY_KINDS.map((kind) => [kind, [] as number[]])) as Record<LatencyKind, number[]>;
    for (const { at, kind, latencyMs } of this.arrivals) if (at >= from && at < to) byKind[kind].push(latencyMs / 1000);
    return byKind;
  }

  /** Mean faces seen per analysed second, between the two times: is the picture what we meant? */
  meanFaces(from: number, to: number): number {
    const seen = this.faces.filter(({ at }) => at >= from && at < to);
    return seen.reduce((sum, { faces }) => sum + faces, 0) / seen.length;
  }

  /** Forgets what arrived so far: the next load starts clean. */
  clear(): void {
    this.arrivals.length = 0;
    this.faces.length = 0;
    this.createdAt.clear();
  }

  close(): void {
    this.subscription.unsubscribe();
  }

  private receive(subject: string, payload: string, at: number): void {
    // emo.rows.<session>.<tenant>.<kind> (bus/subjects.ts): the kind is the last token.
    const tokens = subject.split('.');
    const session = tokens[2] ?? '';
    const kind = tokens.at(-1) ?? '';
    const createdAt = this.createdAt.get(session);
    if (createdAt === undefined || !isLatencyKind(kind)) return;
    let rows: Record<string, number>[];
    try {
      rows = JSON.parse(payload);
    } catch {
      return; // not a row message of ours: nothing to time
    }
    for (const row of rows) {
      const endsAt = createdAt + 1000 * (kind === 'speech' ? row.end! : row.second! + 1);
      this.arrivals.push({ at, kind, latencyMs: at - endsAt });
      if (kind === 'video') this.faces.push({ at, faces: row.faces! });
    }
  }
}

function isLatencyKind(kind: string): kind is LatencyKind {
  return (LATENCY_KINDS as readonly string[]).includes(kind);
}
