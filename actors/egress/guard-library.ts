// The guard must be there before any stream is pulled: without it ffmpeg would connect
// anywhere (the dynamic loader only warns about a missing LD_PRELOAD library). It must also be
// one that hands the decoders their stream URI (actors/ingest/stream-address.ts): a library
// built before it did would leave every pull failing on its placeholder.
import { readFile } from 'node:fs/promises';
import { STREAM_URI_VARIABLE } from '../ingest/stream-address.ts';

export async function assertGuardLibrary(path: string): Promise<void> {
  const rebuild = 'Run `bash ops/setup.sh`, which builds it from actors/egress/guard.c.';
  let library: Buffer;
  try {
    library = await readFile(path);
  } catch {
    throw new Error(`the egress guard ${path} is missing. ${rebuild}`);
  }
  if (!library.includes(`${STREAM_URI_VARIABLE}=`)) {
    throw new Error(`the egress guard ${path} is older than its source and cannot hand ffmpeg its stream URI. ${rebuild}`);
  }
}
