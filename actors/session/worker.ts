// The worker of one session: pulls the stream with ffmpeg and feeds the analysis actors.
// A stream that drops is reconnected with backoff; a stream that stays unreachable past the
// limit, whose picture is over 1080p, or that stays faster than real time
// (actors/ingest/pacing.ts) ends the worker with a stop reason. Anything else that throws is a
// crash, left to the supervisor.
import { setTimeout as sleep } from 'node:timers/promises';
import type { StopReason, WorkerState } from '../../bus/contracts/session.ts';
import type { Logger } from '../../bus/log.ts';
import { backoffMs, type Backoff } from '../backoff.ts';
import { parseStreamUri } from '../../bus/stream-uri.ts';
import type { EgressPolicy } from '../egress/policy.ts';
import type { WorkerMetrics } from '../metrics.ts';
import { AUDIO_BYTES_PER_SECOND } from '../ingest/ffmpeg-args.ts';
import { PICTURE_TOO_LARGE } from '../ingest/failure-reason.ts';
import { PACING_LIMITS, STREAM_TOO_FAST } from '../ingest/pacing.ts';
import { Ingest, type IngestInfo } from '../ingest/ingest.ts';
import type { DecoderSpawner } from '../ingest/decoder-spawner.ts';
import type { RowPublisher } from '../rows.ts';
import type { Child } from '../supervisor.ts';
import type { Transcriber } from '../speech/moonshine.ts';
import { TranscriptionQueue } from '../speech/queue.ts';
import { withSpeakingRate } from './speaking-rates.ts';
import { DecoderCpu } from './decoder-cpu.ts';
import type { CostPart, SessionCost } from '../session-cost.ts';
import type { FaceStream, FaceThread } from '../face/threaded.ts';
import type { VoiceStream, VoiceThread } from '../voice/threaded.ts';

export interface WorkerReports {
  state(state: WorkerState): void;
  mediaSeconds(seconds: number): void;
  /** The worker ended for good: the session must finish. */
  ended(reason: StopReason, detail: string): void;
  /** `seconds` of CPU spent on the session just now by one of its parts (session-cost.ts). */
  cpu?(part: CostPart, seconds: number): void;
}

export interface WorkerOptions {
  session: string;
  createdAt: number;
  streamUri: string;
  rows: RowPublisher;
  resources: WorkerResources;
  /** The session's logger: every line already names the session. */
  log: Logger;
  reports: WorkerReports;
  /** What the session costs; while the host holds it over budget, its face effort comes down first. */
  cost?: SessionCost;
}

/** What a host gives each of its workers: the analysis threads, and how to pull. */
export interface WorkerResources {
  /** Face analysis of every stream of the host, on its own thread. */
  faces: FaceThread;
  /** Voice analysis of every stream of the host, on its own thread. */
  voice: VoiceThread;
  speechToText: Transcriber;
  /** Every connection ffmpeg makes for a stream is held to it. */
  egress: EgressPolicy;
  pull: PullSettings;
  /** Where frames, speech drops and VAD time are counted (the host's /metrics). */
  metrics?: WorkerMetrics;
}

export interface PullSettings {
  ffmpegPath: string;
  /** The host's decoder spawner: ffprobe and ffmpeg are started there, never by forking the host. */
  decoders: DecoderSpawner;
  /** Video frames analysed per second. */
  fps: number;
  /** How long a stream may give nothing before the session ends. */
  unreachableSeconds: number;
  /** rtmps: verify the server certificate, against `caFile` or the system's CAs. */
  tls: { verify: boolean; caFile?: string };
  /** Speech segments waiting for transcription per session, at most. */
  transcriptionQueueLimit: number;
}

/** The picture must fit in 1920x1080 in either orientation. */
function exceedsResolution(width: number, height: number): boolean {
  return Math.max(width, height) > 1920 || Math.min(width, height) > 1080;
}

/** The waits between reconnects of a stream that gives no media. */
const RECONNECT_BACKOFF: Backoff = { baseMs: 500, maxMs: 10_000 };

/**
 * How long the check that anything listens on the stream's port waits for an answer: longer,
 * and the decoder is started as always, with its own timeout.
 */
