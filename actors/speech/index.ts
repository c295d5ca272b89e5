// Speech analysis as code outside the service uses it (the lab in ops/bench): transcription
// with Moonshine, the choice of model by a segment's noise, and the host's queue of segments.
// The files behind it may move; what is named here stays.
export { SpeechToText, type Transcriber } from './moonshine.ts';
export { NoiseRoutedTranscriber } from './noise-routed-transcriber.ts';
export { segmentSnrDb } from '../voice/level.ts';
export { TranscriptionQueue } from './queue.ts';
