// A clone outside this environment has no mirror folder: every model and test file must also come
// from somewhere public, and a URL must name a commit so that its bytes match the declared sha256.
import { test } from '../../ops/support/uvu.ts';
import * as assert from 'uvu/assert';
import { MODEL_ASSETS } from '../../actors/models/manifest.ts';
import { BENCH_MEDIA_ASSETS, MEDIA_ASSETS } from '../../ops/assets/media.ts';
import { RECIPES } from '../../ops/assets/recipes.ts';

const ASSETS = [...MODEL_ASSETS, ...MEDIA_ASSETS, ...BENCH_MEDIA_ASSETS];

test('every model and test file has a public source besides the mirror', () => {
  const withoutOne = ASSETS.filter((asset) => !asset.sources.some((source) => source.kind !== 'mirror'));
  assert.equal(withoutOne.map((asset) => asset.file), []);
});

test('every URL source is pinned to a commit', () => {
  const urls = ASSETS.flatMap((asset) => asset.sources.flatMap((source) => (source.kind === 'url' ? [source.url] : [])));
  assert.ok(urls.length >= 9, 'the detector, the speech sample and the eight photos come from URLs');
  const unpinned = urls.filter((url) => !/\/[0-9a-f]{8,40}\//.test(url));
  assert.equal(unpinned, []);
});

test("every file built locally names one of the service's recipes", () => {
  const recipes = ASSETS.flatMap((asset) => asset.sources.flatMap((source) => (source.kind === 'build' ? [source.recipe] : [])));
  assert.ok(recipes.length >= 1, 'the expression model is built');
  assert.equal(recipes.filter((recipe) => !(recipe in RECIPES)), []);
});

test.run();
