// One pull of one live stream: ffprobe describes the streams (JSON), then one ffmpeg process
// writes PCM audio on fd 3 and PPM frames on fd 4. Emits `info` once (before any audio or
// frame), then `audio` and `frame` as media arrives, then `exit` once when it is over for good.
// Nothing structural is read from stderr (the stream server can write there); stderr only
// names a failure, in our words (failure-reason.ts).
import { spawn, type ChildProcess } from 'node:child_process';
import { EventEmitter } from 'node:events';
import type { Readable } from 'node:stream';
import {
  AUDIO_BYTES_PER_SECOND,
  AUDIO_FD,
  VIDEO_FD,
  analysisSize,
  buildIngestArgs,
  ffprobePath,
} from './ffmpeg-args.ts';
import { decoderEnvironment } from './decoder-environment.ts';
import { FailureReason } from './failure-reason.ts';
import { FrameAssembler, type Frame } from './frame-assembler.ts';
import { MediaPacing, STREAM_TOO_FAST, type PacingLimits } from './pacing.ts';
import { probeStream } from './probe.ts';

export interface IngestOptions {
  uri: string;
  fps: number;
  ffmpegPath: string;
  timeoutSeconds: number;
  tls?: { verify: boolean; caFile?: string };
  /** ffmpeg's whole environment besides PATH and the locale: the egress guard's library and policy. */
  env?: Record<string, string>;
  /** How far ahead of real time the stream may run; the defaults unless a test says otherwise. */
  pacing?: PacingLimits;
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
  // Why it ended, in our own words (never the server's text or the URI): "stopped" after stop().
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

const KILL_AFTER_MS = 1500;
const WATCHDOG_INTERVAL_MS = 1000;
// Connecting and probing come before the first byte of media; allow for them once.
const STARTUP_GRACE_SECONDS = 10;

export class Ingest extends EventEmitter<IngestEvents> {
  private child: ChildProcess | undefined;
  private readonly stderr = new FailureReason('ffmpeg');
  private readonly probing = new AbortController();
  private readonly ffprobePath: string;
  private info: IngestInfo | undefined;
  private assembler: FrameAssembler | undefined;
  private frameReceivedAt = 0;
  private oddAudioByte: number | undefined;
  private audioBytes = 0;
  private frames = 0;
  private runStartedAt = 0;
  private lastMediaAt: number | undefined;
  private watchdog: NodeJS.Timeout | undefined;
  private readonly pacing: MediaPacing;
  private pipes: Readable[] = [];
  private resumeTimer: NodeJS.Timeout | undefined;
  private failure: string | undefined;
  private started = false;
  private stopping = false;
  private finished = false;
  private readonly gone: Promise<void>;
  private markGone!: () => void;

  constructor(private readonly options: IngestOptions) {
    super();
    buildIngestArgs(options); // rejects a bad URI or option now rather than at start()
    this.ffprobePath = ffprobePath(options.ffmpegPath);
    this.pacing = new MediaPacing(options.pacing);
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
    if (this.started || this.finished) throw new Error('ingest already started');
    this.started = true;
    void this.probe();
  }

  // Ends ffprobe at once, ffmpeg with SIGTERM then SIGKILL if it lingers; resolves once the
  // processes have exited.
  async stop(): Promise<void> {
    this.stopping = true;
    if (!this.started) this.finish(null, null);
    this.probing.abort();
    this.terminate();
    await this.gone;
  }

  private async probe(): Promise<void> {
    const { uri, timeoutSeconds, tls, env } = this.options;
    const probed = await probeStream({
      uri,
      timeoutSeconds,
      tls,
      env,
      ffprobePath: this.ffprobePath,
      deadlineSeconds: timeoutSeconds + STARTUP_GRACE_SECONDS,
      signal: this.probing.signal,
    });
    if ('failure' in probed) {
      this.failure ??= probed.failure;
      this.finish(probed.code, probed.exitSignal);
      return;
    }
    const output = probed.hasVideo ? analysisSize(probed) : { width: 0, height: 0 };
    this.info = { ...probed, outputWidth: output.width, outputHeight: output.height };
    if (probed.hasVideo) this.assembler = new FrameAssembler(output, (frame) => this.onFrame(frame));
    this.emit('info', this.info);
    // A listener may have stopped us already (a picture over the limit): then ffmpeg never runs.
    if (this.stopping) this.finish(null, null);
    else this.pull(probed.hasAudio, probed.hasVideo);
  }

