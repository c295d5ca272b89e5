// Speech to text with Moonshine: the encoder runs once over a whole speech segment, then the
// decoder picks the likeliest next token until the end token, reusing its attention cache so each
// step feeds only the newest token; a phrase it writes twice in a row is written once
// (decoder-loops.ts). Its layers and attention heads are read from the decoder, so the tiny and
// base models load the same way.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import llamaTokenizer from 'llama-tokenizer-js';
import { SPEECH_MODEL_FILES, type SpeechModel } from '../models/files.ts';
import { loadModel, ort } from '../models/onnx.ts';
import { withoutDecoderLoops } from './decoder-loops.ts';
import { withEightBitOutputLayer } from './eight-bit-output-layer.ts';

const SAMPLE_RATE = 16000;
const START_TOKEN = 1;
const END_TOKEN = 2;
/** Speech rarely exceeds this; the cap stops a decoder that keeps repeating itself. */
const TOKENS_PER_SECOND = 6;
/** The encoder's convolutions need a little audio; shorter input has no words anyway. */
const MIN_SAMPLES = SAMPLE_RATE / 10;

type Feeds = Record<string, ort.Tensor>;

export interface Transcriber {
  transcribe(samples: Float32Array): Promise<string>;
}

export class SpeechToText implements Transcriber {
  private readonly layers: number;
  private readonly emptyCache: ort.Tensor;
  private readonly firstStep: ort.Tensor = new ort.Tensor('bool', Uint8Array.from([0]), [1]);
  private readonly laterStep: ort.Tensor = new ort.Tensor('bool', Uint8Array.from([1]), [1]);

  /** `decoder` is the merged decoder, as published or with its output layer rewritten. */
  constructor(
    readonly name: SpeechModel,
    private readonly encoder: ort.InferenceSession,
    private readonly decoder: ort.InferenceSession,
  ) {
    const shape = attentionShape(decoder);
    this.layers = shape.layers;
    this.emptyCache = new ort.Tensor('float32', new Float32Array(0), [1, shape.heads, 0, shape.headSize]);
  }

  /** `model` from `modelsDir`, the decoder's output layer fed its 8-bit weights (eight-bit-output-layer.ts). */
  static async load(modelsDir: string, model: SpeechModel): Promise<SpeechToText> {
    const files = SPEECH_MODEL_FILES[model];
    const [encoder, decoder] = await Promise.all([
      loadModel(join(modelsDir, files.encoder)),
      readFile(join(modelsDir, files.decoder)).then((bytes) => loadModel(withEightBitOutputLayer(bytes))),
    ]);
    return new SpeechToText(model, encoder, decoder);
  }

  /** The text of 16 kHz mono speech in -1..1, trimmed; empty when nothing was said. */
  async transcribe(samples: Float32Array): Promise<string> {
    if (samples.length < MIN_SAMPLES) return '';
    const encoded = await this.encoder.run({ input_values: new ort.Tensor('float32', samples, [1, samples.length]) });
    const hidden = encoded.last_hidden_state!;
    const maxTokens = Math.ceil((samples.length / SAMPLE_RATE) * TOKENS_PER_SECOND);

    const cache: Feeds = {};
    for (let layer = 0; layer < this.layers; layer++) {
      for (const part of ['decoder', 'encoder']) {
        for (const kind of ['key', 'value']) cache[`past_key_values.${layer}.${part}.${kind}`] = this.emptyCache;
      }
    }
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
      for (let layer = 0; layer < this.layers; layer++) {
        for (const kind of ['key', 'value']) {
          cache[`past_key_values.${layer}.decoder.${kind}`] = result[`present.${layer}.decoder.${kind}`]!;
          if (step === 0) cache[`past_key_values.${layer}.encoder.${kind}`] = result[`present.${layer}.encoder.${kind}`]!;
        }
      }
    }
    return withoutDecoderLoops(llamaTokenizer.decode(tokens, false, false));
  }
}

/** How many layers the decoder has, and the [heads, size] of each layer's cached keys. */
function attentionShape(decoder: ort.InferenceSession): { layers: number; heads: number; headSize: number } {
  const cached = decoder.inputMetadata.filter((input) => /^past_key_values\.\d+\.decoder\.key$/.test(input.name));
  const [, heads, , headSize] = (cached[0]?.isTensor && cached[0].shape) || [];
  if (typeof heads !== 'number' || typeof headSize !== 'number') throw new Error('the decoder has no attention cache of fixed shape');
  return { layers: cached.length, heads, headSize };
}

/** Index of the largest value; the logits of the single position fed. */
function argmax(values: Float32Array): number {
  let best = 0;
  for (let i = 1; i < values.length; i++) if (values[i]! > values[best]!) best = i;
  return best;
}
