// Every voice stream of a host, analysed in lockstep: each round takes one 32 ms step from
// every stream that has one queued and runs the VAD once for all of them. Rounds start a
// moment (GATHER_MS) after audio arrives: live streams deliver their chunks at different
// times, and rounds started by each chunk at once would run the VAD for one stream at a time.
// A stream whose backlog passes the limit sheds its oldest audio, so audio rows never lag
// without bound.
import { VoiceAnalyzer, type VoiceAnalyzerOptions } from './analyzer.ts';
import type { VadStream, VoiceActivityModel } from './vad.ts';

/** How long audio waits for other streams' audio to join its rounds: about two chunks of a stream. */
export const GATHER_MS = 50;

export interface VoiceStreamsOptions {
  model: VoiceActivityModel;
  /** Queued samples a stream may hold before its oldest are shed. */
  maxBacklogSamples: number;
  /** `samples` of a stream's audio were shed unanalysed. */
  onShed(stream: VoiceAnalyzer, samples: number): void;
  /** A round failed (a model error): `stream` was in it and is analysed no further. */
  onFailed(stream: VoiceAnalyzer, error: unknown): void;
}

export class VoiceStreams {
  private readonly streams = new Set<VoiceAnalyzer>();
  private running: Promise<void> | undefined;
  private writtenWhileRunning = false;
  private gathering: NodeJS.Timeout | undefined;
  /** Streams lost with a failed round, and why. */
  private readonly failed = new Map<VoiceAnalyzer, unknown>();

  constructor(private readonly options: VoiceStreamsOptions) {}

  open(options: VoiceAnalyzerOptions): VoiceAnalyzer {
    const stream = new VoiceAnalyzer(options);
    this.streams.add(stream);
    return stream;
  }

  /** Queues PCM for `stream` and lets the rounds run; a failed stream takes no more. */
  write(stream: VoiceAnalyzer, chunk: Buffer): void {
    if (this.failed.has(stream)) return;
    stream.write(chunk);
    const { maxBacklogSamples, onShed } = this.options;
    if (stream.backlog > maxBacklogSamples) onShed(stream, stream.shed(maxBacklogSamples));
    if (this.running) this.writtenWhileRunning = true;
    else this.gathering ??= setTimeout(() => this.run(), GATHER_MS);
  }

  /** Analyses everything `stream` has queued, then ends it (its last second and segment). */
  async close(stream: VoiceAnalyzer): Promise<void> {
    try {
      if (this.gathering) this.run();
      while (this.running) await this.running;
      if (this.failed.has(stream)) throw this.failed.get(stream);
      stream.flush();
    } finally {
      this.streams.delete(stream);
      this.failed.delete(stream);
    }
  }

  // Starts the rounds, or has them start again once the current ones end: rounds that found
  // nothing to do are over a moment before they are marked so, and must not swallow a write.
  private run(): void {
    clearTimeout(this.gathering);
    this.gathering = undefined;
    if (this.running) {
      this.writtenWhileRunning = true;
      return;
    }
    this.writtenWhileRunning = false;
    this.running = this.rounds().finally(() => {
      this.running = undefined;
      if (this.writtenWhileRunning) this.run();
    });
  }

  private async rounds(): Promise<void> {
    for (;;) {
      const ready: VoiceAnalyzer[] = [];
      const windows: VadStream[] = [];
      for (const stream of this.streams) {
        if (this.failed.has(stream)) continue;
        const window = stream.beginStep();
        if (!window) continue;
        ready.push(stream);
        windows.push(window);
      }
      if (!ready.length) return;
      try {
        const probabilities = await this.options.model.probabilities(windows);
        ready.forEach((stream, i) => stream.endStep(probabilities[i]!));
      } catch (error) {
        for (const stream of ready) {
          this.failed.set(stream, error);
          this.options.onFailed(stream, error);
        }
      }
    }
  }
}
