// Structured JSON logs (pino): one logger per process, made by its main.ts; children per component.
import { pino } from 'pino';
import type { Config } from './config.ts';

export function createLog(config: Pick<Config, 'logLevel' | 'hostId'>) {
  return pino({ level: config.logLevel, base: { host: config.hostId } });
}

export type Logger = ReturnType<typeof createLog>;
