// Silero VAD v6, streamed and batched. Each step of a stream sees 512 new samples (32 ms) after
// its previous step's last 64 and carries the stream's recurrent state forward. The model takes
// a batch with a state per row, so one call serves a step of every stream of the host: a few
// calls a second instead of 31 per stream.
import { join } from 'node:path';
import { MODEL_FILES } from '../models/files.ts';
import type { InferenceTimer } from '../models/inference-timer.ts';
import { loadModel, ort } from '../models/onnx.ts';

export const VAD_STEP = 512;
const CONTEXT = 64;
const WINDOW = CONTEXT + VAD_STEP;
const LAYERS = 2;
const UNITS = 128;

/** One stream's side of the VAD: the window of its next step and its recurrent state. */
export class VadStream {
  readonly window = new Float32Array(WINDOW);
  /** [layer][unit], the stream's row of the model's [layer][batch][unit] state. */
  readonly state = new Float32Array(LAYERS * UNITS);

  /** Slides the next 512 samples in after the last 64 of the previous step. */
  load(step: Float32Array): void {
    this.window.copyWithin(0, VAD_STEP);
    this.window.set(step, CONTEXT);
  }
}

/** The Silero session of a host; stateless itself, so any number of streams share it. */
export class VoiceActivityModel {
  static async load(modelsDir: string, timer?: InferenceTimer): Promise<VoiceActivityModel> {
    return new VoiceActivityModel(await loadModel(join(modelsDir, MODEL_FILES.voiceActivity)), timer);
  }

  private readonly rate = new ort.Tensor('int64', BigInt64Array.from([16000n]), []);

  constructor(
    private readonly session: ort.InferenceSession,
    private readonly timer?: InferenceTimer,
  ) {}

  /** The speech probability of each stream's loaded step, in one call; advances their states. */
  async probabilities(streams: readonly VadStream[]): Promise<Float32Array> {
    const batch = streams.length;
    const input = new Float32Array(batch * WINDOW);
    const state = new Float32Array(LAYERS * batch * UNITS);
    streams.forEach((stream, row) => {
      input.set(stream.window, row * WINDOW);
      for (let layer = 0; layer < LAYERS; layer++) {
        state.set(stream.state.subarray(layer * UNITS, (layer + 1) * UNITS), (layer * batch + row) * UNITS);
      }
    });
    const done = this.timer?.('voice_activity');
    const result = await this.session.run({
      input: new ort.Tensor('float32', input, [batch, WINDOW]),
      state: new ort.Tensor('float32', state, [LAYERS, batch, UNITS]),
      sr: this.rate,
    });
    done?.();
    const next = result.stateN?.data as Float32Array | undefined;
    const output = result.output?.data as Float32Array | undefined;
    if (!next || !output || output.length !== batch) throw new Error('the voice activity model returned no probabilities');
    streams.forEach((stream, row) => {
      for (let layer = 0; layer < LAYERS; layer++) {
        const from = (layer * batch + row) * UNITS;
        stream.state.set(next.subarray(from, from + UNITS), layer * UNITS);
      }
    });
    return Float32Array.from(output);
  }
}
