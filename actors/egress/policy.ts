// Where streams may be pulled from. Public addresses always; special-purpose ones (loopback,
// private, link-local, ...) only as ALLOW_PRIVATE_STREAM_HOSTS allows. Enforced twice: at
// creation on the URI's host, for a clear 400, and in ffmpeg itself by the egress guard
// (guard.c, LD_PRELOAD) on every address it connects to, redirects, DNS rebinding, reconnects
// and takeovers included. The second is the one that holds. The host itself connects only to ask
// whether anything listens on a stream's port (nothingListens), and only to addresses vetted here.
import { BlockList, connect, isIP } from 'node:net';
import { SPECIAL_PURPOSE_RANGES, isPrivateAddress } from '../../bus/special-addresses.ts';
import type { Allowance, AllowedEntry } from './allowance.ts';

/** A name's addresses now (resolver.ts); fails when it has none or takes too long. */
export type Resolve = (host: string) => Promise<string[]>;

/** Addresses of one name the listener check connects to at most; past them the decoder finds out. */
const MOST_ADDRESSES_CHECKED = 4;

interface Rule {
  address: string;
  prefix: number;
  /** 0: any port. */
  port: number;
}

export class EgressPolicy {
  constructor(
    private readonly allowance: Allowance,
    private readonly guardLibrary: string,
    private readonly resolve: Resolve,
  ) {}

  /**
   * Why a stream on host:port may not be pulled, or undefined if it may. Every address the
   * name has now must be allowed: a name that also points inside is refused.
   */
  async refusal(host: string, port: number): Promise<string | undefined> {
    const vetted = await this.vet(host, port);
    return 'refusal' in vetted ? vetted.refusal : undefined;
  }

  /**
   * Whether nothing listens on host:port now: each address the name has, every one allowed,
   * refused a TCP connection within `timeoutMs`. Asked before a decoder starts on a stream, so
   * that a stream that is down costs a refused connect rather than an ffprobe run (about 0.15 s
   * of CPU, at every reconnect of every such session). Only the addresses vetted here are
   * connected to, never the name again. Anything else (a policy refusal, no answer, another
   * error) is false: the decoder then runs as always, under the guard, and says why in our words.
   */
  async nothingListens(host: string, port: number, timeoutMs: number): Promise<boolean> {
    const vetted = await this.vet(host, port);
    // A name server may answer with thousands of addresses: the host connects to none of them.
    if ('refusal' in vetted || vetted.addresses.length > MOST_ADDRESSES_CHECKED) return false;
    const answers = await Promise.all(vetted.addresses.map((address) => connectionRefused(address, port, timeoutMs)));
    return answers.every(Boolean);
  }

  private async vet(host: string, port: number): Promise<{ addresses: string[] } | { refusal: string }> {
    let addresses: string[];
    try {
      addresses = isIP(host) ? [host] : await this.resolve(host);
    } catch {
      return { refusal: `host ${host} cannot be resolved` };
    }
    if (addresses.length === 0) return { refusal: `host ${host} cannot be resolved` };
    if (this.allowance.kind === 'all') return { addresses };
    const rules = await this.rules();
    const refused = addresses.filter((address) => isPrivateAddress(address) && !rules.some((rule) => matches(rule, address, port)));
    if (refused.length > 0) return { refusal: `host ${host} is a loopback or private address, which this service does not pull from` };
    return { addresses };
  }

  /** The environment that loads the guard into ffmpeg with this policy; names are resolved now, for this connection. */
  async guardEnvironment(): Promise<Record<string, string>> {
    const refuse = this.allowance.kind === 'all' ? [] : SPECIAL_PURPOSE_RANGES;
    const allow = (await this.rules()).map(({ address, prefix, port }) => `${address}/${prefix}/${port}`);
    return { LD_PRELOAD: this.guardLibrary, EMO_EGRESS_REFUSE: refuse.join(','), EMO_EGRESS_ALLOW: allow.join(',') };
  }

  private async rules(): Promise<Rule[]> {
    if (this.allowance.kind !== 'list') return [];
    const rules = await Promise.all(this.allowance.entries.map((entry) => this.entryRules(entry)));
    return rules.flat();
  }

  private async entryRules(entry: AllowedEntry): Promise<Rule[]> {
    const port = entry.port ?? 0;
    if (entry.prefix !== undefined) return [{ address: entry.host, prefix: entry.prefix, port }];
    // A name that does not resolve now allows nothing now; it may again later.
    const addresses = await this.resolve(entry.host).catch(() => []);
    return addresses.map((address) => ({ address, prefix: isIP(address) === 4 ? 32 : 128, port }));
  }
}

function matches(rule: Rule, address: string, port: number): boolean {
  if (rule.port !== 0 && rule.port !== port) return false;
  const network = new BlockList();
  network.addSubnet(rule.address, rule.prefix, isIP(rule.address) === 4 ? 'ipv4' : 'ipv6');
  return network.check(address, isIP(address) === 4 ? 'ipv4' : 'ipv6');
}

/** Whether a TCP connection to address:port is refused (ECONNREFUSED) within timeoutMs. */
function connectionRefused(address: string, port: number, timeoutMs: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: address, port, timeout: timeoutMs });
    const end = (refused: boolean) => {
      socket.destroy();
      resolve(refused);
    };
    socket.once('connect', () => end(false));
    socket.once('timeout', () => end(false));
    socket.once('error', (error: NodeJS.ErrnoException) => end(error.code === 'ECONNREFUSED'));
  });
}
