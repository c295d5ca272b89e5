// The actor host's metrics, on the process's registry (made in main.ts) and handed to what
// counts: the models (inference time), each session's worker (frames, speech drops) and the
// host itself (sessions, rows, bus requests). Never a session id or a user as a label.
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import { WORKER_STATES, type WorkerState } from '../bus/contracts/session.ts';
import { busRequestMetrics } from '../bus/request-metrics.ts';
import type { RequestObserver } from '../bus/rpc.ts';
import { runningTotal } from '../bus/running-total.ts';
import type { SpeechModel } from './models/files.ts';
import type { CostPart } from './session-cost.ts';
import type { InferenceTimer, ModelName } from './models/inference-timer.ts';
import type { RowPublisher } from './rows.ts';

/** What a session's worker reports besides its rows. */
export interface WorkerMetrics {
  /** A second of video was emitted: frames analysed in it, and frames skipped unanalysed. */
  videoSecond(analysed: number, dropped: number): void;
  /** A speech segment of `session` was dropped unheard: transcription was behind. */
  speechSegmentDropped(session: string): void;
  /** A speech segment's transcription starts after it waited `seconds` for the thread. */
  speechWaited(session: string, seconds: number): void;
  /** A segment with `seconds` of the session's speech was left untranscribed as the room's (actors/voice/speaker-level.ts). */
  roomSpeech(session: string, seconds: number): void;
  /** Voice analysis was behind and skipped `seconds` of the session's oldest audio. */
  audioShed(session: string, seconds: number): void;
  /** A worker connects to its stream again after losing it (or failing to get media). */
  reconnecting(): void;
  /** `seconds` of CPU spent on a session by one of its parts. */
  sessionCpuSpent?(part: CostPart, seconds: number): void;
}

export class HostMetrics implements WorkerMetrics {
  readonly bus: RequestObserver;
  readonly inference: InferenceTimer;
  /** Records model calls timed elsewhere (on another thread), in seconds. */
  readonly observeInference: (model: ModelName, seconds: number[]) => void;
  private readonly framesAnalysed: Counter;
  private readonly framesDropped: Counter;
  private readonly speechDropped: Counter;
  private readonly speechWait: Histogram;
  private readonly audioShedSeconds: Counter;
  private readonly roomSpeechSeconds: Counter;
  private readonly reconnects: Counter;
  private readonly faceStreamsReduced: Gauge;
  private readonly faceEffortReductions: Counter;
  /** Counts the CPU seconds a transcription thread spent on each segment, by model. */
  readonly transcriptionCpu: (model: SpeechModel, cpuSeconds: number) => void;
  private readonly sessionCpu: Counter<'part'>;
  private readonly sessionCores: Histogram;

  constructor(private readonly registry: Registry) {
    this.bus = busRequestMetrics(registry);
    const inference = new Histogram({
      name: 'emo_inference_duration_seconds',
      help: 'Model calls by model (face_detector, expressions: one call per batch of the host\'s sessions, on the face thread; voice_activity: one 32 ms step of every stream that has one, on the voice thread; speech: one segment\'s round trip to the transcription thread, its wait there included)',
      labelNames: ['model'] as const,
      buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers: [registry],
    });
    this.inference = (model) => inference.startTimer({ model });
    this.observeInference = (model, seconds) => {
      for (const value of seconds) inference.observe({ model }, value);
    };
    this.framesAnalysed = new Counter({ name: 'emo_frames_analysed_total', help: 'Video frames analysed for faces', registers: [registry] });
    this.framesDropped = new Counter({
      name: 'emo_frames_dropped_total',
      help: 'Video frames skipped unanalysed because the analysis of their session was behind',
      registers: [registry],
    });
    this.speechDropped = new Counter({
      name: 'emo_speech_segments_dropped_total',
      help: 'Speech segments dropped untranscribed because a session\'s transcription queue was full',
      registers: [registry],
    });
    this.speechWait = new Histogram({
      name: 'emo_speech_wait_seconds',
      help: 'How long each speech segment waited for the transcription thread before its transcription started (over 5 s in two or more sessions: the host is behind)',
      buckets: [0.1, 0.25, 0.5, 1, 2, 3, 5, 10, 20, 40],
      registers: [registry],
    });
    this.audioShedSeconds = new Counter({
      name: 'emo_audio_shed_seconds_total',
      help: 'Seconds of audio skipped unanalysed because voice analysis was behind (VOICE_MAX_BACKLOG_SECONDS)',
      registers: [registry],
    });
    this.roomSpeechSeconds = new Counter({
      name: 'emo_room_speech_seconds_total',
      help: "Seconds of speech left untranscribed as the room's: segments of a background that talks (a crowd, another person) while the speaker is silent, well under the speaker's level or, with no speaker heard yet, standing little above their own floor",
      registers: [registry],
    });
    this.reconnects = new Counter({
      name: 'emo_stream_reconnects_total',
      help: 'Times a worker connected to its stream again after losing it or getting no media from it',
      registers: [registry],
    });
    this.faceStreamsReduced = new Gauge({
      name: 'emo_face_streams_reduced',
      help: 'Streams the face thread analyses below full effort to keep up (a step: detection on a 480 px picture, expressions held a frame; two: on a 320 px picture; FACE_EFFORT_LADDER)',
      registers: [registry],
    });
    this.faceEffortReductions = new Counter({
      name: 'emo_face_effort_reductions_total',
      help: 'Steps down to less effort per frame for one stream, because the face thread was dropping frames or the stream was over its budget',
      registers: [registry],
    });
    const transcriptionCpu = new Counter({
      name: 'emo_transcription_cpu_seconds_total',
      help: 'CPU seconds the transcription threads spent transcribing, by model (tiny; base for noisy speech, NOISY_SPEECH_BELOW_SNR_DB)',
      labelNames: ['model'] as const,
      registers: [registry],
    });
    this.transcriptionCpu = (model, cpuSeconds) => transcriptionCpu.inc({ model }, cpuSeconds);
    this.sessionCpu = new Counter({
      name: 'emo_session_cpu_seconds_total',
      help: 'CPU seconds spent on the host\'s sessions, by part: decoder (each session\'s ffmpeg), and each session\'s share of the face, voice and transcription threads',
      labelNames: ['part'] as const,
      registers: [registry],
    });
    this.sessionCores = new Histogram({
      name: 'emo_session_cpu_cores',
      help: 'What each session costs, in cores over the last 10 s, observed every 10 s per session measured that long (its budget is cores / HOST_CAPACITY; meta.cpuCores of the session)',
      buckets: [0.01, 0.025, 0.05, 0.1, 0.15, 0.2, 0.3, 0.5, 1, 2],
      registers: [registry],
    });
  }

