import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';

/** Lowercase hex sha256 of a file, streamed so large models do not sit in memory. */
export async function sha256File(path: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(path)) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

/** The file's sha256 when it exists, undefined when it does not. */
export async function sha256IfPresent(path: string): Promise<string | undefined> {
  try {
    return await sha256File(path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}
