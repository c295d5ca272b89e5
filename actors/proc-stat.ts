// CPU time from a Linux /proc stat line (/proc/<pid>/stat, /proc/thread-self/stat): how the
// host measures its decoders, its model threads and itself.

/** Linux's USER_HZ: /proc reports CPU time in these ticks. */
const TICKS_PER_SECOND = 100;

/** User plus system CPU seconds of the stat line of a process or thread; NaN if it cannot be read. */
export function statCpuSeconds(stat: string): number {
  // The fields after the command name, which is in parentheses and may hold spaces: state is
  // the first of them, utime and stime the 12th and 13th.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / TICKS_PER_SECOND;
}
