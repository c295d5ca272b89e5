// Packages fetched once into the assets cache: a fetch writes into a private folder and its
// file is renamed into place, so an interrupted fetch never leaves a file to reuse.
import { access, mkdir, mkdtemp, rename, rm } from 'node:fs/promises';
import { dirname, join } from 'node:path';

/** `target`, fetched by `fetchInto` (which writes one file into the folder it is given and returns its name) when not there yet. */
export async function cachedFetch(target: string, fetchInto: (staging: string) => Promise<string>): Promise<string> {
  try {
    await access(target);
    return target;
  } catch {
    // not cached yet
  }
  await mkdir(dirname(target), { recursive: true });
  const staging = await mkdtemp(join(dirname(target), '.fetch-'));
  try {
    await rename(join(staging, await fetchInto(staging)), target);
    return target;
  } finally {
    await rm(staging, { recursive: true, force: true });
  }
}
