// The body of the voice thread: the voice analysis of every stream of the host, with one
// Silero session whose calls are batched across streams (VoiceStreams). onnxruntime-node runs
// inference on the calling thread, so this keeps the VAD's hundreds of small steps a second
// off the event loop that reads the streams.
import { workerData } from 'node:worker_threads';
import type { AudioSecond } from '../../bus/contracts/rows.ts';
import { threadPort } from '../models/stream-thread-body.ts';
import { threadCpuSeconds } from '../models/thread-cpu.ts';
import { CpuShares } from '../models/cpu-shares.ts';
import type { SpeechAudio, VoiceAnalyzer } from './analyzer.ts';
import { SAMPLE_RATE } from './pcm.ts';
import { VoiceActivityModel } from './vad.ts';
import { VoiceStreams } from './voice-streams.ts';

export interface VoiceThreadData {
  modelsDir: string;
  maxBacklogSeconds: number;
}

export type VoiceRequest =
  | { type: 'open'; stream: number; session: string; startOffset: number }
  | { type: 'audio'; stream: number; chunk: Uint8Array };

export type VoiceReply =
  | { type: 'second'; stream: number; row: AudioSecond }
  | { type: 'segment'; stream: number; segment: SpeechAudio }
  | { type: 'shed'; stream: number; seconds: number }
  /** A segment with `seconds` of speech was left untranscribed as the room's (SpeakerLevel). */
  | { type: 'room'; stream: number; seconds: number }
  /** The thread's CPU seconds spent on the stream since its last such reply. */
  | { type: 'cpu'; stream: number; seconds: number };

const { modelsDir, maxBacklogSeconds } = workerData as VoiceThreadData;
const port = threadPort<VoiceRequest, VoiceReply>();
const ids = new Map<VoiceAnalyzer, number>();
const byId = new Map<number, VoiceAnalyzer>();
const streams = new VoiceStreams({
  model: await VoiceActivityModel.load(modelsDir, port.timer),
  maxBacklogSamples: maxBacklogSeconds * SAMPLE_RATE,
  onShed: (stream, samples) => port.post({ type: 'shed', stream: ids.get(stream)!, seconds: samples / SAMPLE_RATE }),
  onFailed: (stream, error) => port.post({ type: 'failed', stream: ids.get(stream)!, error: (error as Error).message }),
});

// The VAD and pitch cost follows the audio analysed, so the thread's CPU is shared among the
// streams by the samples each wrote.
const shares = new CpuShares(threadCpuSeconds, (stream, seconds) => port.post({ type: 'cpu', stream, seconds }));

function open(id: number, session: string, startOffset: number): void {
  const analyzer = streams.open({
    session,
    startOffset,
    onSecond: (row) => port.post({ type: 'second', stream: id, row }),
    onSegment: (segment) => port.post({ type: 'segment', stream: id, segment }, [segment.samples.buffer as ArrayBuffer]),
    onRoomSegment: (segment) => port.post({ type: 'room', stream: id, seconds: segment.speech }),
  });
  ids.set(analyzer, id);
  byId.set(id, analyzer);
}

async function close(id: number, analyzer: VoiceAnalyzer): Promise<void> {
  byId.delete(id);
  try {
    await streams.close(analyzer);
    port.post({ type: 'closed', stream: id });
  } catch (error) {
    port.post({ type: 'closed', stream: id, error: (error as Error).message });
  } finally {
    ids.delete(analyzer);
  }
}

port.serve((request) => {
  if (request.type === 'open') return open(request.stream, request.session, request.startOffset);
  const analyzer = byId.get(request.stream);
  if (!analyzer) return;
  if (request.type === 'close') return void close(request.stream, analyzer);
  shares.worked(request.stream, request.chunk.byteLength);
  streams.write(analyzer, Buffer.from(request.chunk.buffer, request.chunk.byteOffset, request.chunk.byteLength));
});
