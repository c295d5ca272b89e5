// Speech-to-text that gives noisy speech to the larger model. Moonshine base makes about half
// the word errors of tiny under noise, for twice its CPU; on clean speech tiny is as good as
// the words need, so clean segments cost what they always did (ops/bench/README-speech-noise.md).
import type { Transcriber } from './moonshine.ts';
import { segmentSnrDb } from '../voice/level.ts';

export class NoiseRoutedTranscriber<T extends Transcriber = Transcriber> implements Transcriber {
  /** Segments whose voice stands less than `noisyBelowSnrDb` above their noise floor go to `noisy`. */
  constructor(
    private readonly clean: T,
    private readonly noisy: T,
    private readonly noisyBelowSnrDb: number,
  ) {}

  /** The transcriber for `samples`. */
  choose(samples: Float32Array): T {
    return segmentSnrDb(samples) < this.noisyBelowSnrDb ? this.noisy : this.clean;
  }

  transcribe(samples: Float32Array): Promise<string> {
    return this.choose(samples).transcribe(samples);
  }
}
