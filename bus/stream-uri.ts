// What a stream URI may be. Checked by the gateway (syntax) and again by the host that
// starts the stream (address policy), because only the host resolves names.
import { isIP } from 'node:net';
import { badRequest } from './errors.ts';

export const STREAM_PROTOCOLS = ['rtmp', 'rtmps', 'rtsp'] as const;
export type StreamProtocol = (typeof STREAM_PROTOCOLS)[number];

export interface StreamUri {
  protocol: StreamProtocol;
  hostname: string;
  /** The URI as shown to clients and stored outside the KV: without user name or password. */
  display: string;
}

export function parseStreamUri(raw: string): StreamUri {
  const invalid = (why: string) =>
    badRequest('invalid_body', `body.streamUri: ${why}`, [{ field: 'body.streamUri', message: why }]);
  if (raw.length > 2048) throw invalid('must be at most 2048 characters');
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw invalid('must be an absolute URI such as rtmp://host/app/key');
  }
  const protocol = url.protocol.replace(/:$/, '');
  if (!(STREAM_PROTOCOLS as readonly string[]).includes(protocol)) {
    throw invalid(`protocol must be one of ${STREAM_PROTOCOLS.join(', ')}, got ${protocol}`);
  }
  if (!url.hostname) throw invalid('must name a host');
  if (/[\s\0]/.test(raw)) throw invalid('must not contain white space or control characters');
  const clean = new URL(url.href);
  clean.username = '';
  clean.password = '';
  return { protocol: protocol as StreamProtocol, hostname: url.hostname.replace(/^\[|\]$/g, ''), display: clean.href };
}

/** Loopback, private, link-local and unspecified addresses: not for a public service to pull from. */
export function isPrivateAddress(address: string): boolean {
  const version = isIP(address);
  if (version === 4) {
    const [a, b] = address.split('.').map(Number) as [number, number];
    return (
      a === 0 || a === 10 || a === 127 || (a === 169 && b === 254) || (a === 172 && b >= 16 && b <= 31) ||
      (a === 192 && b === 168) || (a === 100 && b >= 64 && b <= 127) || a >= 224
    );
  }
  if (version === 6) {
    const lower = address.toLowerCase();
    if (lower.startsWith('::ffff:')) return isPrivateAddress(lower.slice(7));
    return lower === '::' || lower === '::1' || /^f[cd]/.test(lower) || /^fe[89ab]/.test(lower) || /^ff/.test(lower);
  }
  return true;
}
