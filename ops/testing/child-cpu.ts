// The CPU a test file cost: its own process and every process it started and waited for
// (services, ffmpeg, servers of its own), which the kernel adds to the file's process when it
// reaps them. The runner's own counter of reaped children (cutime + cstime in /proc/self/stat)
// grows by a file's whole cost the moment the runner reaps that file, so reading it at each
// file's exit attributes the growth since the last reading to that file.
import { readFileSync } from 'node:fs';

const TICKS_PER_SECOND = 100;

function reapedChildrenSeconds(): number {
  // The command name (field 2) may hold spaces: the fields counted after its closing parenthesis.
  const stat = readFileSync('/proc/self/stat', 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // cutime and cstime are fields 16 and 17 of the whole line, 14 and 15 after the name.
  return (Number(fields[13]) + Number(fields[14])) / TICKS_PER_SECOND;
}

export class ChildCpu {
  private last = reapedChildrenSeconds();

  /** CPU seconds of the children reaped since the last call: call it as a file's process exits. */
  sinceLast(): number {
    const now = reapedChildrenSeconds();
    const spent = now - this.last;
    this.last = now;
    return spent;
  }
}
