// Runs TypeScript without a loader. A loader (tsx) transpiles and resolves every module a process
// loads, its packages' files included, through hooks on a thread of their own: about 2 s of CPU
// at the start of each process and of each analysis thread, for no work of the service. Instead
// esbuild bundles an entry with the project files and the packages it imports into one ES
// module, and the process or thread runs that: Node then neither resolves nor reads hundreds of
// package files one by one (a third of the CPU of a gateway's or storage service's start). The
// few packages that must run from their own folder stay outside, imported by the absolute path of
// the file Node would load, so a bundle runs from any folder: a folder of the user's own in the
// system's temporary one, writable where the project's folder is not (the systemd units).
//
// Many entries that run side by side, as the test files do, can be bundled together: one esbuild
// run reads and parses the packages once, and what the entries share goes to chunks they import.
//
// A bundle is named by its content, so processes starting together share it and a changed
// source makes a new one; the old ones go once unused for an hour. Beside it a stamp lists the
// files it was made from, with their sizes and change times (which any write moves and no tool
// sets back): while none has changed, a process starting takes the bundle without running
// esbuild at all.
//
// Each project file keeps its own import.meta.url and dirname, the source's: the paths made from
// them (analysis thread bodies, the dashboard's files, the project root) are those of the
// sources, bundled or not.
import { createHash } from 'node:crypto';
import { mkdir, readdir, readFile, rm, stat, utimes } from 'node:fs/promises';
import { isBuiltin } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { decode, encode } from '@jridgewell/sourcemap-codec';
import type { Plugin } from 'esbuild';
import { writeWhole } from './write-whole.ts';

const PROJECT_ROOT = resolve(import.meta.dirname, '..');
const BUNDLES = join(tmpdir(), `emotion-stream-bundles-${process.getuid?.() ?? 0}`);
/** A process started from a bundle has read it within seconds; an hour is ample. */
const STALE_MS = 3_600_000;

/**
 * Packages that use files of their own folder by path, and so are imported from there rather than
 * bundled: a native addon (onnxruntime-node, chdb), a program (esbuild), threads started from
 * their files (pino's transports), a browser driver (playwright-core), a compiler that reads its
 * own library files (typescript).
 */
const FROM_THEIR_FOLDER = new Set(['onnxruntime-node', 'chdb', 'esbuild', 'pino', 'playwright-core', 'typescript']);

/**
 * What every bundle depends on besides the files esbuild read: how bundles are made (this file)
 * and the packages' versions, which say where the ones left outside are found.
 */
const ALWAYS_INPUTS = [import.meta.filename, join(PROJECT_ROOT, 'package-lock.json')];

/** A package's CommonJS code calls require(), which an ES module has not: one made for the project. */
const BANNER = `import { createRequire as __bundleCreateRequire } from 'node:module'; const require = __bundleCreateRequire(${JSON.stringify(join(PROJECT_ROOT, 'package.json'))});`;

/** The path of an ES module that runs the TypeScript file `entry`. */
export async function bundled(entry: string): Promise<string> {
  await ownFolder();
  const name = relative(PROJECT_ROOT, entry).replace(/\.ts$/, '').replaceAll('/', '-');
  // By the entry's whole path: two copies of the project share the folder, and neither may take
  // the other's bundle.
  const stampFile = join(BUNDLES, `${name}-${shortHash(entry, 8)}.inputs.json`);
  const unchanged = await stampIfUnchanged(stampFile);
  if (unchanged) return unchanged.bundle;
  const started = Date.now();
  const { outputs, inputs } = await build([entry], BUNDLES);
  const { code } = outputs[0]!;
  const file = join(BUNDLES, `${name}-${shortHash(code, 16)}.mjs`);
  const now = new Date();
  // Its time says when it was last asked for: the bundles of older sources are removed after a while.
  if (!(await utimes(file, now, now).then(() => true, () => false))) {
    await writeWhole(file, code);
    await removeStale(`${name}-`, file);
  }
  await writeStamp(stampFile, started, inputs, { bundle: file });
  return file;
}

