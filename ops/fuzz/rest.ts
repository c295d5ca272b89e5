// Fuzz cases for every REST route: hostile ids, query strings, headers and bodies, sent byte
// for byte. A case passes when the answer is not a 5xx (503 aside), an error answer has the
// API's error body, every process still runs, and a refused request changed nothing.
import { isDeepStrictEqual } from 'node:util';
import fc from 'fast-check';
import { hostileId, hostileJson, hostileJsonText, hostileNumber, hostileNumeral, hostileText, PROTOTYPE_KEYS } from './hostile.ts';
import { rawRequest, type RawResponse } from './raw-http.ts';
import { describe, printable } from './report.ts';
import type { FuzzTarget } from './target.ts';

export interface RestCase {
  method: string;
  target: string;
  headers: [string, string][];
  body?: string;
}

const ROUTES: { methods: string[]; path: string }[] = [
  { methods: ['POST', 'GET'], path: '/v1/sessions' },
  { methods: ['GET', 'PATCH'], path: '/v1/sessions/:id' },
  { methods: ['POST'], path: '/v1/sessions/:id/stop' },
  { methods: ['GET'], path: '/v1/sessions/:id/emotions' },
  { methods: ['GET'], path: '/v1/sessions/:id/emotions/timeline' },
  { methods: ['GET'], path: '/v1/sessions/:id/audio/features' },
  { methods: ['GET'], path: '/v1/sessions/:id/audio/transcription-sentiment' },
  { methods: ['GET'], path: '/v1/sessions/:id/audio/transcription' },
  { methods: ['POST', 'GET'], path: '/v1/sessions/:id/events' },
  { methods: ['POST'], path: '/v1/sessions/:id/events/:source' },
];

const QUERY_KEYS = ['limit', 'offset', 'state', 'type', 'from', 'to', 'granularity', 'start', 'end', 'expand', 'source', 'order'];

/** Percent-encodes the UTF-8 of a text (a lone surrogate becomes U+FFFD, as any client would send it). */
function percentEncode(text: string): string {
  return [...Buffer.from(text, 'utf8')].map((byte) => (/[A-Za-z0-9._~-]/.test(String.fromCharCode(byte)) ? String.fromCharCode(byte) : `%${byte.toString(16).toUpperCase().padStart(2, '0')}`)).join('');
}

/** Mostly encoded as a client would; sometimes raw, bytes and all. */
const part = (text: fc.Arbitrary<string>) => fc.tuple(text, fc.nat(9)).map(([value, dice]) => (dice === 0 ? value : percentEncode(value)));

function streamUri(target: FuzzTarget): fc.Arbitrary<string> {
  const closed = new URL(target.streamUri).port;
  // Hosts stay on the loopback: an accepted session must never reach out of this machine.
  return fc.oneof(
    fc.constant(target.streamUri),
    fc.constantFrom('rtmp', 'rtmps', 'rtsp', 'http', 'file', 'concat', 'RTMP', 'tcp', 'udp', '').chain((scheme) =>
      fc.tuple(fc.constantFrom('127.0.0.1', '[::1]', 'localhost', 'user:p%40ss@127.0.0.1'), hostileText).map(([host, path]) => `${scheme}://${host}:${closed}/live/${path}`),
    ),
    fc.constantFrom('file:///etc/passwd', '/etc/passwd', 'rtmp://', 'rtmp://:1/x', `rtmp://127.0.0.1:${closed}`, `rtmp://127.0.0.1:99999/x`, `rtmp://127.0.0.1:-1/x`, `subfile,,start,0,end,0,,:/etc/passwd`),
    hostileText.filter((text) => !text.includes('://')),
  );
}

function body(target: FuzzTarget): fc.Arbitrary<string | undefined> {
  const event = fc.record({ time: fc.oneof(hostileNumber, hostileText), data: fc.oneof(hostileNumber, hostileText, hostileJson) }, { requiredKeys: [] });
  const sourced = fc.record({ source: fc.oneof(fc.constantFrom(...target.sources), hostileText), time: hostileNumber, data: fc.oneof(hostileNumber, hostileText) }, { requiredKeys: [] });
  const nearlyValid = fc.oneof(
    fc.record({ name: hostileText, streamUri: streamUri(target) }, { requiredKeys: [] }),
    fc.record({ name: hostileText }),
    fc.record({ name: hostileText, format: fc.oneof(fc.constantFrom('text', 'scalar'), hostileText) }, { requiredKeys: [] }),
    event,
    fc.array(event, { maxLength: 4 }),
    fc.array(sourced, { maxLength: 4 }),
    fc.tuple(fc.constantFrom(...PROTOTYPE_KEYS), hostileJson).map(([key, value]) => ({ [key]: value, name: 'x', streamUri: target.streamUri })),
  );
  return fc.oneof(
    { weight: 1, arbitrary: fc.constant(undefined) },
    { weight: 4, arbitrary: nearlyValid.map((value) => JSON.stringify(value)) },
    { weight: 2, arbitrary: hostileJson.map((value) => JSON.stringify(value) ?? 'null') },
    { weight: 1, arbitrary: hostileJsonText },
  );
}

