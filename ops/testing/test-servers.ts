// Where `npm run test:servers` says which servers it runs, for the test runner to use them.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

export interface TestServers {
  /** The process that runs them: the file is stale once it is gone. */
  pid: number;
  natsUrl: string;
  clickhouseUrl: string;
}

export const testServersFile = (varDir: string) => join(varDir, 'test', 'servers.json');

/** The servers `npm run test:servers` runs now, if it does. */
export function runningTestServers(varDir: string): TestServers | undefined {
  try {
    const servers = JSON.parse(readFileSync(testServersFile(varDir), 'utf8')) as TestServers;
    process.kill(servers.pid, 0);
    return servers;
  } catch {
    return undefined;
  }
}
