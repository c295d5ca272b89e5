// The private directory an actor host's media sockets live in (media-socket.ts): one per host
// process, under the service's var dir, mode 0700, so that only the service's user can connect
// to a socket before ffmpeg does or listen where ffmpeg will write. Removed when the host stops;
// the directories of hosts that died without stopping are removed by the next one to start.
import { mkdir, mkdtemp, readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { processAlive } from '../../bus/process-alive.ts';

// A unix socket's path is at most 107 bytes (sun_path); a socket's name takes up to 24 of them.
const MAX_DIR_LENGTH = 107 - 24;

const PREFIX = 'decoders-';

/** Makes this process's directory under `runDir` (mkdtemp: mode 0700) and clears those of processes that are gone. */
export async function makeSocketDir(runDir: string): Promise<string> {
  await mkdir(runDir, { recursive: true, mode: 0o700 });
  await removeAbandoned(runDir);
  const dir = await mkdtemp(join(runDir, `${PREFIX}${process.pid}-`));
  if (dir.length > MAX_DIR_LENGTH) {
    await rm(dir, { recursive: true, force: true });
    throw new Error(`the media socket directory ${dir} is too long for unix socket paths (at most ${MAX_DIR_LENGTH} characters): set a shorter VAR_DIR`);
  }
  return dir;
}

async function removeAbandoned(runDir: string): Promise<void> {
  for (const name of await readdir(runDir)) {
    const pid = Number(/^decoders-(\d+)-/.exec(name)?.[1]);
    if (pid && !processAlive(pid)) await rm(join(runDir, name), { recursive: true, force: true });
  }
}

