// A file written so that no reader ever sees half of it: under a name of its own, then renamed
// over the real one, which is atomic within a file system.
import { rename, rm, writeFile } from 'node:fs/promises';

export async function writeWhole(file: string, content: string | Uint8Array): Promise<void> {
  const partial = `${file}.${process.pid}.${Math.random().toString(36).slice(2)}`;
  try {
    await writeFile(partial, content);
    await rename(partial, file);
  } catch (error) {
    // A disk that filled up, say: no half-written file is left behind under its own name.
    await rm(partial, { force: true });
    throw error;
  }
}
