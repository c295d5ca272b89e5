// Speech to text with Moonshine: the encoder runs once over a whole speech segment, then the
// decoder picks the likeliest next token until the end token, reusing its attention cache so each
// step feeds only the newest token; a phrase it writes twice in a row is written once
// (decoder-loops.ts). The models are rewritten as they are loaded, to the same results for less
// CPU: the decoder's output layer multiplies 8-bit weights (eight-bit-output-layer.ts), its cache
// keeps the audio's attention keys as they are read (cross-attention-keys.ts), and, where the
// processor allows, both models' weights are stored as signed bytes (signed-weights.ts). The
// cache's inputs and their shapes are read from the decoder, so tiny and base load the same way.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import llamaTokenizer from 'llama-tokenizer-js';
import { SPEECH_MODEL_FILES, type SpeechModel } from '../models/files.ts';
import { loadModel, ort } from '../models/onnx.ts';
import { withSignedEightBitWeights } from '../models/signed-weights.ts';
import { withoutDecoderLoops } from './decoder-loops.ts';
import { withEightBitOutputLayer } from './eight-bit-output-layer.ts';
import { withCrossAttentionKeysCachedAsRead } from './cross-attention-keys.ts';

const SAMPLE_RATE = 16000;
const START_TOKEN = 1;
const END_TOKEN = 2;
/** Speech rarely exceeds this; the cap stops a decoder that keeps repeating itself. */
const TOKENS_PER_SECOND = 6;
/** The encoder's convolutions need a little audio; shorter input has no words anyway. */
const MIN_SAMPLES = SAMPLE_RATE / 10;

export type Feeds = Record<string, ort.Tensor>;

export interface Transcriber {
  /** `spent`: told the CPU seconds the transcription took, where they are measured. */
  transcribe(samples: Float32Array, spent?: (cpuSeconds: number) => void): Promise<string>;
}

export class SpeechToText implements Transcriber {
  /** The cache fed to the first step: every `past_key_values.*` input, empty. */
  private readonly emptyCache: Feeds;
  private readonly firstStep: ort.Tensor = new ort.Tensor('bool', Uint8Array.from([0]), [1]);
  private readonly laterStep: ort.Tensor = new ort.Tensor('bool', Uint8Array.from([1]), [1]);

  /** `decoder` is the merged decoder, as published or with its output layer rewritten. */
  constructor(
    readonly name: SpeechModel,
    private readonly encoder: ort.InferenceSession,
    private readonly decoder: ort.InferenceSession,
  ) {
    this.emptyCache = emptyAttentionCache(decoder);
  }

  /**
   * `model` from `modelsDir`, rewritten as it is loaded; `signedWeights` only where the processor
   * multiplies signed bytes exactly (signed-byte-products.ts).
   */
  static async load(modelsDir: string, model: SpeechModel, signedWeights: boolean): Promise<SpeechToText> {
    const files = SPEECH_MODEL_FILES[model];
    const signed = (bytes: Uint8Array) => (signedWeights ? withSignedEightBitWeights(bytes) : bytes);
    const [encoder, decoder] = await Promise.all([
      readFile(join(modelsDir, files.encoder)).then((bytes) => loadModel(signed(bytes))),
      readFile(join(modelsDir, files.decoder)).then((bytes) =>
        loadModel(withCrossAttentionKeysCachedAsRead(signed(withEightBitOutputLayer(bytes)))),
      ),
    ]);
    return new SpeechToText(model, encoder, decoder);
  }

  /** The text of 16 kHz mono speech in -1..1, trimmed; empty when nothing was said. */
  async transcribe(samples: Float32Array): Promise<string> {
    if (samples.length < MIN_SAMPLES) return '';
    const encoded = await this.encoder.run({ input_values: new ort.Tensor('float32', samples, [1, samples.length]) });
    const hidden = encoded.last_hidden_state!;
    const maxTokens = Math.ceil((samples.length / SAMPLE_RATE) * TOKENS_PER_SECOND);

    const cache: Feeds = { ...this.emptyCache };
    const tokens: number[] = [];
    let token = START_TOKEN;
    for (let step = 0; step < maxTokens; step++) {
      const result = await this.decoder.run({
        input_ids: new ort.Tensor('int64', BigInt64Array.from([BigInt(token)]), [1, 1]),
        encoder_hidden_states: hidden,
        use_cache_branch: step === 0 ? this.firstStep : this.laterStep,
        ...cache,
      });
      token = argmax(result.logits!.data as Float32Array);
      if (token === END_TOKEN) break;
      tokens.push(token);
      // Self-attention grows with every step; cross-attention over the audio is fixed after the first.
      for (const past of Object.keys(cache)) {
        if (step === 0 || past.includes('.decoder.')) cache[past] = result[past.replace('past_key_values.', 'present.')]!;
      }
    }
    return withoutDecoderLoops(llamaTokenizer.decode(tokens, false, false));
  }
}

/** Each attention cache input of the decoder, empty: batch 1, and no steps or frames yet. */
export function emptyAttentionCache(decoder: ort.InferenceSession): Feeds {
  const cache: Feeds = {};
  for (const input of decoder.inputMetadata) {
    if (!input.name.startsWith('past_key_values.')) continue;
    const dims = input.isTensor ? input.shape.map((dim, at) => (typeof dim === 'number' ? dim : at === 0 ? 1 : 0)) : [];
    if (dims.length !== 4 || dims.filter((dim) => dim === 0).length !== 1) throw new Error(`the decoder's ${input.name} is not an attention cache`);
    cache[input.name] = new ort.Tensor('float32', new Float32Array(0), dims);
  }
  if (Object.keys(cache).length === 0) throw new Error('the decoder has no attention cache');
  return cache;
}

/** Index of the largest value; the logits of the single position fed. */
function argmax(values: Float32Array): number {
  let best = 0;
  for (let i = 1; i < values.length; i++) if (values[i]! > values[best]!) best = i;
  return best;
}
