// Starting and stopping the processes of the local stack and of the tests' servers. Every
// process is started in its own process group and stopped by PID (the group), so nothing
// outlives the command that started it, not even the workers a server forks.
import { spawn } from 'node:child_process';
import { createWriteStream, mkdirSync, readFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { portOpen } from './ports.ts';

export interface Service {
  name: string;
  pid: number;
  /** Resolves once the process has exited: with its exit code, or the signal that ended it
   *  (null if it never started). */
  exited: Promise<number | NodeJS.Signals | null>;
  /** The end of what it printed, for error messages. */
  output(): string;
  /** SIGTERM, and SIGKILL once `graceMs` (the start's, 5 s unless said) have passed. */
  stop(graceMs?: number): Promise<void>;
}

const TAIL_CHARS = 4000;

export function startService(
  name: string,
  command: string,
  args: string[],
  options: {
    logFile?: string;
    env?: NodeJS.ProcessEnv;
    cwd?: string;
    graceMs?: number;
    /** A cgroup's folder to start in (cgroups.ts): the shell joins it, then becomes the command. */
    cgroupDir?: string;
  } = {},
): Service {
  const [file, argv] = options.cgroupDir
    ? ['/bin/sh', ['-c', 'echo $$ > "$0/cgroup.procs" && exec "$@"', options.cgroupDir, command, ...args]]
    : [command, args];
  const child = spawn(file, argv, {
    cwd: options.cwd,
    env: options.env ?? process.env,
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let tail = '';
  const keep = (chunk: Buffer) => void (tail = (tail + chunk.toString('utf8')).slice(-TAIL_CHARS));
  const { logFile } = options;
  if (logFile) {
    mkdirSync(dirname(logFile), { recursive: true });
    const log = createWriteStream(logFile, { flags: 'a' });
    child.stdout.pipe(log);
    child.stderr.pipe(log);
  } else {
    child.stdout.on('data', keep);
    child.stderr.on('data', keep);
  }
  child.once('error', (error) => keep(Buffer.from(`failed to start ${command}: ${error.message}\n`)));
  let running = child.pid !== undefined;
  const exited = new Promise<number | NodeJS.Signals | null>((resolve) => {
    child.once('exit', (code, signal) => {
      running = false;
      resolve(code ?? signal);
    });
    child.once('error', () => {
      running = false;
      resolve(null);
    });
  });
  const pid = child.pid ?? -1;

  const stop = async (graceMs = options.graceMs ?? 5000) => {
    if (running) {
      signalGroup(pid, 'SIGTERM');
      // Unreferenced: a caller that has nothing left to do but this stop exits once the child has,
      // not when the grace runs out.
      const done = await Promise.race([exited.then(() => true), sleep(graceMs, false, { ref: false })]);
      if (!done) signalGroup(pid, 'SIGKILL');
      await exited;
    }
    // The leader is gone; reap anything it left behind in its group.
    if (pid > 0) signalGroup(pid, 'SIGKILL');
  };
  const output = () => {
    if (!logFile) return tail;
    try {
      return readFileSync(logFile, 'utf8').slice(-TAIL_CHARS);
    } catch {
      return '';
    }
  };
  return { name, pid, exited, output, stop };
}

function signalGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch {
    // the group is already gone
  }
}

/**
 * The pauses between polls: short at first, for what is nearly there, then a quarter of a second.
 * A poll through the API costs some 5 ms of CPU across the test, the gateway, NATS and a host;
 * at 10 a second, four test files waiting side by side would spend a tenth of a two-core machine.
 */
const FIRST_POLL_MS = 50;
const LONGEST_POLL_MS = 250;

/** Polls until `ready` resolves true, or fails with the service's name after `timeoutMs`. */
export async function waitUntil(what: string, ready: () => Promise<boolean>, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (let pause = FIRST_POLL_MS; Date.now() < deadline; pause = Math.min(LONGEST_POLL_MS, pause * 1.5)) {
    if (await ready().catch(() => false)) return;
    await sleep(pause);
  }
  throw new Error(`${what} did not become ready within ${timeoutMs / 1000} s`);
}

/** Waits until every port accepts connections; fails at once, with its output, if the service died. */
export async function waitForPorts(service: Service, ports: number[], timeoutMs = 10_000): Promise<void> {
  let ended = false;
  void service.exited.then(() => (ended = true));
  const deadline = Date.now() + timeoutMs;
  for (const port of ports) {
    while (!(await portOpen(port))) {
      if (ended) throw new Error(`${service.name} exited before listening on ${port}:\n${service.output()}`);
      if (Date.now() > deadline) throw new Error(`nothing listening on ${port} after ${timeoutMs} ms:\n${service.output()}`);
      await sleep(50);
    }
  }
}
