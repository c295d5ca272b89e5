import { test } from '../support/uvu.ts';
import * as assert from 'uvu/assert';
import { readConfig } from '../../bus/config.ts';
import { expressionSettingsOf } from '../../actors/face/expression-settings.ts';

test('by default every expression step is off (crops around the box), and effort steps down under load to 480 px and every 2nd frame, then 320 px', () => {
  assert.equal(expressionSettingsOf(readConfig({})), {
    align: false, flip: false, ensemble: false, smoothingFrames: 1, detectionWidth: 0, classifyEvery: 1,
    reduced: [{ detectionWidth: 480, classifyEvery: 2 }, { detectionWidth: 320, classifyEvery: 2 }],
  });
});

test('every EXPRESSION_* variable is read', () => {
  const settings = expressionSettingsOf(
    readConfig({
      EXPRESSION_ALIGN: 'false',
      EXPRESSION_FLIP: 'true',
      EXPRESSION_ENSEMBLE: 'no',
      EXPRESSION_SMOOTHING_FRAMES: '5',
      FACE_DETECTION_WIDTH: '320',
      EXPRESSION_CLASSIFY_EVERY: '2',
      FACE_REDUCED_DETECTION_WIDTH: '256',
      FACE_REDUCED_CLASSIFY_EVERY: '4',
      FACE_LEAST_DETECTION_WIDTH: '160',
      FACE_LEAST_CLASSIFY_EVERY: '8',
    }),
  );
  assert.equal(settings, {
    align: false, flip: true, ensemble: false, smoothingFrames: 5, detectionWidth: 320, classifyEvery: 2,
    reduced: [{ detectionWidth: 256, classifyEvery: 4 }, { detectionWidth: 160, classifyEvery: 8 }],
  });
});

test('a value that does not parse stops the process at start, naming the variable', () => {
  for (const [name, value] of [
    ['EXPRESSION_SMOOTHING_FRAMES', '0'],
    ['EXPRESSION_SMOOTHING_FRAMES', '2.5'],
    ['EXPRESSION_FLIP', 'maybe'],
    ['FACE_DETECTION_WIDTH', '-1'],
    ['FACE_DETECTION_WIDTH', '320.5'],
    ['EXPRESSION_CLASSIFY_EVERY', '0'],
    ['FACE_REDUCED_DETECTION_WIDTH', '-480'],
    ['FACE_REDUCED_CLASSIFY_EVERY', '0'],
    ['FACE_LEAST_DETECTION_WIDTH', '320px'],
    ['FACE_LEAST_CLASSIFY_EVERY', '1.5'],
  ] as const) {
    assert.throws(() => readConfig({ [name]: value }), new RegExp(name));
  }
});

test.run();
