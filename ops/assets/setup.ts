// Fetches and verifies the model files (and, with --media, the test media):
//   npx tsx ops/assets/setup.ts [--media]
// Sources per file are declared in manifest.ts; ASSETS_MIRROR lists local folders tried first.
// The lab's models and media come with its own setup (ops/bench/setup.ts).
import { resolve } from 'node:path';
import { readConfig } from '../../bus/config.ts';
import { readOpsConfig } from '../ops-config.ts';
import { ensureAssets } from './install.ts';
import { MODEL_ASSETS } from '../../actors/models/manifest.ts';
import { MEDIA_ASSETS } from './media.ts';

const config = readConfig();
const tooling = readOpsConfig();

const args = process.argv.slice(2);
const unknown = args.filter((arg) => arg !== '--media');
if (unknown.length > 0) {
  console.error(`unknown argument ${unknown.join(' ')}; usage: tsx ops/assets/setup.ts [--media]`);
  process.exit(2);
}

const entries = [...MODEL_ASSETS, ...(args.includes('--media') ? MEDIA_ASSETS : [])];
const mirrors = (tooling.assetsMirror ?? '').split(':').filter((folder) => folder !== '').map((folder) => resolve(folder));

try {
  await ensureAssets(entries, {
    folders: { models: config.modelsDir, media: tooling.mediaDir },
    mirrors,
    cacheDir: resolve(config.varDir, 'assets-cache'),
    onFetched: (entry, target, from) => console.log(`fetched ${entry.folder}/${entry.file} (${entry.bytes} bytes) -> ${target} from ${from}`),
  });
} catch (error) {
  console.error((error as Error).message);
  process.exit(1);
}
