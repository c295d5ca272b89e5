// Which client a request comes from: the TCP peer, unless the peer is a proxy the operator
// trusts (TRUSTED_PROXIES), in which case the address that proxy put in X-Forwarded-For. A
// header from anyone else is ignored: a client could name any address in it. Walked from the
// right, past every trusted proxy, since only the entries trusted proxies appended are true.
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

  of(request: IncomingMessage): string {
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