/**
 * ES modules that run each of `entries`, made by one esbuild run: the code they share is read,
 * parsed and written once, as chunks they import, where a bundle of each would parse every
 * package again (the test files: 30 s of CPU one by one, 2 s together). They go to a folder of
 * their own, named by `name` and their content; an entry missing from the map was not built.
 */
export async function bundledTogether(name: string, entries: readonly string[]): Promise<Map<string, string>> {
  if (entries.length === 0) return new Map();
  await ownFolder();
  const stampFile = join(BUNDLES, `group-${name}-${shortHash(entries.join('\n'), 8)}.inputs.json`);
  const unchanged = await stampIfUnchanged(stampFile);
  if (unchanged?.entries) return new Map(Object.entries(unchanged.entries));
  const started = Date.now();
  // Built as if into a folder as deep as the one it goes to: the source maps' paths are relative.
  const { outputs, inputs } = await build(entries, join(BUNDLES, `group-${name}`));
  const folder = join(BUNDLES, `group-${name}-${shortHash(outputs.map(({ code }) => shortHash(code, 16)).join(), 16)}`);
  // Every file written again, each whole: a run beside this one may be writing the same folder.
  for (const { path, code } of outputs) {
    await mkdir(dirname(join(folder, path)), { recursive: true });
    await writeWhole(join(folder, path), code);
  }
  const now = new Date();
  await utimes(folder, now, now);
  await removeStale(`group-${name}-`, folder);
  const built = new Map(outputs.flatMap(({ path, entry }) => (entry ? [[entry, join(folder, path)] as const] : [])));
  await writeStamp(stampFile, started, inputs, { bundle: folder, entries: Object.fromEntries(built) });
  return built;
}

const shortHash = (content: string | Uint8Array, length: number) => createHash('sha256').update(content).digest('hex').slice(0, length);

interface Output {
  /** Relative to the folder it goes to. */
  path: string;
  /** The source it runs, if it is an entry rather than a chunk of shared code. */
  entry?: string;
  code: Uint8Array;
}

async function build(entries: readonly string[], outdir: string): Promise<{ outputs: Output[]; inputs: string[] }> {
  // Loaded only to build: most starts take a bundle from its stamp.
  const esbuild = await import('esbuild');
  const result = await esbuild.build({
    entryPoints: [...entries],
    absWorkingDir: PROJECT_ROOT,
    bundle: true,
    splitting: entries.length > 1,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    // Node's own choice among a package's entry points: no "module" field or condition.
    mainFields: ['main'],
    conditions: [],
    banner: { js: BANNER },
    // Stack traces name the sources (node --enable-source-maps), their paths relative to where
    // the bundle is written. A trace needs the positions alone, not the sources' text, which
    // would double what each process reads and parses. The map is inlined once made lighter.
    sourcemap: 'external',
    sourcesContent: false,
    outdir,
    // ES modules wherever they are written, with no package.json to say so; chunks are imported by these names.
    outExtension: { '.js': '.mjs' },
    write: false,
    metafile: true,
    logLevel: 'silent',
    plugins: [sourceImportMeta, packagesFromTheirFolder],
  });
  const inputs = Object.keys(result.metafile.inputs).map((input) => resolve(PROJECT_ROOT, input));
  const maps = new Map(result.outputFiles.filter((file) => file.path.endsWith('.map')).map((file) => [file.path, file.text]));
  const outputs = result.outputFiles.filter((file) => !file.path.endsWith('.map')).map((js): Output => {
    const map = Buffer.from(JSON.stringify(packagesByLine(JSON.parse(maps.get(`${js.path}.map`)!) as SourceMapJson))).toString('base64');
    const entry = result.metafile.outputs[relative(PROJECT_ROOT, js.path)]?.entryPoint;
    return {
      path: relative(outdir, js.path),
      ...(entry ? { entry: resolve(PROJECT_ROOT, entry) } : {}),
      code: Buffer.from(`${js.text}//# sourceMappingURL=data:application/json;base64,${map}\n`),
    };
  });
  return { outputs, inputs };
}

interface SourceMapJson {
  sources: string[];
  mappings: string;
}

