import { createHash } from 'node:crypto';
import { mkdir, mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from '../../ops/support/uvu.ts';
import * as assert from 'uvu/assert';
import { AssetError, ensureAssets, type InstallOptions } from '../../ops/assets/install.ts';
import type { AssetEntry } from '../../actors/models/manifest.ts';

const good = Buffer.from('a small model file, for the installer to copy and verify\n');
const corrupt = Buffer.from(good);
corrupt[3] = corrupt[3]! ^ 0xff;

const entry: AssetEntry = {
  folder: 'models',
  file: 'tiny.onnx',
  sha256: [createHash('sha256').update(good).digest('hex')],
  bytes: good.length,
  sources: [{ kind: 'mirror' }],
};

let root = '';
let models = '';
let goodMirror = '';
let corruptMirror = '';

function options(mirrors: string[]): InstallOptions {
  return { folders: { models, media: join(root, 'media') }, mirrors, cacheDir: join(root, 'cache') };
}

test.before.each(async () => {
  root = await mkdtemp(join(tmpdir(), 'assets-setup-'));
  models = join(root, 'models');
  goodMirror = join(root, 'mirror-good');
  corruptMirror = join(root, 'mirror-corrupt');
  // Nested folders: the mirror is searched recursively by base name.
  await mkdir(join(goodMirror, 'deep', 'er'), { recursive: true });
  await writeFile(join(goodMirror, 'deep', 'er', 'tiny.onnx'), good);
  await mkdir(corruptMirror, { recursive: true });
  await writeFile(join(corruptMirror, 'tiny.onnx'), corrupt);
});

test.after.each(async () => {
  await rm(root, { recursive: true, force: true });
});

test('a good mirror file is installed and verified', async () => {
  const [result] = await ensureAssets([entry], options([goodMirror]));
  assert.is(result?.status, 'fetched');
  assert.equal(await readFile(join(models, 'tiny.onnx')), good);
});

test('a corrupt mirror file is rejected and nothing is left in place', async () => {
  try {
    await ensureAssets([entry], options([corruptMirror]));
    assert.unreachable('a corrupt copy must not install');
  } catch (error) {
    assert.instance(error, AssetError);
    const message = (error as Error).message;
    assert.match(message, 'tiny.onnx');
    assert.match(message, 'not an accepted digest');
    assert.match(message, 'ASSETS_MIRROR');
  }
  assert.equal(await readdir(models), [], 'no target and no temporary file');
});

test('a corrupt copy is skipped in favour of a good one further on', async () => {
  const [result] = await ensureAssets([entry], options([corruptMirror, goodMirror]));
  assert.is(result?.status === 'fetched' && result.from.includes('mirror-good'), true);
  assert.equal(await readFile(join(models, 'tiny.onnx')), good);
});

test('a present valid file is not fetched again', async () => {
  await ensureAssets([entry], options([goodMirror]));
  const before = await stat(join(models, 'tiny.onnx'));
  // No mirror at all: any fetch would fail, so success proves the file was only verified.
  const [result] = await ensureAssets([entry], options([]));
  assert.is(result?.status, 'present');
  assert.is((await stat(join(models, 'tiny.onnx'))).mtimeMs, before.mtimeMs);
});

test('a present file with a wrong digest is replaced', async () => {
  await mkdir(models, { recursive: true });
  await writeFile(join(models, 'tiny.onnx'), corrupt);
  const [result] = await ensureAssets([entry], options([goodMirror]));
  assert.is(result?.status, 'fetched');
  assert.equal(await readFile(join(models, 'tiny.onnx')), good);
});

test.run();
