// The expression model's classes and the emotion keys the API reports for them.
import { EMOTION_KEYS, type EmotionKey } from '../../bus/contracts/rows.ts';

/** Output order of the expression model. */
export const EXPRESSION_CLASSES = ['neutral', 'happy', 'sad', 'angry', 'fearful', 'disgusted', 'surprised'] as const;
export type ExpressionClass = (typeof EXPRESSION_CLASSES)[number];

export const EMOTION_OF_CLASS: Readonly<Record<ExpressionClass, EmotionKey>> = {
  neutral: 'focus',
  happy: 'exaltation',
  sad: 'lowEnergy',
  angry: 'seriousness',
  fearful: 'overwhelming',
  disgusted: 'aversion',
  surprised: 'impact',
};

// Where each class's probability goes in an EMOTION_KEYS-ordered array.
const KEY_INDEX_OF_CLASS = EXPRESSION_CLASSES.map((cls) => EMOTION_KEYS.indexOf(EMOTION_OF_CLASS[cls]));

/** Class probabilities (model order) -> probabilities in EMOTION_KEYS order. */
export function toEmotionOrder(classProbabilities: ArrayLike<number>): number[] {
  const out = new Array<number>(EMOTION_KEYS.length).fill(0);
  KEY_INDEX_OF_CLASS.forEach((keyIndex, cls) => {
    out[keyIndex] = classProbabilities[cls]!;
  });
  return out;
}

/** The key with the highest probability; probabilities in EMOTION_KEYS order, ties go to the earlier key. */
export function dominantEmotion(probabilities: ArrayLike<number>): EmotionKey {
  let best = 0;
  for (let i = 1; i < EMOTION_KEYS.length; i++) {
    if (probabilities[i]! > probabilities[best]!) best = i;
  }
  return EMOTION_KEYS[best]!;
}
