// Installs declared files: a present file with an accepted sha256 is left alone; otherwise each
// source is tried in order, the candidate written to a temporary name beside the target, verified,
// and only then renamed into place, so the target is never half-written or wrong.
import { randomBytes } from 'node:crypto';
import { chmod, mkdir, rename, rm } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { sha256File, sha256IfPresent } from '../../actors/models/hash.ts';
import type { AssetEntry, AssetFolder } from '../../actors/models/manifest.ts';
import { RECIPES, type Recipe } from './recipes.ts';
import { attemptsFor, MirrorIndex, type SourceContext } from './sources.ts';

export interface InstallOptions {
  folders: Record<AssetFolder, string>;
  /** Local folders searched (recursively, by base name) before any network source. */
  mirrors: readonly string[];
  /** npm tarballs and build scratch files. */
  cacheDir: string;
  /** Recipes besides the service's own, for files only a tool outside the service needs (the lab's). */
  recipes?: Readonly<Record<string, Recipe>>;
  /** Called for every file that had to be fetched. */
  onFetched?(entry: AssetEntry, target: string, from: string): void;
}

export type InstallResult = { entry: AssetEntry; target: string } & ({ status: 'present' } | { status: 'fetched'; from: string });

export class AssetError extends Error {
  override name = 'AssetError';
}

export function assetPath(entry: AssetEntry, folders: Record<AssetFolder, string>): string {
  return join(folders[entry.folder], ...entry.file.split('/'));
}

/** Ensures every entry, in order; when some cannot be installed, throws one error naming them all. */
export async function ensureAssets(entries: readonly AssetEntry[], options: InstallOptions): Promise<InstallResult[]> {
  const context: SourceContext = { mirror: new MirrorIndex(options.mirrors), cacheDir: options.cacheDir, recipes: { ...RECIPES, ...options.recipes } };
  const results: InstallResult[] = [];
  const failures: string[] = [];
  for (const entry of entries) {
    try {
      results.push(await ensureAsset(entry, options, context));
    } catch (error) {
      if (!(error instanceof AssetError)) throw error;
      failures.push(error.message);
    }
  }
  if (failures.length > 0) throw new AssetError(failures.join('\n\n'));
  return results;
}

async function ensureAsset(entry: AssetEntry, options: InstallOptions, context: SourceContext): Promise<InstallResult> {
  const target = assetPath(entry, options.folders);
  const present = await sha256IfPresent(target);
  if (present !== undefined && entry.sha256.includes(present)) return { entry, target, status: 'present' };

  await mkdir(dirname(target), { recursive: true });
  const failures: string[] = [];
  if (present !== undefined) failures.push(`present file: sha256 ${present} is not an accepted digest`);
  for (const source of entry.sources) {
    let attempts;
    try {
      attempts = await attemptsFor(source, entry, context);
    } catch (error) {
      failures.push(`${source.kind}: ${(error as Error).message}`);
      continue;
    }
    for (const attempt of attempts) {
      const problem = await tryAttempt(entry, target, attempt.write);
      if (problem === undefined) {
        options.onFetched?.(entry, target, `${source.kind} ${attempt.label}`);
        return { entry, target, status: 'fetched', from: `${source.kind} ${attempt.label}` };
      }
      failures.push(`${source.kind} ${attempt.label}: ${problem}`);
    }
  }
  throw new AssetError(failureMessage(entry, target, failures));
}

/** Undefined when the candidate was verified and moved into place, else what went wrong. */
async function tryAttempt(entry: AssetEntry, target: string, write: (destination: string) => Promise<void>): Promise<string | undefined> {
  const temporary = join(dirname(target), `.${basename(target)}.${process.pid}-${randomBytes(4).toString('hex')}.part`);
  try {
    await write(temporary);
    const digest = await sha256File(temporary);
    if (!entry.sha256.includes(digest)) return `sha256 ${digest} is not an accepted digest`;
    // A copy from a read-only mirror keeps its mode; installed files belong to this installation.
    await chmod(temporary, 0o644);
    await rename(temporary, target);
    return undefined;
  } catch (error) {
    return (error as Error).message;
  } finally {
    await rm(temporary, { force: true });
  }
}

function failureMessage(entry: AssetEntry, target: string, failures: string[]): string {
  const name = basename(entry.file);
  return [
    `cannot install ${entry.folder}/${entry.file} (${entry.bytes} bytes, sha256 ${entry.sha256.join(' or ')}) at ${target}. Tried:`,
    ...failures.map((failure) => `  - ${failure}`),
    `To fix: put a copy of ${name} in a folder and list it in ASSETS_MIRROR (folders separated by ':'), ` +
      'or make the sources above reachable; then run `npx tsx ops/assets/setup.ts`.',
  ].join('\n');
}
