// Addresses a public service must not pull streams from: loopback, private, link-local,
// shared, reserved, documentation, benchmarking, multicast, and the IPv6 forms that embed or
// translate to IPv4 (so an IPv4 range cannot be reached through them). From the IANA IPv4 and
// IPv6 special-purpose address registries. IPv4-mapped IPv6 addresses (::ffff:a.b.c.d) are
// judged as the IPv4 address they carry. One table, read by the creation check here and
// handed to the connect-time guard in ffmpeg.
import { BlockList, isIP } from 'node:net';

export const SPECIAL_PURPOSE_RANGES: readonly string[] = [
  '0.0.0.0/8', // "this network"
  '10.0.0.0/8', // private
  '100.64.0.0/10', // shared address space (carrier-grade NAT)
  '127.0.0.0/8', // loopback
  '169.254.0.0/16', // link-local, cloud metadata services
  '172.16.0.0/12', // private
  '192.0.0.0/24', // IETF protocol assignments
  '192.0.2.0/24', // documentation
  '192.88.99.0/24', // 6to4 relay anycast
  '192.168.0.0/16', // private
  '198.18.0.0/15', // benchmarking
  '198.51.100.0/24', // documentation
  '203.0.113.0/24', // documentation
  '224.0.0.0/4', // multicast
  '240.0.0.0/4', // reserved, broadcast
  '::/96', // unspecified, loopback, IPv4-compatible
  '64:ff9b::/96', // NAT64 well-known prefix
  '64:ff9b:1::/48', // local-use NAT64
  '100::/64', // discard-only
  '2001::/23', // IETF protocol assignments (Teredo among them)
  '2001:db8::/32', // documentation
  '2002::/16', // 6to4
  '3fff::/20', // documentation
  '5f00::/16', // segment routing
  'fc00::/7', // unique local
  'fe80::/10', // link-local
  'fec0::/10', // site-local (deprecated, still routed by some)
  'ff00::/8', // multicast
];

export type SpecialAddresses = BlockList;

function specialAddresses(ranges: readonly string[] = SPECIAL_PURPOSE_RANGES): SpecialAddresses {
  const list = new BlockList();
  for (const range of ranges) {
    const [network, prefix] = range.split('/') as [string, string];
    list.addSubnet(network, Number(prefix), isIP(network) === 6 ? 'ipv6' : 'ipv4');
  }
  return list;
}

const SPECIAL = specialAddresses();

/** Whether `address` is special-purpose (not a public unicast address). Anything that is not an IP literal counts as special. */
export function isPrivateAddress(address: string): boolean {
  const version = isIP(address);
  if (version === 0) return true;
  return SPECIAL.check(address, version === 6 ? 'ipv6' : 'ipv4');
}