const LISTENER_CHECK_MS = 1000;

export class StreamWorker implements Child {
  readonly done: Promise<void>;
  private readonly stopped = new AbortController();
  private ingest?: Ingest;
  private mediaSeconds = 0;
  private readonly transcripts: TranscriptionQueue;

  constructor(private readonly options: WorkerOptions) {
    const { session, rows, log } = options;
    this.transcripts = new TranscriptionQueue({
      session,
      limit: options.resources.pull.transcriptionQueueLimit,
      stt: options.resources.speechToText,
      onRow: (row, segment) => rows.publish(session, 'speech', [withSpeakingRate(row, segment.speech)], Math.round(row.start * 1000)),
      onDropped: (total) => {
        options.resources.metrics?.speechSegmentDropped(session);
        log.warn({ dropped: total }, 'speech segments dropped: transcription behind');
      },
      onWaited: (seconds) => options.resources.metrics?.speechWaited(session, seconds),
      onCpu: (seconds) => options.reports.cpu?.('speech', seconds),
      onError: (error) => log.error({ err: error }, 'a speech segment could not be transcribed'),
    });
    this.done = this.run().finally(() => this.transcripts.close());
  }

  async stop(): Promise<void> {
    this.stopped.abort();
    await this.ingest?.stop();
    await this.done.catch(() => {});
  }

  private async run(): Promise<void> {
    const { reports, log } = this.options;
    const limitMs = this.options.resources.pull.unreachableSeconds * 1000;
    let lastMediaAt = Date.now();
    // Counted since media last flowed: a stream that flowed again starts from the first wait.
    let retriesWithoutMedia = 0;
    for (let attempt = 0; !this.stopped.signal.aborted; attempt++) {
      reports.state(attempt === 0 ? 'connecting' : 'reconnecting');
      if (attempt > 0) this.options.resources.metrics?.reconnecting();
      const before = this.mediaSeconds;
      const outcome = await this.connectOnce();
      if (this.stopped.signal.aborted) return;
      // Described as too big, or too big for the decoders to describe at all.
      if (outcome.resolution || outcome.reason === PICTURE_TOO_LARGE) {
        reports.ended('resolution_exceeded', `stream is ${outcome.resolution ?? 'larger than 1920x1080'}, above the 1080p limit`);
        return;
      }
      // Held back for most of a minute: reconnecting would only make it push again.
      if (outcome.reason === STREAM_TOO_FAST) {
        const { windowSeconds, heldShare } = PACING_LIMITS;
        reports.ended('stream_too_fast', `stream server sent media faster than real time: held back over ${windowSeconds * heldShare} s of ${windowSeconds} s`);
        return;
      }
      if (this.mediaSeconds > before) {
        lastMediaAt = Date.now();
        retriesWithoutMedia = 0;
      }
      if (Date.now() - lastMediaAt >= limitMs) {
        reports.ended('stream_unreachable', outcome.reason || 'no media received');
        return;
      }
      const backoff = backoffMs(retriesWithoutMedia, RECONNECT_BACKOFF);
      log.info({ reason: outcome.reason, backoffMs: backoff }, 'stream lost; reconnecting');
      const wait = Math.min(backoff, Math.max(0, limitMs - (Date.now() - lastMediaAt)));
      await sleep(wait, undefined, { signal: this.stopped.signal }).catch(() => {});
      retriesWithoutMedia++;
    }
  }

