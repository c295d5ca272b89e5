// Runs TypeScript without a loader. A loader (tsx) transpiles and resolves every module a process
// loads, its packages' files included, through hooks on a thread of their own: about 2 s of CPU
// at the start of each process and of each analysis thread, for no work of the service. Instead
// esbuild bundles an entry with the project files it imports into one ES module, and the process
// or thread runs that. Packages stay outside the bundle, imported by the absolute path of the
// file Node would load, so a bundle runs from any folder: a folder of the user's own in the
// system's temporary one, writable where the project's folder is not (the systemd units). A bundle is named by its content, so
// processes starting together share it and a changed source makes a new one; the old ones go
// once unused for an hour.
//
// Each project file keeps its own import.meta.url and dirname, the source's: the paths made from
// them (analysis thread bodies, the dashboard's files, the project root) are those of the
// sources, bundled or not.
import { createHash } from 'node:crypto';
import { mkdir, readdir, readFile, rename, rm, stat, utimes, writeFile } from 'node:fs/promises';
import { isBuiltin } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { build, type Plugin } from 'esbuild';

const PROJECT_ROOT = resolve(import.meta.dirname, '..');
const BUNDLES = join(tmpdir(), `emotion-stream-bundles-${process.getuid?.() ?? 0}`);
/** A process started from a bundle has read it within seconds; an hour is ample. */
const STALE_MS = 3_600_000;

/** The path of an ES module that runs the TypeScript file `entry`. */
export async function bundled(entry: string): Promise<string> {
  const result = await build({
    entryPoints: [entry],
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    // Node's own choice among a package's entry points: no "module" field or condition.
    mainFields: ['main'],
    conditions: [],
    // Stack traces name the sources (node --enable-source-maps), their paths relative to where
    // the bundle is written.
    sourcemap: 'inline',
    outdir: BUNDLES,
    write: false,
    logLevel: 'silent',
    plugins: [sourceImportMeta, packagesByPath],
  });
  const code = result.outputFiles[0]!.contents;
  const name = relative(PROJECT_ROOT, entry).replace(/\.ts$/, '').replaceAll('/', '-');
  const file = join(BUNDLES, `${name}-${createHash('sha256').update(code).digest('hex').slice(0, 16)}.mjs`);
  await ownFolder();
  const now = new Date();
  // Its time says when it was last asked for: the bundles of older sources are removed after a while.
  if (await utimes(file, now, now).then(() => true, () => false)) return file;
  // Written whole under a name of its own, then renamed: a process never reads half a bundle.
  const partial = `${file}.${process.pid}.${Math.random().toString(36).slice(2)}`;
  await writeFile(partial, code);
  await rename(partial, file);
  await removeStale(`${name}-`, file);
  return file;
}

/** Each package import, as the absolute path of the file esbuild resolves it to, left outside the bundle. */
const packagesByPath: Plugin = {
  name: 'packages-by-path',
  setup(plugin) {
    plugin.onResolve({ filter: /^[^./]/ }, async ({ path, kind, resolveDir, pluginData }) => {
      if (isBuiltin(path) || pluginData === RESOLVING) return undefined;
      const resolved = await plugin.resolve(path, { kind, resolveDir, pluginData: RESOLVING });
      return resolved.errors.length > 0 ? { errors: resolved.errors } : { path: resolved.path, external: true };
    });
  },
};
const RESOLVING = Symbol('resolving a package');

/**
 * The folder, made this user's alone: a file another user could put there under a bundle's name
 * would run as this process.
 */
async function ownFolder(): Promise<void> {
  await mkdir(BUNDLES, { recursive: true, mode: 0o700 });
  const { uid, mode } = await stat(BUNDLES);
  if (uid !== process.getuid?.() || (mode & 0o077) !== 0) {
    throw new Error(`${BUNDLES} must belong to this user alone (owner ${uid}, mode ${(mode & 0o777).toString(8)})`);
  }
}

/** Bundles of the same entry made from older sources, not asked for lately. */
async function removeStale(prefix: string, current: string): Promise<void> {
  const before = Date.now() - STALE_MS;
  for (const name of await readdir(BUNDLES)) {
    const file = join(BUNDLES, name);
    if (!name.startsWith(prefix) || !name.endsWith('.mjs') || file === current) continue;
    const { mtimeMs } = await stat(file).catch(() => ({ mtimeMs: Infinity }));
    if (mtimeMs < before) await rm(file, { force: true });
  }
}

/** Node's flags for running a bundle: its stack traces name the sources. */
export const BUNDLE_EXEC_ARGV = ['--enable-source-maps'];

// A pattern, not the text it matches: this file is bundled too, and must not rewrite itself.
const IMPORT_META = /\bimport\.meta\.(url|dirname|filename)\b/g;

const sourceImportMeta: Plugin = {
  name: 'source-import-meta',
  setup(plugin) {
    plugin.onLoad({ filter: /\.ts$/ }, async ({ path }) => {
      const source = await readFile(path, 'utf8');
      const meta = { url: pathToFileURL(path).href, dirname: dirname(path), filename: path };
      const contents = source.replace(IMPORT_META, (_, key: keyof typeof meta) => JSON.stringify(meta[key]));
      return { contents, loader: 'ts' };
    });
  },
};

