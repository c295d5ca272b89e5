import { readConfig } from '../../bus/config.ts';
import { test } from '../../ops/support/uvu.ts';
import * as assert from 'uvu/assert';
import { MODEL_FILES } from '../../actors/models/files.ts';
import { assertModels } from '../../actors/models/required.ts';

const config = readConfig();

test('the installed models pass the start-up check', async () => {
  await assertModels(config.modelsDir, Object.values(MODEL_FILES));
});

test('a model that is not there names itself and the way to get it', async () => {
  try {
    await assertModels(config.modelsDir, ['not_a_model.onnx']);
    assert.unreachable('an unknown model must not pass');
  } catch (error) {
    assert.match((error as Error).message, 'not_a_model.onnx');
  }
});

test.run();
