// Fuzz cases for the WebSocket API: hostile messages on a fresh socket (authenticated first or
// not), and hostile upgrade requests cut off by a reset. A case passes when no reply is a 5xx
// (503 aside), every error reply has the API error body, a socket the server closes is closed
// with one of the protocol's codes, and every process still runs.
import { connect as connectTcp } from 'node:net';
import fc from 'fast-check';
import WebSocket from 'ws';
import { CHANNELS, FREQUENCIES, PATHS } from '../../gateway/ws/protocol.ts';
import { hostileJson, hostileJsonText, hostileNumber, hostileText } from './hostile.ts';
import { describe, printable } from './report.ts';
import type { FuzzTarget } from './target.ts';

export type WsCase =
  | { kind: 'messages'; authenticate: boolean; frames: string[] }
  | { kind: 'handshake'; request: string; resetAfterMs: number };

/** Close codes the server may end a socket with: invalid JSON or UTF-8, a frame too large, unauthorized, too many. */
const SERVER_CLOSE_CODES = new Set([1002, 1007, 1009, 4401, 4429]);
const PROBE_ID = 'fuzz-probe';

function message(target: FuzzTarget): fc.Arbitrary<string> {
  const frequency = fc.oneof(fc.constantFrom(...Object.keys(FREQUENCIES)), hostileText);
  const key = fc.oneof(
    fc.tuple(fc.constantFrom(target.own, target.others), frequency).map(([session, f]) => `${session}:${f}`),
    fc.tuple(hostileText, frequency).map(([session, f]) => `${session}:${f}`),
    hostileText,
  );
  const body = fc.oneof(
    fc.record({ channel: fc.oneof(fc.constantFrom(...CHANNELS), hostileText), key }, { requiredKeys: [] }),
    fc.record({ id: fc.oneof(hostileText, hostileNumber) }),
    fc.record({ token: fc.oneof(fc.constant(target.tokens.alice), hostileText) }),
    hostileJson,
  );
  const request = fc.record(
    { id: fc.oneof(fc.nat(), hostileText, hostileNumber, hostileJson), path: fc.oneof(fc.constantFrom(...Object.values(PATHS)), hostileText), body },
    { requiredKeys: [] },
  );
  return fc.oneof(
    { weight: 6, arbitrary: request.map((value) => JSON.stringify(value)) },
    { weight: 2, arbitrary: hostileJson.map((value) => JSON.stringify(value) ?? 'null') },
    { weight: 1, arbitrary: hostileJsonText },
    { weight: 1, arbitrary: fc.integer({ min: 60_000, max: 80_000 }).map((size) => JSON.stringify({ id: 1, path: 'ping', body: 'x'.repeat(size) })) },
  );
}

function upgradeRequest(): fc.Arbitrary<string> {
  const header = fc.tuple(
    fc.constantFrom('Upgrade', 'Connection', 'Sec-WebSocket-Key', 'Sec-WebSocket-Version', 'Sec-WebSocket-Extensions', 'Sec-WebSocket-Protocol', 'Origin', 'Content-Length'),
    fc.oneof(fc.constantFrom('websocket', 'Upgrade', 'dGhlIHNhbXBsZSBub25jZQ==', '13', '8', 'permessage-deflate; client_max_window_bits=99', '-1'), hostileText),
  );
  const path = fc.oneof(fc.constantFrom('/ws/v1', '/ws/v1?x=1', '/ws/v1/', '/elsewhere', '/v1/sessions', '*'), hostileText.map((text) => `/ws/v1${text}`));
  return fc.tuple(path, fc.array(header, { maxLength: 6 }), fc.boolean()).map(
    ([target, headers, standard]) =>
      `GET ${target} HTTP/1.1\r\nHost: 127.0.0.1\r\n` +
      (standard ? 'Upgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n' : '') +
      headers.map(([name, value]) => `${name}: ${value}\r\n`).join('') +
      '\r\n',
  );
}

