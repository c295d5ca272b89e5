// One pull of one live stream: ffprobe describes the streams (JSON), then one ffmpeg process
// writes PCM audio and PPM frames to two unix sockets the host listens on (media-socket.ts).
// Both are started by the host's decoder spawner (decoder-spawner.ts), never by forking the host.
// Emits `info` once (before any audio or frame), then `audio` and `frame` as media arrives, then
// `exit` once when it is over for good. Nothing structural is read from stderr (the stream
// server can write there); stderr only names a failure, in our words (failure-reason.ts).
import { EventEmitter } from 'node:events';
import {
  AUDIO_BYTES_PER_SECOND,
  analysisSize,
  buildIngestArgs,
  checkPullOptions,
  ffprobePath,
  unixOutput,
} from './ffmpeg-args.ts';
import { decoderEnvironment } from './decoder-environment.ts';
import type { DecoderExit, DecoderProcess, DecoderSpawner } from './decoder-spawner.ts';
import { FailureReason } from './failure-reason.ts';
import { FrameAssembler, type Frame } from './frame-assembler.ts';
import { MediaSocket } from './media-socket.ts';
import { MediaPacing, STREAM_TOO_FAST, type PacingLimits } from './pacing.ts';
import { probeStream } from './probe.ts';
import { streamUriEnvironment } from './stream-address.ts';

export interface IngestOptions {
  uri: string;
  /** Named on ffprobe's and ffmpeg's command lines, which never show the URI (stream-address.ts). */
  session: string;
  fps: number;
  ffmpegPath: string;
  /** Starts ffprobe and ffmpeg; its socket directory is where ffmpeg writes the media. */
  decoders: DecoderSpawner;
  timeoutSeconds: number;
  tls?: { verify: boolean; caFile?: string };
  /**
   * ffmpeg's whole environment besides PATH, the locale and the stream's URI: the egress guard's
   * library and policy. Required: the guard is also what hands the decoders the URI.
   */
  env: Record<string, string>;
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
  private decoder: DecoderProcess | undefined;
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
  private sockets: MediaSocket[] = [];
  private resumeTimer: NodeJS.Timeout | undefined;
  private failure: string | undefined;
  private started = false;
  private stopping = false;
  private finished = false;
  private readonly gone: Promise<void>;
  private markGone!: () => void;

  constructor(private readonly options: IngestOptions) {
    super();
    checkPullOptions(options); // rejects a bad URI or option now rather than at start()
    if (!options.env.LD_PRELOAD) throw new Error('the decoders need the egress guard (LD_PRELOAD): it hands them the stream URI');
    this.ffprobePath = ffprobePath(options.ffmpegPath);
    this.pacing = new MediaPacing(options.pacing);
    this.gone = new Promise((resolve) => (this.markGone = resolve));
  }

  /** ffmpeg's process id while it runs. */
  get pid(): number | undefined {
    return this.decoder?.pid;
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
    const { uri, session, timeoutSeconds, tls, env, decoders } = this.options;
    const probed = await probeStream({
      uri,
      session,
      timeoutSeconds,
      tls,
      env,
      decoders,
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
    else await this.pull(probed.hasAudio, probed.hasVideo);
  }

  private async pull(audio: boolean, video: boolean): Promise<void> {
    this.runStartedAt = Date.now();
    this.watchdog = setInterval(() => this.checkMediaFlow(), WATCHDOG_INTERVAL_MS);
    this.watchdog.unref();
    const { decoders } = this.options;
    // Every socket is read to the end, whatever state we are in; an unread one stalls ffmpeg,
    // which is how pace() holds a stream that runs ahead of real time.
    let audioSocket: MediaSocket | undefined;
    let videoSocket: MediaSocket | undefined;
    try {
      if (audio) audioSocket = await MediaSocket.listen(decoders.socketPath('audio'), (chunk) => this.onAudio(chunk));
      if (video) videoSocket = await MediaSocket.listen(decoders.socketPath('video'), (chunk) => this.onVideo(chunk));
    } catch (error) {
      this.failure ??= `cannot listen for media: ${(error as Error).message}`;
    }
    this.sockets = [audioSocket, videoSocket].filter((socket) => socket !== undefined);
    // Stopped or failed while the sockets were being made: ffmpeg never runs.
    if (this.stopping || this.failure) {
      for (const socket of this.sockets) socket.destroy();
      this.finish(null, null);
      return;
    }
    const outputs = { audio: audioSocket && unixOutput(audioSocket.path), video: videoSocket && unixOutput(videoSocket.path) };
    const decoder = decoders.run({
      file: this.options.ffmpegPath,
      args: buildIngestArgs({ ...this.options, outputs }),
      env: decoderEnvironment({ ...this.options.env, ...streamUriEnvironment(this.options.uri) }),
    });
    this.decoder = decoder;
    decoder.on('unstartable', (message) => {
      this.failure ??= `cannot run ${this.options.ffmpegPath}: ${message}`;
    });
    decoder.on('stderr', (text) => this.stderr.write(text));
    decoder.on('exit', (exit) => void this.decoderExited(exit));
  }

  // What ffmpeg wrote before it exited is read before the pull ends. A decoder the spawner lost
  // may still be running: its sockets are dropped unread, so that it fails at its next write.
  private async decoderExited(exit: DecoderExit): Promise<void> {
    if (exit.lost) {
      this.failure ??= exit.lost;
      for (const socket of this.sockets) socket.destroy();
    }
    await Promise.all(this.sockets.map((socket) => socket.drain()));
    this.finish(exit.code, exit.signal);
  }

  // The media clock: the further of audio and video, so a stream cannot run ahead on the one
  // the clock does not follow (audio announced but never sent, frames at wire speed).
  private mediaClock(): number {
    return Math.max(this.audioBytes / AUDIO_BYTES_PER_SECOND, this.frames / this.options.fps);
  }

  // Holds a stream that runs ahead of real time by pausing both sockets: ffmpeg blocks writing
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
      for (const socket of this.sockets) socket.pause();
      this.resumeTimer ??= setTimeout(() => {
        this.resumeTimer = undefined;
        this.pace();
      }, Math.max(0, (decision.resumeAt ?? now) - now));
    } else if (this.sockets.some((socket) => socket.isPaused())) {
      this.readOn();
      // The wait was ours, not the stream's: the watchdog's idle time starts again.
      this.lastMediaAt = now;
    }
  }

  private readOn(): void {
    clearTimeout(this.resumeTimer);
    this.resumeTimer = undefined;
    for (const socket of this.sockets) socket.resume();
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
    // Read to the end: ffmpeg must not stay blocked on a held socket while it is asked to exit.
    this.readOn();
    this.terminate();
  }

  private terminate(): void {
    const decoder = this.decoder;
    if (!decoder || decoder.exited) return;
    decoder.kill('SIGTERM');
    const killer = setTimeout(() => decoder.kill('SIGKILL'), KILL_AFTER_MS);
    decoder.once('exit', () => clearTimeout(killer));
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
