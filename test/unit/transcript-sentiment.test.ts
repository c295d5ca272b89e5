import { test } from '../../ops/support/uvu.ts';
import * as assert from 'uvu/assert';
import { scoreSentiment } from '../../actors/speech/sentiment.ts';

test('a clearly positive sentence scores positive, a clearly negative one negative', () => {
  const good = scoreSentiment('I love this, what a wonderful and happy day!');
  const bad = scoreSentiment('This is terrible, I hate it and I am very sad.');
  assert.ok(good.compound > 0.5 && good.positive > good.negative, JSON.stringify(good));
  assert.ok(bad.compound < -0.5 && bad.negative > bad.positive, JSON.stringify(bad));
  for (const scores of [good, bad]) assert.ok(Math.abs(scores.positive + scores.neutral + scores.negative - 1) < 0.01);
});

test('a plain statement is neutral', () => {
  const scores = scoreSentiment('The meeting is at three in the afternoon.');
  assert.is(scores.compound, 0);
  assert.is(scores.neutral, 1);
});

test.run();
