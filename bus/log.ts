// Structured JSON logs (pino): one logger per process, children per component.
import { pino } from 'pino';
import { config } from './config.ts';

export const log = pino({ level: config.logLevel, base: { host: config.hostId } });
export type Logger = typeof log;
