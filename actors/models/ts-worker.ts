// A worker thread running a TypeScript module. A worker does not inherit the process's
// TypeScript loader: it registers it first, then loads its body.
import { Worker } from 'node:worker_threads';

export function startTsWorker(body: URL, workerData: unknown): Worker {
  const bootstrap = `import(${JSON.stringify(import.meta.resolve('tsx/esm/api'))})
  .then(({ register }) => { register(); return import(${JSON.stringify(body.href)}); })`;
  return new Worker(bootstrap, { eval: true, workerData });
}