export function wsCase(target: FuzzTarget): fc.Arbitrary<WsCase> {
  return fc
    .oneof(
      { weight: 4, arbitrary: fc.record({ kind: fc.constant('messages' as const), authenticate: fc.boolean(), frames: fc.array(message(target), { minLength: 1, maxLength: 3 }) }) },
      { weight: 1, arbitrary: fc.record({ kind: fc.constant('handshake' as const), request: upgradeRequest(), resetAfterMs: fc.integer({ min: 0, max: 20 }) }) },
    )
    .map((testCase): WsCase => printable(testCase));
}

export async function checkWsCase(target: FuzzTarget, testCase: WsCase): Promise<void> {
  const problems = testCase.kind === 'messages' ? await sendMessages(target, testCase) : await sendHandshake(target, testCase);
  // The service must still answer, and every process run.
  await target.snapshot().catch((error: Error) => problems.push(`the service stopped answering: ${error.message}`));
  problems.push(...target.deadProcesses());
  if (problems.length) throw new Error(`${problems.join('; ')}\n  case: ${describe(testCase)}`);
}

/** Sends the frames, then a ping; waits for the ping's answer or the socket's end. */
async function sendMessages(target: FuzzTarget, testCase: Extract<WsCase, { kind: 'messages' }>): Promise<string[]> {
  const problems: string[] = [];
  const socket = new WebSocket(`ws://127.0.0.1:${target.port}/ws/v1`);
  const opened = await new Promise<boolean>((resolve) => {
    socket.once('open', () => resolve(true));
    socket.once('error', (error) => {
      problems.push(`the upgrade failed: ${error.message}`);
      resolve(false);
    });
  });
  if (!opened) return problems;
  socket.on('error', () => {});
  const ended = new Promise<void>((resolve) => {
    const timer = setTimeout(() => {
      problems.push('neither an answer to the probe nor a close within 10 s');
      socket.terminate();
      resolve();
    }, 10_000);
    socket.on('message', (data) => {
      const reply = parseReply(data.toString());
      if (typeof reply === 'string') return problems.push(reply);
      if (reply.status >= 500 && reply.status !== 503) problems.push(`a ${reply.status} reply: ${data.toString().slice(0, 500)}`);
      if (reply.id === PROBE_ID) {
        clearTimeout(timer);
        socket.close();
        resolve();
      }
    });
    socket.once('close', (code) => {
      clearTimeout(timer);
      if (code !== 1000 && code !== 1005 && !SERVER_CLOSE_CODES.has(code)) problems.push(`closed with code ${code}`);
      resolve();
    });
  });
  if (testCase.authenticate) socket.send(JSON.stringify({ id: 'fuzz-auth', path: PATHS.auth, body: { token: target.tokens.alice } }));
  for (const frame of testCase.frames) socket.send(frame);
  socket.send(JSON.stringify({ id: PROBE_ID, path: PATHS.ping }));
  await ended;
  return problems;
}

/** A reply as the protocol has it, or what is wrong with it. */
function parseReply(text: string): { id: unknown; status: number } | string {
  let reply: unknown;
  try {
    reply = JSON.parse(text);
  } catch {
    return `a reply that is not JSON: ${text.slice(0, 200)}`;
  }
  if (Array.isArray(reply)) return { id: undefined, status: 200 };
  const { id, status, body } = (reply ?? {}) as { id?: unknown; status?: unknown; body?: any };
  if (typeof status !== 'number') return `a reply without a status: ${text.slice(0, 200)}`;
  if (status >= 400 && (body?.error !== true || body.status !== status || typeof body.code !== 'string')) return `an error reply without the API error body: ${text.slice(0, 200)}`;
  return { id, status };
}

/** Writes the upgrade request and resets the connection after a moment. */
async function sendHandshake(target: FuzzTarget, testCase: Extract<WsCase, { kind: 'handshake' }>): Promise<string[]> {
  await new Promise<void>((resolve) => {
    const socket = connectTcp(target.port, '127.0.0.1', () => {
      socket.write(testCase.request);
      setTimeout(() => socket.resetAndDestroy(), testCase.resetAfterMs);
    });
    socket.on('error', () => {});
    socket.on('close', () => resolve());
  });
  return [];
}
