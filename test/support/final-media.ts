// A finished session's count of media received, as the fault tests compare it with its rows.
// Whoever serves the stop writes the record finished with the count of the owner's last
// heartbeat; the owner adds what arrived since once its worker has stopped, a moment later
// (actors/session/actor.ts, recordFinalMedia). Read too early, the count lags the rows by up to
// a heartbeat: read it once that write is in.
import { waitUntil } from '../../ops/stack/process.ts';

/**
 * The record's `mediaSeconds` once it covers `rows` seconds of rows with at most `surplus` rows
 * beyond it, or as it reads after `timeoutMs` (the caller asserts).
 */
export async function finalMediaSeconds(read: () => Promise<number>, rows: number, surplus: number, timeoutMs = 15_000): Promise<number> {
  let media = 0;
  await waitUntil('the final media count written', async () => {
    media = await read();
    return rows - media <= surplus;
  }, timeoutMs).catch(() => {});
  return media;
}
