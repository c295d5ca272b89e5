// Processes, threads and test files run from bundles of their sources (bus/typescript-bundle.ts),
// written outside the project: each file in a bundle keeps its own import.meta, packages load
// all the same, stack traces name the sources, a bundle made from inside a bundle is the same
// one, unchanged sources are taken from the stamp without building, a changed one makes a new
// bundle, and a folder other users may write to is refused. Files bundled together (the test
// files) run as each would alone, and the code they share is written once.
import { execFile } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import * as assert from 'uvu/assert';
import { test } from '../../ops/support/uvu.ts';
import { BUNDLE_EXEC_ARGV, bundled, bundledTogether } from '../../bus/typescript-bundle.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const fixtures = fileURLToPath(new URL('../support/bundle-fixtures/', import.meta.url));
const run = async (file: string) => (await promisify(execFile)(process.execPath, [...BUNDLE_EXEC_ARGV, file])).stdout.trim();
/** What where-am-i.ts (or its copy elsewhere) prints when its bundle keeps the source's place. */
const whereAmI = (source: string) => ({
  url: pathToFileURL(source).href,
  dirname: dirname(source),
  filename: source,
  imported: join(fixtures, 'elsewhere', 'sibling.ts'),
  packageLoaded: 'function',
});

test('each file of a bundle keeps the import.meta of its source, and its packages load', async () => {
  const source = join(fixtures, 'where-am-i.ts');
  const bundle = await bundled(source);
  assert.ok(bundle.endsWith('.mjs') && bundle !== source, bundle);
  assert.equal(JSON.parse(await run(bundle)), whereAmI(source));
});

test('a stack trace names the sources: a package by its file and line, a project file by position', async () => {
  const source = join(fixtures, 'throws-in-package.ts');
  const stderr = await promisify(execFile)(process.execPath, [...BUNDLE_EXEC_ARGV, await bundled(source)]).then(
    () => 'it did not fail',
    (error: { stderr: string }) => error.stderr,
  );
  assert.match(stderr, /at \S*Decode \(\/\S+\/node_modules\/@sinclair\/typebox\/\S+\.m?js:\d+:\d+\)/);
  assert.ok(stderr.includes(`(${source}:5:7)`), stderr);
});

test('a bundle made from inside a bundle is the same one, written whole', async () => {
  const direct = await bundled(join(fixtures, 'where-am-i.ts'));
  const fromBundle = await run(await bundled(join(fixtures, 'bundles-again.ts')));
  assert.is(fromBundle, direct);
  // Nothing left half written.
  assert.equal(readdirSync(dirname(direct)).filter((name) => name.startsWith(`${basename(direct)}.`)), []);
});

test('a folder of bundles that other users may write to is refused, not run from', async () => {
  const tmp = mkdtempSync(join(tmpdir(), 'bundle-folder-'));
  try {
    const open = join(tmp, `emotion-stream-bundles-${process.getuid!()}`);
    mkdirSync(open);
    chmodSync(open, 0o777);
    const script = `import { bundled } from ${JSON.stringify(join(ROOT, 'bus/typescript-bundle.ts'))}; await bundled(${JSON.stringify(join(fixtures, 'where-am-i.ts'))});`;
    const failed = await promisify(execFile)(process.execPath, ['--import', 'tsx', '--input-type=module', '--eval', script], { cwd: ROOT, env: { ...process.env, TMPDIR: tmp } })
      .then(() => undefined, (error: { stderr: string }) => error.stderr);
    assert.match(failed ?? 'it ran', /must belong to this user alone \(owner \d+, mode 777\)/);
    assert.equal(readdirSync(open), [], 'nothing written there');
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
});

test('a bundle whose sources are as they were is taken from its stamp, and no esbuild runs', async () => {
  const source = join(fixtures, 'where-am-i.ts');
  const built = await bundled(source);
  // A process of its own, as a starting service is: the children it has after asking are the
  // esbuild it would have started to build.
  const script = `import { readdirSync, readFileSync } from 'node:fs';
    import { bundled } from ${JSON.stringify(join(ROOT, 'bus/typescript-bundle.ts'))};
    const bundle = await bundled(${JSON.stringify(source)});
    const children = readdirSync('/proc/self/task').flatMap((task) => readFileSync(\`/proc/self/task/\${task}/children\`, 'utf8').split(' ').filter(Boolean));
    console.log(JSON.stringify({ bundle, children: children.length }));`;
  const { stdout } = await promisify(execFile)(process.execPath, ['--import', 'tsx', '--input-type=module', '--eval', script], { cwd: ROOT });
  assert.equal(JSON.parse(stdout.trim().split('\n').at(-1)!), { bundle: built, children: 0 });
});

test('a changed source makes a new bundle, which runs the change', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'bundle-sources-'));
  try {
    const entry = join(dir, 'entry.ts');
    const imported = join(dir, 'imported.ts');
    writeFileSync(entry, "import { word } from './imported.ts';\nconsole.log(word);\n");
    writeFileSync(imported, "export const word: string = 'before';\n");
    const before = await bundled(entry);
    assert.is(await run(before), 'before');
    assert.is(await bundled(entry), before, 'the same sources, the same bundle');
    writeFileSync(imported, "export const word: string = 'after, longer';\n");
    const after = await bundled(entry);
    assert.is.not(after, before);
    assert.is(await run(after), 'after, longer');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('files bundled together run as each would alone, from one folder, the code they share written once', async () => {
  const sources = [join(fixtures, 'where-am-i.ts'), join(fixtures, 'elsewhere', 'where-am-i-too.ts')];
  const bundles = await bundledTogether('fixtures', sources);
  const [first, second] = sources.map((source) => bundles.get(source) ?? '') as [string, string];
  assert.ok(first.endsWith('.mjs') && second.endsWith('.mjs'), JSON.stringify([...bundles]));
  assert.equal(JSON.parse(await run(first)), whereAmI(sources[0]!));
  assert.equal(JSON.parse(await run(second)), whereAmI(sources[1]!));
  const folder = dirname(first);
  const written = readdirSync(folder, { recursive: true, encoding: 'utf8' }).filter((name) => name.endsWith('.mjs'));
  const defining = written.filter((name) => readFileSync(join(folder, name), 'utf8').includes('function whereIsThis('));
  assert.is(defining.length, 1, `the shared module in one file of ${written.join(', ')}`);
  assert.ok(![first, second].includes(join(folder, defining[0]!)), 'in a chunk both import, not in either entry');
  assert.equal(await bundledTogether('fixtures', sources), bundles, 'the same sources, the same bundles');
  assert.equal(await bundledTogether('fixtures', []), new Map(), 'no entries, no bundles (a run whose pattern matches no file)');
});

test('a source that does not compile is refused with where', async () => {
  const error = await bundled(join(fixtures, 'missing.ts')).then(() => undefined, (e: Error) => e);
  assert.ok(error, 'no bundle of a missing file');
  assert.match(error!.message, /missing\.ts/);
});

test.run();
