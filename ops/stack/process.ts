// Starting and stopping the processes of the local stack. Every process is started in its own
// process group and stopped by PID (the group), so nothing outlives the command that started it.
import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

export interface Service {
  name: string;
  pid: number;
  exited: Promise<number | null>;
  stop(): Promise<void>;
}

export function startService(
  name: string,
  command: string,
  args: string[],
  options: { logFile: string; env?: NodeJS.ProcessEnv; cwd?: string },
): Service {
  mkdirSync(dirname(options.logFile), { recursive: true });
  const logStream = createWriteStream(options.logFile, { flags: 'a' });
  const child = spawn(command, args, {
    cwd: options.cwd,
    env: options.env ?? process.env,
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout?.pipe(logStream);
  child.stderr?.pipe(logStream);
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  child.once('error', (error) => logStream.write(`failed to start ${command}: ${error.message}\n`));
  return { name, pid: child.pid ?? -1, exited, stop: () => stopChild(child, exited) };
}

async function stopChild(child: ChildProcess, exited: Promise<number | null>, graceMs = 5000): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null || child.pid === undefined) return;
  signalGroup(child.pid, 'SIGTERM');
  const done = await Promise.race([exited.then(() => true), sleep(graceMs).then(() => false)]);
  if (!done) {
    signalGroup(child.pid, 'SIGKILL');
    await exited;
  }
}

function signalGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch {
    try {
      process.kill(pid, signal);
    } catch {
      // already gone
    }
  }
}

/** Polls until `ready` resolves true, or fails with the service's name after `timeoutMs`. */
export async function waitUntil(what: string, ready: () => Promise<boolean>, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await ready().catch(() => false)) return;
    await sleep(100);
  }
  throw new Error(`${what} did not become ready within ${timeoutMs / 1000} s`);
}
