// Voice analysis as code outside the service uses it (the lab in ops/bench): voice activity,
// segments, pitch and loudness on audio of its own. The files behind it may move; what is
// named here stays.
export { VoiceAnalyzer } from './analyzer.ts';
export { PitchTracker } from './pitch.ts';
export { DEFAULT_SEGMENTER, type SegmenterOptions } from './segmenter.ts';
export { VAD_STEP, VadStream, VoiceActivityModel } from './vad.ts';
export { VoiceStreams } from './voice-streams.ts';
