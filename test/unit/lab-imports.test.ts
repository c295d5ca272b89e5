// The lab (ops/bench, a package of its own) reaches the service only through the entry points
// each part of it exports, so that a file moved inside actors/ or bus/ breaks no benchmark; and
// nothing outside the lab imports it, so that the service and its tests never need the lab.
// The lab may use the house's shared tooling (ops/support, ops/assets, the tools' settings in
// ops/ops-config.ts, test/support) as it is.
import { test } from '../../ops/support/uvu.ts';
import * as assert from 'uvu/assert';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import ts from 'typescript';

const ROOT = resolve(import.meta.dirname, '../..');
const LAB = 'ops/bench';
const ENTRY_POINTS = [
  'actors/index.ts',
  'actors/face/index.ts',
  'actors/voice/index.ts',
  'actors/speech/index.ts',
  'actors/models/index.ts',
  'actors/ingest/index.ts',
  'bus/index.ts',
  'gateway/index.ts',
  'storage/index.ts',
  'ops/stack/index.ts',
];
const SHARED_TOOLING = ['ops/support/', 'ops/assets/', 'ops/ops-config.ts', 'test/support/'];

const sourceFiles = (folder: string) =>
  readdirSync(join(ROOT, folder), { recursive: true, encoding: 'utf8' })
    .filter((file) => file.endsWith('.ts') && !file.split('/').includes('node_modules'))
    .map((file) => join(folder, file));

/** Each file's relative imports (type-only, re-exports and import() included), from the root. */
const importsOf = (file: string) =>
  ts
    .preProcessFile(readFileSync(join(ROOT, file), 'utf8'), true, true)
    .importedFiles.map(({ fileName }) => fileName)
    .filter((name) => name.startsWith('.'))
    .map((name) => relative(ROOT, resolve(ROOT, dirname(file), name)));

const inLab = (path: string) => path.startsWith(`${LAB}/`);

/** A lab file's imports that go past the entry points into the service's own files. */
function pastEntryPoints(file: string, targets: readonly string[]): string[] {
  return targets
    .filter((target) => !inLab(target) && !ENTRY_POINTS.includes(target) && !SHARED_TOOLING.some((folder) => target.startsWith(folder)))
    .map((target) => `${file} -> ${target}`);
}

test('the check refuses a lab file reaching into actors/ and lets an entry point or the lab pass', () => {
  assert.equal(pastEntryPoints('ops/bench/x.ts', ['actors/face/yunet.ts', 'actors/face/index.ts', 'ops/bench/lib/stats.ts', 'ops/support/noise.ts']), [
    'ops/bench/x.ts -> actors/face/yunet.ts',
  ]);
});

test('every entry point exists', () => {
  assert.equal(ENTRY_POINTS.filter((file) => !existsSync(join(ROOT, file))), []);
});

test('the lab imports the service only through its entry points', () => {
  const files = sourceFiles(LAB);
  assert.ok(files.length > 20, `${files.length} files in ${LAB}`);
  assert.equal(files.flatMap((file) => pastEntryPoints(file, importsOf(file))), []);
});

test('nothing outside the lab imports it', () => {
  const outside = ['actors', 'bus', 'gateway', 'storage', 'ops', 'test'].flatMap(sourceFiles).filter((file) => !inLab(file));
  assert.equal(outside.flatMap((file) => importsOf(file).filter(inLab).map((target) => `${file} -> ${target}`)), []);
});

test.run();