  /** `seconds` of CPU spent on a session by one of its parts. */
  sessionCpuSpent(part: CostPart, seconds: number): void {
    this.sessionCpu.inc({ part }, seconds);
  }

  /** A session's cost over the last window, in cores. */
  sessionCost(cores: number): void {
    this.sessionCores.observe(cores);
  }

  /** A stream of the face thread moved from `before` to `level` steps below full effort per frame. */
  faceEffort(before: number, level: number): void {
    if (before === 0 && level > 0) this.faceStreamsReduced.inc();
    if (before > 0 && level === 0) this.faceStreamsReduced.dec();
    if (level > before) this.faceEffortReductions.inc(level - before);
  }

  videoSecond(analysed: number, dropped: number): void {
    this.framesAnalysed.inc(analysed);
    this.framesDropped.inc(dropped);
  }

  speechSegmentDropped(_session: string): void {
    this.speechDropped.inc();
  }

  speechWaited(_session: string, seconds: number): void {
    this.speechWait.observe(seconds);
  }

  audioShed(_session: string, seconds: number): void {
    this.audioShedSeconds.inc(seconds);
  }

  roomSpeech(_session: string, seconds: number): void {
    this.roomSpeechSeconds.inc(seconds);
  }

  reconnecting(): void {
    this.reconnects.inc();
  }

  /**
   * Reads the host's sessions (the worker state of each), whether it is behind (shedding work,
   * so taking no new session), and its row publisher at each scrape.
   */
  watch(workerStates: () => WorkerState[], behind: () => boolean, rows: RowPublisher): void {
    const registers = [this.registry];
    new Gauge({
      name: 'emo_sessions_active',
      help: 'Sessions this host runs',
      registers,
      collect() {
        this.set(workerStates().length);
      },
    });
    new Gauge({
      name: 'emo_sessions_worker_state',
      help: 'Sessions this host runs, by the state of their worker',
      labelNames: ['state'] as const,
      registers,
      collect() {
        const states = workerStates();
        for (const state of WORKER_STATES) this.set({ state }, states.filter((s) => s === state).length);
      },
    });
    new Gauge({
      name: 'emo_host_behind',
      help: 'Whether this host is behind (its face thread saturated with every stream at its lowest effort, or audio shed, speech dropped or speech waiting over 5 s for transcription in two or more sessions at once) and so takes no new session (1) or keeps up (0)',
      registers,
      collect() {
        this.set(behind() ? 1 : 0);
      },
    });
    new Gauge({
      name: 'emo_row_messages_unacknowledged',
      help: 'Row messages not yet acknowledged by ROWS, in flight or waiting to be sent again: they live only in this process until then',
      registers,
      collect() {
        this.set(rows.unacknowledged);
      },
    });
    runningTotal(this.registry, 'emo_rows_published_total', 'Result rows stored in the ROWS stream', () => rows.published);
    runningTotal(
      this.registry,
      'emo_row_publishes_refused_total',
      'Row publishes held back or refused because ROWS was full (retried)',
      () => rows.refused,
    );
    runningTotal(
      this.registry,
      'emo_row_messages_dropped_total',
      'Row messages shed, unpublished, because the buffer of rows waiting for ROWS was full',
      () => rows.dropped,
    );
  }
}