  /** One ffmpeg run, from connection to exit, with fresh analysers. */
  private async connectOnce(): Promise<{ reason: string; resolution?: string }> {
    const { session, createdAt, streamUri, rows, reports, resources, log } = this.options;
    const { pull, egress, metrics } = resources;
    const { hostname, port } = parseStreamUri(streamUri);
    if (await egress.nothingListens(hostname, port, LISTENER_CHECK_MS)) return { reason: 'connection refused' };
    const ingest = new Ingest({
      env: await egress.guardEnvironment(),
      uri: streamUri,
      session,
      fps: pull.fps,
      ffmpegPath: pull.ffmpegPath,
      decoders: pull.decoders,
      timeoutSeconds: Math.min(10, pull.unreachableSeconds),
      tls: pull.tls,
    });
    this.ingest = ingest;
    const sinceStart = (at: number) => Math.max(0, (at - createdAt) / 1000);
    // Track ids stay unique across reconnections and host takeovers: each run counts from its start.
    const trackBase = Math.floor(sinceStart(Date.now())) * 1000;
    let voice: VoiceStream | undefined;
    let hasAudio = false;
    let face: FaceStream | undefined;
    let stopWatchingBudget: (() => void) | undefined;
    let crash: unknown;
    let resolution: string | undefined;
    // Working means media flows, not merely that the stream was described: a pull can still
    // fail between the two.
    let flowing = false;
    const mediaArrived = () => {
      if (flowing) return;
      flowing = true;
      reports.state('working');
    };
    const fail = (error: unknown) => {
      crash ??= error;
      void ingest.stop();
    };

    ingest.on('info', (info: IngestInfo) => {
      if (info.hasVideo && exceedsResolution(info.width, info.height)) {
        resolution = `${info.width}x${info.height}`;
        void ingest.stop();
        return;
      }
      hasAudio = info.hasAudio;
      if (info.hasVideo) {
        face = resources.faces.open(session, pull.fps, {
          onFaceSecond: (row) => {
            const track = trackBase + row.track;
            rows.publish(session, 'face', [{ ...row, track }], `${row.second}.${track}`);
          },
          onVideoSecond: (row) => {
            metrics?.videoSecond(row.frames, row.dropped);
            rows.publish(session, 'video', [row], row.second);
          },
          onFailed: fail,
          onCpu: (seconds) => reports.cpu?.('face', seconds),
        });
        const stream = face;
        stream.setOverBudget(this.options.cost?.overBudget ?? false);
        stopWatchingBudget = this.options.cost?.watchBudget((over) => stream.setOverBudget(over));
      }
    });
    ingest.on('audio', (chunk: Buffer, receivedAt: number) => {
      if (!hasAudio || resolution) return;
      // The stream is known (probed) a moment before ffmpeg delivers its first sample: the
      // audio's clock starts with that first sample, as the frames' clock starts with theirs.
      voice ??= resources.voice.open(session, sinceStart(receivedAt - (chunk.length / AUDIO_BYTES_PER_SECOND) * 1000), {
        onSecond: (row) => rows.publish(session, 'audio', [row], row.second),
        onSegment: (segment) => this.transcripts.push(segment),
        onRoomSpeech: (seconds) => {
          metrics?.roomSpeech(session, seconds);
          log.debug({ seconds }, "speech left untranscribed as the room's: the background talking while the speaker was silent");
        },
        onShed: (seconds) => {
          metrics?.audioShed(session, seconds);
          log.warn({ seconds }, 'voice analysis behind: oldest audio skipped');
        },
        onFailed: fail,
        onCpu: (seconds) => reports.cpu?.('voice', seconds),
      });
      voice.write(chunk);
      mediaArrived();
      this.mediaSeconds += chunk.length / AUDIO_BYTES_PER_SECOND;
      reports.mediaSeconds(this.mediaSeconds);
    });
    ingest.on('frame', (frame: { rgb: Uint8Array; width: number; height: number; receivedAt: number }) => {
      if (!face || resolution) return;
      mediaArrived();
      const second = Math.floor(sinceStart(frame.receivedAt));
      face.offer({ ...frame, second });
      if (!hasAudio) {
        this.mediaSeconds += 1 / pull.fps;
        reports.mediaSeconds(this.mediaSeconds);
      }
    });

    const decoderCpu = new DecoderCpu(() => ingest.pid, (seconds) => reports.cpu?.('decoder', seconds));
    const exit = await new Promise<{ reason: string }>((resolve) => {
      ingest.on('exit', (result: { reason: string }) => resolve(result));
      ingest.start();
    }).finally(() => {
      decoderCpu.stop();
      stopWatchingBudget?.();
    });
    await voice?.close().catch(fail);
    await face?.close().catch(fail);
    if (crash) throw crash;
    return { reason: exit.reason, resolution };
  }
}
