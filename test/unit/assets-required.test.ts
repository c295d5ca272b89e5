import { copyFileSync, mkdtempSync, openSync, readFileSync, readSync, rmSync, writeSync, closeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readConfig } from '../../bus/config.ts';
import { test } from '../../ops/support/uvu.ts';
import * as assert from 'uvu/assert';
import { MODEL_FILES } from '../../actors/models/files.ts';
import { assertModels, VERIFIED_RECORD } from '../../actors/models/required.ts';

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

/** A folder of its own holding one real model (the smallest), for the record's cases. */
function folderWithModel(): { dir: string; file: string } {
  const dir = mkdtempSync(join(tmpdir(), 'models-'));
  const file = MODEL_FILES.faceDetector;
  copyFileSync(join(config.modelsDir, file), join(dir, file));
  return { dir, file };
}

test('a model checked once is recorded with its size, inode and change time, and passes again', async () => {
  const { dir, file } = folderWithModel();
  try {
    await assertModels(dir, [file]);
    const record = JSON.parse(readFileSync(join(dir, VERIFIED_RECORD), 'utf8'));
    assert.equal(Object.keys(record), [file]);
    assert.match(record[file].sha256, /^[0-9a-f]{64}$/);
    assert.ok(record[file].ctimeMs > 0 && record[file].ino > 0 && record[file].size > 0, JSON.stringify(record));
    await assertModels(dir, [file]);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a model altered in place after it was recorded, its size the same, is hashed again and refused', async () => {
  const { dir, file } = folderWithModel();
  try {
    await assertModels(dir, [file]);
    // One byte flipped where it stands: the size and the inode stay, the change time moves.
    const fd = openSync(join(dir, file), 'r+');
    const byte = Buffer.alloc(1);
    readSync(fd, byte, 0, 1, 1000);
    writeSync(fd, Buffer.from([byte[0]! ^ 0xff]), 0, 1, 1000);
    closeSync(fd);
    const error = await assertModels(dir, [file]).then(() => undefined, (e: Error) => e);
    assert.ok(error, 'an altered model must not pass');
    assert.match(error!.message, /which is not an accepted digest/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test.run();
