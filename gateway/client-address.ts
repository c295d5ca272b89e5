// Which client a request comes from: the TCP peer, unless the peer is a proxy the operator
// trusts (TRUSTED_PROXIES), in which case the address that proxy put in X-Forwarded-For. A
// header from anyone else is ignored: a client could name any address in it. Walked from the
// right, past every trusted proxy, since only the entries trusted proxies appended are true.
// Every bound by address counts an IPv6 client by its /64 (clientKey): a host is handed a whole
// /64 and picks any address in it, so a bound per address would be one per request for it.
import type { IncomingMessage } from 'node:http';
import { BlockList, isIP } from 'node:net';

export class ClientAddresses {
  private readonly trusted = new BlockList();

  /** `proxies`: addresses and CIDR blocks, IPv4 or IPv6; anything else stops the gateway at start. */
  constructor(proxies: readonly string[]) {
    for (const entry of proxies) {
      const [address = '', bits] = entry.split('/');
      const family = isIP(address);
      const prefix = Number(bits);
      const maxPrefix = family === 6 ? 128 : 32;
      if (!family || (bits !== undefined && !(Number.isInteger(prefix) && prefix >= 0 && prefix <= maxPrefix))) {
        throw new Error(`TRUSTED_PROXIES: "${entry}" is not an IP address or CIDR block`);
      }
      const type = family === 6 ? 'ipv6' : 'ipv4';
      if (bits === undefined) this.trusted.addAddress(address, type);
      else this.trusted.addSubnet(address, prefix, type);
    }
  }

  /** The client the request counts against: an IPv4 address, or an IPv6 /64 (`2001:db8:0:1::/64`). */
  of(request: IncomingMessage): string {
    return clientKey(this.address(request));
  }

  /** The client's address itself. */
  private address(request: IncomingMessage): string {
    let address = plain(request.socket.remoteAddress ?? 'unknown');
    if (!this.isTrusted(address)) return address;
    const forwarded = ([] as string[]).concat(request.headers['x-forwarded-for'] ?? []).join(',').split(',');
    for (let i = forwarded.length - 1; i >= 0; i--) {
      const hop = plain(forwarded[i]!.trim());
      // A proxy that wrote nonsense is the last address known for certain.
      if (!isIP(hop)) return address;
      address = hop;
      if (!this.isTrusted(address)) return address;
    }
    return address;
  }

  private isTrusted(address: string): boolean {
    const family = isIP(address);
    return family !== 0 && this.trusted.check(address, family === 6 ? 'ipv6' : 'ipv4');
  }
}

/** An IPv4 address as dual-stack sockets report it (::ffff:1.2.3.4) is that IPv4 address. */
const plain = (address: string) => (/^::ffff:\d+\.\d+\.\d+\.\d+$/i.test(address) ? address.slice(7) : address);

/**
 * What an address is counted as: an IPv4 address as it is (an IPv4-mapped IPv6 address, in any
 * spelling, as its IPv4 address), an IPv6 address as its /64 without any zone id; anything
 * else (a peer that reports none) as it is.
 */
export function clientKey(address: string): string {
  if (isIP(address) !== 6) return address;
  const groups = ipv6Groups(address.replace(/%.*$/, ''));
  if (!groups) return address;
  const mapped = groups.slice(0, 5).every((group) => group === 0) && groups[5] === 0xffff;
  if (mapped) return [groups[6]! >> 8, groups[6]! & 0xff, groups[7]! >> 8, groups[7]! & 0xff].join('.');
  return `${groups.slice(0, 4).map((group) => group.toString(16)).join(':')}::/64`;
}

/** The eight 16-bit groups of an IPv6 address (`::` and a trailing dotted quad expanded). */
function ipv6Groups(address: string): number[] | undefined {
  const quad = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(address);
  const hex = quad
    ? `${address.slice(0, quad.index)}${((Number(quad[1]) << 8) | Number(quad[2])).toString(16)}:${((Number(quad[3]) << 8) | Number(quad[4])).toString(16)}`
    : address;
  const [head = '', tail] = hex.split('::');
  const parse = (part: string) => (part ? part.split(':').map((group) => parseInt(group, 16)) : []);
  const front = parse(head);
  const back = parse(tail ?? '');
  const groups = tail === undefined ? front : [...front, ...Array<number>(8 - front.length - back.length).fill(0), ...back];
  return groups.length === 8 && groups.every((group) => Number.isInteger(group) && group >= 0 && group <= 0xffff) ? groups : undefined;
}
