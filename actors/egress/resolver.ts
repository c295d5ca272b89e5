// How a stream's host name becomes addresses, for the egress policy. Not dns.lookup: that runs
// getaddrinfo on libuv's thread pool (4 threads, shared with file I/O and crypto), where a few
// names whose name server never answers would stall every other user's creates. Names are
// asked of the name servers by c-ares on the event loop instead, each query with a timeout;
// names in the hosts file (localhost, the machine's own) are answered from it, as getaddrinfo
// would, read once at start.
import { readFileSync } from 'node:fs';
import { Resolver } from 'node:dns/promises';
import { isIP } from 'node:net';
import type { Resolve } from './policy.ts';

export interface ResolverOptions {
  /** Name servers (`ip` or `ip:port`); none: the system's (/etc/resolv.conf). */
  servers: string[];
  /** How long one name may take, every try included. */
  timeoutMs: number;
  hostsFile?: string;
}

// A lost UDP answer is tried again once within the time allowed.
const TRIES = 2;

export function streamResolver({ servers, timeoutMs, hostsFile = '/etc/hosts' }: ResolverOptions): Resolve {
  const hosts = readHosts(hostsFile);
  const resolver = new Resolver({ timeout: Math.max(1, Math.floor(timeoutMs / TRIES)), tries: TRIES });
  if (servers.length > 0) resolver.setServers(servers);
  return async (host) => {
    const known = hosts.get(host.toLowerCase());
    if (known) return known;
    const answers = await within(timeoutMs, Promise.allSettled([resolver.resolve4(host), resolver.resolve6(host)]));
    const addresses = answers.flatMap((answer) => (answer.status === 'fulfilled' ? answer.value : []));
    if (addresses.length === 0) throw new Error(`${host} has no address`);
    return addresses;
  };
}

/** c-ares backs off between tries, so its own timeouts can add up past the time allowed. */
async function within<T>(ms: number, work: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([work, late]);
  } finally {
    clearTimeout(timer);
  }
}

function readHosts(file: string): Map<string, string[]> {
  const hosts = new Map<string, string[]>();
  let text = '';
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    return hosts;
  }
  for (const line of text.split('\n')) {
    const [address, ...names] = line.replace(/#.*/, '').trim().split(/\s+/);
    if (!address || isIP(address) === 0) continue;
    for (const name of names) hosts.set(name.toLowerCase(), [...(hosts.get(name.toLowerCase()) ?? []), address]);
  }
  return hosts;
}
