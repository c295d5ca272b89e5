// Installs what the lab's benchmarks and tests read, and is quick when it is all there: the
// service's models and test media (as `npm test` has them), the benchmarks' own media, and the
// lab's models (assets/models.ts), each fetched and verified as ops/assets/setup.ts does:
//   npm run setup -w ops/bench    (from the repository's root)
// ASSETS_MIRROR lists local folders tried first.
import { resolve } from 'node:path';
import { readConfig } from '../../bus/index.ts';
import { readOpsConfig } from '../ops-config.ts';
import { MODEL_ASSETS } from '../../actors/models/index.ts';
import { ensureAssets } from '../assets/install.ts';
import { BENCH_MEDIA_ASSETS, MEDIA_ASSETS } from '../assets/media.ts';
import { LAB_MODEL_ASSETS, LAB_RECIPES } from './assets/models.ts';

const config = readConfig();
const tooling = readOpsConfig();
const mirrors = (tooling.assetsMirror ?? '').split(':').filter((folder) => folder !== '').map((folder) => resolve(folder));

try {
  await ensureAssets([...MODEL_ASSETS, ...LAB_MODEL_ASSETS, ...MEDIA_ASSETS, ...BENCH_MEDIA_ASSETS], {
    folders: { models: config.modelsDir, media: tooling.mediaDir },
    mirrors,
    cacheDir: resolve(config.varDir, 'assets-cache'),
    recipes: LAB_RECIPES,
    onFetched: (entry, target, from) => console.log(`fetched ${entry.folder}/${entry.file} (${entry.bytes} bytes) -> ${target} from ${from}`),
  });
} catch (error) {
  console.error((error as Error).message);
  process.exit(1);
}
