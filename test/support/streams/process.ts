// Child processes of the test servers: each in its own process group (nginx forks workers), its
// output kept for error messages, stopped by signalling that group and waiting for the exit.
import { spawn } from 'node:child_process';
import { openSync, closeSync, readFileSync } from 'node:fs';
import { connect } from 'node:net';

export interface ServerProcess {
  pid: number;
  // Resolves with a description of how the process ended.
  exited: Promise<string>;
  // The tail of what it printed (for error messages).
  output(): string;
  stop(): Promise<void>;
}

const TAIL_CHARS = 4000;
const KILL_AFTER_MS = 2000;

// Output goes to logFile when given, else to a small in-memory tail.
export function startProcess(command: string, args: string[], logFile?: string): ServerProcess {
  const logFd = logFile === undefined ? undefined : openSync(logFile, 'a');
  const child = spawn(command, args, {
    detached: true,
    stdio: ['ignore', logFd ?? 'pipe', logFd ?? 'pipe'],
  });
  if (logFd !== undefined) closeSync(logFd);
  let tail = '';
  const keep = (chunk: Buffer): void => {
    tail = (tail + chunk.toString('utf8')).slice(-TAIL_CHARS);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);

  let running = true;
  const exited = new Promise<string>((resolve) => {
    child.once('error', (error) => {
      running = false;
      resolve(`could not start ${command}: ${error.message}`);
    });
    child.once('exit', (code, signal) => {
      running = false;
      resolve(`${command} exited with ${signal ?? `code ${code}`}`);
    });
  });
  const pid = child.pid ?? -1;

  const signalGroup = (signal: NodeJS.Signals): void => {
    try {
      process.kill(-pid, signal);
    } catch {
      // the group is already gone
    }
  };

  return {
    pid,
    exited,
    output: () => (logFile === undefined ? tail : readFileSync(logFile, 'utf8').slice(-TAIL_CHARS)),
    async stop() {
      if (!running || pid < 0) {
        signalGroup('SIGKILL'); // reap anything the leader left behind
        return;
      }
      signalGroup('SIGTERM');
      const killer = setTimeout(() => signalGroup('SIGKILL'), KILL_AFTER_MS);
      await exited;
      clearTimeout(killer);
      signalGroup('SIGKILL');
    },
  };
}

function canConnect(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

// Waits until every port accepts connections; fails early if the process died.
export async function waitForPorts(server: ServerProcess, ports: number[], timeoutMs = 10000): Promise<void> {
  let ended: string | undefined;
  void server.exited.then((how) => (ended = how));
  const deadline = Date.now() + timeoutMs;
  for (const port of ports) {
    while (!(await canConnect(port))) {
      if (ended !== undefined) throw new Error(`${ended} before listening on ${port}:\n${server.output()}`);
      if (Date.now() > deadline) throw new Error(`nothing listening on ${port} after ${timeoutMs} ms:\n${server.output()}`);
      await sleep(50);
    }
  }
}
