// One ffmpeg process pulling one live stream: PCM audio on fd 3, RGB frames on fd 4, stream
// info and errors on stderr. Emits `info` once (before any audio or frame), then `audio` and
// `frame` as media arrives, then `exit` once when ffmpeg is gone for good.
import { spawn, type ChildProcess } from 'node:child_process';
import { EventEmitter } from 'node:events';
import type { Readable } from 'node:stream';
import {
  AUDIO_BYTES_PER_SECOND,
  AUDIO_FD,
  VIDEO_FD,
  analysisSize,
  buildIngestArgs,
  type FrameSize,
} from './ffmpeg-args.ts';
import { FrameAssembler } from './frame-assembler.ts';
import { StderrReader } from './stream-info.ts';

export interface IngestOptions {
  uri: string;
  fps: number;
  ffmpegPath: string;
  timeoutSeconds: number;
  tls?: { verify: boolean; caFile?: string };
  /** Added to ffmpeg's environment: the egress guard's library and policy. */
  env?: Record<string, string>;
}

export interface IngestInfo {
  // The stream's picture size (0 without video).
  width: number;
  height: number;
  hasAudio: boolean;
  hasVideo: boolean;
  // The size of the delivered frames (0 without video).
  outputWidth: number;
  outputHeight: number;
}

export interface IngestFrame {
  // outputWidth x outputHeight x 3 bytes, row-major RGB. A fresh buffer per frame: keep it freely.
  rgb: Uint8Array;
  width: number;
  height: number;
  receivedAt: number;
}

export interface IngestExit {
  code: number | null;
  signal: NodeJS.Signals | null;
  // Why it ended: "stopped" after stop(), else the last meaningful line ffmpeg printed, or the
  // watchdog's own reason.
  reason: string;
  mediaSeconds: number;
  stopped: boolean;
}

interface IngestEvents {
  info: [IngestInfo];
  // 16 kHz mono s16le; every chunk holds whole samples.
  audio: [chunk: Buffer, receivedAt: number];
  frame: [IngestFrame];
  exit: [IngestExit];
}

interface Outputs {
  audio: boolean;
  video: boolean;
  probeSeconds?: number;
}

interface PendingChunk {
  fd: number;
  chunk: Buffer;
  receivedAt: number;
}

const KILL_AFTER_MS = 1500;
const WATCHDOG_INTERVAL_MS = 1000;
// Connecting and probing come before the first byte of media; allow for them once.
const STARTUP_GRACE_SECONDS = 10;
// Probing again for streams already seen once.
const REPROBE_SECONDS = 1;

export class Ingest extends EventEmitter<IngestEvents> {
  private child: ChildProcess | undefined;
  private reader = new StderrReader();
  private outputs: Outputs = { audio: true, video: true };
  private info: IngestInfo | undefined;
  private outputSizeChecked = false;
  private pending: PendingChunk[] = [];
  private assembler: FrameAssembler | undefined;
  private frameReceivedAt = 0;
  private oddAudioByte: number | undefined;
  private audioBytes = 0;
  private frames = 0;
  private runStartedAt = 0;
  private lastMediaAt: number | undefined;
  private watchdog: NodeJS.Timeout | undefined;
  private failure: string | undefined;
  private stopping = false;
  private finished = false;
  private readonly gone: Promise<void>;
  private markGone!: () => void;

  constructor(private readonly options: IngestOptions) {
    super();
    buildIngestArgs(options); // rejects a bad URI or option now rather than at start()
    this.gone = new Promise((resolve) => (this.markGone = resolve));
  }

  get pid(): number | undefined {
    return this.child?.pid;
  }

  get mediaSeconds(): number {
    if (this.info?.hasAudio) return this.audioBytes / AUDIO_BYTES_PER_SECOND;
    return this.frames / this.options.fps;
  }

  start(): void {
    if (this.child || this.finished) throw new Error('ingest already started');
    this.watchdog = setInterval(() => this.checkMediaFlow(), WATCHDOG_INTERVAL_MS);
    this.watchdog.unref();
    this.run();
  }

  // SIGTERM, then SIGKILL if ffmpeg lingers; resolves once the process has exited.
  async stop(): Promise<void> {
    this.stopping = true;
    if (!this.child) this.finish(null, null);
    this.terminate();
    await this.gone;
  }

  private run(): void {
    this.reader = new StderrReader();
    this.runStartedAt = Date.now();
    const args = buildIngestArgs({ ...this.options, ...this.outputs });
    const child = spawn(this.options.ffmpegPath, args, {
      stdio: ['ignore', 'ignore', 'pipe', 'pipe', 'pipe'],
      env: { ...process.env, ...this.options.env },
    });
    this.child = child;
    child.on('error', (error) => {
      this.failure ??= `cannot run ${this.options.ffmpegPath}: ${error.message}`;
    });
    child.on('close', (code, signal) => this.onClose(code, signal));

    let partialLine = '';
    child.stderr?.setEncoding('utf8');
    child.stderr?.on('data', (text: string) => {
      const lines = (partialLine + text).split(/\r\n|\r|\n/);
      partialLine = lines.pop() ?? '';
      for (const line of lines) this.onStderrLine(line);
    });
    child.stderr?.on('end', () => {
      if (partialLine) this.onStderrLine(partialLine);
    });
    // Every pipe is read to the end, whatever state we are in; an unread pipe stalls ffmpeg.
    (child.stdio[AUDIO_FD] as Readable).on('data', (chunk: Buffer) => this.onMedia(AUDIO_FD, chunk));
    (child.stdio[VIDEO_FD] as Readable).on('data', (chunk: Buffer) => this.onMedia(VIDEO_FD, chunk));
  }