  private pull(audio: boolean, video: boolean): void {
    this.runStartedAt = Date.now();
    this.watchdog = setInterval(() => this.checkMediaFlow(), WATCHDOG_INTERVAL_MS);
    this.watchdog.unref();
    const child = spawn(this.options.ffmpegPath, buildIngestArgs({ ...this.options, audio, video }), {
      stdio: ['ignore', 'ignore', 'pipe', 'pipe', 'pipe'],
      env: decoderEnvironment(this.options.env),
    });
    this.child = child;
    child.on('error', (error) => {
      this.failure ??= `cannot run ${this.options.ffmpegPath}: ${error.message}`;
    });
    child.on('close', (code, signal) => this.finish(code, signal));
    child.stderr?.setEncoding('utf8');
    child.stderr?.on('data', (text: string) => this.stderr.write(text));
    // Every pipe is read to the end, whatever state we are in; an unread pipe stalls ffmpeg,
    // which is how pace() holds a stream that runs ahead of real time.
    const audioPipe = child.stdio[AUDIO_FD] as Readable;
    const videoPipe = child.stdio[VIDEO_FD] as Readable;
    this.pipes = [audioPipe, videoPipe];
    audioPipe.on('data', (chunk: Buffer) => this.onAudio(chunk));
    videoPipe.on('data', (chunk: Buffer) => this.onVideo(chunk));
  }

  // The media clock: the further of audio and video, so a stream cannot run ahead on the one
  // the clock does not follow (audio announced but never sent, frames at wire speed).
  private mediaClock(): number {
    return Math.max(this.audioBytes / AUDIO_BYTES_PER_SECOND, this.frames / this.options.fps);
  }

  // Holds a stream that runs ahead of real time by pausing both pipes: ffmpeg blocks writing
  // them, so it stops decoding and reading the socket, and TCP's flow control holds the server.
  // Measured with Debian's ffmpeg 5.1 on a file pushed at wire speed through nginx-rtmp: a held
  // ffmpeg uses no CPU, and the media it delivers follows the wall clock. `-readrate 1` was the
  // other way: it paces by the server's timestamps (which a server picks: a jump makes ffmpeg
  // sleep as long as it says), holds the start-up burst back from the first packet, and gives
  // no sign of a stream that stays too fast; this clock is our own count of what was decoded.
  private pace(): void {
    if (this.failure || this.finished) return;
    const now = Date.now();
    const decision = this.pacing.update(this.mediaClock(), now);
    if (decision.tooFast) {
      this.fail(STREAM_TOO_FAST);
      return;
    }
    if (decision.hold) {
      for (const pipe of this.pipes) pipe.pause();
      this.resumeTimer ??= setTimeout(() => {
        this.resumeTimer = undefined;
        this.pace();
      }, Math.max(0, (decision.resumeAt ?? now) - now));
    } else if (this.pipes.some((pipe) => pipe.isPaused())) {
      this.readOn();
      // The wait was ours, not the stream's: the watchdog's idle time starts again.
      this.lastMediaAt = now;
    }
  }

  private readOn(): void {
    clearTimeout(this.resumeTimer);
    this.resumeTimer = undefined;
    for (const pipe of this.pipes) pipe.resume();
  }

  private onVideo(chunk: Buffer): void {
    this.lastMediaAt = this.frameReceivedAt = Date.now();
    if (this.failure || !this.assembler) return;
    const problem = this.assembler.push(chunk);
    if (problem) this.fail(problem);
  }

  private onAudio(chunk: Buffer): void {
    const receivedAt = Date.now();
    this.lastMediaAt = receivedAt;
    if (this.failure) return;
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
    this.pace();
  }

  private onFrame(frame: Frame): void {
    this.frames++;
    this.emit('frame', { ...frame, receivedAt: this.frameReceivedAt });
    this.pace();
  }

  private checkMediaFlow(): void {
    // Held by pace(): nothing is read, and that says nothing about the stream.
    if (this.pacing.holding && !this.failure) return;
    const since = this.lastMediaAt ?? this.runStartedAt;
    const allowed = this.options.timeoutSeconds + (this.lastMediaAt ? 0 : STARTUP_GRACE_SECONDS);
    const idleSeconds = (Date.now() - since) / 1000;
    if (idleSeconds > allowed) this.fail(`no media received for ${Math.round(idleSeconds)} s`);
  }

  private fail(reason: string): void {
    this.failure ??= reason;
    // Read to the end: ffmpeg must not stay blocked on a held pipe while it is asked to exit.
    this.readOn();
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

  private finish(code: number | null, signal: NodeJS.Signals | null): void {
    if (this.finished) return;
    this.finished = true;
    clearInterval(this.watchdog);
    clearTimeout(this.resumeTimer);
    const reason = this.stopping ? 'stopped' : (this.failure ?? this.stderr.reason(code, signal));
    this.emit('exit', { code, signal, reason, mediaSeconds: this.mediaSeconds, stopped: this.stopping });
    this.markGone();
  }
}
