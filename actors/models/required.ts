// The actor host refuses to start on missing or altered model files, with a message that says
// how to get them, rather than failing later inside onnxruntime.
//
// Hashing every model at each start read 93 MB and took a third of a second of the host's CPU
// before it served. A file is hashed once: its accepted digest is kept in the folder's record
// with the file's size, inode and change time, and while those are the same the file is taken
// as checked. Any write to a file, or a file put in its place, changes its change time, which no
// tool can set back. A folder the host may not write to is hashed at every start, as before.
import { readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { writeWhole } from '../../bus/write-whole.ts';
import { sha256File } from './hash.ts';
import { MODEL_ASSETS } from './manifest.ts';

/** The record of the files checked, in the models folder. */
export const VERIFIED_RECORD = '.verified.json';

interface Checked {
  sha256: string;
  size: number;
  ino: number;
  ctimeMs: number;
}

/** Throws unless every file is in `dir` with an accepted sha256. */
export async function assertModels(dir: string, files: string[]): Promise<void> {
  const record = await readRecord(dir);
  let added = false;
  for (const file of files) {
    const path = join(dir, file);
    const entry = MODEL_ASSETS.find((asset) => asset.file === file);
    if (!entry) throw new Error(`model ${file} is not declared in actors/models/manifest.ts`);
    // Before hashing: a file changed while it is read is hashed again at the next start.
    const found = await stat(path).catch((error: NodeJS.ErrnoException) => {
      if (error.code === 'ENOENT') return undefined;
      throw error;
    });
    const known = record[file];
    const same = found && known && known.size === found.size && known.ino === found.ino && known.ctimeMs === found.ctimeMs;
    const digest = found ? (same ? known.sha256 : await sha256File(path)) : undefined;
    if (digest === undefined || !entry.sha256.includes(digest)) {
      const problem = digest === undefined ? 'is missing' : `has sha256 ${digest}, which is not an accepted digest`;
      throw new Error(
        `model file ${path} ${problem}. Run \`npx tsx ops/assets/setup.ts\` (on a machine without internet, ` +
          "set ASSETS_MIRROR to folders holding the model files, separated by ':').",
      );
    }
    if (!same) {
      record[file] = { sha256: digest, size: found!.size, ino: found!.ino, ctimeMs: found!.ctimeMs };
      added = true;
    }
  }
  // Hosts starting together each write the record whole; whichever is last holds every file.
  if (added) await writeWhole(join(dir, VERIFIED_RECORD), JSON.stringify(record)).catch(() => undefined);
}

async function readRecord(dir: string): Promise<Record<string, Checked>> {
  try {
    const parsed: unknown = JSON.parse(await readFile(join(dir, VERIFIED_RECORD), 'utf8'));
    return typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed) ? (parsed as Record<string, Checked>) : {};
  } catch {
    return {};
  }
}
