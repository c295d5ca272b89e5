// The process lifecycle around the media: bad options, missing binaries, stop().
import { test } from '../../ops/support/uvu.ts';
import * as assert from 'uvu/assert';
import { join } from 'node:path';
import { readConfig } from '../../bus/config.ts';
import { createLog } from '../../bus/log.ts';
import { DecoderSpawner } from '../../actors/ingest/decoder-spawner.ts';
import { Ingest, type IngestExit } from '../../actors/ingest/ingest.ts';
import { guardAllowingAll } from '../support/decoder-guard.ts';

const config = readConfig();
let decoders: DecoderSpawner;
let guard: Record<string, string>;

test.before(async () => {
  guard = await guardAllowingAll(config.egressGuardLibrary);
  decoders = await DecoderSpawner.start({ runDir: join(config.varDir, 'run'), log: createLog({ ...config, logLevel: 'silent' }) });
});

test.after(async () => {
  await decoders.close();
});

test('rejects a URI it must not open, before starting anything', () => {
  for (const uri of ['file:///etc/passwd', 'http://127.0.0.1/a.flv', 'concat:a|b']) {
    assert.throws(() => new Ingest({ uri, fps: 4, ffmpegPath: config.ffmpegPath, decoders, timeoutSeconds: 5, session: 's', env: guard }), /streamUri: protocol must be one of/);
  }
  assert.throws(() => new Ingest({ uri: 'rtmp://h/a', fps: 0, ffmpegPath: config.ffmpegPath, decoders, timeoutSeconds: 5, session: 's', env: guard }), /fps/);
  // ffprobe is taken from beside ffmpeg: a path that does not name ffmpeg says where it is not.
  assert.throws(() => new Ingest({ uri: 'rtmp://h/a', fps: 4, ffmpegPath: '/opt/avconv', decoders, timeoutSeconds: 5, session: 's', env: guard }), /ffprobe/);
  // Without the egress guard the decoders would get no stream URI.
  assert.throws(() => new Ingest({ uri: 'rtmp://h/a', fps: 4, ffmpegPath: config.ffmpegPath, decoders, timeoutSeconds: 5, session: 's', env: {} }), /egress guard/);
});

test('missing binaries end with a reason, not a crash', async () => {
  const ingest = new Ingest({ uri: 'rtmp://127.0.0.1:1/live/a', fps: 4, ffmpegPath: '/nonexistent/ffmpeg', decoders, timeoutSeconds: 5, session: 's', env: guard });
  const exit = new Promise<IngestExit>((resolve) => ingest.once('exit', resolve));
  ingest.start();
  const result = await exit;
  assert.match(result.reason, /cannot run \/nonexistent\/ffprobe: .*ENOENT/);
  assert.is(result.stopped, false);
  await ingest.stop(); // harmless once ended
});

test('stop() before start() ends at once, and start() is then refused', async () => {
  const ingest = new Ingest({ uri: 'rtsp://127.0.0.1:1/cam', fps: 4, ffmpegPath: config.ffmpegPath, decoders, timeoutSeconds: 5, session: 's', env: guard });
  const exits: IngestExit[] = [];
  ingest.on('exit', (exit) => exits.push(exit));
  await ingest.stop();
  await ingest.stop();
  assert.is(exits.length, 1);
  assert.is(exits[0]?.reason, 'stopped');
  assert.throws(() => ingest.start(), /already/);
});

test.run();
