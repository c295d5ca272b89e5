// The decoder spawner: a small process an actor host forks once (decoder-spawner.ts) to start
// its ffprobe and ffmpeg processes. Node forks the whole calling process to start a child, and
// the host holds the ONNX models (hundreds of MB), so a spawn from the host would hold its main
// thread for 100-300 ms; from here it holds only this process, whose thread does nothing else.
// It holds nothing worth stealing either: it runs with the decoders' environment, not the host's.
//
// It lives as long as its host: when the IPC channel closes (the host exited, or was killed
// with SIGKILL) it kills every process it started, waits for them, and exits, so no decoder
// outlives the host that reads it. SIGINT and SIGTERM are the host's to act on (a terminal's
// Ctrl-C reaches the whole process group): the host stops its decoders and then lets go of this.
import { spawn, type ChildProcess } from 'node:child_process';
import type { SpawnerReport, SpawnerRequest } from './spawner-protocol.ts';

/** Once the host is gone, children that have not exited after SIGKILL are not waited for past this. */
const LEAVE_AFTER_MS = 5000;

const children = new Map<number, ChildProcess>();
let leaving = false;

if (!process.send) throw new Error('the decoder spawner is started by an actor host, with an IPC channel');

function report(message: SpawnerReport): void {
  // Once the host is gone there is nobody to tell: the children are being killed.
  if (process.connected) process.send?.(message);
}

function start(request: Extract<SpawnerRequest, { type: 'start' }>): void {
  const { id } = request;
  const child = spawn(request.file, request.args, {
    stdio: ['ignore', request.stdout ? 'pipe' : 'ignore', 'pipe'],
    env: request.env,
  });
  children.set(id, child);
  if (child.pid !== undefined) report({ type: 'spawned', id, pid: child.pid });
  child.on('error', (error) => report({ type: 'error', id, message: error.message }));
  child.stdout?.setEncoding('utf8');
  child.stdout?.on('data', (text: string) => report({ type: 'stdout', id, text }));
  child.stderr?.setEncoding('utf8');
  child.stderr?.on('data', (text: string) => report({ type: 'stderr', id, text }));
  // 'close' comes after stdout and stderr have ended, so the exit is the last word on a child.
  child.on('close', (code, signal) => {
    children.delete(id);
    report({ type: 'exit', id, code, signal });
    if (leaving && children.size === 0) process.exit(0);
  });
}

function killAll(): void {
  for (const child of children.values()) child.kill('SIGKILL');
}

process.on('message', (request: SpawnerRequest) => {
  if (leaving) return;
  if (request.type === 'start') start(request);
  else children.get(request.id)?.kill(request.signal);
});

process.on('disconnect', () => {
  leaving = true;
  killAll();
  if (children.size === 0) process.exit(0);
  setTimeout(() => process.exit(0), LEAVE_AFTER_MS);
});

// A crash here must not leave decoders running either.
process.on('exit', killAll);
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, () => {});
