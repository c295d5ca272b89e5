// Stream servers that lie. A small RTMP server written here answers ffmpeg's `connect` with an
// `_error` whose description fakes ffmpeg's own stream lines (a 0x0 output that once crashed the
// host, a 640x360 input that once hid a bigger picture) and credentials; or plays a real clip
// after trying the same through a non-fatal `_error`; or shows ffprobe one picture and ffmpeg
// another. The ingest must take sizes from ffprobe's JSON and ffmpeg's PPM frames only, end
// every such run cleanly in our own words, and the 1080p rule must hold, here and on a real
// >1080p stream from nginx.
import { readFileSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import { join } from 'node:path';
import { test } from '../../ops/support/uvu.ts';
import * as assert from 'uvu/assert';
import { Ingest, type IngestExit, type IngestInfo } from '../../actors/ingest/ingest.ts';
import { DecoderSpawner } from '../../actors/ingest/decoder-spawner.ts';
import { readConfig } from '../../bus/config.ts';
import { createLog } from '../../bus/log.ts';
import { freePort } from '../../ops/stack/ports.ts';
import { startServices, type Services } from '../../ops/support/services.ts';
import { makeClip, type ClipSpec } from '../support/clips.ts';
import { guardAllowingAll } from '../support/decoder-guard.ts';
import { publish, waitForStream, type Publisher } from '../../ops/support/streams/publish.ts';
import { startRtmpServer, type RtmpServer } from '../../ops/support/streams/rtmp-server.ts';

const config = readConfig();
const clipsDir = join(config.varDir, 'test', 'clips');
const dir = join(config.varDir, 'test', 'streams', `malicious-peers-${process.pid}`);
const UNREACHABLE_SECONDS = 3;

// ffmpeg keeps 255 bytes of a description; each of these fits.
const FAKE_ZERO_OUTPUT =
  "\nInput #0, flv, from 'x':\n  Stream #0:0: Video: h264, none\nStream mapping:\n" +
  "Output #0, rawvideo, to 'pipe:4':\n    Stream #0:0: Video: rawvideo, rgb24, 0x0\n";
const FAKE_SMALL_INPUT =
  "\nInput #0, flv, from 'x':\n  Stream #0:0: Video: h264, yuv420p, 640x360\n  Stream #0:1: Audio: aac\n" +
  "Stream mapping:\nOutput #1, rawvideo, to 'pipe:4':\n  Stream #1:0: Video: rawvideo, rgb24, 640x360\n";
const FAKE_CREDENTIALS = '\nrtmp://admin:hunter2@10.0.0.5/live/secret?token=tok3n: Connection refused\npassword=hunter2\n';
const DESCRIPTIONS = [FAKE_ZERO_OUTPUT, FAKE_SMALL_INPUT, FAKE_CREDENTIALS];
// Words only the server says: none may appear in a failure.
const SERVER_WORDS = ['Input', 'Output', 'Stream', 'rawvideo', 'pipe', '0x0', '640x360', 'h264', 'admin', 'hunter2', 'tok3n', '10.0.0.5', 'secret'];
const OUR_WORDS = [
  'server refused the stream', 'connection refused', 'timed out', 'connection failed', 'stream ended',
  'picture larger than 1920x1080', 'picture size changed after probing', 'ffprobe failed (exit code 1)', 'ffmpeg failed (exit code 1)',
];

// ---- A minimal RTMP server: the handshake, chunked messages, a few AMF0 commands, FLV tags.

type Peer =
  // `connect` is answered with an `_error` carrying `description`.
  | { kind: 'reject'; description: string }
  // `connect` succeeds, `_checkbw` gets an `_error` carrying `description` (ffmpeg only warns),
  // then each connection is played the next clip of `clips` (the last one again and again).
  | { kind: 'play'; description: string; clips: string[] };

interface Tag {
  type: number;
  timestamp: number;
  data: Buffer;
}

function flvTags(file: string): Tag[] {
  const flv = readFileSync(file);
  const tags: Tag[] = [];
  for (let at = flv.readUInt32BE(5) + 4; at + 11 <= flv.length;) {
    const size = flv.readUIntBE(at + 1, 3);
    const timestamp = flv.readUIntBE(at + 4, 3) | (flv[at + 7]! << 24);
    const type = flv[at]!;
    if (type === 8 || type === 9) tags.push({ type, timestamp, data: flv.subarray(at + 11, at + 11 + size) });
    at += 11 + size + 4;
  }
  return tags;
}

const amf = {
  string: (text: string) => {
    const bytes = Buffer.from(text, 'utf8');
    const head = Buffer.alloc(3);
    head[0] = 0x02;
    head.writeUInt16BE(bytes.length, 1);
    return Buffer.concat([head, bytes]);
  },
  number: (value: number) => {
    const bytes = Buffer.alloc(9);
    bytes[0] = 0x00;
    bytes.writeDoubleBE(value, 1);
    return bytes;
  },
  null: () => Buffer.of(0x05),
  object: (fields: Record<string, string>) => {
    const parts = [Buffer.of(0x03)];
    for (const [key, value] of Object.entries(fields)) {
      const name = Buffer.alloc(2);
      name.writeUInt16BE(Buffer.byteLength(key));
      parts.push(name, Buffer.from(key), amf.string(value));
    }
    parts.push(Buffer.of(0x00, 0x00, 0x09));
    return Buffer.concat(parts);
  },
};

const OUT_CHUNK_SIZE = 4096;

/** One RTMP message as chunks: a full header, then continuation chunks of OUT_CHUNK_SIZE. */
function message(csid: number, type: number, streamId: number, timestamp: number, payload: Buffer): Buffer {
  const header = Buffer.alloc(12);
  header[0] = csid;
  header.writeUIntBE(Math.min(timestamp, 0xffffff), 1, 3);
  header.writeUIntBE(payload.length, 4, 3);
  header[7] = type;
  header.writeUInt32LE(streamId, 8);
  const parts: Buffer[] = [header];
  for (let at = 0; at < payload.length; at += OUT_CHUNK_SIZE) {
    if (at > 0) parts.push(Buffer.of(0xc0 | csid));
    parts.push(payload.subarray(at, at + OUT_CHUNK_SIZE));
  }
  return Buffer.concat(parts);
}

const command = (...values: Buffer[]) => message(3, 20, 0, 0, Buffer.concat(values));

/** Reads ffmpeg's chunked messages; calls `onCommand` with each AMF0 command's name and transaction. */
class ChunkReader {
  private buffer = Buffer.alloc(0);
  private chunkSize = 128;
  private readonly streams = new Map<number, { length: number; type: number; payload: Buffer[]; received: number }>();

  constructor(private readonly onCommand: (name: string, transaction: number) => void) {}

  push(data: Buffer): void {
    this.buffer = Buffer.concat([this.buffer, data]);
    while (this.readChunk());
  }

  private readChunk(): boolean {
    const b = this.buffer;
    if (b.length < 1) return false;
    const fmt = b[0]! >> 6;
    let csid = b[0]! & 0x3f;
    let at = 1;
    if (csid === 0) [csid, at] = [64 + (b[1] ?? 0), 2];
    else if (csid === 1) [csid, at] = [64 + (b[1] ?? 0) + (b[2] ?? 0) * 256, 3];
    const headerBytes = [11, 7, 3, 0][fmt]!;
    if (b.length < at + headerBytes) return false;
    const previous = this.streams.get(csid) ?? { length: 0, type: 0, payload: [], received: 0 };
    const stream = { ...previous };
    if (fmt <= 1) {
      stream.length = b.readUIntBE(at + 3, 3);
      stream.type = b[at + 6]!;
    }
    const extended = fmt < 3 && b.readUIntBE(at, 3) === 0xffffff ? 4 : 0;
    at += headerBytes + extended;
    if (stream.received === 0) stream.payload = [];
    const take = Math.min(this.chunkSize, stream.length - stream.received);
    if (b.length < at + take) return false;
    stream.payload = [...stream.payload, b.subarray(at, at + take)];
    stream.received += take;
    this.buffer = b.subarray(at + take);
    if (stream.received === stream.length) {
      stream.received = 0;
      this.onMessage(stream.type, Buffer.concat(stream.payload));
    }
    this.streams.set(csid, stream);
    return true;
  }

  private onMessage(type: number, payload: Buffer): void {
    if (type === 1) this.chunkSize = payload.readUInt32BE(0) & 0x7fffffff;
    if (type !== 20 || payload[0] !== 0x02) return;
    const nameLength = payload.readUInt16BE(1);
    const name = payload.subarray(3, 3 + nameLength).toString('utf8');
    const transaction = payload[3 + nameLength] === 0x00 ? payload.readDoubleBE(4 + nameLength) : 0;
    this.onCommand(name, transaction);
  }
}

/**
 * The clip's tags at their own pace, as a live stream, and in their order however late the
 * timers fire: one timer for the next tag due. A timer per tag does not keep the order on a busy
 * machine: Node runs every due timer of one delay before those of another, so a tag of a later
 * delay could go ahead of the picture's parameters, and ffprobe found "invalid data".
 */
function playClip(socket: Socket, tags: Tag[], timers: Set<NodeJS.Timeout>): void {
  const started = Date.now();
  let next = 0;
  const sendDue = () => {
    for (; next < tags.length && tags[next]!.timestamp <= Date.now() - started; next++) {
      const tag = tags[next]!;
      if (!socket.destroyed) socket.write(message(tag.type === 8 ? 4 : 6, tag.type, 1, tag.timestamp, tag.data));
    }
    if (next === tags.length || socket.destroyed) return;
    const timer = setTimeout(() => {
      timers.delete(timer);
      sendDue();
    }, tags[next]!.timestamp - (Date.now() - started));
    timers.add(timer);
  };
  sendDue();
}

interface RtmpPeer {
  url(name: string): string;
  connections: number;
  close(): Promise<void>;
}

async function startPeer(peer: Peer): Promise<RtmpPeer> {
  const port = await freePort();
  const sockets = new Set<Socket>();
  const timers = new Set<NodeJS.Timeout>();
  const state = { connections: 0 };
  const server: Server = createServer((socket) => {
    const clip = peer.kind === 'play' ? peer.clips[Math.min(state.connections, peer.clips.length - 1)]! : '';
    state.connections++;
    sockets.add(socket);
    socket.on('error', () => {});
    socket.once('close', () => sockets.delete(socket));
    let handshake = Buffer.alloc(0);
    let stage: 'c0c1' | 'c2' | 'messages' = 'c0c1';
    const reader = new ChunkReader((name, transaction) => {
      if (name === 'connect' && peer.kind === 'reject') {
        socket.write(command(amf.string('_error'), amf.number(transaction), amf.null(),
          amf.object({ level: 'error', code: 'NetConnection.Connect.Rejected', description: peer.description })));
      } else if (name === 'connect') {
        socket.write(command(amf.string('_result'), amf.number(transaction), amf.null(),
          amf.object({ level: 'status', code: 'NetConnection.Connect.Success', description: 'ok' })));
        // ffmpeg answers onBWDone with _checkbw, whose _error it only logs as a warning.
        socket.write(command(amf.string('onBWDone'), amf.number(0), amf.null()));
      } else if (name === '_checkbw' && peer.kind === 'play') {
        socket.write(command(amf.string('_error'), amf.number(transaction), amf.null(),
          amf.object({ level: 'error', code: 'NetConnection.Call.Failed', description: peer.description })));
      } else if (name === 'createStream') {
        socket.write(command(amf.string('_result'), amf.number(transaction), amf.null(), amf.number(1)));
      } else if (name === 'play') {
        socket.write(message(5, 20, 1, 0, Buffer.concat([amf.string('onStatus'), amf.number(0), amf.null(),
          amf.object({ level: 'status', code: 'NetStream.Play.Start', description: 'playing' })])));
        playClip(socket, flvTags(clip), timers);
      }
    });
    socket.on('data', (data: Buffer) => {
      if (stage === 'messages') {
        reader.push(data);
        return;
      }
      handshake = Buffer.concat([handshake, data]);
      if (stage === 'c0c1' && handshake.length >= 1537) {
        // S1 with a zero version field: ffmpeg then skips the digest check (the simple handshake).
        socket.write(Buffer.concat([Buffer.of(3), Buffer.alloc(1536), handshake.subarray(1, 1537)]));
        handshake = handshake.subarray(1537);
        stage = 'c2';
      }
      if (stage === 'c2' && handshake.length >= 1536) {
        stage = 'messages';
        const chunkSize = Buffer.alloc(4);
        chunkSize.writeUInt32BE(OUT_CHUNK_SIZE);
        socket.write(message(2, 1, 0, 0, chunkSize));
        reader.push(handshake.subarray(1536));
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  return {
    url: (name) => `rtmp://127.0.0.1:${port}/live/${name}`,
    get connections() {
      return state.connections;
    },
    close: () => {
      for (const timer of timers) clearTimeout(timer);
      for (const socket of sockets) socket.destroy();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

// ---- The tests.

const clip = (width: number, height: number, seconds = 8): ClipSpec => ({
  width, height, seconds, fps: 10, video: { type: 'testsrc' }, audio: { type: 'tones', tones: [{ hz: 330, seconds }] },
});

const escaped: unknown[] = [];
const recordEscape = (error: unknown) => escaped.push(error);
const peers: RtmpPeer[] = [];
let clips: { small: string; hd: string; uhd: string; fourThree: string };
let rtmp: RtmpServer;
let publisher: Publisher;
let services: Services;
let decoders: DecoderSpawner;
let guard: Record<string, string>;

test.before(async () => {
  process.on('uncaughtException', recordEscape);
  process.on('unhandledRejection', recordEscape);
  guard = await guardAllowingAll(config.egressGuardLibrary);
  decoders = await DecoderSpawner.start({ runDir: join(config.varDir, 'run'), log: createLog({ ...config, logLevel: 'silent' }) });
  const [small, hd, uhd, fourThree] = await Promise.all([
    makeClip(clip(640, 360), clipsDir),
    makeClip(clip(1280, 720), clipsDir),
    makeClip(clip(2560, 1440), clipsDir),
    makeClip(clip(640, 480), clipsDir),
  ]);
  clips = { small, hd, uhd, fourThree };
  rtmp = await startRtmpServer({ dir: join(dir, 'rtmp'), rtmpPort: await freePort(), rtmpsPort: await freePort() });
  publisher = publish(uhd, rtmp.url('uhd'));
  await waitForStream(rtmp.url('uhd'));
  services = await startServices({ name: 'malicious-peers', env: { STREAM_UNREACHABLE_SECONDS: String(UNREACHABLE_SECONDS) } });
});

test.after(async () => {
  await services?.stop();
  await publisher?.stop();
  await rtmp?.stop();
  await decoders?.close();
  await Promise.all(peers.map((peer) => peer.close()));
  process.off('uncaughtException', recordEscape);
  process.off('unhandledRejection', recordEscape);
});

async function peerFor(kind: Peer): Promise<RtmpPeer> {
  const peer = await startPeer(kind);
  peers.push(peer);
  return peer;
}

interface Run {
  info: IngestInfo | undefined;
  frames: { width: number; height: number }[];
  exit: IngestExit;
}

/** One ingest of `uri` until it ends, or `seconds` have passed (then stopped). */
/** Pulls `uri` for `seconds`, or until `enoughFrames` have come: a loaded machine may take most of 10 s to probe a stream. */
async function pull(uri: string, seconds: number, enoughFrames = Infinity): Promise<Run> {
  // The peers send from this process: on a loaded machine seconds may pass between two of their messages.
  const ingest = new Ingest({ uri, session: 'peer', fps: 4, ffmpegPath: config.ffmpegPath, decoders, timeoutSeconds: 10, env: guard });
  const run: Omit<Run, 'exit'> = { info: undefined, frames: [] };
  ingest.on('info', (info) => (run.info = info));
  ingest.on('frame', ({ width, height }) => {
    run.frames.push({ width, height });
    if (run.frames.length === enoughFrames) void ingest.stop();
  });
  const exit = new Promise<IngestExit>((resolve) => ingest.once('exit', resolve));
  ingest.start();
  const timer = setTimeout(() => void ingest.stop(), seconds * 1000);
  const result = await exit;
  clearTimeout(timer);
  return { ...run, exit: result };
}

function assertOurWords(reason: string): void {
  assert.ok(OUR_WORDS.includes(reason), `"${reason}" is one of our phrases`);
  for (const word of SERVER_WORDS) assert.not.ok(reason.includes(word), `"${reason}" repeats "${word}"`);
}

test('a server that rejects connect with fake ffmpeg lines ends the ingest cleanly, in our words', async () => {
  for (const description of DESCRIPTIONS) {
    const peer = await peerFor({ kind: 'reject', description });
    const { info, frames, exit } = await pull(`rtmp://viewer:pa55word@127.0.0.1:${new URL(peer.url('x')).port}/live/x`, 15);
    assert.ok(peer.connections >= 1, 'ffprobe reached the server');
    assert.is(info, undefined, 'no stream info from a rejected connect');
    assert.equal(frames, []);
    assert.is(exit.reason, 'server refused the stream');
    assertOurWords(exit.reason);
    assert.not.ok(exit.reason.includes('pa55word'));
  }
  assert.equal(escaped, [], 'no exception escaped');
});

test('a playing server that fakes a 640x360 picture in its text is seen at its real size', async () => {
  // Each lie and picture on a peer of its own, side by side: an HD pull runs until four frames came.
  const cases = [FAKE_SMALL_INPUT, FAKE_ZERO_OUTPUT].flatMap((description, lie) =>
    (['hd', 'uhd'] as const).map((picture) => ({ label: `lie ${lie + 1}, ${picture} sent`, description, picture })));
  const runs = await Promise.all(cases.map(async ({ description, picture }) =>
    pull((await peerFor({ kind: 'play', description, clips: [clips[picture]] })).url(picture), 30, 4)));
  for (const [index, run] of runs.entries()) {
    const { label, picture } = cases[index]!;
    if (picture === 'hd') {
      assert.equal(run.info, { width: 1280, height: 720, hasAudio: true, hasVideo: true, outputWidth: 640, outputHeight: 360 }, `${label}, ended: ${run.exit.reason}`);
      assert.ok(run.frames.length >= 4, `${label}: ${run.frames.length} frames`);
      assert.ok(run.frames.every((frame) => frame.width === 640 && frame.height === 360), label);
      assert.is(run.exit.reason, 'stopped', label);
    } else {
      assert.is(run.info, undefined, `${label}: ffprobe decodes nothing over 1080p, so describes nothing`);
      assert.equal(run.frames, [], label);
      assert.is(run.exit.reason, 'picture larger than 1920x1080', label);
    }
  }
  assert.equal(escaped, [], 'no exception escaped');
});

test('a server that shows ffprobe a small picture and ffmpeg a bigger one delivers nothing over 1080p', async () => {
  const bigger = await peerFor({ kind: 'play', description: FAKE_SMALL_INPUT, clips: [clips.small, clips.uhd] });
  const switched = await pull(bigger.url('switch'), 10);
  assert.is(bigger.connections, 2, 'ffprobe, then ffmpeg');
  assert.is(switched.info?.width, 640, 'what ffprobe was shown');
  assert.equal(switched.frames, []);
  assert.is(switched.exit.reason, 'picture larger than 1920x1080');

  // Another shape: the PPM frames say so, and the run ends.
  const reshaped = await peerFor({ kind: 'play', description: FAKE_SMALL_INPUT, clips: [clips.fourThree, clips.hd] });
  const run = await pull(reshaped.url('reshape'), 10);
  assert.equal(run.info, { width: 640, height: 480, hasAudio: true, hasVideo: true, outputWidth: 640, outputHeight: 480 });
  assert.equal(run.frames, []);
  assert.is(run.exit.reason, 'picture size changed after probing');
  assert.equal(escaped, [], 'no exception escaped');
});

test('sessions: a lying server ends its session in our words; the 1080p rule holds; the host lives on', async () => {
  const rejecting = await peerFor({ kind: 'reject', description: FAKE_ZERO_OUTPUT + FAKE_CREDENTIALS.slice(0, 80) });
  const lyingUhd = await peerFor({ kind: 'play', description: FAKE_SMALL_INPUT, clips: [clips.uhd] });
  const create = async (streamUri: string) => {
    const created = await services.api('POST', '/v1/sessions', { body: { name: 'peer', streamUri } });
    assert.is(created.status, 201, JSON.stringify(created.body));
    return created.body._id as string;
  };
  const [rejected, lying, real] = await Promise.all([create(rejecting.url('x')), create(lyingUhd.url('uhd')), create(rtmp.url('uhd'))]);
  const finished = (id: string) => services.waitForSession(id, (s) => s.state === 'finished', (UNREACHABLE_SECONDS + 30) * 1000);

  const refused = await finished(rejected);
  assert.is(refused.meta.stopReason, 'stream_unreachable');
  assertOurWords(refused.meta.failure);
  for (const id of [lying, real]) {
    const session = await finished(id);
    assert.is(session.meta.stopReason, 'resolution_exceeded', id);
    assert.is(session.meta.failure, 'stream is larger than 1920x1080, above the 1080p limit');
  }
  for (const host of services.hosts) assert.not.throws(() => process.kill(host.pid, 0), 'the actor host still runs');
  assert.equal(escaped, [], 'no exception escaped');
});

test.run();
