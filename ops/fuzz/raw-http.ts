// An HTTP/1.1 client that sends exactly the bytes it is given: header values with CR/LF, raw
// bytes in the request target, bodies that disagree with their headers. Node's own clients
// refuse to send most of what an attacker would.
import { connect } from 'node:net';

export interface RawRequest {
  method: string;
  /** The request target, sent as is (percent-encode it yourself where you want to). */
  target: string;
  headers: [string, string][];
  body?: string;
}

export interface RawResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** Sends one request on a fresh connection (`Connection: close`) and reads the answer to the end. */
export function rawRequest(port: number, request: RawRequest, timeoutMs = 15_000): Promise<RawResponse> {
  const body = request.body === undefined ? undefined : Buffer.from(request.body, 'utf8');
  const head =
    `${request.method} ${request.target} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nConnection: close\r\n` +
    request.headers.map(([name, value]) => `${name}: ${value}\r\n`).join('') +
    (body && !request.headers.some(([name]) => /^(content-length|transfer-encoding)$/i.test(name)) ? `Content-Length: ${body.length}\r\n` : '') +
    '\r\n';
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let failure: Error | undefined;
    const socket = connect(port, '127.0.0.1');
    socket.setTimeout(timeoutMs, () => socket.destroy(new Error(`no complete answer within ${timeoutMs} ms`)));
    socket.on('data', (chunk) => chunks.push(chunk));
    // A server that answers early and closes makes our writes fail; its answer still counts.
    socket.on('error', (error) => (failure = error));
    socket.on('close', () => {
      try {
        resolve(parseResponse(Buffer.concat(chunks)));
      } catch (error) {
        reject(failure ? new Error(`${(error as Error).message}; the socket said: ${failure.message}`) : error);
      }
    });
    socket.write(Buffer.from(head, 'utf8'));
    // The server may answer (413, 400) and close before it has read the whole body.
    // No half-close: the server would drop a request still waiting for its answer.
    if (body) socket.write(body, () => {});
  });
}

function parseResponse(bytes: Buffer): RawResponse {
  const end = bytes.indexOf('\r\n\r\n');
  if (end < 0) throw new Error(`the connection closed without an HTTP answer (${bytes.length} bytes: ${JSON.stringify(bytes.subarray(0, 200).toString('latin1'))})`);
  const [statusLine = '', ...lines] = bytes.subarray(0, end).toString('latin1').split('\r\n');
  const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(statusLine)?.[1]);
  if (!status) throw new Error(`not an HTTP status line: ${JSON.stringify(statusLine)}`);
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const colon = line.indexOf(':');
    headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  let body = bytes.subarray(end + 4);
  if (/chunked/i.test(headers['transfer-encoding'] ?? '')) body = dechunk(body);
  return { status, headers, body: body.toString('utf8') };
}

function dechunk(bytes: Buffer): Buffer {
  const parts: Buffer[] = [];
  let at = 0;
  for (;;) {
    const lineEnd = bytes.indexOf('\r\n', at);
    if (lineEnd < 0) break;
    const size = parseInt(bytes.subarray(at, lineEnd).toString('latin1'), 16);
    if (!size) break;
    parts.push(bytes.subarray(lineEnd + 2, lineEnd + 2 + size));
    at = lineEnd + 2 + size + 2;
  }
  return Buffer.concat(parts);
}
