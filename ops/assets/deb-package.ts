// Files published inside Debian packages: the package is fetched with `apt-get download` (from
// the archive apt is configured for; nothing is installed) and kept in a cache, and single files
// are read out of it with dpkg-deb.
import { execFile, spawn } from 'node:child_process';
import { open, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { cachedFetch } from './cached-fetch.ts';

const run = promisify(execFile);

/** Path of the package's .deb in `cacheDir`, downloading it when not cached yet. */
export function downloadDeb(pkg: string, version: string, cacheDir: string): Promise<string> {
  return cachedFetch(join(cacheDir, `${pkg}_${version.replace(/:/g, '%3a')}.deb`), async (staging) => {
    await aptDownload(`${pkg}=${version}`, staging);
    const [file] = (await readdir(staging)).filter((name) => name.endsWith('.deb'));
    if (!file) throw new Error(`apt-get download ${pkg}=${version} left no .deb`);
    return file;
  });
}

async function aptDownload(spec: string, cwd: string): Promise<void> {
  try {
    await run('apt-get', ['download', '-q', spec], { cwd });
  } catch (error) {
    // A machine whose package lists were never fetched knows no package; as root, fetch them once.
    if (process.getuid?.() !== 0) throw describe(error, spec);
    await run('apt-get', ['update', '-q']);
    await run('apt-get', ['download', '-q', spec], { cwd }).catch((again: unknown) => {
      throw describe(again, spec);
    });
  }
}

function describe(error: unknown, spec: string): Error {
  const stderr = (error as { stderr?: string }).stderr?.trim().split('\n').slice(-2).join(' | ');
  return new Error(`apt-get download ${spec} failed: ${stderr || (error as Error).message}`);
}

/** Writes one file of a .deb (`path` as the package installs it, from `/`) to `destination`. */
export async function extractDebFile(deb: string, path: string, destination: string): Promise<void> {
  const file = await open(destination, 'w');
  try {
    await new Promise<void>((resolve, reject) => {
      // dpkg-deb writes the package's files as a tar stream; tar picks the one file out.
      const tarStream = spawn('dpkg-deb', ['--fsys-tarfile', deb], { stdio: ['ignore', 'pipe', 'pipe'] });
      const tar = spawn('tar', ['-xO', `.${path}`], { stdio: ['pipe', file.fd, 'pipe'] });
      tarStream.stdout.pipe(tar.stdin!);
      let stderr = '';
      for (const child of [tarStream, tar]) {
        child.stderr!.on('data', (data: Buffer) => (stderr += data.toString()));
        child.on('error', reject);
      }
      tar.on('close', (code) => (code === 0 ? resolve() : reject(new Error(`no ${path} in ${deb}: ${stderr.trim() || `tar exited with ${code}`}`))));
    });
  } finally {
    await file.close();
  }
}
