// The segments the host's VAD and segmenter cut from a track, with the moment each was cut:
// one VoiceAnalyzer stepped as VoiceStreams steps it (one VAD window per 32-ms step), without
// the timers that gather live streams' chunks, so a file runs as fast as the VAD does.
import { type SegmenterOptions, VAD_STEP, type VoiceActivityModel, VoiceAnalyzer } from '../../../actors/voice/index.ts';
import { SAMPLE_RATE, toPcm } from './speech.ts';

export interface CutSegment {
  /** Seconds into the track. */
  start: number;
  end: number;
  /** When the segmenter let it go: its end plus the pause it waited for, in seconds into the track. */
  cutAt: number;
  samples: Float32Array;
}

export async function cutSegments(vad: VoiceActivityModel, track: Float32Array, segmenter: SegmenterOptions): Promise<CutSegment[]> {
  const segments: CutSegment[] = [];
  let stepped = 0;
  const analyzer = new VoiceAnalyzer({
    session: 'bench',
    startOffset: 0,
    segmenter,
    onSecond: () => {},
    // Called inside endStep, before the step is counted here: the cut is at that step's end.
    onSegment: ({ start, end, samples }) => segments.push({ start, end, cutAt: Math.min(track.length, (stepped + 1) * VAD_STEP) / SAMPLE_RATE, samples: samples.slice() }),
  });
  analyzer.write(toPcm(track));
  for (let window = analyzer.beginStep(); window; window = analyzer.beginStep()) {
    const [probability] = await vad.probabilities([window]);
    analyzer.endStep(probability!);
    stepped++;
  }
  analyzer.flush();
  return segments;
}
