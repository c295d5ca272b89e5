// Silero VAD v6, streamed: each step sees 512 new samples (32 ms) after the previous step's
// last 64, and carries the recurrent state forward.
import type { InferenceTimer } from '../models/inference-timer.ts';
import { ort } from '../models/onnx.ts';

export const VAD_STEP = 512;
const CONTEXT = 64;

export class VoiceActivityDetector {
  private readonly input = new Float32Array(CONTEXT + VAD_STEP);
  private readonly inputTensor = new ort.Tensor('float32', this.input, [1, CONTEXT + VAD_STEP]);
  private readonly rate = new ort.Tensor('int64', BigInt64Array.from([16000n]), []);
  private state: ort.Tensor = new ort.Tensor('float32', new Float32Array(2 * 128), [2, 1, 128]);

  /** `session`: Silero VAD, shareable; the recurrent state is this detector's own. */
  constructor(
    private readonly session: ort.InferenceSession,
    private readonly timer?: InferenceTimer,
  ) {}

  /** Speech probability of the next 512 samples. */
  async step(samples: Float32Array): Promise<number> {
    this.input.copyWithin(0, VAD_STEP);
    this.input.set(samples, CONTEXT);
    const done = this.timer?.('voice_activity');
    const result = await this.session.run({ input: this.inputTensor, state: this.state, sr: this.rate });
    done?.();
    this.state = result.stateN as ort.Tensor;
    return (result.output!.data as Float32Array)[0]!;
  }
}
