// An audio row as a host publishes it, with fixed features: for the tests that publish rows
// straight to ROWS and count what the writer stores.
import type { AudioSecond } from '../../bus/contracts/rows.ts';

export const audioRow = (session: string, second: number): AudioSecond => ({ session, second, frequency: 100, intensity: -20, voiced: 1, speech: 1 });
