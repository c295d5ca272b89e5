// The lab's own models: measured beside the service's and left out of it, so only the lab's
// setup (ops/bench/setup.ts) installs them, beside the service's models in MODELS_DIR.
import { mkdtemp, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { MIRROR, type AssetEntry } from '../../../actors/models/index.ts';
import { extractFile, packTarball } from '../../assets/npm-pack.ts';
import type { Recipe } from '../../assets/recipes.ts';

export const LAB_MODEL_FILES = {
  /** The second expression classifier, Human's mini-Xception (64x64), against face-api's net. */
  expressionsSecond: 'human_emotion_mini_xception_64.onnx',
} as const;

/** Human's package carries its models in the tarball (MIT); only models/emotion.* is used. */
export const HUMAN = { pkg: '@vladmandic/human', version: '3.3.6' } as const;

/** The mini-Xception as ONNX, converted from Human's graph model. */
async function buildHumanEmotionOnnx(outPath: string, cacheDir: string): Promise<void> {
  const tarball = await packTarball(HUMAN.pkg, HUMAN.version, cacheDir);
  const work = await mkdtemp(join(cacheDir, '.human-'));
  try {
    // model.json names its .bin shard relative to itself.
    await extractFile(tarball, 'models/emotion.json', join(work, 'emotion.json'));
    await extractFile(tarball, 'models/emotion.bin', join(work, 'emotion.bin'));
    const { convertHumanEmotionModel } = await import('./human-emotion-to-onnx.ts');
    await convertHumanEmotionModel(join(work, 'emotion.json'), outPath);
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}

export const LAB_RECIPES: Readonly<Record<string, Recipe>> = {
  humanEmotionOnnx: {
    describe: `npm ${HUMAN.pkg}@${HUMAN.version} models/emotion.* converted to ONNX`,
    build: buildHumanEmotionOnnx,
  },
};

export const LAB_MODEL_ASSETS: readonly AssetEntry[] = [
  {
    folder: 'models',
    file: LAB_MODEL_FILES.expressionsSecond,
    // The lab's own conversion of @vladmandic/human's models/emotion.json (mini-Xception,
    // human-emotion-to-onnx.ts; deterministic, equal to TensorFlow.js within 1e-6).
    sha256: ['7028fec7e497799004fae70efff52535711466cc8df3772235f075f2a9e1c42c'],
    bytes: 824568,
    sources: [MIRROR, { kind: 'build', recipe: 'humanEmotionOnnx' }],
  },
];
