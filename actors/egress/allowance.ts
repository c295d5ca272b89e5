// ALLOW_PRIVATE_STREAM_HOSTS: which special-purpose addresses streams may still be pulled from.
// "false" (or empty): none. "true": all of them (a lab or a private network). Otherwise a
// comma-separated list of entries, each "host:port", "ip:port", "cidr" or "cidr:port"; IPv6
// addresses in brackets when a port follows ("[fd00::7]:554", "[fd00::]/8:554").
import { isIP } from 'node:net';

export interface AllowedEntry {
  /** A name resolved again for every connection, or an address, or a network. */
  host: string;
  /** Network prefix length for an address or network; undefined for a name. */
  prefix?: number;
  /** undefined: any port. */
  port?: number;
}

export type Allowance = { kind: 'none' } | { kind: 'all' } | { kind: 'list'; entries: AllowedEntry[] };

export function parseAllowance(setting: string): Allowance {
  const text = setting.trim();
  if (text === '' || /^(0|false|no|off)$/i.test(text)) return { kind: 'none' };
  if (/^(1|true|yes|on)$/i.test(text)) return { kind: 'all' };
  return { kind: 'list', entries: text.split(',').map((entry) => parseEntry(entry.trim())) };
}

function parseEntry(entry: string): AllowedEntry {
  const wrong = (why: string) => new Error(`ALLOW_PRIVATE_STREAM_HOSTS: "${entry}" ${why}`);
  let host: string;
  let portText: string | undefined;
  const bracketed = /^\[([^\]]+)\](\/\d+)?(?::(.*))?$/.exec(entry);
  if (bracketed) {
    host = bracketed[1]! + (bracketed[2] ?? '');
    portText = bracketed[3];
  } else if ((entry.match(/:/g) ?? []).length > 1) {
    host = entry; // a bare IPv6 address or network: no port
  } else {
    const colon = entry.lastIndexOf(':');
    host = colon < 0 ? entry : entry.slice(0, colon);
    portText = colon < 0 ? undefined : entry.slice(colon + 1);
  }
  let port: number | undefined;
  if (portText !== undefined) {
    if (!/^\d{1,5}$/.test(portText) || Number(portText) < 1 || Number(portText) > 65535) throw wrong('has no valid port (1-65535)');
    port = Number(portText);
  }
  const network = /^([^/]+)(?:\/(\d{1,3}))?$/.exec(host);
  if (!network) throw wrong('is not a host name, an address or a network');
  const [, address = '', prefixText] = network;
  const version = isIP(address);
  if (prefixText !== undefined) {
    const prefix = Number(prefixText);
    if (!version || prefix > (version === 4 ? 32 : 128)) throw wrong('is not a valid network (address/prefix)');
    return { host: address, prefix, port };
  }
  if (version) return { host: address, prefix: version === 4 ? 32 : 128, port };
  if (!/^[a-z0-9]([a-z0-9.-]{0,251}[a-z0-9])?$/i.test(host)) throw wrong('is not a host name, an address or a network');
  return { host: host.toLowerCase(), port };
}
