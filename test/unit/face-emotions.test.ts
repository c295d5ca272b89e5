import { test } from '../../ops/support/uvu.ts';
import * as assert from 'uvu/assert';
import { EMOTION_KEYS } from '../../bus/contracts/rows.ts';
import { EMOTION_OF_CLASS, EXPRESSION_CLASSES, dominantEmotion, toEmotionOrder } from '../../actors/face/emotions.ts';

test('each class maps to its emotion key', () => {
  assert.equal(EMOTION_OF_CLASS, {
    neutral: 'focus',
    happy: 'exaltation',
    sad: 'lowEnergy',
    angry: 'seriousness',
    fearful: 'overwhelming',
    disgusted: 'aversion',
    surprised: 'impact',
  });
  assert.equal(new Set(Object.values(EMOTION_OF_CLASS)).size, EMOTION_KEYS.length);
});

test('class probabilities are reordered to EMOTION_KEYS order', () => {
  const classProbabilities = EXPRESSION_CLASSES.map((_, i) => i / 10);
  const byKey = toEmotionOrder(classProbabilities);
  EXPRESSION_CLASSES.forEach((cls, i) => assert.is(byKey[EMOTION_KEYS.indexOf(EMOTION_OF_CLASS[cls])], i / 10));
});

test('the dominant key is the argmax; ties go to the earlier key', () => {
  assert.is(dominantEmotion([0.1, 0.2, 0.05, 0.05, 0.5, 0.05, 0.05]), 'overwhelming');
  assert.is(dominantEmotion([0, 0, 0, 0, 0, 0, 1]), 'impact');
  assert.is(dominantEmotion([0.3, 0.3, 0.1, 0.1, 0.1, 0.05, 0.05]), 'focus');
});

test.run();
