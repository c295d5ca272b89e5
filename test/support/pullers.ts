// The ffmpeg processes pulling a stream into an actor host's analysis pipes, found by their
// command line: which host (parent PID) analyses a session right now.
import { execFileSync } from 'node:child_process';

export interface Puller {
  pid: number;
  /** The actor host that started it. */
  ppid: number;
}

export function pullersOf(uri: string): Puller[] {
  return execFileSync('ps', ['-eo', 'pid=,ppid=,args='], { encoding: 'utf8' })
    .split('\n')
    .filter((line) => line.includes(` -i ${uri} `) && line.includes('pipe:3'))
    .map((line) => {
      const [pid, ppid] = line.trim().split(/\s+/).map(Number);
      return { pid: pid as number, ppid: ppid as number };
    });
}
