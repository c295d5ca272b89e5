// Processes, threads and test files run from bundles of their sources (bus/typescript-bundle.ts),
// written outside the project: each file in a bundle keeps its own import.meta, packages load
// all the same, and a bundle made from inside a bundle is the same one.
import { execFile } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import * as assert from 'uvu/assert';
import { test } from '../../ops/support/uvu.ts';
import { BUNDLE_EXEC_ARGV, bundled } from '../../bus/typescript-bundle.ts';

const fixtures = fileURLToPath(new URL('../support/bundle-fixtures/', import.meta.url));
const run = async (file: string) => (await promisify(execFile)(process.execPath, [...BUNDLE_EXEC_ARGV, file])).stdout.trim();

test('each file of a bundle keeps the import.meta of its source, and its packages load', async () => {
  const source = join(fixtures, 'where-am-i.ts');
  const bundle = await bundled(source);
  assert.ok(bundle.endsWith('.mjs') && bundle !== source, bundle);
  assert.equal(JSON.parse(await run(bundle)), {
    url: pathToFileURL(source).href,
    dirname: dirname(source),
    filename: source,
    imported: join(fixtures, 'elsewhere', 'sibling.ts'),
    packageLoaded: 'function',
  });
});

test('a bundle made from inside a bundle is the same one, written whole', async () => {
  const direct = await bundled(join(fixtures, 'where-am-i.ts'));
  const fromBundle = await run(await bundled(join(fixtures, 'bundles-again.ts')));
  assert.is(fromBundle, direct);
  // Nothing left half written.
  assert.equal(readdirSync(dirname(direct)).filter((name) => name.startsWith(`${basename(direct)}.`)), []);
});

test('a source that does not compile is refused with where', async () => {
  const error = await bundled(join(fixtures, 'missing.ts')).then(() => undefined, (e: Error) => e);
  assert.ok(error, 'no bundle of a missing file');
  assert.match(error!.message, /missing\.ts/);
});

test.run();
