// ffmpeg's outputs as the host reads them: unix sockets in the host's private directory. Real
// ffmpeg, started through the spawner with the stream's protocol whitelist and the egress guard
// as a pull has them, writes to one; nothing else can connect in its place.
import { test } from '../../ops/support/uvu.ts';
import * as assert from 'uvu/assert';
import { existsSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import { readConfig } from '../../bus/config.ts';
import { createLog } from '../../bus/log.ts';
import { EgressPolicy } from '../../actors/egress/policy.ts';
import { DecoderSpawner, type DecoderExit } from '../../actors/ingest/decoder-spawner.ts';
import { decoderEnvironment } from '../../actors/ingest/decoder-environment.ts';
import { AUDIO_BYTES_PER_SECOND, INPUT_PROTOCOLS, unixOutput } from '../../actors/ingest/ffmpeg-args.ts';
import { MediaSocket } from '../../actors/ingest/media-socket.ts';

const config = readConfig();
let decoders: DecoderSpawner;

test.before(async () => {
  decoders = await DecoderSpawner.start({ runDir: join(config.varDir, 'run'), log: createLog({ ...config, logLevel: 'silent' }) });
});

test.after(async () => {
  await decoders.close();
});

test('ffmpeg under the input whitelist and the egress guard writes to our unix socket, read to the end', async () => {
  let bytes = 0;
  const socket = await MediaSocket.listen(decoders.socketPath('audio'), (chunk) => (bytes += chunk.length));
  assert.ok(existsSync(socket.path));
  // The guard as a pull has it with no private address allowed: loopback and the rest refused.
  const guard = await new EgressPolicy({ kind: 'none' }, config.egressGuardLibrary, async () => []).guardEnvironment();
  assert.ok(guard.EMO_EGRESS_REFUSE?.includes('127.0.0.0/8'));
  // lavfi opens no protocol: the whitelist, an input option, could only refuse the output.
  const ffmpeg = decoders.run({
    file: config.ffmpegPath,
    args: ['-hide_banner', '-nostdin', '-loglevel', 'error', '-protocol_whitelist', INPUT_PROTOCOLS.join(','),
      '-f', 'lavfi', '-i', 'sine=duration=1', '-ac', '1', '-ar', '16000', '-f', 's16le', unixOutput(socket.path)],
    env: decoderEnvironment(guard),
  });
  let stderr = '';
  ffmpeg.on('stderr', (text) => (stderr += text));
  const exit = await new Promise<DecoderExit>((resolve) => ffmpeg.once('exit', resolve));
  await socket.drain();
  assert.equal(exit, { code: 0, signal: null }, stderr);
  assert.is(bytes, AUDIO_BYTES_PER_SECOND);
  assert.not.ok(existsSync(socket.path), 'the path is gone once ffmpeg connected');
});

test('the first connection is the only one: the path is gone as soon as it is made', async () => {
  const received: string[] = [];
  const socket = await MediaSocket.listen(decoders.socketPath('video'), (chunk) => received.push(chunk.toString()));
  const first = connect(socket.path);
  await new Promise((resolve) => first.once('connect', resolve));
  first.end('from the first');
  await socket.drain();
  const second = connect(socket.path);
  const refused = await new Promise<NodeJS.ErrnoException>((resolve) => second.once('error', resolve));
  assert.is(refused.code, 'ENOENT');
  assert.equal(received, ['from the first']);
});

test('a socket ffmpeg never connected to is done once drained, and its path removed', async () => {
  const socket = await MediaSocket.listen(decoders.socketPath('audio'), () => assert.unreachable('no data'));
  await socket.drain();
  assert.not.ok(existsSync(socket.path));
});

test.run();
