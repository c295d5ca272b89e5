// Speech-to-text that gives noisy speech to the larger model. Moonshine base makes about half
// the word errors of tiny under noise, for twice its CPU; on clean speech tiny is as good as
// the words need, so clean segments cost what they always did (ops/bench/README-speech-noise.md).
import type { Transcriber } from './moonshine.ts';
import { segmentSnrDb } from './noise-floor.ts';

export class NoiseRoutedTranscriber implements Transcriber {
  /** Segments whose voice stands less than `noisyBelowSnrDb` above their noise floor go to `noisy`. */
  constructor(
    private readonly clean: Transcriber,
    private readonly noisy: Transcriber,
    private readonly noisyBelowSnrDb: number,
  ) {}

  transcribe(samples: Float32Array): Promise<string> {
    const noisy = segmentSnrDb(samples) < this.noisyBelowSnrDb;
    return (noisy ? this.noisy : this.clean).transcribe(samples);
  }
}
