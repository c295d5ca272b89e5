// Speech-to-text that hears noisy speech through RNNoise first. Clean speech goes through as it
// came: on the benchmark's clean speech RNNoise cost words, and it costs CPU for nothing there.
import type { SpeechDenoiser } from './denoiser.ts';
import type { Transcriber } from './moonshine.ts';
import { segmentSnrDb } from './noise-floor.ts';

/** Segments whose voice stands less than this above their noise floor are denoised. */
export const DENOISE_BELOW_SNR_DB = 30;

export class DenoisedTranscriber implements Transcriber {
  constructor(
    private readonly stt: Transcriber,
    private readonly denoiser: SpeechDenoiser,
  ) {}

  transcribe(samples: Float32Array): Promise<string> {
    const noisy = segmentSnrDb(samples) < DENOISE_BELOW_SNR_DB;
    return this.stt.transcribe(noisy ? this.denoiser.denoise(samples) : samples);
  }
}
