// A host whose voice analysis falls more than its backlog limit behind sheds the oldest audio
// (actors/voice/voice-streams.ts): the seconds shed whole get no row, by design, and the host
// counts them (emo_audio_shed_seconds_total). A check that every second has its row therefore
// allows a missing second only against audio the hosts say they shed; any other gap fails.
import * as assert from 'uvu/assert';
import { httpRequest } from '../../ops/stack/http-client.ts';

/** A host by where it answers /metrics. */
type HostMetrics = { metricsUrl: string };

/** The runs of seconds missing between the first and the last stored one, and how many seconds they hold. */
export function gapsOf(seconds: number[]): { gaps: string[]; missing: number } {
  const gaps: string[] = [];
  let missing = 0;
  for (let i = 1; i < seconds.length; i++) {
    const before = seconds[i - 1]!;
    if (seconds[i]! - before <= 1) continue;
    gaps.push(`${before + 1}-${seconds[i]! - 1}`);
    missing += seconds[i]! - before - 1;
  }
  return { gaps, missing };
}

/** Seconds of audio the hosts shed unanalysed since they started. */
export async function shedAudioSeconds(hosts: HostMetrics[]): Promise<number> {
  let shed = 0;
  for (const host of hosts) {
    const text = await (await httpRequest(`${host.metricsUrl}/metrics`)).text;
    shed += Number(/^emo_audio_shed_seconds_total ([\d.e+-]+)/m.exec(text)?.[1] ?? 0);
  }
  return shed;
}

/** Fails unless the `missing` seconds fit in the audio the hosts shed. */
export async function assertGapsShed(missing: number, hosts: HostMetrics[]): Promise<void> {
  const shed = await shedAudioSeconds(hosts);
  if (missing > 0 || shed > 0) console.log(`  ${missing} second(s) without a row; the hosts shed ${shed.toFixed(1)} s of audio behind their backlog limit`);
  assert.ok(missing <= Math.floor(shed), `${missing} second(s) without a row, more than the ${shed.toFixed(1)} s of audio the hosts shed`);
}
