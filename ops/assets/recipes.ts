// Files no server publishes as such and that setup builds from published parts.
import { mkdtemp, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { extractFile, packTarball } from './npm-pack.ts';

const FACE_API = { pkg: '@vladmandic/face-api', version: '1.7.15' } as const;

/** The expression classifier as ONNX, converted from face-api's published weights. */
async function buildFaceExpressionOnnx(outPath: string, cacheDir: string): Promise<void> {
  const tarball = await packTarball(FACE_API.pkg, FACE_API.version, cacheDir);
  const work = await mkdtemp(join(cacheDir, '.faceapi-'));
  try {
    // The weights manifest names its .bin shard relative to itself, so both go in one folder.
    const manifest = join(work, 'face_expression_model-weights_manifest.json');
    await extractFile(tarball, 'model/face_expression_model-weights_manifest.json', manifest);
    await extractFile(tarball, 'model/face_expression_model.bin', join(work, 'face_expression_model.bin'));
    // Loaded on demand: only a machine without a mirror copy needs the converter.
    const { convertFaceExpressionModel } = await import('./faceapi-to-onnx.ts');
    await convertFaceExpressionModel(manifest, outPath);
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}

export interface Recipe {
  /** What is built from what, for logs and error messages. */
  describe: string;
  build(outPath: string, cacheDir: string): Promise<void>;
}

export const RECIPES: Readonly<Record<string, Recipe>> = {
  faceExpressionOnnx: {
    describe: `npm ${FACE_API.pkg}@${FACE_API.version} model/face_expression_model.* converted to ONNX`,
    build: buildFaceExpressionOnnx,
  },
};