  private onStderrLine(line: string): void {
    const inputDescribed = this.reader.read(line);
    if (inputDescribed && !this.info) {
      const input = this.reader.input();
      if (!input.hasVideo) this.publishInfo({ width: 0, height: 0 });
      else if (input.width > 0) this.publishInfo(analysisSize(input));
      // else: the size is only known once ffmpeg prints the output stream below.
    }
    const produced = this.reader.videoOutputSize;
    if (!produced) return;
    if (!this.info) {
      if (this.reader.input().hasVideo) this.publishInfo(produced);
    } else if (!this.outputSizeChecked) {
      this.outputSizeChecked = true;
      const expected = `${this.info.outputWidth}x${this.info.outputHeight}`;
      if (`${produced.width}x${produced.height}` !== expected) {
        this.fail(`ffmpeg produced ${produced.width}x${produced.height} frames, expected ${expected}`);
      }
    }
  }

  private publishInfo(output: FrameSize): void {
    const input = this.reader.input();
    const hasVideo = input.hasVideo && this.outputs.video;
    this.info = {
      width: input.width,
      height: input.height,
      hasAudio: input.hasAudio && this.outputs.audio,
      hasVideo,
      outputWidth: hasVideo ? output.width : 0,
      outputHeight: hasVideo ? output.height : 0,
    };
    if (hasVideo) {
      this.outputSizeChecked = this.reader.videoOutputSize !== undefined;
      this.assembler = new FrameAssembler(output.width * output.height * 3, (rgb) => this.onFrame(rgb));
    }
    this.emit('info', this.info);
    const pending = this.pending;
    this.pending = [];
    for (const { fd, chunk, receivedAt } of pending) this.deliver(fd, chunk, receivedAt);
  }

  private onMedia(fd: number, chunk: Buffer): void {
    const receivedAt = Date.now();
    this.lastMediaAt = receivedAt;
    if (this.info) this.deliver(fd, chunk, receivedAt);
    else this.pending.push({ fd, chunk, receivedAt });
  }

  private deliver(fd: number, chunk: Buffer, receivedAt: number): void {
    if (fd === VIDEO_FD) {
      this.frameReceivedAt = receivedAt;
      this.assembler?.push(chunk);
      return;
    }
    let samples = chunk;
    if (this.oddAudioByte !== undefined) {
      samples = Buffer.concat([Buffer.of(this.oddAudioByte), chunk]);
      this.oddAudioByte = undefined;
    }
    if (samples.length % 2 === 1) {
      this.oddAudioByte = samples[samples.length - 1];
      samples = samples.subarray(0, samples.length - 1);
    }
    if (samples.length === 0) return;
    this.audioBytes += samples.length;
    this.emit('audio', samples, receivedAt);
  }

  private onFrame(rgb: Uint8Array): void {
    if (!this.info) return;
    this.frames++;
    const { outputWidth: width, outputHeight: height } = this.info;
    this.emit('frame', { rgb, width, height, receivedAt: this.frameReceivedAt });
  }

  private checkMediaFlow(): void {
    const firstPending = this.pending[0];
    if (firstPending && Date.now() - firstPending.receivedAt > this.options.timeoutSeconds * 1000) {
      // Media without a readable stream description: frames cannot be cut safely.
      this.fail('ffmpeg sent media but no stream info');
      return;
    }
    const since = this.lastMediaAt ?? this.runStartedAt;
    const allowed = this.options.timeoutSeconds + (this.lastMediaAt ? 0 : STARTUP_GRACE_SECONDS);
    const idleSeconds = (Date.now() - since) / 1000;
    if (idleSeconds > allowed) this.fail(`no media received for ${Math.round(idleSeconds)} s`);
  }

  private fail(reason: string): void {
    this.failure ??= reason;
    this.terminate();
  }

  private terminate(): void {
    const child = this.child;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    child.kill('SIGTERM');
    const killer = setTimeout(() => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    }, KILL_AFTER_MS);
    child.once('exit', () => clearTimeout(killer));
  }

  private onClose(code: number | null, signal: NodeJS.Signals | null): void {
    // ffmpeg will not open an output that gets no stream: pull again without the missing one.
    const input = this.reader.input();
    const retry = !this.stopping && !this.failure && this.reader.emptyOutput && this.reader.inputDescribed;
    const outputs = { audio: input.hasAudio, video: input.hasVideo, probeSeconds: REPROBE_SECONDS };
    const narrower = (this.outputs.audio && !outputs.audio) || (this.outputs.video && !outputs.video);
    if (retry && narrower && (outputs.audio || outputs.video)) {
      this.outputs = outputs;
      this.run();
      return;
    }
    this.finish(code, signal);
  }

  private finish(code: number | null, signal: NodeJS.Signals | null): void {
    if (this.finished) return;
    this.finished = true;
    clearInterval(this.watchdog);
    this.pending = [];
    const reason = this.stopping
      ? 'stopped'
      : (this.failure ?? (this.reader.reason || `ffmpeg exited with code ${code} signal ${signal}`));
    this.emit('exit', { code, signal, reason, mediaSeconds: this.mediaSeconds, stopped: this.stopping });
    this.markGone();
  }
}
