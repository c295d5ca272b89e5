// What a stream URI may be. Checked by the gateway (syntax) and again by the host that
// starts the stream (address policy), because only the host resolves names.
import { badRequest } from './errors.ts';

const STREAM_PROTOCOLS = ['rtmp', 'rtmps', 'rtsp'] as const;
export type StreamProtocol = (typeof STREAM_PROTOCOLS)[number];
const DEFAULT_PORTS: Record<StreamProtocol, number> = { rtmp: 1935, rtmps: 443, rtsp: 554 };

export interface StreamUri {
  protocol: StreamProtocol;
  hostname: string;
  /** The port the URI names, or the protocol's default. */
  port: number;
  /**
   * The URI as shown to clients, stored in ClickHouse and published: scheme, host and port as
   * given, nothing else. No credentials or query (`?token=`), and no path: an RTMP path ends in
   * the stream key, an RTSP path may hold a token, and the session's name tells streams apart.
   */
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
  const port = url.port === '' ? DEFAULT_PORTS[protocol as StreamProtocol] : Number(url.port);
  return { protocol: protocol as StreamProtocol, hostname: url.hostname.replace(/^\[|\]$/g, ''), port, display: `${protocol}://${url.host}` };
}