export function restCase(target: FuzzTarget): fc.Arbitrary<RestCase> {
  const route = fc.oneof(
    { weight: 12, arbitrary: fc.constantFrom(...ROUTES) },
    { weight: 1, arbitrary: hostileText.map((text) => ({ methods: ['GET', 'POST'], path: `/v1/${text}` })) },
  );
  const ids = part(hostileId([target.own, target.others]));
  const sourceIds = part(hostileId(target.sources));
  const query = fc.array(fc.tuple(fc.oneof(fc.constantFrom(...QUERY_KEYS, ...PROTOTYPE_KEYS, 'limit[0]', 'a[__proto__][x]'), hostileText), hostileNumeral), { maxLength: 4 });
  const token = fc.oneof(
    { weight: 8, arbitrary: fc.constant(`Bearer ${target.tokens.alice}`) },
    { weight: 2, arbitrary: fc.constant(`Bearer ${target.tokens.bob}`) },
    { weight: 1, arbitrary: fc.constant(undefined) },
    { weight: 1, arbitrary: hostileText.map((text) => `Bearer ${text}`) },
    { weight: 1, arbitrary: fc.constantFrom(`bearer  ${target.tokens.alice}  `, `Basic ${target.tokens.alice}`, `Bearer ${target.tokens.alice}\u0000`, `Bearer ${target.tokens.alice} ${target.tokens.bob}`) },
  );
  const contentType = fc.oneof(
    { weight: 6, arbitrary: fc.constant('application/json') },
    { weight: 1, arbitrary: fc.constantFrom(undefined, 'text/plain', 'application/json; charset=utf-16', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', 'application/json, text/plain') },
    { weight: 1, arbitrary: hostileText },
  );
  // Most cases keep to well-formed headers, or Node's parser refuses them before any route sees them.
  const headerName = fc.oneof({ weight: 6, arbitrary: fc.constantFrom('Idempotency-Key', 'X-Request-Id', 'Content-Length', 'Transfer-Encoding', 'Expect', 'Host', 'Authorization', '__proto__') }, { weight: 1, arbitrary: hostileText });
  const extraHeaders = fc.oneof({ weight: 3, arbitrary: fc.constant([]) }, { weight: 1, arbitrary: fc.array(fc.tuple(headerName, hostileText), { minLength: 1, maxLength: 2 }) });
  return fc
    .record({ route, method: fc.nat(9), ids, sourceIds, query, token, contentType, extraHeaders, body: body(target) })
    .map(({ route, method, ids, sourceIds, query, token, contentType, extraHeaders, body }) => {
      const path = route.path.replace(':id', ids).replace(':source', sourceIds);
      const search = query.length ? `?${query.map(([key, value]) => `${percentEncode(key)}=${percentEncode(value)}`).join('&')}` : '';
      const headers: [string, string][] = [];
      if (token !== undefined) headers.push(['Authorization', token]);
      if (contentType !== undefined && body !== undefined) headers.push(['Content-Type', contentType]);
      headers.push(...extraHeaders);
      // Mostly the route's own methods; now and then one it does not have.
      const methods = [...route.methods, 'PUT', 'DELETE', 'OPTIONS', 'HEAD'];
      return printable({ method: method < 8 ? route.methods[method % route.methods.length]! : methods[method % methods.length]!, target: path + search, headers, ...(body === undefined ? {} : { body }) });
    });
}

/** Node's limit on a request's head; past it the server refuses and closes, often before the client has finished writing. */
const MAX_HEAD_BYTES = 16 * 1024;

/** Sends one case and checks what must hold after it; throws with the request and the answer when something does not. */
export async function checkRestCase(target: FuzzTarget, testCase: RestCase): Promise<void> {
  const before = target.last;
  const response = await rawRequest(target.port, testCase).catch((error: Error) => {
    // The refusal of an oversized head can be lost in the reset that closes it, and a request
    // whose head promises more body than it sends is rightly left waiting for the rest: the
    // checks below still hold.
    if (headBytes(testCase) > MAX_HEAD_BYTES || promisesMoreBody(testCase)) return undefined;
    throw failure(testCase, undefined, `no answer: ${error.message}`);
  });
  const after = await target.snapshot().catch((error: Error) => {
    throw failure(testCase, response, `the service stopped answering: ${error.message}`);
  });
  const dead = target.deadProcesses();
  if (dead.length) throw failure(testCase, response, dead.join(', '));
  const status = response?.status ?? 431;
  if (status >= 500 && status !== 503) throw failure(testCase, response, `answered ${status}`);
  // An error answer with a body (HEAD has none) has the API's error body.
  if (response && status >= 400 && testCase.method !== 'HEAD' && /json/.test(response.headers['content-type'] ?? '')) {
    let error: any;
    try {
      error = JSON.parse(response.body);
    } catch {
      throw failure(testCase, response, 'the error answer is not JSON');
    }
    if (error?.error !== true || error.status !== status || typeof error.code !== 'string' || typeof error.message !== 'string') {
      throw failure(testCase, response, 'the error answer is not the API error body');
    }
  }
  target.last = after;
  if (status >= 400 && status < 500 && !isDeepStrictEqual(before, after)) {
    throw failure(testCase, response, `a refused request changed something: before ${JSON.stringify(before)}, after ${JSON.stringify(after)}`);
  }
}

/** A Content-Length over the body's bytes, or a chunked body: the server may wait for more (Node's request timeout, minutes, ends the wait). */
function promisesMoreBody(testCase: RestCase): boolean {
  const header = (name: string) => testCase.headers.find(([key]) => key.toLowerCase() === name)?.[1];
  const length = header('content-length');
  const sent = Buffer.byteLength(testCase.body ?? '');
  return (length !== undefined && /^\s*\d+\s*$/.test(length) && Number(length) > sent) || /chunked/i.test(header('transfer-encoding') ?? '');
}

const headBytes = (testCase: RestCase) =>
  Buffer.byteLength(testCase.target) + testCase.headers.reduce((sum, [name, value]) => sum + Buffer.byteLength(name) + Buffer.byteLength(value) + 4, 0);

function failure(testCase: RestCase, response: RawResponse | undefined, problem: string): Error {
  const answer = response ? `${response.status} ${describe(response.body)}` : 'none';
  return new Error(`${problem}\n  request: ${describe(testCase)}\n  answer: ${answer}`);
}