/**
 * The packages' code mapped by line, the project's by position. A process parses the whole map
 * the first time it formats a stack trace, which every process does (a NATS connection records
 * where it was closed), and the packages hold most of the positions: 90-130 ms of CPU for a
 * service's map with every position, a quarter of what the process spends to start. A line of a
 * package keeps its first position, so a trace still names the package's file and line.
 */
function packagesByLine(map: SourceMapJson): SourceMapJson {
  const ofPackage = map.sources.map((source) => source.includes('/node_modules/'));
  const lines = decode(map.mappings).map((segments) =>
    segments.length > 1 && segments.every((segment) => segment.length > 1 && ofPackage[segment[1]!]) ? segments.slice(0, 1) : segments,
  );
  return { ...map, mappings: encode(lines) };
}

/** What a bundle, or a folder of bundles made together, was made from: each file's path, size and change time. */
interface Stamp {
  bundle: string;
  /** Of a folder: each entry's bundle in it. */
  entries?: Record<string, string>;
  inputs: [string, number, number][];
}

async function stampOf(files: string[]): Promise<Stamp['inputs'] | undefined> {
  try {
    return await Promise.all(files.map(async (file) => {
      const { size, ctimeMs } = await stat(file);
      return [file, size, ctimeMs] as [string, number, number];
    }));
  } catch {
    return undefined;
  }
}

async function writeStamp(stampFile: string, started: number, inputs: string[], made: Omit<Stamp, 'inputs'>): Promise<void> {
  const stamp = await stampOf([...inputs, ...ALWAYS_INPUTS]);
  // A file changed while esbuild read it may be in the bundle as it was before: no stamp, the
  // next start builds again. A second's margin, for the file system's coarser clock.
  if (stamp && stamp.every(([, , ctimeMs]) => ctimeMs < started - 1000)) {
    await writeWhole(stampFile, JSON.stringify({ ...made, inputs: stamp } satisfies Stamp));
  }
}

/** The stamp, if what it names is still there and every file it was made from is as it was. */
async function stampIfUnchanged(stampFile: string): Promise<Stamp | undefined> {
  try {
    const stamp = JSON.parse(await readFile(stampFile, 'utf8')) as Stamp;
    const now = await stampOf(stamp.inputs.map(([file]) => file));
    const same = now?.every(([, size, ctimeMs], i) => size === stamp.inputs[i]![1] && ctimeMs === stamp.inputs[i]![2]);
    if (!same) return undefined;
    const at = new Date();
    await utimes(stamp.bundle, at, at);
    return stamp;
  } catch {
    return undefined; // none yet, or not one this code wrote: built afresh
  }
}

/** An import of a package of FROM_THEIR_FOLDER, as the absolute path of the file esbuild resolves it to, left outside the bundle. */
const packagesFromTheirFolder: Plugin = {
  name: 'packages-from-their-folder',
  setup(plugin) {
    plugin.onResolve({ filter: /^[^./]/ }, async ({ path, kind, resolveDir, pluginData }) => {
      if (isBuiltin(path) || pluginData === RESOLVING || !FROM_THEIR_FOLDER.has(packageName(path))) return undefined;
      const resolved = await plugin.resolve(path, { kind, resolveDir, pluginData: RESOLVING });
      return resolved.errors.length > 0 ? { errors: resolved.errors } : { path: resolved.path, external: true };
    });
  },
};
const packageName = (path: string) => path.split('/').slice(0, path.startsWith('@') ? 2 : 1).join('/');
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

/** Bundles (or folders of them) of the same entries made from older sources, not asked for lately. */
async function removeStale(prefix: string, current: string): Promise<void> {
  const before = Date.now() - STALE_MS;
  for (const entry of await readdir(BUNDLES, { withFileTypes: true })) {
    const file = join(BUNDLES, entry.name);
    if (!entry.name.startsWith(prefix) || !(entry.name.endsWith('.mjs') || entry.isDirectory()) || file === current) continue;
    const { mtimeMs } = await stat(file).catch(() => ({ mtimeMs: Infinity }));
    if (mtimeMs < before) await rm(file, { recursive: true, force: true });
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

