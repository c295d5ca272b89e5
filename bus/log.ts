// Structured JSON logs (pino): one logger per process, made by its main.ts; children per component.
import { pino } from 'pino';
import type { SharedConfig } from './config.ts';

export function createLog(config: Pick<SharedConfig, 'logLevel' | 'hostId'>) {
  return pino({ level: config.logLevel, base: { host: config.hostId } });
}

export type Logger = ReturnType<typeof createLog>;
