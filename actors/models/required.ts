// The actor host refuses to start on missing or altered model files, with a message that says
// how to get them, rather than failing later inside onnxruntime.
import { join } from 'node:path';
import { sha256IfPresent } from './hash.ts';
import { MODEL_ASSETS } from './manifest.ts';

/** Throws unless every file is in `dir` with an accepted sha256. */
export async function assertModels(dir: string, files: string[]): Promise<void> {
  for (const file of files) {
    const path = join(dir, file);
    const entry = MODEL_ASSETS.find((asset) => asset.file === file);
    if (!entry) throw new Error(`model ${file} is not declared in actors/models/manifest.ts`);
    const digest = await sha256IfPresent(path);
    if (digest === undefined || !entry.sha256.includes(digest)) {
      const problem = digest === undefined ? 'is missing' : `has sha256 ${digest}, which is not an accepted digest`;
      throw new Error(
        `model file ${path} ${problem}. Run \`npx tsx ops/assets/setup.ts\` (on a machine without internet, ` +
          "set ASSETS_MIRROR to folders holding the model files, separated by ':').",
      );
    }
  }
}
