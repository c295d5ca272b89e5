// One session's transcription backlog. Speech can arrive faster than a loaded host transcribes
// it, so the backlog is bounded: past the limit the oldest waiting segment is dropped (the newest
// speech matters most live) and counted, never dropped silently.
import type { SpeechSegment } from '../../bus/contracts/rows.ts';
import type { SpeechAudio } from '../voice/analyzer.ts';
import type { Transcriber } from './moonshine.ts';
import { segmentSnrDb } from '../voice/level.ts';
import { scoreSentiment } from './sentiment.ts';

export interface TranscriptionQueueOptions {
  session: string;
  /** Most segments waiting (the one being transcribed does not count). */
  limit: number;
  stt: Transcriber;
  /** A segment's transcript, with the segment it came from. */
  onRow(row: SpeechSegment, segment: SpeechAudio): void;
  /** Total dropped so far in this session, after each drop. */
  onDropped(total: number): void;
  /** A segment's transcription starts after it waited `seconds` behind others (the host's load). */
  onWaited?(seconds: number): void;
  /** The CPU seconds a segment's transcription took: the session's part of the transcription threads. */
  onCpu?(seconds: number): void;
  /** A failed transcription; without this handler the failure is thrown out of the queue's loop. */
  onError?(error: Error): void;
  now?: () => number;
}

interface Waiting {
  segment: SpeechAudio;
  queuedAt: number;
}

const toMilliseconds = (seconds: number) => Math.round(seconds * 1000) / 1000;

export class TranscriptionQueue {
  private readonly pending: Waiting[] = [];
  private dropped = 0;
  private running: Promise<void> | undefined;
  private closed = false;

  constructor(private readonly options: TranscriptionQueueOptions) {}

  push(segment: SpeechAudio): void {
    if (this.closed) throw new Error('transcript queue is closed');
    this.pending.push({ segment, queuedAt: this.now() });
    if (this.pending.length > this.options.limit) {
      this.pending.shift();
      this.options.onDropped(++this.dropped);
    }
    this.running ??= this.drain().finally(() => (this.running = undefined));
  }

  /** Transcribes what is in progress and what is waiting, then resolves; later pushes throw. */
  async close(): Promise<void> {
    this.closed = true;
    await this.running;
  }

  private now(): number {
    return (this.options.now ?? Date.now)();
  }

  private async drain(): Promise<void> {
    for (let waiting = this.pending.shift(); waiting; waiting = this.pending.shift()) {
      const { segment, queuedAt } = waiting;
      this.options.onWaited?.((this.now() - queuedAt) / 1000);
      let text: string;
      try {
        text = await this.options.stt.transcribe(segment.samples, this.options.onCpu);
      } catch (error) {
        if (!this.options.onError) throw error;
        this.options.onError(error as Error);
        continue;
      }
      if (text === '') continue;
      // The estimate the noise routing made of the same samples: how noisy the audio was that
      // these words came from, for whoever reads them. A segment too short to hold a frame has none.
      const snrDb = segmentSnrDb(segment.samples);
      this.options.onRow({
        session: this.options.session,
        start: toMilliseconds(segment.start),
        end: toMilliseconds(segment.end),
        text,
        ...scoreSentiment(text),
        ...(Number.isFinite(snrDb) && { snrDb }),
      }, segment);
    }
  }
}
