// The actor host's side of its decoder spawner (spawner-process.ts): starts ffprobe and ffmpeg
// without forking the host, whose main thread answers every bus request and would otherwise
// be held 100-300 ms per spawn (ops/bench/README-decoder-spawn.md). One per host, started
// before the models are loaded (while a fork of the host is still cheap) and passed down to
// every pull (PullSettings). If the spawner dies, every process it was running is reported
// lost (a pull ends as if its stream dropped, and its worker reconnects) and it is started again.
import { fork, type ChildProcess } from 'node:child_process';
import { EventEmitter, once } from 'node:events';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Logger } from '../../bus/log.ts';
import { BUNDLE_EXEC_ARGV, bundled } from '../../bus/typescript-bundle.ts';
import { decoderEnvironment } from './decoder-environment.ts';
import { makeSocketDir } from './socket-dir.ts';
import type { SpawnerReport, SpawnerRequest } from './spawner-protocol.ts';

const SPAWNER_SOURCE = fileURLToPath(new URL('./spawner-process.ts', import.meta.url));

/** The reason a process's run ends with when the spawner running it died. */
export const SPAWNER_LOST = 'decoder spawner stopped';

// A spawner that dies this soon after it started is restarted after a doubling pause, up to the
// maximum: a fork of a host holding its models holds the host's thread, and must not loop.
const STABLE_AFTER_MS = 10_000;
const FIRST_RESTART_MS = 500;
const MAX_RESTART_MS = 10_000;

export interface DecoderCommand {
  file: string;
  args: string[];
  /** The process's whole environment (decoder-environment.ts). */
  env: Record<string, string>;
  /** Relay stdout (ffprobe's description); otherwise it goes nowhere. */
  stdout?: boolean;
}

export interface DecoderExit {
  code: number | null;
  signal: NodeJS.Signals | null;
  /** Set when the spawner died: how the process ended is unknown, and it may still be running. */
  lost?: string;
}

interface DecoderEvents {
  stdout: [text: string];
  stderr: [text: string];
  /** The process could not be started (the exit follows). */
  unstartable: [message: string];
  /** The last event. */
  exit: [DecoderExit];
}

/** One process started through the spawner. */
export class DecoderProcess extends EventEmitter<DecoderEvents> {
  /** Its process id once started: the same as in /proc, for its CPU (decoder-cpu.ts). */
  pid: number | undefined;
  private ended = false;

  constructor(private readonly signalIt: (signal: 'SIGTERM' | 'SIGKILL') => void) {
    super();
  }

  get exited(): boolean {
    return this.ended;
  }

  kill(signal: 'SIGTERM' | 'SIGKILL'): void {
    if (!this.ended) this.signalIt(signal);
  }

  relay(report: SpawnerReport): void {
    if (this.ended) return;
    if (report.type === 'spawned') this.pid = report.pid;
    else if (report.type === 'stdout') this.emit('stdout', report.text);
    else if (report.type === 'stderr') this.emit('stderr', report.text);
    else if (report.type === 'error') this.emit('unstartable', report.message);
    else this.end({ code: report.code, signal: report.signal });
  }

  lose(reason: string): void {
    if (!this.ended) this.end({ code: null, signal: null, lost: reason });
  }

  private end(exit: DecoderExit): void {
    this.ended = true;
    this.emit('exit', exit);
  }
}

export interface DecoderSpawnerOptions {
  /** Where the host's private directory of media sockets is made: the var dir's `run`. */
  runDir: string;
  log: Logger;
}

export class DecoderSpawner {
  private child: ChildProcess | undefined;
  private readonly running = new Map<number, DecoderProcess>();
  private lastId = 0;
  private sockets = 0;
  private startedAt = 0;
  private restartMs = FIRST_RESTART_MS;
  private restartTimer: NodeJS.Timeout | undefined;
  private closing = false;

  private constructor(
    /** The host's private directory of media sockets (socket-dir.ts). */
    readonly socketDir: string,
    /** The spawner's bundle, made once: a restart runs the same code. */
    private readonly entry: string,
    private readonly log: Logger,
  ) {}

  static async start(options: DecoderSpawnerOptions): Promise<DecoderSpawner> {
    const spawner = new DecoderSpawner(await makeSocketDir(options.runDir), await bundled(SPAWNER_SOURCE), options.log);
    spawner.fork();
    return spawner;
  }

  /** The spawner's process id while it runs (its children are the host's decoders). */
  get pid(): number | undefined {
    return this.child?.pid;
  }

  /** Starts a process; while the spawner is being restarted, the run is lost at once. */
  run(command: DecoderCommand): DecoderProcess {
    const id = ++this.lastId;
    const decoder = new DecoderProcess((signal) => this.send({ type: 'kill', id, signal }));
    if (!this.child || this.closing) {
      setImmediate(() => decoder.lose(SPAWNER_LOST));
      return decoder;
    }
    this.running.set(id, decoder);
    decoder.once('exit', () => this.running.delete(id));
    this.send({ type: 'start', id, file: command.file, args: command.args, env: command.env, stdout: command.stdout ?? false });
    return decoder;
  }

  /** A fresh path in the socket directory for one output of one pull. */
  socketPath(name: 'audio' | 'video'): string {
    return join(this.socketDir, `${++this.sockets}-${name}.sock`);
  }

  /** Lets go of the spawner, which kills whatever it still runs and exits; removes the socket directory. */
  async close(): Promise<void> {
    this.closing = true;
    clearTimeout(this.restartTimer);
    const child = this.child;
    if (child && child.exitCode === null && child.signalCode === null) {
      const exited = once(child, 'exit');
      if (child.connected) child.disconnect();
      await exited;
    }
    await rm(this.socketDir, { recursive: true, force: true });
  }

  private send(request: SpawnerRequest): void {
    // A request the channel cannot take is for a spawner that is dying: its 'close' loses the run.
    if (this.child?.connected) this.child.send(request, (error) => error && this.log.debug({ err: error }, 'decoder spawner request not sent'));
  }

  private fork(): void {
    // The decoders' environment, not the host's: the spawner has no use for the service's secrets.
    const child = fork(this.entry, [], { env: decoderEnvironment(), execArgv: BUNDLE_EXEC_ARGV, stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    this.child = child;
    this.startedAt = Date.now();
    child.on('message', (report: SpawnerReport) => this.running.get(report.id)?.relay(report));
    child.on('error', (error) => this.log.error({ err: error }, 'decoder spawner failed'));
    // Gone once it has exited and its channel is closed: every report it sent has been relayed.
    let disconnected = false;
    let exit: { code: number | null; signal: NodeJS.Signals | null } | undefined;
    const gone = () => exit && disconnected && this.lost(child, exit.code, exit.signal);
    child.once('disconnect', () => {
      disconnected = true;
      gone();
    });
    child.once('exit', (code, signal) => {
      exit = { code, signal };
      gone();
    });
  }

  private lost(child: ChildProcess, code: number | null, signal: NodeJS.Signals | null): void {
    if (this.child === child) this.child = undefined;
    const runs = [...this.running.values()];
    this.running.clear();
    for (const run of runs) run.lose(SPAWNER_LOST);
    if (this.closing) return;
    this.restartMs = Date.now() - this.startedAt >= STABLE_AFTER_MS ? 0 : Math.min(Math.max(this.restartMs * 2, FIRST_RESTART_MS), MAX_RESTART_MS);
    this.log.error({ code, signal, runs: runs.length, restartMs: this.restartMs }, 'decoder spawner exited; its runs are lost and it is started again');
    this.restartTimer = setTimeout(() => this.fork(), this.restartMs);
  }
}
