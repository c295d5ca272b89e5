// CPU time of the calling thread, from /proc/thread-self (Linux): what a model thread spends,
// apart from the process's other threads, which process.cpuUsage() cannot tell.
import { readFileSync } from 'node:fs';

// /proc counts times in clock ticks of USER_HZ, 100 a second on Linux.
const TICKS_PER_SECOND = 100;

/** User and system CPU seconds of this thread so far; NaN where /proc/thread-self is absent. */
export function threadCpuSeconds(): number {
  let stat: string;
  try {
    stat = readFileSync('/proc/thread-self/stat', 'utf8');
  } catch {
    return NaN;
  }
  // The fields after the command name, which is in parentheses and may hold spaces: state is
  // the first of them, utime and stime the 12th and 13th.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / TICKS_PER_SECOND;
}
