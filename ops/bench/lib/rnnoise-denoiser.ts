// RNNoise (a small recurrent network trained to keep speech and drop noise) in front of
// speech-to-text, on one speech segment at a time, as the speech-under-noise benchmark tries it.
// The service ran it once and no longer does: on recorded voices it cost words at every noise
// level (README-speech-noise.md). RNNoise works on 48 kHz frames of 480 samples, so each 16 kHz
// segment is tripled, denoised and brought back, with a fresh network state per segment.
import createRnnoise, { type RnnoiseModule } from '@echogarden/rnnoise-wasm';

const UPSAMPLE = 3;
/** RNNoise reads 16-bit sample values, not -1..1. */
const PCM_SCALE = 32768;

export class SpeechDenoiser {
  private readonly frameSize: number;

  private constructor(private readonly wasm: RnnoiseModule) {
    this.frameSize = wasm._rnnoise_get_frame_size();
  }

  static async load(): Promise<SpeechDenoiser> {
    return new SpeechDenoiser(await createRnnoise());
  }

  /** 16 kHz mono speech in -1..1, denoised; the same length. */
  denoise(samples: Float32Array): Float32Array {
    const { wasm, frameSize } = this;
    const upsampled = upsample(samples);
    // RNNoise's output lags its input by one frame: one more frame of silence flushes the end.
    const frames = Math.ceil(upsampled.length / frameSize) + 1;
    const denoised = new Float32Array(frames * frameSize);
    const buffer = wasm._malloc(frameSize * 4);
    const state = wasm._rnnoise_create(0);
    try {
      const frame = new Float32Array(frameSize);
      for (let f = 0; f < frames; f++) {
        frame.fill(0);
        const from = f * frameSize;
        for (let i = 0; i < frameSize && from + i < upsampled.length; i++) frame[i] = upsampled[from + i]! * PCM_SCALE;
        // HEAPF32 is looked up on every frame: the module's memory may grow and replace it.
        wasm.HEAPF32.set(frame, buffer >> 2);
        wasm._rnnoise_process_frame(state, buffer, buffer);
        denoised.set(wasm.HEAPF32.subarray(buffer >> 2, (buffer >> 2) + frameSize), from);
      }
    } finally {
      wasm._rnnoise_destroy(state);
      wasm._free(buffer);
    }
    return downsample(denoised.subarray(frameSize), samples.length);
  }
}

/** 16 kHz to 48 kHz by linear interpolation: RNNoise hears nothing above 8 kHz either way. */
function upsample(samples: Float32Array): Float32Array {
  const out = new Float32Array(samples.length * UPSAMPLE);
  for (let i = 0; i < samples.length; i++) {
    const here = samples[i]!;
    const next = samples[i + 1] ?? here;
    for (let k = 0; k < UPSAMPLE; k++) out[i * UPSAMPLE + k] = here + ((next - here) * k) / UPSAMPLE;
  }
  return out;
}

/** 48 kHz back to 16 kHz, each output the mean of its three inputs (a boxcar before decimation). */
function downsample(samples: Float32Array, length: number): Float32Array {
  const out = new Float32Array(length);
  for (let i = 0; i < length; i++) {
    const at = i * UPSAMPLE;
    out[i] = (samples[at]! + samples[at + 1]! + samples[at + 2]!) / (UPSAMPLE * PCM_SCALE);
  }
  return out;
}
