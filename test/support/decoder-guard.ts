// The egress guard's environment for a test's own pulls, loopback streams allowed. No pull runs
// without the guard: it is also what hands ffprobe and ffmpeg their stream URI
// (actors/ingest/stream-address.ts).
import { EgressPolicy } from '../../actors/egress/policy.ts';

export function guardAllowingAll(library: string): Promise<Record<string, string>> {
  return new EgressPolicy({ kind: 'all' }, library, async () => []).guardEnvironment();
}
