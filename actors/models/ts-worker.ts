// A worker thread running a TypeScript module: its bundle (bus/typescript-bundle.ts), so the
// thread needs no loader of its own.
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import { BUNDLE_EXEC_ARGV, bundled } from '../../bus/typescript-bundle.ts';

export async function startTsWorker(body: URL, workerData: unknown): Promise<Worker> {
  return new Worker(pathToFileURL(await bundled(fileURLToPath(body))), { workerData, execArgv: BUNDLE_EXEC_ARGV });
}
