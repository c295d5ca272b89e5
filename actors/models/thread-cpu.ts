// CPU time of the calling thread, from /proc/thread-self (Linux): what a model thread spends,
// apart from the process's other threads, which process.cpuUsage() cannot tell.
import { readFileSync } from 'node:fs';
import { statCpuSeconds } from '../proc-stat.ts';

/** User and system CPU seconds of this thread so far; NaN where /proc/thread-self is absent. */
export function threadCpuSeconds(): number {
  try {
    return statCpuSeconds(readFileSync('/proc/thread-self/stat', 'utf8'));
  } catch {
    return NaN;
  }
}
