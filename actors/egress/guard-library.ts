// The guard must be there before any stream is pulled: without it ffmpeg would connect
// anywhere (the dynamic loader only warns about a missing LD_PRELOAD library).
import { access, constants } from 'node:fs/promises';

export async function assertGuardLibrary(path: string): Promise<void> {
  try {
    await access(path, constants.R_OK);
  } catch {
    throw new Error(`the egress guard ${path} is missing. Run \`bash ops/setup.sh\`, which builds it from actors/egress/guard.c.`);
  }
}
